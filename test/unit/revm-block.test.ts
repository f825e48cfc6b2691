// A block's contract txs run on revm where the addon is built (src/evm/revmtx.ts): the same random
// blocks run with revm and with every tx through ethereumjs' runTx must give the same state roots,
// receipts, gas, logs, touched sets, exclusions and flat change sets — under each supported fork, with
// ERC-20 transfers that succeed and fail, reverts with reasons, out-of-gas, creations (CREATE,
// CREATE2, failing ones, creation txs), storage cleared (refunds), SELFDESTRUCT in and after the
// creating tx, calls with value into contracts and EOAs (and beyond the balance), precompile calls,
// transfers to the coinbase, and txs runTx refuses (nonce, funds, fee cap).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Interface, Wallet, getCreateAddress } from 'ethers';
import { SUPPORTED_HARDFORKS } from '../../src/config/genesis.js';
import { makeCommon } from '../../src/evm/common.js';
import type { ExecutedBlock } from '../../src/evm/blockexec.js';
import { loadRevm } from '../../src/evm/revm.js';
import type { BlockContext } from '../../src/evm/runner.js';
import { TouchCollector } from '../../src/evm/touched.js';
import { decodeTx, type DecodedTx } from '../../src/evm/tx.js';
import { devKeys } from '../helpers/accounts.js';
import { prng } from '../helpers/chaingen.js';
import { blockSide, type BlockSide } from '../helpers/blockside.js';
import { CONTRACTS_DIR } from '../helpers/paths.js';
import { compileFile } from '../helpers/solc.js';

const CHAIN_ID = 9000;
const GWEI = 10n ** 9n;
const EMPTY_ADDR = '0x' + 'e0'.repeat(20);
const RICH_COINBASE = '0x' + 'cb'.repeat(20);
const wallets = devKeys().slice(0, 4).map((k) => new Wallet(k));
const POOR = new Wallet('0x' + '42'.repeat(32));

const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const addr = (n: number): string => '0x' + n.toString(16).padStart(40, '0');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const sinkC = compileFile(join(CONTRACTS_DIR, 'BlockSink.sol'));
const tokenC = compileFile(join(CONTRACTS_DIR, 'Token.sol'));
const SINK = new Interface(sinkC.BlockSink!.abi);
const CHILD = new Interface(sinkC.Child!.abi);
const TOKEN = new Interface(tokenC.Token!.abi);
/** the deployer's first two creations (block 1): the token, then the sink */
const TOKEN_ADDR = getCreateAddress({ from: wallets[0]!.address, nonce: 0 });
const SINK_ADDR = getCreateAddress({ from: wallets[0]!.address, nonce: 1 });

function alloc() {
  return new Map([
    ...wallets.map((w) => [w.address.toLowerCase(), { balance: 10n ** 22n, nonce: 0n }] as const),
    [POOR.address.toLowerCase(), { balance: 200_000n * 10n * GWEI, nonce: 0n }],
    [EMPTY_ADDR, { balance: 0n, nonce: 0n }],
    [RICH_COINBASE, { balance: 1n, nonce: 0n }],
  ]);
}

function runner(fork: string, revm: boolean): Promise<BlockSide> {
  return blockSide('flat', makeCommon(BigInt(CHAIN_ID), fork), alloc(), (r) => {
    r.fastTransfers = false;
    r.revmTxs = revm;
    for (const evm of r.evms()) TouchCollector.attach(evm);
  });
}

/** precompile inputs 0x01–0x09 (some malformed) */
const PRECOMPILE_INPUTS: [number, string][] = [
  [1, '0x' + '11'.repeat(32) + '00'.repeat(31) + '1b' + '22'.repeat(64)],
  [2, '0x616263'],
  [3, '0x616263'],
  [4, '0x' + 'ab'.repeat(70)],
  [5, '0x' + (1).toString(16).padStart(64, '0').repeat(3) + '03' + '05' + '07'],
  [5, '0x' + 'ff'.repeat(20)],
  [6, '0x' + '00'.repeat(128)],
  [7, '0x' + '00'.repeat(96)],
  [8, '0x'],
  [8, '0x' + '01'.repeat(192)],
  [9, '0x' + '00'.repeat(213)],
];

