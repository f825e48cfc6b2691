/**
 * State sync (docs/abci.md "State sync"): takes a snapshot every `snapshot-interval` blocks off the
 * chain thread (store/snapshotwrite.ts), serves them (ListSnapshots, LoadSnapshotChunk), and restores
 * one into an empty home (OfferSnapshot, ApplySnapshotChunk): each chunk is checked against the
 * SHA-256 the snapshot's metadata gives for it, and after the last chunk the Merkle tries are rebuilt
 * from the restored accounts and slots; only when the state root equals the app hash CometBFT's light
 * client verified are the blocks written and the node moved to the snapshot height. Until then the
 * node answers as the empty node it was.
 */
import { RLP } from '@ethereumjs/rlp';
import { keccak256 } from '../evm/common.js';
import { EMPTY_TRIE_ROOT } from '../evm/orderedtrie.js';
import { updateTrie, type TrieNodeStore } from '../evm/trieupdate.js';
import { equalBytes } from '../lib/bytes.js';
import type { Logger } from '../lib/log.js';
import { decodeValue } from '../lib/serial.js';
import type { BlockWrite, Store } from '../store/store.js';
import { chunkHashesOf, decodeMeta, RecordReader, RecordTag, RestoreRows, sha256, SNAPSHOT_FORMAT, SnapshotDir, SnapshotFormatError, type SnapshotInfo, type SnapshotMeta } from '../store/snapshot.js';
import { writeSnapshotInWorker } from '../store/snapshotwrite.js';
import type { ApplyChunkResult, OfferResult, SnapshotApp } from '../types/abci.js';

/** Keys one trie update of a restore applies at most (the nodes it writes are flushed after each). */
export const MAX_RESTORE_TRIE_BATCH = 16_384;

export interface StateSyncOptions {
  /** take a snapshot every this many blocks (0: never; app.toml [state-sync] snapshot-interval) */
  interval: number;
  /** snapshots kept (0: all; snapshot-keep-recent) */
  keepRecent: number;
  /** the database file (the snapshot worker opens its own connection) and data/snapshots/ */
  dbPath: string;
  snapshotsDir: string;
  chainId: string;
  /** chunk size (tests make small chunks; default SNAPSHOT_CHUNK_BYTES) */
  chunkBytes?: number;
}

/** What a restore moves when it is done: the application's head and caches (EvmApp.afterRestore). */
export interface RestoreTarget {
  afterRestore(height: bigint): Promise<void>;
}

