/**
 * chain/reader.ts over a temporary store whose blocks the real application made (EvmApp: FinalizeBlock
 * and Commit in the block's store transaction, real signed txs calling a contract that emits logs):
 * block selectors, blocks by number and hash, transactions and receipts, state at a height, and
 * eth_getLogs' read path with the logs cap (0 = no cap; only logs that match count toward it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { ChainReader, type ReaderOptions } from '../../src/chain/reader.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import type { Hash } from '../../src/types/chain.js';
import { devKeys } from '../helpers/accounts.js';
import { chainGenesis, runBlock } from '../helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const word = (n: number) => n.toString(16).padStart(64, '0');
const topic = (n: number): Hash => bytes(word(n));
/** bytes as hex, so a Buffer and a Uint8Array of the same bytes compare equal */
const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('hex'));

// runtime: LOG2(0, 0, topic0 = CALLDATALOAD(0), topic1 = CALLDATALOAD(32)); STOP
const EMITTER_RUNTIME = '602035' + '600035' + '6000' + '6000' + 'a2' + '00';
const EMITTER = bytes('0x' + 'e1'.repeat(20));
const ELSEWHERE = bytes('0x' + 'e2'.repeat(20));
const RECIPIENT = '0x' + 'ab'.repeat(20);
const GWEI = 10n ** 9n;
const TRANSFER_VALUE = 12345n;

/** the logs the chain holds, per block: [topic0, topic1] of each emitted log, in order */
const BLOCK_LOGS: [number, number][][] = [[[0xa, 1], [0xb, 2], [0xa, 3]], [[0xa, 4]], []];

function reader(store: Store, logsCap: number): Promise<ChainReader> {
  const opts: ReaderOptions = {
    chainId: 9000n,
    hardfork: 'prague',
    gasCap: 0n,
    logsCap,
    coinbase: new Uint8Array(20),
    simulator: undefined as never,
    submit: () => Promise.reject(new Error('no submissions in this test')),
  };
  return ChainReader.create(store, opts);
}

