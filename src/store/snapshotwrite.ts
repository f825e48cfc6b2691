/**
 * Takes a state-sync snapshot (store/snapshot.ts has the format) on a worker thread with its own
 * read-only connection, inside ONE read transaction: SQLite's WAL keeps that view as it was at the
 * first read while the chain thread goes on committing blocks (and pruning), so block execution never
 * waits for a snapshot and the snapshot never sees half a block. State is read as of the snapshot
 * height from the flat layer's versioned rows (store/flatstate.ts).
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { RLP } from '@ethereumjs/rlp';
import { encodeValue } from '../lib/serial.js';
import { decodeBlock } from './blockcodec.js';
import { decodeReceipt } from './receiptcodec.js';
import { windowHashes } from './hashwindow.js';
import {
  ChunkWriter,
  encodeMeta,
  MAX_SNAPSHOT_CHUNKS,
  RecordTag,
  sha256,
  SNAPSHOT_BLOCK_HASHES,
  SNAPSHOT_CHUNK_BYTES,
  SNAPSHOT_FORMAT,
  snapshotIdentity,
  SnapshotDir,
  SnapshotFormatError,
  type SnapshotInfo,
} from './snapshot.js';

/** keccak256 of empty code: an account without code */
const EMPTY_CODE_HASH = Buffer.from('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'hex');

export interface SnapshotJob {
  dbPath: string;
  snapshotsDir: string;
  height: bigint;
  chainId: string;
  chunkBytes?: number;
}

/** Writes the snapshot of `job.height` (synchronously: run it on a worker thread, or in tests). */
export function writeSnapshot(job: SnapshotJob): SnapshotInfo {
  const db = new Database(job.dbPath, { fileMustExist: true });
  db.pragma('query_only = ON');
  db.defaultSafeIntegers(false);
  try {
    db.exec('BEGIN');
    try {
      return writeFrom(db, job);
    } finally {
      db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}

function blockRecord(db: Database.Database, height: number): Uint8Array {
  const row = db.prepare<[number], { hash: Buffer; evm: Buffer }>('SELECT hash, evm FROM blocks WHERE height = ?').get(height);
  if (!row) throw new SnapshotFormatError(`block ${height} is not stored (pruned?): no snapshot of it`);
  const txs = db.prepare<[number], { native_hash: Buffer; receipt: Buffer }>('SELECT native_hash, receipt FROM txs WHERE height = ? ORDER BY idx').all(height);
  return encodeValue({
    height: BigInt(height),
    hash: new Uint8Array(row.hash),
    evm: decodeBlock(row.evm),
    receipts: txs.map((t) => decodeReceipt(t.receipt)),
    nativeHashes: txs.map((t) => new Uint8Array(t.native_hash)),
  });
}

function writeFrom(db: Database.Database, job: SnapshotJob): SnapshotInfo {
  const h = Number(job.height);
  const range = db.prepare<[], { lo: number | null; hi: number | null }>('SELECT min(height) AS lo, max(height) AS hi FROM state_changes').get()!;
  if (range.lo === null || range.hi === null || range.lo > h || range.hi < h) {
    throw new SnapshotFormatError(`the state of height ${h} is not stored (flat state holds ${range.lo ?? '-'}…${range.hi ?? '-'})`);
  }
  const dir = new SnapshotDir(job.snapshotsDir);
  const out = dir.begin(job.height);
  const hashes: Uint8Array[] = [];
  const w = new ChunkWriter((chunk) => {
    if (hashes.length >= MAX_SNAPSHOT_CHUNKS) throw new SnapshotFormatError(`snapshot of more than ${MAX_SNAPSHOT_CHUNKS} chunks (MAX_SNAPSHOT_CHUNKS)`);
    writeFileSync(join(out.dir, `chunk-${hashes.length}`), chunk);
    hashes.push(sha256(chunk));
  }, job.chunkBytes ?? SNAPSHOT_CHUNK_BYTES);

  const head = db.prepare<[number], { evm: Buffer }>('SELECT evm FROM blocks WHERE height = ?').get(h);
  if (!head) throw new SnapshotFormatError(`block ${h} is not stored: no snapshot of it`);
  const stateRoot = decodeBlock(head.evm).header.stateRoot;
  w.record(RecordTag.Meta, encodeMeta({ format: SNAPSHOT_FORMAT, height: job.height, chainId: job.chainId, stateRoot }));
  w.record(RecordTag.Block, blockRecord(db, 0));
  w.record(RecordTag.Block, blockRecord(db, h));
  // the stored blocks' hashes, and those of blocks this node does not hold (below its own snapshot, or
  // pruned): every node writes the same 256 hashes whatever it keeps (store/hashwindow.ts)
  const below = new Map<number, Buffer>();
  for (const r of windowHashes(db, h - SNAPSHOT_BLOCK_HASHES, h)) if (r.height > 0) below.set(r.height, r.hash);
  const stored = db.prepare<[number, number], { height: number; hash: Buffer }>('SELECT height, hash FROM blocks WHERE height >= ? AND height < ? AND height > 0');
  for (const r of stored.iterate(h - SNAPSHOT_BLOCK_HASHES, h)) below.set(r.height, r.hash);
  for (const height of [...below.keys()].sort((a, b) => a - b)) {
    const n = Buffer.alloc(8);
    n.writeBigUInt64BE(BigInt(height));
    w.record(RecordTag.Hash, n, below.get(height)!);
  }
  // the latest row at or below h per key (SQLite: the bare column comes from the max() row)
  const codes = new Set<string>();
  const accounts = db.prepare<[number], { addr: Buffer; v: Buffer }>('SELECT addr, max(height) AS height, v FROM state_accounts WHERE height <= ? GROUP BY addr ORDER BY addr');
  for (const r of accounts.iterate(h)) {
    if (r.v.length === 0) continue;
    w.record(RecordTag.Account, r.addr, r.v);
    const fields = RLP.decode(r.v) as Uint8Array[];
    const codeHash = Buffer.from(fields[3] ?? []);
    if (codeHash.length === 32 && !codeHash.equals(EMPTY_CODE_HASH)) codes.add(codeHash.toString('hex'));
  }
  const slots = db.prepare<[number], { k: Buffer; v: Buffer }>('SELECT k, max(height) AS height, v FROM state_slots WHERE height <= ? GROUP BY k ORDER BY k');
  for (const r of slots.iterate(h)) if (r.v.length > 0) w.record(RecordTag.Slot, r.k, r.v);
  const code = db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM trie WHERE k = ?');
  for (const hex of [...codes].sort()) {
    const hash = Buffer.from(hex, 'hex');
    const row = code.get(Buffer.concat([Buffer.from([0x63]), hash]));
    if (!row) throw new SnapshotFormatError(`code ${hex} is not stored`);
    w.record(RecordTag.Code, hash, row.v);
  }
  w.end();
  const id = snapshotIdentity(hashes);
  const info: SnapshotInfo = { height: job.height, format: SNAPSHOT_FORMAT, chunks: hashes.length, ...id };
  out.commit(info);
  return info;
}

interface SnapshotWorkerData {
  ferrySnapshot: SnapshotJob;
}

/** Runs writeSnapshot on a worker thread; resolves with the snapshot made. */
export function writeSnapshotInWorker(job: SnapshotJob): Promise<SnapshotInfo> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { ferrySnapshot: job } satisfies SnapshotWorkerData });
    let done = false;
    worker.once('message', (m: { ok: SnapshotInfo } | { error: string }) => {
      done = true;
      if ('ok' in m) resolve(m.ok);
      else reject(new Error(m.error));
    });
    worker.once('error', (e) => {
      done = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`snapshot worker exited (code ${code})`));
    });
  });
}

if (!isMainThread && (workerData as Partial<SnapshotWorkerData> | undefined)?.ferrySnapshot) {
  try {
    parentPort!.postMessage({ ok: writeSnapshot((workerData as SnapshotWorkerData).ferrySnapshot) });
  } catch (e) {
    parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
}