interface Restoring {
  snapshot: SnapshotInfo;
  appHash: Uint8Array;
  chunkHashes: Uint8Array[];
  next: number;
  reader: RecordReader;
  meta?: SnapshotMeta;
  blocks: BlockWrite[];
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export class StateSync implements SnapshotApp {
  private readonly dir: SnapshotDir;
  private readonly rows: RestoreRows;
  private taking: Promise<void> | undefined;
  private restoring: Restoring | undefined;

  constructor(
    private readonly store: Store,
    private readonly target: RestoreTarget,
    private readonly opts: StateSyncOptions,
    private readonly log: Logger,
    /** after a restore: the node is at `height` now (the RPC thread follows) */
    private readonly onRestored: (height: bigint) => void,
  ) {
    this.dir = new SnapshotDir(opts.snapshotsDir);
    this.rows = new RestoreRows(store.db);
    this.dir.prune(opts.keepRecent);
  }

  /** After block `height` committed: start its snapshot when due and none is being taken (Cosmos SDK skips then too). */
  afterCommit(height: bigint): void {
    const { interval } = this.opts;
    if (interval === 0 || height % BigInt(interval) !== 0n) return;
    if (this.taking) {
      this.log.info({ height: Number(height) }, 'snapshot skipped: the previous one is still being taken');
      return;
    }
    const started = performance.now();
    const job = { dbPath: this.opts.dbPath, snapshotsDir: this.opts.snapshotsDir, height, chainId: this.opts.chainId, chunkBytes: this.opts.chunkBytes };
    this.taking = writeSnapshotInWorker(job)
      .then((s) => {
        const pruned = this.dir.prune(this.opts.keepRecent);
        this.log.info({ height: Number(height), chunks: s.chunks, hash: hex(s.hash), ms: Math.round(performance.now() - started), pruned: pruned.map(Number) }, 'snapshot taken');
      })
      .catch((e: unknown) => this.log.warn({ height: Number(height), err: e instanceof Error ? e.message : String(e) }, 'snapshot failed'))
      .finally(() => (this.taking = undefined));
  }

  /** resolves when no snapshot is being taken (tests, shutdown) */
  async idle(): Promise<void> {
    await this.taking;
  }

  listSnapshots(): SnapshotInfo[] {
    return this.dir.list();
  }

  loadSnapshotChunk(height: bigint, format: number, index: number): Uint8Array {
    return this.dir.chunk(height, format, index) ?? new Uint8Array();
  }

  offerSnapshot(snapshot: SnapshotInfo, appHash: Uint8Array): OfferResult {
    const fields = { height: Number(snapshot.height), format: snapshot.format, chunks: snapshot.chunks };
    if (snapshot.format !== SNAPSHOT_FORMAT) return 'rejectFormat';
    const head = this.store.latestHeight();
    if (head !== undefined && head > 0n) {
      this.log.error({ ...fields, head: Number(head) }, 'snapshot offered to a node that has blocks: state sync needs an empty home');
      return 'abort';
    }
    let chunkHashes: Uint8Array[];
    try {
      chunkHashes = chunkHashesOf(snapshot);
    } catch (e) {
      this.log.warn({ ...fields, err: (e as Error).message }, 'snapshot refused');
      return 'reject';
    }
    if (snapshot.height < 1n || appHash.length !== 32) return 'reject';
    this.store.transaction(() => this.rows.clearPartial());
    this.restoring = { snapshot, appHash, chunkHashes, next: 0, reader: new RecordReader(), blocks: [] };
    this.log.info({ ...fields, appHash: hex(appHash) }, 'restoring a snapshot');
    return 'accept';
  }

  async applySnapshotChunk(index: number, chunk: Uint8Array, sender: string): Promise<ApplyChunkResult> {
    const r = this.restoring;
    if (!r) return { result: 'abort' };
    if (index < r.next) return { result: 'accept' };
    if (index > r.next) return { result: 'retrySnapshot' };
    if (!equalBytes(sha256(chunk), r.chunkHashes[index]!)) {
      this.log.warn({ index, sender }, 'snapshot chunk does not match its hash: fetched again from another peer');
      return { result: 'retry', refetchChunks: [index], rejectSenders: sender === '' ? [] : [sender] };
    }
    try {
      this.store.transaction(() => {
        for (const rec of r.reader.records(chunk)) this.apply(r, rec.tag, rec.body);
      });
      r.next++;
      if (r.next < r.snapshot.chunks) return { result: 'accept' };
      await this.finish(r);
      return { result: 'accept' };
    } catch (e) {
      // a malformed record (SnapshotFormatError, or the store codec or RLP refusing its bytes) or a
      // state that is not the verified one: this snapshot is refused whole, the home stays empty
      this.log.error({ index, err: e instanceof SnapshotFormatError ? e.message : e instanceof Error ? e.stack : String(e) }, 'snapshot refused');
      this.restoring = undefined;
      this.store.transaction(() => this.rows.clearPartial());
      return { result: 'rejectSnapshot' };
    }
  }

  private apply(r: Restoring, tag: RecordTag, body: Buffer): void {
    const h = r.snapshot.height;
    if (!r.meta) {
      if (tag !== RecordTag.Meta) throw new SnapshotFormatError('snapshot does not start with its META record');
      const m = decodeMeta(body);
      if (m.height !== h) throw new SnapshotFormatError(`snapshot data of height ${m.height}, offered as ${h}`);
      if (m.chainId !== this.opts.chainId) throw new SnapshotFormatError(`snapshot of chain ${m.chainId}, this node runs ${this.opts.chainId}`);
      if (!equalBytes(m.stateRoot, r.appHash)) throw new SnapshotFormatError(`snapshot state root ${hex(m.stateRoot)} is not the verified app hash ${hex(r.appHash)}`);
      r.meta = m;
      return;
    }
    switch (tag) {
      case RecordTag.Block:
        if (r.blocks.length >= 2) throw new SnapshotFormatError('snapshot holds more than two blocks');
        r.blocks.push(decodeValue<BlockWrite>(body));
        return;
      case RecordTag.Hash:
        if (body.length !== 40) throw new SnapshotFormatError('snapshot HASH record is not 40 bytes');
        return this.rows.hash(body.readBigUInt64BE(0), body.subarray(8));
      case RecordTag.Account:
        if (body.length <= 20) throw new SnapshotFormatError('snapshot ACCOUNT record too short');
        return this.rows.account(h, body.subarray(0, 20), body.subarray(20));
      case RecordTag.Slot:
        if (body.length <= 52 || body.length > 84 || body[52] === 0) throw new SnapshotFormatError('snapshot SLOT record malformed');
        return this.rows.slot(h, body.subarray(0, 52), body.subarray(52));
      case RecordTag.Code: {
        const hash = body.subarray(0, 32);
        const code = body.subarray(32);
        if (body.length < 32 || !equalBytes(keccak256(code), hash)) throw new SnapshotFormatError('snapshot CODE record does not match its hash');
        return this.rows.code(hash, code);
      }
      case RecordTag.End:
        return;
      default:
        throw new SnapshotFormatError(`snapshot record ${tag} out of place`);
    }
  }

  /** After the last chunk: the tries from the restored rows, the root against the app hash, then the blocks. */
  private async finish(r: Restoring): Promise<void> {
    const h = r.snapshot.height;
    this.restoring = undefined;
    if (!r.reader.ended) throw new SnapshotFormatError('snapshot ends without its END record');
    const [genesis, head] = r.blocks;
    if (!genesis || !head || genesis.height !== 0n || head.height !== h) throw new SnapshotFormatError('snapshot lacks block 0 or its own block');
    const started = performance.now();
    const root = this.rebuildTries(h);
    if (!equalBytes(root, r.appHash)) {
      throw new SnapshotFormatError(`restored state root ${hex(root)} is not the app hash ${hex(r.appHash)} CometBFT's light client verified`);
    }
    const hdr = head.evm.header;
    if (hdr.number !== h || !equalBytes(hdr.stateRoot, r.appHash) || !equalBytes(hdr.hash, head.hash)) {
      throw new SnapshotFormatError(`snapshot block ${h} does not carry the verified state root`);
    }
    const ownGenesis = this.store.evmBlock(0n);
    if (ownGenesis && !equalBytes(ownGenesis.header.hash, genesis.hash)) throw new SnapshotFormatError('snapshot of another genesis block');
    this.store.transaction(() => {
      this.rows.settle(h);
      if (!ownGenesis) this.store.putBlock(genesis);
      this.store.putBlock(head);
    });
    await this.target.afterRestore(h);
    this.log.info({ height: Number(h), appHash: hex(r.appHash), trieMs: Math.round(performance.now() - started) }, 'snapshot restored: state verified against the app hash');
    this.onRestored(h);
  }

  /** Builds every storage trie and the account trie from the rows at `h`; checks each storage root; returns the state root. */
  private rebuildTries(h: bigint): Uint8Array {
    const pending = new Map<string, Uint8Array>();
    const nodes: TrieNodeStore = {
      node: (hash) => pending.get(hex(hash)) ?? this.store.trieGet(Buffer.from(hash)),
      putNode: (hash, enc) => void pending.set(hex(hash), enc),
    };
    const flush = () => {
      this.store.transaction(() => this.store.triePutMany([...pending].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Buffer, Uint8Array])));
      pending.clear();
    };
    const storageRoots = new Map<string, Uint8Array>();
    let after: Buffer = Buffer.alloc(0);
    for (;;) {
      const page = this.rows.slotsPage(h, after, MAX_RESTORE_TRIE_BATCH);
      if (page.length === 0) break;
      // one update per address run of the page, from that address's root so far
      let i = 0;
      while (i < page.length) {
        const addr = page[i]!.k.subarray(0, 20);
        const a = hex(addr);
        const updates: [Uint8Array, Uint8Array][] = [];
        while (i < page.length && page[i]!.k.subarray(0, 20).equals(addr)) {
          updates.push([keccak256(page[i]!.k.subarray(20)), RLP.encode(page[i]!.v)]);
          i++;
        }
        storageRoots.set(a, updateTrie(nodes, storageRoots.get(a) ?? EMPTY_TRIE_ROOT, updates));
      }
      flush();
      after = page.at(-1)!.k;
    }
    let root = EMPTY_TRIE_ROOT;
    after = Buffer.alloc(0);
    for (;;) {
      const page = this.rows.accountsPage(h, after, MAX_RESTORE_TRIE_BATCH);
      if (page.length === 0) break;
      const updates: [Uint8Array, Uint8Array][] = [];
      for (const { addr, v } of page) {
        const fields = RLP.decode(v) as Uint8Array[];
        if (!Array.isArray(fields) || fields.length !== 4) throw new SnapshotFormatError(`account ${hex(addr)}: not an account RLP`);
        const want = storageRoots.get(hex(addr)) ?? EMPTY_TRIE_ROOT;
        storageRoots.delete(hex(addr));
        if (!equalBytes(fields[2]!, want)) throw new SnapshotFormatError(`account ${hex(addr)}: its storage root is not the root of its restored slots`);
        updates.push([keccak256(addr), v]);
      }
      root = updateTrie(nodes, root, updates);
      flush();
      after = page.at(-1)!.addr;
    }
    if (storageRoots.size > 0) throw new SnapshotFormatError('snapshot holds slots of an account it does not hold');
    return root;
  }
}
