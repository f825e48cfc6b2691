/**
 * State-sync snapshots on disk (docs/abci.md "State sync"): the format, its records, the chunk files
 * under data/snapshots/<height>/, and the rows a restore writes.
 *
 * Format 1. A snapshot of height H is one stream of records, cut into chunks of at most
 * SNAPSHOT_CHUNK_BYTES (a record may span chunks). Each record is `tag (1 byte) ‖ length (4 bytes, big
 * endian) ‖ body`, in this order:
 *   META     JSON {"format":1,"height":"H","chainId":"…","stateRoot":"0x…"}
 *   BLOCK    the EVM block 0 (genesis), then block H, with receipts and native hashes (store codec)
 *   HASH     height (8 bytes) ‖ hash (32): the hashes of up to 256 blocks below H (BLOCKHASH's window)
 *   ACCOUNT  address (20) ‖ the account's trie RLP as of H (accounts in address order)
 *   SLOT     address ‖ slot (52) ‖ value, leading zeros stripped (non-zero slots, in key order)
 *   CODE     code hash (32) ‖ code (each code the accounts name, in hash order)
 *   END      the number of records before it (8 bytes): a cut stream is refused
 * The snapshot's `metadata` (CometBFT's Snapshot.metadata) is the SHA-256 of every chunk, 32 bytes
 * each, in order; its `hash` is the SHA-256 of the metadata. Every record comes from rows that are
 * the same on every node, in a fixed order, so every validator makes the same bytes at H and a
 * joining node can fetch the chunks from any of them.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { SnapshotInfo } from '../types/abci.js';
import { HashWindow } from './hashwindow.js';

/** The one snapshot format ferry makes and restores (CometBFT's Snapshot.format). */
export const SNAPSHOT_FORMAT = 1;
/** Bytes of one chunk at most (CometBFT carries up to 16 MB per chunk message: statesync/messages.go). */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;
/** Chunks of one snapshot at most: its metadata (32 bytes per chunk) stays under CometBFT's 4 MB snapshot message. */
export const MAX_SNAPSHOT_CHUNKS = 65_536;
/** Bytes of one record at most (a block with its receipts is the largest): what a restore buffers across chunks. */
export const MAX_SNAPSHOT_RECORD_BYTES = 64 * 1024 * 1024;
/** Hashes of the blocks below the snapshot height it carries (the EVM's BLOCKHASH window: store/hashwindow.ts). */
export const SNAPSHOT_BLOCK_HASHES = 256;

export const RecordTag = { Meta: 1, Block: 2, Hash: 3, Account: 4, Slot: 5, Code: 6, End: 7 } as const;
export type RecordTag = (typeof RecordTag)[keyof typeof RecordTag];

export interface SnapshotMeta {
  format: number;
  height: bigint;
  chainId: string;
  stateRoot: Uint8Array;
}

export type { SnapshotInfo };

export class SnapshotFormatError extends Error {}

export const sha256 = (b: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(b).digest());

export function encodeMeta(m: SnapshotMeta): Uint8Array {
  const json = { format: m.format, height: m.height.toString(), chainId: m.chainId, stateRoot: '0x' + Buffer.from(m.stateRoot).toString('hex') };
  return new TextEncoder().encode(JSON.stringify(json));
}

export function decodeMeta(body: Uint8Array): SnapshotMeta {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new SnapshotFormatError('snapshot META record is not JSON');
  }
  const o = v as Record<string, unknown>;
  if (
    typeof o !== 'object' || o === null || o.format !== SNAPSHOT_FORMAT || typeof o.height !== 'string' || !/^[1-9][0-9]{0,18}$/.test(o.height) ||
    typeof o.chainId !== 'string' || typeof o.stateRoot !== 'string' || !/^0x[0-9a-f]{64}$/.test(o.stateRoot)
  ) {
    throw new SnapshotFormatError('snapshot META record: want {format: 1, height, chainId, stateRoot}');
  }
  return { format: o.format, height: BigInt(o.height), chainId: o.chainId, stateRoot: new Uint8Array(Buffer.from(o.stateRoot.slice(2), 'hex')) };
}

/** The metadata of chunks with these hashes, and the snapshot hash over it. */
export function snapshotIdentity(chunkHashes: readonly Uint8Array[]): { metadata: Uint8Array; hash: Uint8Array } {
  const metadata = new Uint8Array(Buffer.concat(chunkHashes.map((h) => Buffer.from(h))));
  return { metadata, hash: sha256(metadata) };
}

/** The chunk hashes a snapshot's metadata lists; throws SnapshotFormatError when it does not fit the offer. */
export function chunkHashesOf(s: SnapshotInfo): Uint8Array[] {
  if (s.chunks < 1 || s.chunks > MAX_SNAPSHOT_CHUNKS) throw new SnapshotFormatError(`snapshot of ${s.chunks} chunks (1 to ${MAX_SNAPSHOT_CHUNKS})`);
  if (s.metadata.length !== s.chunks * 32) throw new SnapshotFormatError('snapshot metadata is not one SHA-256 per chunk');
  if (Buffer.compare(sha256(s.metadata), s.hash) !== 0) throw new SnapshotFormatError('snapshot hash is not the SHA-256 of its metadata');
  const out: Uint8Array[] = [];
  for (let i = 0; i < s.chunks; i++) out.push(s.metadata.subarray(i * 32, i * 32 + 32));
  return out;
}