describe('chain reader over a store the application wrote', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chain-reader-'));
  let store: Store;
  let r: ChainReader;
  const wallet = new Wallet(devKeys()[0]!);
  const from = bytes(wallet.address);
  /** the EVM tx hashes of each block, in order */
  const txHashes: Hash[][] = [];

  before(async () => {
    store = new Store(join(dir, 'ferry.db'));
    const genesis = chainGenesis();
    genesis.evm.alloc.set('0x' + Buffer.from(EMITTER).toString('hex'), { balance: 0n, nonce: 1n, code: bytes(EMITTER_RUNTIME) });
    const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } }, silent, {
      onPoolChange() {},
    });
    await app.initChain();
    let nonce = 0;
    const sign = async (req: Record<string, unknown>) => {
      const raw = bytes(await wallet.signTransaction({ chainId: 9000, type: 2, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 100_000, nonce: nonce++, ...req }));
      return { raw, native: wrapEthereumTx(raw, from, 100_000n, 10n * GWEI) };
    };
    for (let b = 0; b < BLOCK_LOGS.length; b++) {
      const txs = [];
      for (const [t0, t1] of BLOCK_LOGS[b]!) txs.push(await sign({ to: '0x' + Buffer.from(EMITTER).toString('hex'), data: '0x' + word(t0) + word(t1) }));
      // block 2 also has a plain transfer (no logs)
      if (b === 1) txs.push(await sign({ to: RECIPIENT, value: TRANSFER_VALUE }));
      await runBlock(app, store, BigInt(b + 1), txs.map((t) => t.native));
      txHashes.push(store.evmBlock(BigInt(b + 1))!.transactions.map((t) => t.hash));
    }
    r = await reader(store, 0);
  });
  after(() => {
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the head from the store and follows commits forward only', async () => {
    assert.equal(r.latestNumber(), 3n);
    r.onCommitted(2n);
    assert.equal(r.latestNumber(), 3n);
    // a reader opened before the last block sees it once told
    const fresh = await reader(store, 0);
    assert.equal(fresh.latestNumber(), 3n);
  });

  it('resolves block selectors: tags, numbers, hashes (unknown ones to undefined)', () => {
    assert.equal(r.resolveBlock({ kind: 'tag', tag: 'earliest' }), 0n);
    assert.equal(r.resolveBlock({ kind: 'tag', tag: 'latest' }), 3n);
    assert.equal(r.resolveBlock({ kind: 'number', number: 2n }), 2n);
    assert.equal(r.resolveBlock({ kind: 'number', number: 4n }), undefined);
    const h2 = r.blockByNumber(2n)!.header.hash;
    assert.equal(r.resolveBlock({ kind: 'hash', hash: h2, requireCanonical: true }), 2n);
    assert.equal(r.resolveBlock({ kind: 'hash', hash: topic(77), requireCanonical: false }), undefined);
  });

  it('serves blocks by number and by hash, linked by parent hash', () => {
    for (let n = 1n; n <= 3n; n++) {
      const b = r.blockByNumber(n)!;
      assert.equal(b.header.number, n);
      assert.equal(r.blockByHash(b.header.hash)?.header.number, n);
      assert.equal(hex(b.header.parentHash), hex(r.blockByNumber(n - 1n)!.header.hash));
      assert.equal(b.transactions.length, txHashes[Number(n) - 1]!.length);
    }
    assert.equal(r.blockByNumber(4n), undefined);
    assert.equal(r.blockByHash(topic(77)), undefined);
  });

  it('serves transactions and receipts with their location; block receipts in order', () => {
    const hash = txHashes[1]![1]!; // the transfer in block 2
    const found = r.transactionByHash(hash)!;
    assert.equal(hex(found.tx.hash), hex(hash));
    assert.equal(found.location?.blockNumber, 2n);
    assert.equal(found.location?.index, 1);
    const receipt = r.receipt(hash)!;
    assert.equal(receipt.status, 1);
    assert.equal(receipt.gasUsed, 21_000n);
    assert.equal(receipt.logs.length, 0);
    const receipts = r.blockReceipts(1n)!;
    assert.deepEqual(receipts.map((x) => hex(x.transactionHash)), txHashes[0]!.map(hex));
    assert.deepEqual(receipts.map((x) => x.logs.length), [1, 1, 1]);
    assert.deepEqual(r.blockReceipts(3n), []);
    assert.equal(r.blockReceipts(4n), undefined);
    assert.equal(r.receipt(topic(77)), undefined);
    assert.equal(r.transactionByHash(topic(77)), undefined);
  });

  it('answers state at a height: nonce and balance before and after the transfer', async () => {
    assert.equal(await r.nonce(from, 0n), 0n);
    assert.equal(await r.nonce(from, 1n), 3n);
    assert.equal(await r.nonce(from, 3n), 5n);
    const to = bytes(RECIPIENT);
    assert.equal(await r.balance(to, 1n), 0n);
    assert.equal(await r.balance(to, 2n), TRANSFER_VALUE);
    assert.equal(hex(await r.code(EMITTER, 3n)), EMITTER_RUNTIME);
    await assert.rejects(() => r.balance(to, 9n), /header not found/);
  });

  const all = { fromBlock: 0n, toBlock: 3n, addresses: [] as Uint8Array[], topics: [] as (Hash[] | null)[] };
  const pairs = (logs: { topics: Uint8Array[] }[]) => logs.map((l) => [Number(BigInt('0x' + Buffer.from(l.topics[0]!).toString('hex'))), Number(BigInt('0x' + Buffer.from(l.topics[1]!).toString('hex')))]);

  it('getLogs: every log of the range in block and log order, with its location', () => {
    const logs = r.getLogs(all);
    assert.deepEqual(pairs(logs), BLOCK_LOGS.flat());
    assert.deepEqual(logs.map((l) => l.blockNumber), [1n, 1n, 1n, 2n]);
    assert.deepEqual(logs.map((l) => l.logIndex), [0, 1, 2, 0]);
    assert.equal(hex(logs[3]!.transactionHash), hex(txHashes[1]![0]));
    assert.equal(hex(logs[3]!.blockHash), hex(r.blockByNumber(2n)!.header.hash));
    assert.ok(logs.every((l) => Buffer.compare(l.address, EMITTER) === 0));
  });

  it('getLogs: filters by address and by each topic position; the range is clipped to the head', () => {
    assert.deepEqual(pairs(r.getLogs({ ...all, topics: [[topic(0xa)]] })), [[0xa, 1], [0xa, 3], [0xa, 4]]);
    assert.deepEqual(pairs(r.getLogs({ ...all, topics: [null, [topic(2), topic(4)]] })), [[0xb, 2], [0xa, 4]]);
    assert.deepEqual(pairs(r.getLogs({ ...all, topics: [[topic(0xa)], [topic(2)]] })), []);
    assert.deepEqual(r.getLogs({ ...all, addresses: [ELSEWHERE] }), []);
    assert.equal(r.getLogs({ ...all, addresses: [ELSEWHERE, EMITTER] }).length, 4);
    assert.deepEqual(pairs(r.getLogs({ ...all, fromBlock: 2n, toBlock: 100n })), [[0xa, 4]]);
    assert.deepEqual(r.getLogs({ ...all, fromBlock: 4n, toBlock: 100n }), []);
  });

  it('logs cap: more matching logs than the cap is an error, never a short answer', async () => {
    const capped = await reader(store, 2);
    assert.throws(() => capped.getLogs(all), { message: 'query returned more than 2 results' });
    assert.throws(() => capped.getLogs({ ...all, topics: [[topic(0xa)]] }), { message: 'query returned more than 2 results' });
  });

  it('logs cap: only matching logs count (4 logs in the range, 1 or 2 match: answered whole)', async () => {
    const capped = await reader(store, 2);
    assert.deepEqual(pairs(capped.getLogs({ ...all, topics: [[topic(0xb)]] })), [[0xb, 2]]);
    assert.deepEqual(pairs(capped.getLogs({ ...all, topics: [null, [topic(1), topic(4)]] })), [[0xa, 1], [0xa, 4]]);
    // exactly the cap is allowed
    const three = await reader(store, 3);
    assert.equal(three.getLogs({ ...all, topics: [[topic(0xa)]] }).length, 3);
  });

  it('logs cap 0 means no cap', async () => {
    const uncapped = await reader(store, 0);
    assert.equal(uncapped.getLogs(all).length, 4);
  });
});
