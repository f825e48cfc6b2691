/**
 * State-sync snapshots (store/snapshot.ts, store/snapshotwrite.ts, chain/statesync.ts; docs/abci.md
 * "State sync"): a source node makes blocks with transfers and a contract with storage; its snapshot
 * of height H is the same bytes whenever it is taken (state read as of H); a fresh home restores it
 * chunk by chunk (a corrupted chunk is refused and asked again from another peer, a snapshot whose
 * state does not hash to the verified app hash is refused and leaves the home empty), reports H in
 * Info, answers history below H as a pruned node does, and then executes the next blocks exactly as
 * the source did.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import type { ChainReader } from '../../src/chain/reader.js';
import { StateSync } from '../../src/chain/statesync.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { mapDomainError } from '../../src/lib/errors.js';
import type { Logger } from '../../src/lib/log.js';
import { ChunkWriter, RecordReader, RecordTag, sha256, snapshotIdentity, SnapshotDir, type SnapshotInfo } from '../../src/store/snapshot.js';
import { writeSnapshot } from '../../src/store/snapshotwrite.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';
import { commitBlock, openReader, thrown } from '../helpers/appblocks.js';
import { chainGenesis } from '../helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const MEMPOOL = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const SNAP_HEIGHT = 8n;
const LAST = 12;
const CHUNK_BYTES = 300;
/** init code: SSTORE(1, 42), SSTORE(2, 7), then returns the 10 bytes after it as the contract's code */
const INIT_CODE = '0x602a600155' + '6007600255' + '600a6016600039' + '600a6000f3' + '60005460005260206000';
const TO = bytes('0x' + '31'.repeat(20));

interface Node {
  dir: string;
  store: Store;
  app: EvmApp;
  sync: StateSync;
  restored: bigint[];
}

async function openNode(dir: string): Promise<Node> {
  const store = new Store(join(dir, 'ferry.db'));
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice: 0n, mempool: MEMPOOL, coinbaseFromProposer: true }, silent, { onPoolChange() {} });
  await app.initChain();
  const restored: bigint[] = [];
  const sync = new StateSync(
    store,
    app,
    { interval: 0, keepRecent: 2, dbPath: join(dir, 'ferry.db'), snapshotsDir: join(dir, 'snapshots'), chainId: chainGenesis().chainId, chunkBytes: CHUNK_BYTES },
    silent,
    (h) => restored.push(h),
  );
  return { dir, store, app, sync, restored };
}

async function readerOf(n: Node): Promise<ChainReader> {
  const r = await openReader(join(n.dir, 'ferry.db'));
  r.onCommitted(n.store.latestHeight()!);
  return r;
}

/** Every chunk of a snapshot, as its files hold them. */
const chunksOf = (n: Node, s: SnapshotInfo) => Array.from({ length: s.chunks }, (_, i) => n.sync.loadSnapshotChunk(s.height, s.format, i));