/** Writes records into chunk buffers of at most `chunkBytes`; `onChunk` gets each full chunk in order. */
export class ChunkWriter {
  private parts: Buffer[] = [];
  private size = 0;
  records = 0;

  constructor(
    private readonly onChunk: (chunk: Buffer) => void,
    private readonly chunkBytes = SNAPSHOT_CHUNK_BYTES,
  ) {}

  record(tag: RecordTag, ...body: Uint8Array[]): void {
    const len = body.reduce((n, b) => n + b.length, 0);
    if (len > MAX_SNAPSHOT_RECORD_BYTES) throw new SnapshotFormatError(`snapshot record of ${len} bytes (MAX_SNAPSHOT_RECORD_BYTES)`);
    const head = Buffer.alloc(5);
    head[0] = tag;
    head.writeUInt32BE(len, 1);
    this.push(head);
    for (const b of body) this.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    this.records++;
  }

  private push(b: Buffer): void {
    let off = 0;
    while (off < b.length) {
      const take = Math.min(b.length - off, this.chunkBytes - this.size);
      this.parts.push(b.subarray(off, off + take));
      this.size += take;
      off += take;
      if (this.size === this.chunkBytes) this.cut();
    }
  }

  private cut(): void {
    this.onChunk(Buffer.concat(this.parts));
    this.parts = [];
    this.size = 0;
  }

  /** Writes END and the last chunk. */
  end(): void {
    const n = Buffer.alloc(8);
    n.writeBigUInt64BE(BigInt(this.records));
    this.record(RecordTag.End, n);
    if (this.size > 0) this.cut();
  }
}

/** Reads records back from chunks given in order; a record cut by a chunk boundary waits for the next chunk. */
export class RecordReader {
  private carry: Buffer = Buffer.alloc(0);
  private count = 0;
  ended = false;

  /** the complete records of `chunk` (with the tail of the chunks before) */
  *records(chunk: Uint8Array): Generator<{ tag: RecordTag; body: Buffer }> {
    if (this.ended) throw new SnapshotFormatError('snapshot data after its END record');
    let b = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let off = 0;
    while (b.length - off >= 5) {
      const tag = b[off]! as RecordTag;
      const len = b.readUInt32BE(off + 1);
      if (len > MAX_SNAPSHOT_RECORD_BYTES || tag < RecordTag.Meta || tag > RecordTag.End) throw new SnapshotFormatError(`snapshot record ${this.count}: bad tag ${tag} or length ${len}`);
      if (b.length - off - 5 < len) break;
      const body = b.subarray(off + 5, off + 5 + len);
      off += 5 + len;
      if (tag === RecordTag.End) {
        if (len !== 8 || body.readBigUInt64BE(0) !== BigInt(this.count) || off !== b.length) throw new SnapshotFormatError('snapshot END record does not match the records before it');
        this.ended = true;
      }
      this.count++;
      yield { tag, body };
    }
    this.carry = Buffer.from(b.subarray(off));
    if (this.carry.length > MAX_SNAPSHOT_RECORD_BYTES + 5) throw new SnapshotFormatError('snapshot record longer than MAX_SNAPSHOT_RECORD_BYTES');
    b = Buffer.alloc(0);
  }
}

/** data/snapshots/: one directory per height with `chunk-N` files and `snapshot.json` (written last). */
export class SnapshotDir {
  constructor(readonly root: string) {}

  private dirOf(height: bigint): string {
    return join(this.root, height.toString());
  }

  /** the complete snapshots, highest first */
  list(): SnapshotInfo[] {
    if (!existsSync(this.root)) return [];
    const out: SnapshotInfo[] = [];
    for (const name of readdirSync(this.root)) {
      if (!/^[1-9][0-9]*$/.test(name)) continue;
      const s = this.read(BigInt(name));
      if (s) out.push(s);
    }
    return out.sort((a, b) => (a.height > b.height ? -1 : a.height < b.height ? 1 : 0));
  }

  private read(height: bigint): SnapshotInfo | undefined {
    const file = join(this.dirOf(height), 'snapshot.json');
    if (!existsSync(file)) return undefined;
    const j = JSON.parse(readFileSync(file, 'utf8')) as { format: number; chunks: number; hash: string; metadata: string };
    return { height, format: j.format, chunks: j.chunks, hash: new Uint8Array(Buffer.from(j.hash, 'hex')), metadata: new Uint8Array(Buffer.from(j.metadata, 'hex')) };
  }

