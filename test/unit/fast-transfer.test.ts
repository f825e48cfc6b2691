// Plain value transfers skip the EVM in blocks (src/evm/fasttransfer.ts): the same random blocks run
// with the fast path and with every tx through ethereumjs' runTx must give the same roots, receipts,
// gas, touched sets and exclusions — under each supported fork, with recipients that must not take the
// fast path (contracts, 7702-delegated EOAs, precompiles, the console.log address, the sender, the
// coinbase) and txs runTx refuses (nonce, funds, fee cap, gas limit).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Wallet } from 'ethers';
import { SUPPORTED_HARDFORKS } from '../../src/config/genesis.js';
import { makeCommon } from '../../src/evm/common.js';
import { attachConsoleLog, CONSOLE_ADDRESS_HEX } from '../../src/evm/consolelog.js';
import type { ExecutedBlock } from '../../src/evm/blockexec.js';
import type { BlockContext } from '../../src/evm/runner.js';
import { TouchCollector } from '../../src/evm/touched.js';
import { decodeTx, type DecodedTx } from '../../src/evm/tx.js';
import { devKeys } from '../helpers/accounts.js';
import { prng } from '../helpers/chaingen.js';
import { blockSide, type BlockSide } from '../helpers/blockside.js';

const CHAIN_ID = 9000;
const GWEI = 10n ** 9n;
// runtime code: SSTORE(0, CALLDATALOAD(0)); STOP
const SETTER = Uint8Array.from(Buffer.from('600035600055' + '00', 'hex'));
const SETTER_ADDR = '0x' + '5e'.repeat(20);
const DELEGATED_ADDR = '0x' + 'de'.repeat(20);
const EMPTY_ADDR = '0x' + 'e0'.repeat(20);
const RICH_COINBASE = '0x' + 'cb'.repeat(20);
/** an empty account no tx sends to */
const FRESH_EMPTY = '0x' + 'fe'.repeat(20);
const wallets = devKeys().slice(0, 4).map((k) => new Wallet(k));
const POOR = new Wallet('0x' + '42'.repeat(32));
/** sends one console.log(uint256) transfer: its line must be printed with the fast path too */
const LOGGER = new Wallet('0x' + '43'.repeat(32));
const LOG_UINT256 = 'f82c50f1';

const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const addr = (n: number): string => '0x' + n.toString(16).padStart(40, '0');

function alloc() {
  return new Map([
    ...wallets.map((w) => [w.address.toLowerCase(), { balance: 10n ** 22n, nonce: 0n }] as const),
    [POOR.address.toLowerCase(), { balance: 30_000n * 10n * GWEI, nonce: 0n }],
    [LOGGER.address.toLowerCase(), { balance: 10n ** 18n, nonce: 0n }],
    [SETTER_ADDR, { balance: 0n, nonce: 0n, code: SETTER }],
    // an EIP-7702 delegation to the setter (ordinary code before Prague)
    [DELEGATED_ADDR, { balance: 5n, nonce: 1n, code: hexBytes('ef0100' + SETTER_ADDR.slice(2)) }],
    [EMPTY_ADDR, { balance: 0n, nonce: 0n }],
    [FRESH_EMPTY, { balance: 0n, nonce: 0n }],
    [RICH_COINBASE, { balance: 1n, nonce: 0n }],
  ]);
}

interface Side extends BlockSide {
  /** the console.log lines the blocks printed */
  lines: string[];
}

/** A runner over the flat layer (what the node runs), or over the Merkle trie (the library's own state manager). */
async function runner(kind: 'flat' | 'merkle', fork: string, fast: boolean): Promise<Side> {
  const lines: string[] = [];
  const side = await blockSide(kind, makeCommon(BigInt(CHAIN_ID), fork), alloc(), (r) => {
    r.fastTransfers = fast;
    // runTx on both sides: the contract txs revm runs are compared in revm-block.test.ts
    r.revmTxs = false;
    for (const evm of r.evms()) {
      TouchCollector.attach(evm);
      attachConsoleLog(evm as never, (line) => lines.push(line));
    }
  });
  return Object.assign(side, { lines });
}

/** Random txs of one block: mostly transfers that may take the fast path, some that must not. */
/**
 * `tipless`: only plain transfers to fresh addresses, type 2 without a priority fee (the coinbase gets
 * nothing, and runTx deletes it when it is left empty)
 */