async function randomBlock(next: () => number, nonces: number[], count: number, fork: string, h: bigint): Promise<DecodedTx[]> {
  const common = makeCommon(BigInt(CHAIN_ID), fork);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const someone = () => pick([...wallets.map((w) => w.address), EMPTY_ADDR, RICH_COINBASE, addr(0x10000 + Math.floor(next() * 1e6))]);
  const out: DecodedTx[] = [];
  const sign = async (w: number, body: { to?: string; data?: string; value?: bigint; gasLimit: number }, bad = true) => {
    const poor = bad && next() < 0.04;
    const wallet = poor ? POOR : wallets[w]!;
    const wi = poor ? 4 : w;
    let nonce = nonces[wi]!;
    if (bad && next() < 0.04) nonce += 1;
    const type = pick([0, 1, 2, 2, 2]);
    const fee = bad && next() < 0.04 ? 1n : pick([7n, 10n * GWEI]);
    const tip = pick([0n, 1n, 2n * GWEI]);
    const accessList = type > 0 && next() < 0.2 ? [{ address: SINK_ADDR, storageKeys: ['0x' + '00'.repeat(31) + '01'] }] : undefined;
    const base = { chainId: CHAIN_ID, nonce, value: 0n, data: '0x', ...body, ...(accessList ? { accessList } : {}) };
    const tx = type === 2 ? { ...base, type, maxFeePerGas: fee, maxPriorityFeePerGas: tip < fee ? tip : fee } : { ...base, type, gasPrice: fee };
    out.push(decodeTx(hexBytes(await wallet.signTransaction(tx)), common));
    if (nonce === nonces[wi]) nonces[wi]!++;
  };
  if (h === 1n) {
    const supply = 10n ** 30n;
    await sign(0, { data: tokenC.Token!.bytecode + TOKEN.encodeDeploy(['T', 'T', supply]).slice(2), gasLimit: 2_000_000 }, false);
    await sign(0, { data: sinkC.BlockSink!.bytecode, gasLimit: 3_000_000 }, false);
    for (let w = 1; w < wallets.length; w++) await sign(0, { to: TOKEN_ADDR, data: TOKEN.encodeFunctionData('transfer', [wallets[w]!.address, 10n ** 24n]), gasLimit: 80_000 }, false);
    await sign(0, { to: SINK_ADDR, value: 10n ** 18n, gasLimit: 50_000 }, false);
    return out;
  }
  for (let i = 0; i < count; i++) {
    const w = Math.floor(next() * wallets.length);
    const kind = Math.floor(next() * 16);
    const gas = pick([60_000, 200_000, 600_000]);
    switch (kind) {
      case 0:
      case 1: {
        const amount = pick([0n, 1n, 10n ** 20n, 10n ** 25n]);
        await sign(w, { to: TOKEN_ADDR, data: TOKEN.encodeFunctionData('transfer', [someone(), amount]), gasLimit: pick([30_000, 80_000]) });
        break;
      }
      case 2:
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('set', [BigInt(Math.floor(next() * 6)), pick([0n, 1n, 2n ** 200n])]), gasLimit: gas });
        break;
      case 3:
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('fail', [pick(['no', 'not today'])]), gasLimit: gas });
        break;
      case 4:
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('burn', []), gasLimit: pick([60_000, 150_000]) });
        break;
      case 5:
      case 6: {
        const salt = '0x' + Math.floor(next() * 4).toString(16).padStart(64, '0');
        const args = [salt, next() < 0.5, next() < 0.25, next() < 0.4, someone()];
        await sign(w, { to: SINK_ADDR, value: pick([0n, 5n]), data: SINK.encodeFunctionData('spawn', args), gasLimit: pick([120_000, 400_000]) });
        break;
      }
      case 7:
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('destroyLast', [someone()]), gasLimit: gas });
        break;
      case 8:
      case 9: {
        const to = pick([someone(), SINK_ADDR, TOKEN_ADDR, EMPTY_ADDR, addr(4)]);
        const data = to === SINK_ADDR ? SINK.encodeFunctionData('set', [7n, 9n]) : to === TOKEN_ADDR ? TOKEN.encodeFunctionData('transfer', [someone(), 1n]) : '0x';
        await sign(w, { to: SINK_ADDR, value: pick([0n, 3n]), data: SINK.encodeFunctionData('forward', [to, pick([0n, 1n, 10n ** 30n]), data]), gasLimit: gas });
        break;
      }
      case 10: {
        const [p, input] = pick(PRECOMPILE_INPUTS);
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('probe', [addr(p), input]), gasLimit: gas });
        break;
      }
      case 11: {
        const [p, input] = pick(PRECOMPILE_INPUTS);
        await sign(w, { to: addr(p), data: input, value: pick([0n, 1n]), gasLimit: pick([25_000, 100_000]) });
        break;
      }
      case 12:
        // a creation tx: a child that takes its value, or one whose constructor reverts
        await sign(w, { data: sinkC.Child!.bytecode + CHILD.encodeDeploy([next() < 0.3]).slice(2), value: pick([0n, 2n]), gasLimit: pick([60_000, 300_000]) });
        break;
      case 13:
        // calldata to an EOA: the EIP-7623 floor from Prague on
        await sign(w, { to: pick([someone(), RICH_COINBASE, SINK_ADDR]), value: pick([0n, 1n, 10n ** 15n]), data: next() < 0.5 ? '0x' : '0x' + '01'.repeat(Math.floor(next() * 300)), gasLimit: pick([21_000, 40_000]) });
        break;
      case 14:
        await sign(w, { to: TOKEN_ADDR, data: TOKEN.encodeFunctionData('approve', [someone(), pick([0n, 5n])]), gasLimit: 80_000 });
        break;
      default:
        await sign(w, { to: SINK_ADDR, data: SINK.encodeFunctionData('probe', [pick([EMPTY_ADDR, TOKEN_ADDR, addr(0x10000 + Math.floor(next() * 9))]), '0x70a08231' + '00'.repeat(32)]), gasLimit: gas });
    }
  }
  return out;
}