  /** chunk `index` of the snapshot (undefined: no such snapshot or chunk) */
  chunk(height: bigint, format: number, index: number): Uint8Array | undefined {
    const s = this.read(height);
    if (!s || s.format !== format || !Number.isInteger(index) || index < 0 || index >= s.chunks) return undefined;
    return new Uint8Array(readFileSync(join(this.dirOf(height), `chunk-${index}`)));
  }

  /** A directory to write the snapshot of `height` into (emptied); `commit` makes it visible. */
  begin(height: bigint): { dir: string; commit(info: SnapshotInfo): void } {
    const tmp = join(this.root, `${height}.tmp`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    return {
      dir: tmp,
      commit: (info) => {
        const j = { format: info.format, chunks: info.chunks, hash: Buffer.from(info.hash).toString('hex'), metadata: Buffer.from(info.metadata).toString('hex') };
        writeFileSync(join(tmp, 'snapshot.json'), JSON.stringify(j));
        rmSync(this.dirOf(height), { recursive: true, force: true });
        renameSync(tmp, this.dirOf(height));
      },
    };
  }

  /** Removes all but the `keepRecent` highest snapshots (0: keep all, as Cosmos SDK's snapshot-keep-recent) and unfinished ones. */
  prune(keepRecent: number): bigint[] {
    if (!existsSync(this.root)) return [];
    for (const name of readdirSync(this.root)) if (name.endsWith('.tmp')) rmSync(join(this.root, name), { recursive: true, force: true });
    if (keepRecent === 0) return [];
    const gone = this.list().slice(keepRecent).map((s) => s.height);
    for (const h of gone) rmSync(this.dirOf(h), { recursive: true, force: true });
    return gone;
  }
}

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/**
 * The rows a restore writes at the snapshot height H, and the BLOCKHASH window below it. Rows go in
 * as chunks arrive (each chunk in its own transaction); readers see none of them until the finishing
 * transaction writes the blocks and drops every older state row.
 */
export class RestoreRows {
  private readonly s;
  private readonly window: HashWindow;

  constructor(private readonly db: Database.Database) {
    this.window = new HashWindow(db);
    this.s = {
      acct: db.prepare('INSERT OR REPLACE INTO state_accounts (addr, height, v) VALUES (?, ?, ?)'),
      slot: db.prepare('INSERT OR REPLACE INTO state_slots (k, height, v) VALUES (?, ?, ?)'),
      code: db.prepare('INSERT OR IGNORE INTO trie (k, v) VALUES (?, ?)'),
      accounts: db.prepare<[number, Buffer, number], { addr: Buffer; v: Buffer }>('SELECT addr, v FROM state_accounts WHERE height = ? AND addr > ? ORDER BY addr LIMIT ?'),
      slots: db.prepare<[number, Buffer, number], { k: Buffer; v: Buffer }>('SELECT k, v FROM state_slots WHERE height = ? AND k > ? ORDER BY k LIMIT ?'),
    };
  }

  account(height: bigint, addr: Uint8Array, rlp: Uint8Array): void {
    this.s.acct.run(buf(addr), Number(height), buf(rlp));
  }

  slot(height: bigint, k: Uint8Array, v: Uint8Array): void {
    this.s.slot.run(buf(k), Number(height), buf(v));
  }

  /** contract code under its trie-table key ('c' ‖ code hash, as the flat layer reads it) */
  code(hash: Uint8Array, code: Uint8Array): void {
    this.s.code.run(Buffer.concat([Buffer.from([0x63]), buf(hash)]), buf(code));
  }

  hash(height: bigint, hash: Uint8Array): void {
    this.window.put(height, hash);
  }

  /** up to `limit` accounts restored at `height` with addresses above `after`, in order */
  accountsPage(height: bigint, after: Buffer, limit: number): { addr: Buffer; v: Buffer }[] {
    return this.s.accounts.all(Number(height), after, limit);
  }

  /** up to `limit` slots restored at `height` with keys above `after`, in order */
  slotsPage(height: bigint, after: Buffer, limit: number): { k: Buffer; v: Buffer }[] {
    return this.s.slots.all(Number(height), after, limit);
  }

  /** Drops what a restore cut short left (rows above genesis; none exist on a node that has blocks above 0). */
  clearPartial(): void {
    this.db.exec('DELETE FROM state_accounts WHERE height > 0; DELETE FROM state_slots WHERE height > 0');
    this.window.clear();
  }

  /** In the finishing transaction: the state is that of `height` only (older rows, genesis's, go). */
  settle(height: bigint): void {
    const h = Number(height);
    this.db.prepare('DELETE FROM state_accounts WHERE height < ?').run(h);
    this.db.prepare('DELETE FROM state_slots WHERE height < ?').run(h);
    this.db.prepare('DELETE FROM state_changes').run();
    this.db.prepare('INSERT INTO state_changes (height, accounts, slots) VALUES (?, ?, ?)').run(h, Buffer.alloc(0), Buffer.alloc(0));
  }
}