async function randomBlock(next: () => number, nonces: number[], count: number, fork: string, tipless = false): Promise<DecodedTx[]> {
  const common = makeCommon(BigInt(CHAIN_ID), fork);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const recipients = [
    () => addr(0x10000 + Math.floor(next() * 1e6)), // fresh
    () => addr(0x10000 + Math.floor(next() * 1e6)),
    () => pick(wallets).address,
    () => SETTER_ADDR,
    () => DELEGATED_ADDR,
    () => EMPTY_ADDR,
    () => RICH_COINBASE,
    () => '0x' + CONSOLE_ADDRESS_HEX,
    // precompiles (0x100: P256VERIFY from Osaka); not 0x0a: its KZG is built on first use (evm/kzg.ts), slow here
    () => addr(pick([1, 2, 4, 9, 0x100])),
  ];
  const out: DecodedTx[] = [];
  for (let i = 0; i < count; i++) {
    const poor = !tipless && next() < 0.05;
    const w = poor ? 4 : Math.floor(next() * wallets.length);
    const wallet = poor ? POOR : wallets[w]!;
    const type = tipless ? 2 : pick([0, 1, 2, 2, 2]);
    let nonce = nonces[w]!;
    if (!tipless && next() < 0.05) nonce += 1; // a nonce gap: excluded
    const value = tipless ? 1n : pick([0n, 1n, 10n ** 15n, 10n ** 18n]);
    const data = next() < 0.2 ? '0x' + Buffer.from(Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * 3))).toString('hex') : '0x';
    const gasLimit = !tipless && next() < 0.05 ? 21_000 : pick([21_000, 30_000, 60_000]) + data.length * 20;
    const fee = tipless ? 10n * GWEI : next() < 0.05 ? 1n : pick([7n, 10n * GWEI]);
    const tip = tipless ? 0n : pick([0n, 1n, 2n * GWEI]);
    const base = { chainId: CHAIN_ID, nonce, to: (tipless ? recipients[0]! : pick(recipients))(), value, data, gasLimit };
    const tx = type === 2 ? { ...base, type, maxFeePerGas: fee, maxPriorityFeePerGas: tip < fee ? tip : fee } : { ...base, type, gasPrice: fee };
    out.push(decodeTx(hexBytes(await wallet.signTransaction(tx)), common));
    if (nonce === nonces[w]) nonces[w]!++;
  }
  return out;
}

function summary(b: ExecutedBlock) {
  return {
    stateRoot: Buffer.from(b.stateRoot).toString('hex'),
    receiptsRoot: Buffer.from(b.receiptsRoot).toString('hex'),
    transactionsRoot: Buffer.from(b.transactionsRoot).toString('hex'),
    logsBloom: Buffer.from(b.logsBloom).toString('hex'),
    gasUsed: b.gasUsed,
    txs: b.txs.map((t) => ({
      hash: Buffer.from(t.tx.hash).toString('hex'),
      status: t.status,
      gasUsed: t.gasUsed,
      cumulative: t.cumulativeGasUsed,
      logs: t.logs.length,
      bloom: Buffer.from(t.logsBloom).toString('hex'),
      vmError: t.vmError,
      returnValue: Buffer.from(t.returnValue).toString('hex'),
      touched: (t.touched ?? []).map((a) => Buffer.from(a).toString('hex')),
    })),
    excluded: b.excluded.map((x) => [Buffer.from(x.tx.hash).toString('hex'), x.reason]),
  };
}

for (const [kind, fork] of SUPPORTED_HARDFORKS.flatMap((f) => [['flat', f], ['merkle', f]] as const)) {
  test(`${fork}, ${kind} state: blocks of random transfers give the same roots, receipts, gas, touched sets and change sets with and without the fast path`, async () => {
    const fast = await runner(kind, fork, true);
    const slow = await runner(kind, fork, false);
    const next = prng(23);
    const nonces = [0, 0, 0, 0, 0];
    let included = 0;
    let excluded = 0;
    const senders = [...wallets, POOR].map((w) => w.address.slice(2).toLowerCase());
    const committed = new Map(senders.map((_, i) => [i, 0]));
    const coinbases = [new Uint8Array(20), hexBytes(RICH_COINBASE), hexBytes(EMPTY_ADDR), hexBytes(wallets[0]!.address)];
    // blocks 7 and 8: no tips, to a coinbase that does not exist and to one that is empty
    for (let h = 1n; h <= 8n; h++) {
      const txs = await randomBlock(next, nonces, h > 6n ? 5 : 60, fork, h > 6n);
      if (h === 1n) {
        const data = '0x' + LOG_UINT256 + (42).toString(16).padStart(64, '0');
        const raw = await LOGGER.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: 0, to: '0x' + CONSOLE_ADDRESS_HEX, value: 1n, data, gasLimit: 40_000, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 1n });
        txs.push(decodeTx(hexBytes(raw), makeCommon(BigInt(CHAIN_ID), fork)));
      }
      const ctx: BlockContext = {
        number: h,
        timestamp: 1_700_000_000n + h,
        coinbase: h === 7n ? hexBytes(addr(0xc0ffee)) : h === 8n ? hexBytes(FRESH_EMPTY) : coinbases[Number(h) % coinbases.length]!,
        gasLimit: 30_000_000n,
        baseFee: h % 2n === 0n ? 7n : 1n,
        mixHash: new Uint8Array(32),
      };
      const a = await fast.r.executeBlock(fast.parent, ctx, txs);
      const b = await slow.r.executeBlock(slow.parent, ctx, txs);
      assert.deepEqual(summary(a), summary(b), `block ${h}`);
      assert.deepEqual(a.flatChange, b.flatChange, `block ${h}: the flat change set`);
      fast.commit(h, a);
      slow.commit(h, b);
      included += a.txs.length;
      excluded += a.excluded.length;
      // the next block's nonces follow what this one included
      for (const [w, n] of committed) nonces[w] = n;
      for (const t of a.txs) {
        const w = senders.indexOf(Buffer.from(t.tx.from).toString('hex'));
        if (w < 0) continue;
        nonces[w] = Number(t.tx.nonce) + 1;
        committed.set(w, nonces[w]!);
      }
    }
    assert.deepEqual(fast.lines, ['42'], 'the console.log transfer printed its line');
    assert.deepEqual(slow.lines, ['42']);
    // every included tx runs one message on runTx (and the precompile ones that throw inside it)
    const skipped = slow.runCalls() - fast.runCalls();
    assert.ok(skipped > included / 4, `the fast path took ${skipped} of ${included} txs`);
    assert.ok(excluded > 10 && included > 200, `${included} included, ${excluded} excluded`);
  });
}