function summary(b: ExecutedBlock) {
  return {
    stateRoot: hex(b.stateRoot),
    receiptsRoot: hex(b.receiptsRoot),
    transactionsRoot: hex(b.transactionsRoot),
    logsBloom: hex(b.logsBloom),
    gasUsed: b.gasUsed,
    txs: b.txs.map((t) => ({
      hash: hex(t.tx.hash),
      status: t.status,
      gasUsed: t.gasUsed,
      cumulative: t.cumulativeGasUsed,
      logs: t.logs.map((l) => [hex(l.address), l.topics.map(hex), hex(l.data)]),
      bloom: hex(t.logsBloom),
      createdAddress: t.createdAddress && hex(t.createdAddress),
      vmError: t.vmError,
      returnValue: hex(t.returnValue),
      touched: (t.touched ?? []).map(hex),
    })),
    excluded: b.excluded.map((x) => [hex(x.tx.hash), x.reason]),
  };
}

const built = loadRevm().addon?.transact !== undefined;

for (const fork of SUPPORTED_HARDFORKS) {
  test(`${fork}: blocks of random contract txs give the same roots, receipts, logs, touched sets and change sets on revm as on runTx`, { skip: built ? false : 'the revm addon is not built' }, async () => {
    const viaRevm = await runner(fork, true);
    const slow = await runner(fork, false);
    const next = prng(2323);
    const nonces = [0, 0, 0, 0, 0];
    let included = 0;
    const kinds = new Map<string, number>();
    let excluded = 0;
    const senders = [...wallets, POOR].map((w) => w.address.slice(2).toLowerCase());
    const committed = new Map(senders.map((_, i) => [i, 0]));
    const coinbases = [new Uint8Array(20), hexBytes(RICH_COINBASE), hexBytes(EMPTY_ADDR), hexBytes(wallets[0]!.address)];
    for (let h = 1n; h <= 8n; h++) {
      const txs = await randomBlock(next, nonces, 60, fork, h);
      const ctx: BlockContext = {
        number: h,
        timestamp: 1_700_000_000n + h,
        coinbase: h === 8n ? hexBytes(addr(0xc0ffee)) : coinbases[Number(h) % coinbases.length]!,
        gasLimit: 30_000_000n,
        baseFee: h % 2n === 0n ? 7n : 1n,
        mixHash: new Uint8Array(32),
      };
      const a = await viaRevm.r.executeBlock(viaRevm.parent, ctx, txs);
      const b = await slow.r.executeBlock(slow.parent, ctx, txs);
      const sa = summary(a);
      const sb = summary(b);
      for (let i = 0; i < Math.max(sa.txs.length, sb.txs.length); i++) assert.deepEqual(sa.txs[i], sb.txs[i], `block ${h} tx ${i}`);
      assert.deepEqual(sa, sb, `block ${h}`);
      assert.deepEqual(a.flatChange, b.flatChange, `block ${h}: the flat change set`);
      viaRevm.commit(h, a);
      slow.commit(h, b);
      included += a.txs.length;
      for (const t of a.txs) kinds.set(`${t.status} ${t.vmError ?? ''} ${t.createdAddress ? 'create' : ''} ${t.logs.length > 0 ? 'logs' : ''}`, (kinds.get(`${t.status} ${t.vmError ?? ''} ${t.createdAddress ? 'create' : ''} ${t.logs.length > 0 ? 'logs' : ''}`) ?? 0) + 1);
      excluded += a.excluded.length;
      for (const [w, n] of committed) nonces[w] = n;
      for (const t of a.txs) {
        const w = senders.indexOf(hex(t.tx.from));
        if (w < 0) continue;
        nonces[w] = Number(t.tx.nonce) + 1;
        committed.set(w, nonces[w]!);
      }
    }
    const taken = slow.runCalls() - viaRevm.runCalls();
    // what the random blocks covered, on the revm side too
    for (const k of ['1   logs', '0 out of gas  ', '0 execution reverted  ', '1  create ', '0 execution reverted create ']) assert.ok((kinds.get(k) ?? 0) > 0, `no tx of kind ${JSON.stringify(k)}: ${JSON.stringify([...kinds])}`);
    assert.ok(taken > included / 2, `revm took ${taken} of ${included} txs`);
    assert.ok(excluded > 20 && included > 250, `${included} included, ${excluded} excluded`);
  });
}