describe('state sync: snapshot, restore, and the blocks after it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-statesync-'));
  let source: Node;
  const blocks: Uint8Array[][] = [];
  let snap: SnapshotInfo;

  before(async () => {
    source = await openNode(join(dir, 'source'));
    const wallet = new Wallet(devKeys()[0]!);
    const sender = bytes(wallet.address);
    const fee = 100n * GWEI;
    for (let h = 1; h <= LAST; h++) {
      const tx =
        h === 2
          ? { chainId: 9000, type: 2, nonce: h - 1, data: INIT_CODE, gasLimit: 200_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI }
          : { chainId: 9000, type: 2, nonce: h - 1, to: '0x' + Buffer.from(TO).toString('hex'), value: BigInt(h), gasLimit: 21_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI };
      const raw = await wallet.signTransaction(tx);
      const native = wrapEthereumTx(bytes(raw), sender, BigInt(tx.gasLimit), fee);
      blocks.push([native]);
      await commitBlock(source, BigInt(h), [native]);
      if (BigInt(h) === SNAP_HEIGHT) snap = writeSnapshot({ dbPath: join(source.dir, 'ferry.db'), snapshotsDir: join(source.dir, 'snapshots'), height: SNAP_HEIGHT, chainId: chainGenesis().chainId, chunkBytes: CHUNK_BYTES });
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the same snapshot of H later (state read as of H), cut into hashed chunks', () => {
    assert.ok(snap.chunks > 3, `${snap.chunks} chunks`);
    const first = chunksOf(source, snap);
    const again = writeSnapshot({ dbPath: join(source.dir, 'ferry.db'), snapshotsDir: join(source.dir, 'snapshots'), height: SNAP_HEIGHT, chainId: chainGenesis().chainId, chunkBytes: CHUNK_BYTES });
    assert.deepEqual(again, snap);
    assert.deepEqual(chunksOf(source, again), first);
    assert.deepEqual(first.map(sha256), Array.from({ length: snap.chunks }, (_, i) => snap.metadata.subarray(i * 32, i * 32 + 32)));
    const listed = source.sync.listSnapshots();
    assert.deepEqual(listed, [snap]);
    // the stream holds the contract's code (besides the genesis predeploys') and both of its slots
    const reader = new RecordReader();
    const records = first.flatMap((c) => [...reader.records(c)]);
    const tags = records.map((r) => r.tag);
    const runtime = bytes(INIT_CODE.slice(-20));
    assert.ok(records.some((r) => r.tag === RecordTag.Code && Buffer.from(r.body.subarray(32)).equals(Buffer.from(runtime))));
    assert.ok(tags.filter((t) => t === RecordTag.Slot).length >= 2);
    assert.equal(tags.at(-1), RecordTag.End);
    assert.ok(reader.ended);
  });

  /** The snapshot's records with `edit` applied to each body, chunked and hashed anew (every chunk matches the metadata). */
  function rewritten(edit: (tag: RecordTag, body: Buffer) => Buffer): { info: SnapshotInfo; chunks: Uint8Array[] } {
    const reader = new RecordReader();
    const chunks: Uint8Array[] = [];
    const w = new ChunkWriter((c) => chunks.push(new Uint8Array(c)), CHUNK_BYTES);
    for (const c of chunksOf(source, snap)) {
      for (const r of reader.records(c)) if (r.tag !== RecordTag.End) w.record(r.tag, edit(r.tag, Buffer.from(r.body)));
    }
    w.end();
    return { info: { height: SNAP_HEIGHT, format: 1, chunks: chunks.length, ...snapshotIdentity(chunks.map(sha256)) }, chunks };
  }

  it('refuses a snapshot whose state does not hash to the verified app hash, or whose records are malformed, and stays empty', async () => {
    const target = await openNode(join(dir, 'tampered'));
    const stateRootAtH = (await readerOf(source)).blockByNumber(SNAP_HEIGHT)!.header.stateRoot;
    let changed = false;
    const tampered = rewritten((tag, body) => {
      if (tag === RecordTag.Account && !changed) {
        body[body.length - 1] = body[body.length - 1]! ^ 1; // the last byte of its code hash
        changed = true;
      }
      return body;
    });
    let blocks = 0;
    const garbled = rewritten((tag, body) => (tag === RecordTag.Block && blocks++ === 1 ? Buffer.from([1, 2, 3]) : body));
    for (const bad of [tampered, garbled]) {
      assert.equal(target.sync.offerSnapshot(bad.info, stateRootAtH), 'accept');
      let last;
      for (let i = 0; i < bad.chunks.length && last?.result !== 'rejectSnapshot'; i++) last = await target.sync.applySnapshotChunk(i, bad.chunks[i]!, 'peer');
      assert.deepEqual(last, { result: 'rejectSnapshot' });
      // CometBFT goes on with another snapshot: a chunk of this one now aborts
      assert.deepEqual(await target.sync.applySnapshotChunk(0, bad.chunks[0]!, 'peer'), { result: 'abort' });
      assert.equal(target.app.info().lastBlockHeight, 0n);
    }
    assert.deepEqual(target.restored, []);
    // an app hash other than the snapshot's own root is refused at the first chunk
    const appHash = source.app.latestHeader().stateRoot;
    assert.notDeepEqual(appHash, stateRootAtH);
    assert.equal(target.sync.offerSnapshot(snap, appHash), 'accept');
    assert.deepEqual(await target.sync.applySnapshotChunk(0, chunksOf(source, snap)[0]!, 'peer'), { result: 'rejectSnapshot' });
    assert.equal(target.sync.offerSnapshot({ ...snap, format: 2 }, stateRootAtH), 'rejectFormat');
    assert.equal(target.sync.offerSnapshot({ ...snap, hash: new Uint8Array(32) }, stateRootAtH), 'reject');
    // the genesis state is still answered: nothing of the refused snapshots is visible
    const r = await readerOf(target);
    assert.equal(thrown(() => r.checkState(0n)), undefined);
    assert.equal(await r.balance(TO, 0n), 0n);
    target.store.close();
  });

  it('restores into a fresh home (a corrupt chunk is asked again), then agrees with the source on every later block', async () => {
    const target = await openNode(join(dir, 'target'));
    const srcReader = await readerOf(source);
    const atH = srcReader.blockByNumber(SNAP_HEIGHT)!;
    assert.equal(target.sync.offerSnapshot(snap, atH.header.stateRoot), 'accept');
    const chunks = chunksOf(source, snap);
    const bad = new Uint8Array(chunks[1]!);
    bad[5]! ^= 0xff;
    assert.deepEqual(await target.sync.applySnapshotChunk(0, chunks[0]!, 'good'), { result: 'accept' });
    assert.deepEqual(await target.sync.applySnapshotChunk(1, bad, 'bad-peer'), { result: 'retry', refetchChunks: [1], rejectSenders: ['bad-peer'] });
    for (let i = 1; i < chunks.length; i++) assert.deepEqual(await target.sync.applySnapshotChunk(i, chunks[i]!, 'good'), { result: 'accept' });
    assert.deepEqual(target.restored, [SNAP_HEIGHT]);
    const info = target.app.info();
    assert.equal(info.lastBlockHeight, SNAP_HEIGHT);
    assert.deepEqual(info.lastBlockAppHash, atH.header.stateRoot);

    const r = await readerOf(target);
    assert.deepEqual(r.blockByNumber(SNAP_HEIGHT), atH);
    assert.deepEqual(r.blockByNumber(0n), srcReader.blockByNumber(0n));
    // below H: the pruned node's answers
    const hist = thrown(() => r.resolveBlock({ kind: 'number', number: 5n }));
    assert.deepEqual(hist && mapDomainError(evmErrors, hist), { code: 4444, message: 'pruned history unavailable' });
    const state0 = thrown(() => r.checkState(0n));
    assert.equal(state0 && mapDomainError(evmErrors, state0).code, -32000);
    assert.equal(thrown(() => r.checkState(SNAP_HEIGHT)), undefined);

    for (let h = Number(SNAP_HEIGHT) + 1; h <= LAST; h++) await commitBlock(target, BigInt(h), blocks[h - 1]!);
    const tr = await readerOf(target);
    const sr = await readerOf(source);
    for (let h = SNAP_HEIGHT; h <= BigInt(LAST); h++) {
      assert.deepEqual(tr.blockByNumber(h)!.header, sr.blockByNumber(h)!.header, `block ${h}`);
      for (const a of [TO, bytes(new Wallet(devKeys()[0]!).address)]) assert.equal(await tr.balance(a, h), await sr.balance(a, h));
    }
    // a node with blocks is never restored over
    assert.equal(target.sync.offerSnapshot(snap, atH.header.stateRoot), 'abort');
    target.store.close();
  });

  it('keeps snapshot-keep-recent snapshots on disk', () => {
    const d = new SnapshotDir(join(source.dir, 'snapshots'));
    for (const h of [10n, 11n, 12n]) writeSnapshot({ dbPath: join(source.dir, 'ferry.db'), snapshotsDir: d.root, height: h, chainId: chainGenesis().chainId });
    assert.deepEqual(d.prune(2), [10n, 8n]);
    assert.deepEqual(d.list().map((s) => s.height), [12n, 11n]);
    assert.ok(readFileSync(join(d.root, '12', 'chunk-0')).length > 0);
  });
});
