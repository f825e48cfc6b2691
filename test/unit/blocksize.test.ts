/**
 * EIP-7934's block size bound (src/evm/blocksize.ts) in block proposals (src/chain/proposal.ts): under
 * Osaka, PrepareProposal (the embedded engine's and CometBFT's) stops at the first tx that would bring
 * the block within geth's buffer zone of 8,388,608 bytes, and ProcessProposal rejects a block over the
 * bound; before Osaka neither bounds the size. Real signed txs with large calldata, decoded as ferry does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Account } from '@ethereumjs/util';
import { Wallet } from 'ethers';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { Proposals } from '../../src/chain/proposal.js';
import { TxPool, type PoolEntry } from '../../src/chain/txpool.js';
import { BLOCK_SIZE_BUFFER_ZONE, MAX_RLP_BLOCK_SIZE, blockSizeBound, blockSizeBounded, headerSizeBound } from '../../src/evm/blocksize.js';
import { makeCommon } from '../../src/evm/common.js';
import { encodeBlock } from '../../src/evm/ethrlp.js';
import { decodeTx, feeCap } from '../../src/evm/tx.js';
import type { EvmHeader } from '../../src/types/chain.js';
import { devKeys } from '../helpers/accounts.js';

const CHAIN_ID = 9000n;
const osaka = makeCommon(CHAIN_ID, 'osaka');
const prague = makeCommon(CHAIN_ID, 'prague');
/** the block time (unix seconds) from which the test's schedule runs Osaka */
const OSAKA_TIME = 1_000n;
const BEFORE_OSAKA_MS = 999_000;
const AT_OSAKA_MS = 1_000_000;
const GWEI = 10n ** 9n;
/** calldata per tx: 70 of them (about 8.6 MB) pass both the builder's 7,388,608-byte budget and the 8,388,608-byte bound */
const DATA_BYTES = 120 * 1024;
const TX_COUNT = 70;
/** enough for 120 KiB of non-zero calldata at EIP-7623's floor (40 gas a byte), under EIP-7825's cap */
const TX_GAS = 5_000_000n;
const BLOCK_GAS = 1_000_000_000n;

/** signed once for the whole file (signing 120 KiB txs is slow) */
let signed: Promise<Omit<PoolEntry, 'seq'>[]> | undefined;
const bigTxs = () => (signed ??= signBigTxs());

async function signBigTxs(): Promise<Omit<PoolEntry, 'seq'>[]> {
  const wallet = new Wallet(devKeys()[3]!);
  const out: Omit<PoolEntry, 'seq'>[] = [];
  for (let nonce = 0; nonce < TX_COUNT; nonce++) {
    const raw = await wallet.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce,
      gasLimit: TX_GAS,
      to: '0x000000000000000000000000000000000000dEaD',
      data: '0x' + 'ab'.repeat(DATA_BYTES),
      maxFeePerGas: 100n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    const decoded = decodeTx(Buffer.from(raw.slice(2), 'hex'), osaka);
    const native = wrapEthereumTx(decoded.evm.raw, decoded.evm.from, decoded.evm.gasLimit, feeCap(decoded.evm));
    out.push({ decoded, native });
  }
  return out;
}

function proposals(entries: Omit<PoolEntry, 'seq'>[]): Proposals {
  const pool = new TxPool({ size: 1000, priceBumpPercent: 10, accountQueue: 128 });
  for (const e of entries) pool.add(e, 0n, GWEI);
  const byNative = new Map(entries.map((e) => [Buffer.from(e.native).toString('hex'), e.decoded]));
  return new Proposals({
    pool,
    priceBumpPercent: 10,
    maxGas: BLOCK_GAS,
    impersonation: false,
    decodeNative: (n) => byNative.get(Buffer.from(n).toString('hex'))!,
    latestAccount: async () => ({ nonce: 0n }) as Account,
    nextBaseFee: () => GWEI,
    blockGasLimit: () => BLOCK_GAS,
    commonAt: (t) => (t >= OSAKA_TIME ? osaka : prague),
    rules: () => osaka,
    mayImpersonate: () => false,
  });
}

const envelopeBytes = (txs: Uint8Array[], entries: Omit<PoolEntry, 'seq'>[]) => {
  const raw = new Map(entries.map((e) => [Buffer.from(e.native).toString('hex'), e.decoded.evm.raw.length]));
  return txs.reduce((n, t) => n + raw.get(Buffer.from(t).toString('hex'))!, 0);
};

describe('EIP-7934 block size bound', () => {
  it("MAX_RLP_BLOCK_SIZE is the EIP's 10 MiB less 2 MiB, applied from Osaka on", () => {
    assert.equal(MAX_RLP_BLOCK_SIZE, 10 * 1024 * 1024 - 2 * 1024 * 1024);
    assert.equal(blockSizeBounded(osaka), true);
    assert.equal(blockSizeBounded(prague), false);
  });

  it('blockSizeBound bounds the RLP of a real block from above, by no more than the widest header adds', async () => {
    const entries = (await bigTxs()).slice(0, 3);
    const header: EvmHeader = {
      number: 12n,
      hash: new Uint8Array(32),
      parentHash: new Uint8Array(32).fill(1),
      stateRoot: new Uint8Array(32).fill(2),
      transactionsRoot: new Uint8Array(32).fill(3),
      receiptsRoot: new Uint8Array(32).fill(4),
      logsBloom: new Uint8Array(256),
      miner: new Uint8Array(20).fill(5),
      gasLimit: BLOCK_GAS,
      gasUsed: 3n * TX_GAS,
      timestamp: 1_700_000_000n,
      extraData: new Uint8Array(),
      baseFeePerGas: GWEI,
      mixHash: new Uint8Array(32).fill(6),
      size: 0n,
    };
    const raws = entries.map((e) => e.decoded.evm.raw);
    const actual = encodeBlock(osaka, header, raws).length;
    const bound = blockSizeBound(osaka, raws);
    assert.ok(bound >= actual && bound - actual < 64, `bound ${bound}, actual ${actual}`);
  });

  it('under Osaka the builder stops at the first tx that does not fit; before Osaka it takes them all', async () => {
    const entries = await bigTxs();
    const total = entries.reduce((n, e) => n + e.decoded.evm.raw.length, 0);
    assert.ok(total > MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE, 'the txs overflow the budget');

    const picked = proposals(entries).prepare({ timeMs: AT_OSAKA_MS, maxTxBytes: 100 * 1024 * 1024 });
    const used = envelopeBytes(picked, entries);
    const one = entries[0]!.decoded.evm.raw.length;
    assert.ok(picked.length > 0 && picked.length < TX_COUNT, `${picked.length} txs`);
    assert.ok(headerSizeBound(osaka) + used < MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE, 'within the budget');
    assert.ok(headerSizeBound(osaka) + used + one >= MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE, 'the next one would not fit');

    const ordered = await proposals(entries).order({ height: 2n, timeMs: AT_OSAKA_MS, txs: entries.map((e) => e.native), maxTxBytes: 100 * 1024 * 1024 });
    assert.equal(ordered.length, picked.length, "CometBFT's PrepareProposal stops at the same tx");

    const before = proposals(entries).prepare({ timeMs: BEFORE_OSAKA_MS, maxTxBytes: 100 * 1024 * 1024 });
    assert.equal(before.length, TX_COUNT);
  });

  it('ProcessProposal rejects a block over the bound under Osaka only', async () => {
    const entries = await bigTxs();
    const all = entries.map((e) => e.native);
    assert.ok(blockSizeBound(osaka, entries.map((e) => e.decoded.evm.raw)) > MAX_RLP_BLOCK_SIZE);
    const p = proposals(entries);
    assert.equal(await p.process({ height: 2n, timeMs: AT_OSAKA_MS, txs: all }), false);
    assert.equal(await p.process({ height: 2n, timeMs: BEFORE_OSAKA_MS, txs: all }), true);
    // the largest prefix under the bound is accepted
    let n = TX_COUNT;
    while (blockSizeBound(osaka, entries.slice(0, n).map((e) => e.decoded.evm.raw)) > MAX_RLP_BLOCK_SIZE) n--;
    assert.equal(await p.process({ height: 2n, timeMs: AT_OSAKA_MS, txs: all.slice(0, n) }), true);
    assert.equal(await p.process({ height: 2n, timeMs: AT_OSAKA_MS, txs: all.slice(0, n + 1) }), false);
  });
});
