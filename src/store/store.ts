/**
 * The embedded database (SQLite via better-sqlite3, WAL). One writer (the chain thread) and any number
 * of readers (the RPC thread). Every block is written in ONE transaction: trie nodes, block, commit,
 * receipts, logs and events — so a crash at any moment leaves the last committed block intact.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Lru } from '../lib/lru.js';
import { decodeReceipt, encodeReceipt } from './receiptcodec.js';
import { decodeBlock, encodeBlock } from './blockcodec.js';
import { decodeCometRecord, encodeCometRecord } from './cometcodec.js';
import { rebuildTable, WITHOUT_ROWID } from './migrate.js';
import { WalCheckpointer, WAL_WRITER_CHECKPOINT_PAGES, type CheckpointResult } from './checkpoint.js';
import type { EvmBlock, EvmReceipt } from '../types/chain.js';
import type { CometBlockRecord } from '../types/cometbft.js';
import { DecodedByHeight, HeightRepository } from './repository.js';
import { ForkState, readForkRecord } from '../fork/lazystate.js';
import { AddressIndex } from './addrindex.js';
import type { TrieRefs } from './triegc.js';

/**
 * Blocks (and their CometBFT records) kept decoded in memory by each Store (immutable once committed),
 * weighed by their stored bytes: a count bound let a burst of full blocks (thousands of txs each) hold
 * tens of MB per thread.
 */
export const BLOCK_CACHE_BYTES = 4 * 1024 * 1024;
/** Block hashes by height kept per Store (a log answer names the block of each log). */
export const BLOCK_HASH_CACHE_SIZE = 4_096;
/** Prepared log-query statements kept per Store. */
export const LOG_STATEMENT_CACHE_SIZE = 64;
/** Bytes of trie nodes kept in memory by the chain thread's TrieDB (the writer's working set). */
export const TRIE_NODE_CACHE_BYTES = 4 * 1024 * 1024;
/** Bytes of trie nodes kept in memory by each reader thread's TrieDB (RPC thread, call workers). */
export const READER_TRIE_NODE_CACHE_BYTES = 4 * 1024 * 1024;
/**
 * What one cached trie node costs beyond its key and value bytes (measured in a heap snapshot of a full
 * cache: the Uint8Array and ArrayBuffer objects, the key string's header, the Map entry, malloc's share).
 */
export const TRIE_NODE_CACHE_ENTRY_OVERHEAD = 256;
/** SQLite page cache, KiB: the writer's connection, and each reader connection. */
export const WRITER_PAGE_CACHE_KIB = 8_192;
export const READER_PAGE_CACHE_KIB = 4_096;

/** EVM tx lookups: rows appended in block order, found by hash through an index (store/migrate.ts) */
const TXS_SCHEMA = `CREATE TABLE IF NOT EXISTS txs (
  hash BLOB NOT NULL,
  height INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  native_hash BLOB NOT NULL,
  receipt BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS txs_hash ON txs(hash);`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS trie (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (
  height INTEGER PRIMARY KEY,
  hash BLOB NOT NULL,
  evm BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS comet (height INTEGER PRIMARY KEY, rec BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS blocks_hash ON blocks(hash);
${TXS_SCHEMA}
-- older homes indexed txs by native hash; no query read it (comet_txs answers a native hash) and each
-- block paid a random-key insert per tx for it (docs/benchmarks.md "The block's store transaction")
DROP INDEX IF EXISTS txs_native;
CREATE TABLE IF NOT EXISTS logs (
  height INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  tx_index INTEGER NOT NULL,
  address BLOB NOT NULL,
  t0 BLOB, t1 BLOB, t2 BLOB, t3 BLOB,
  -- tx hash (32) | address (20) | topic count (1) | topics (32 each) | data: read back as ONE blob
  packed BLOB NOT NULL,
  PRIMARY KEY (height, log_index)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS logs_address ON logs(address, height);
CREATE INDEX IF NOT EXISTS logs_t0 ON logs(t0, height);
-- topic positions 1-3 (indexed event arguments: Transfer's from/to, ...): added after the first release;
-- the writer's open creates them on an existing database (IF NOT EXISTS), before any reader opens it
CREATE INDEX IF NOT EXISTS logs_t1 ON logs(t1, height);
CREATE INDEX IF NOT EXISTS logs_t2 ON logs(t2, height);
CREATE INDEX IF NOT EXISTS logs_t3 ON logs(t3, height);
`;

/**
 * A log query chooses ONE index to walk: every constrained column (address, t0..t3) has one. It counts
 * at most this many rows of each candidate in the block range and walks the one with the fewest, so a
 * query by a rare topic is not answered by walking a token's million Transfer rows. On a tie (every
 * probe full) the topic 1-3 indexes win: they hold event arguments (holders, ids), which are far more
 * selective than a contract address or an event signature.
 */
export const LOG_INDEX_PROBE_ROWS = 1_024;

/** The log columns a query can constrain, each with its index (see SCHEMA), in tie-break order. */
const LOG_COLUMNS = ['t1', 't2', 't3', 'address', 't0'] as const;
const TOPIC_COLUMNS = ['t0', 't1', 't2', 't3'] as const;
type LogColumn = (typeof LOG_COLUMNS)[number];
const LOG_INDEX: Record<LogColumn, string> = {
  address: 'logs_address',
  t0: 'logs_t0',
  t1: 'logs_t1',
  t2: 'logs_t2',
  t3: 'logs_t3',
};

import type { LogQuery } from '../types/query.js';

export interface BlockWrite {
  height: bigint;
  hash: Uint8Array;
  evm: EvmBlock;
  receipts: EvmReceipt[];
  /** native (CometBFT) tx hash per EVM tx, same order */
  nativeHashes: Uint8Array[];
  /** the addresses each tx touched (evm/touched.ts), same order: the address index's rows */
  touched?: Uint8Array[][];
}

/** A stored log with its byte fields as lowercase hex text without `0x` (eth_getLogs' answer, evmrpc/logjson.ts). */
export interface HexLogRow {
  height: number;
  logIndex: number;
  txIndex: number;
  txHash: string;
  address: string;
  topics: string[];
  data: string;
}

/** A stored log; its byte fields are views into one buffer read from the row. */
export interface StoredLog {
  height: number;
  logIndex: number;
  txIndex: number;
  txHash: Uint8Array;
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
}

function packLog(txHash: Uint8Array, address: Uint8Array, topics: Uint8Array[], data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(32 + 20 + 1 + 32 * topics.length + data.length);
  out.set(txHash, 0);
  out.set(address, 32);
  out[52] = topics.length;
  topics.forEach((t, i) => out.set(t, 53 + 32 * i));
  out.set(data, 53 + 32 * topics.length);
  return out;
}

/** unpackLog over the packed bytes as lowercase hex text (`lower(hex(packed))`): each field a slice, no copies */
function unpackLogHex(height: number, logIndex: number, txIndex: number, h: string): HexLogRow {
  const n = parseInt(h.slice(104, 106), 16);
  const topics: string[] = new Array(n);
  for (let i = 0; i < n; i++) topics[i] = h.slice(106 + 64 * i, 170 + 64 * i);
  return { height, logIndex, txIndex, txHash: h.slice(0, 64), address: h.slice(64, 104), topics, data: h.slice(106 + 64 * n) };
}

function unpackLog(height: number, logIndex: number, txIndex: number, p: Buffer): StoredLog {
  const n = p[52]!;
  const topics: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) topics[i] = p.subarray(53 + 32 * i, 85 + 32 * i);
  return { height, logIndex, txIndex, txHash: p.subarray(0, 32), address: p.subarray(32, 52), topics, data: p.subarray(53 + 32 * n) };
}

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export class Store {
  readonly db: Database.Database;
  /** opened with `reader` (query-only) */
  readonly reader: boolean;
  private readonly stmts;
  /** the EVM blocks this connection keeps decoded */
  private readonly blocks: DecodedByHeight<EvmBlock>;
  /**
   * The consensus engine's record per height (block, BlockID, seen commit, FinalizeBlock results,
   * validator sets: CometBlockRecord), written in the block's transaction; the RPC thread reads it.
   */
  readonly comet: HeightRepository<CometBlockRecord>;
  private readonly hashCache = new Lru<number, Uint8Array>(BLOCK_HASH_CACHE_SIZE);
  /** prepared log queries by shape (address/topic0 list lengths) */
  private readonly logStmts = new Lru<string, Database.Statement>(LOG_STATEMENT_CACHE_SIZE);

  /** a fork home's lazy origin state (data/fork.json beside the database; docs/fork-mode.md) */
  readonly fork: ForkState | undefined;

  private addrIndex: AddressIndex | undefined;
  /** the address index (store/addrindex.ts), prepared at first use on a reader connection */
  get addrs(): AddressIndex {
    return (this.addrIndex ??= new AddressIndex(this.db));
  }

  /** trie-node reference counts of a pruning node (store/triegc.ts; undefined: an archive's store) */
  trieRefs: TrieRefs | undefined;

  /** checkpoints the WAL on a worker thread (the writer opened with `walCheckpointer`) */
  private checkpointer: WalCheckpointer | undefined;

  /**
   * `reader`: an existing database opened for queries only (the RPC thread's connection).
   * `walCheckpointer` (the writer): WAL checkpoints run on a worker thread, not inside the block's
   * COMMIT (store/checkpoint.ts); `onCheckpointerFailure` hears when that worker stops. `durable: false`
   * (`ferry dev`): a COMMIT does not wait for the disk (docs/dev-mode.md "Durability").
   */
  constructor(path: string, opts: { reader?: boolean; walCheckpointer?: boolean; durable?: boolean; onCheckpointerFailure?: (e: Error) => void } = {}) {
    if (!opts.reader) mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { fileMustExist: opts.reader === true });
    if (opts.reader) {
      this.db.pragma('query_only = ON');
    } else {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(opts.durable === false ? 'synchronous = NORMAL' : 'synchronous = FULL');
      // a database made when txs was a WITHOUT ROWID table: rebuilt once, before the rest of the schema
      rebuildTable(this.db, {
        table: 'txs',
        isOld: (sql) => WITHOUT_ROWID.test(sql),
        oldIndexes: ['txs_native'],
        create: TXS_SCHEMA,
        columns: ['hash', 'height', 'idx', 'native_hash', 'receipt'],
        orderBy: 'height, idx',
      });
      this.db.exec(SCHEMA);
    }
    this.db.pragma(`cache_size = -${opts.reader ? READER_PAGE_CACHE_KIB : WRITER_PAGE_CACHE_KIB}`);
    this.reader = opts.reader === true;
    if (!this.reader && opts.walCheckpointer) {
      this.db.pragma(`wal_autocheckpoint = ${WAL_WRITER_CHECKPOINT_PAGES}`);
      // the worker gone, the writer checkpoints by itself again as often as SQLite's default
      this.checkpointer = new WalCheckpointer(path, (e) => {
        if (!this.db.open) return;
        this.db.pragma('wal_autocheckpoint = 1000');
        opts.onCheckpointerFailure?.(e);
      });
    }
    this.db.defaultSafeIntegers(false);
    const forkRecord = path === ':memory:' ? undefined : readForkRecord(dirname(path));
    this.fork = forkRecord && new ForkState(dirname(path), forkRecord);
    this.stmts = {
      metaGet: this.db.prepare<[string], { v: Buffer }>('SELECT v FROM meta WHERE k = ?'),
      metaPut: this.db.prepare('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)'),
      trieGet: this.db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM trie WHERE k = ?'),
      triePut: this.db.prepare('INSERT OR IGNORE INTO trie (k, v) VALUES (?, ?)'),
      latest: this.db.prepare<[], { h: number | null }>('SELECT max(height) AS h FROM blocks'),
      lowest: this.db.prepare<[], { h: number | null }>('SELECT min(height) AS h FROM blocks WHERE height > 0'),
      blockByHeight: this.db.prepare<[number], { evm: Buffer }>('SELECT evm FROM blocks WHERE height = ?'),
      hashByHeight: this.db.prepare<[number], { hash: Buffer }>('SELECT hash FROM blocks WHERE height = ?'),
      heightByHash: this.db.prepare<[Buffer], { height: number }>('SELECT height FROM blocks WHERE hash = ?'),
      putBlock: this.db.prepare('INSERT INTO blocks (height, hash, evm) VALUES (?, ?, ?)'),
      putTx: this.db.prepare('INSERT OR REPLACE INTO txs (hash, height, idx, native_hash, receipt) VALUES (?, ?, ?, ?, ?)'),
      txByHash: this.db.prepare<[Buffer], { height: number; idx: number; receipt: Buffer }>(
        'SELECT height, idx, receipt FROM txs WHERE hash = ?',
      ),
      putLog: this.db.prepare(
        'INSERT INTO logs (height, log_index, tx_index, address, t0, t1, t2, t3, packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      heightsAbove: this.db.prepare<[number], { height: number }>('SELECT height FROM blocks WHERE height > ? ORDER BY height'),
      delTx: this.db.prepare('DELETE FROM txs WHERE hash = ?'),
      delBlocksAbove: this.db.prepare('DELETE FROM blocks WHERE height > ?'),
      delLogsAbove: this.db.prepare('DELETE FROM logs WHERE height > ?'),
    };
    this.blocks = new DecodedByHeight<EvmBlock>((h) => this.stmts.blockByHeight.get(h)?.evm, BLOCK_CACHE_BYTES, decodeBlock);
    this.comet = new HeightRepository<CometBlockRecord>(this.db, 'comet', BLOCK_CACHE_BYTES, { encode: encodeCometRecord, decode: decodeCometRecord });
    if (!this.reader) {
      const latest = () => (this.stmts.latest.get()?.h ?? undefined) as number | undefined;
      this.addrIndex = new AddressIndex(this.db, { writer: true, latest, putMeta: (k, v) => this.putMeta(k, v) });
    }
  }

  close(): void {
    // a stopped node leaves no reference uncounted (a home is then read alike by a ferry without the journal)
    if (this.trieRefs && this.db.open && !this.db.inTransaction) this.transaction(() => this.trieRefs!.countLog());
    if (this.checkpointer) {
      this.checkpointer.close();
      // with the worker's connection open the writer is not the last one, so SQLite's checkpoint at
      // close would not run: the WAL is copied into the database and emptied here, so the next start
      // does not begin with a WAL of up to WAL_WRITER_CHECKPOINT_PAGES to read
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.fork?.close();
    this.db.close();
  }

  /** the WAL checkpoint worker's count of checkpoints and its last answer (undefined: none runs) */
  checkpointStats(): { checkpoints: number; last?: CheckpointResult } | undefined {
    return this.checkpointer && { checkpoints: this.checkpointer.checkpoints, last: this.checkpointer.last };
  }

  /** `listener` gets every checkpoint the worker runs (tests); false when no checkpoint worker runs */
  onWalCheckpoint(listener: (r: CheckpointResult) => void): boolean {
    if (!this.checkpointer) return false;
    this.checkpointer.onCheckpoint = listener;
    return true;
  }

  // ---- meta ----
  getMeta(key: string): Buffer | undefined {
    return this.stmts.metaGet.get(key)?.v;
  }
  putMeta(key: string, value: Uint8Array): void {
    this.stmts.metaPut.run(key, buf(value));
  }

  // ---- trie nodes (content-addressed; never deleted: archive) ----
  trieGet(key: Buffer): Buffer | undefined {
    return this.stmts.trieGet.get(key)?.v;
  }
  triePutMany(entries: Iterable<[Buffer, Uint8Array]>): void {
    const refs = this.trieRefs;
    const inserted: [Buffer, Uint8Array][] = [];
    for (const [k, v] of entries) {
      if (this.stmts.triePut.run(k, buf(v)).changes > 0 && refs) inserted.push([k, v]);
    }
    refs?.inserted(inserted);
  }

  /** Runs fn in one write transaction (all-or-nothing). */
  transaction<T>(fn: () => T): T {
    const out = this.db.transaction(fn)();
    this.checkpointer?.committed();
    return out;
  }

  latestHeight(): bigint | undefined {
    const h = this.stmts.latest.get()?.h;
    return h === null || h === undefined ? undefined : BigInt(h);
  }

  /** the lowest stored block above genesis (genesis is never pruned; store/prune.ts min-retain-blocks moves it up) */
  lowestBlockHeight(): bigint | undefined {
    const h = this.stmts.lowest.get()?.h;
    return h === null || h === undefined ? undefined : BigInt(h);
  }

  putBlock(w: BlockWrite): void {
    const h = Number(w.height);
    this.stmts.putBlock.run(h, buf(w.hash), encodeBlock(w.evm));
    this.trieRefs?.rootAt(h, w.evm.header.stateRoot);
    w.receipts.forEach((r, i) => {
      this.stmts.putTx.run(buf(r.transactionHash), h, i, buf(w.nativeHashes[i]!), encodeReceipt(r));
      for (const log of r.logs) {
        const t = log.topics;
        this.stmts.putLog.run(
          h,
          log.logIndex,
          i,
          buf(log.address),
          t[0] ? buf(t[0]) : null,
          t[1] ? buf(t[1]) : null,
          t[2] ? buf(t[2]) : null,
          t[3] ? buf(t[3]) : null,
          packLog(r.transactionHash, log.address, t, log.data),
        );
      }
    });
    if (w.touched !== undefined) this.addrs.indexBlock(h, w.touched);
  }

  /**
   * Dev revert (docs/dev-mode.md): deletes the EVM blocks above `height` with their tx lookups,
   * receipts, logs and address index rows (store/addrindex.ts). Call inside the store transaction that rewinds the rest; then forgetCaches().
   */
  rewindBlocks(height: bigint): void {
    const h = Number(height);
    for (const { height: above } of this.stmts.heightsAbove.all(h)) {
      for (const tx of this.evmBlock(BigInt(above))?.transactions ?? []) this.stmts.delTx.run(buf(tx.hash));
    }
    this.stmts.delLogsAbove.run(h);
    this.stmts.delBlocksAbove.run(h);
    this.addrs.rewind(h);
    this.trieRefs?.dropAbove(h);
  }

  /** The blocks, records and hashes this connection keeps by height are dropped (after a dev revert). */
  forgetCaches(): void {
    this.blocks.clear();
    this.comet.forgetCache();
    this.hashCache.clear();
  }

  /** what the decoded-block cache holds: entries, and their weight in stored bytes (at most BLOCK_CACHE_BYTES) */
  blockCacheStats(): { entries: number; bytes: number } {
    return this.blocks.stats();
  }

  evmBlock(height: bigint): EvmBlock | undefined {
    return this.blocks.get(height);
  }

  /** The hash of block `height` without decoding the block (log answers). */
  blockHash(height: number): Uint8Array | undefined {
    let h = this.hashCache.get(height);
    if (h) return h;
    const row = this.stmts.hashByHeight.get(height);
    if (!row) return undefined;
    h = new Uint8Array(row.hash);
    this.hashCache.set(height, h);
    return h;
  }

  heightByHash(hash: Uint8Array): bigint | undefined {
    const row = this.stmts.heightByHash.get(buf(hash));
    return row ? BigInt(row.height) : undefined;
  }

  txLocation(hash: Uint8Array): { height: bigint; index: number; receipt: EvmReceipt } | undefined {
    const row = this.stmts.txByHash.get(buf(hash));
    if (!row) return undefined;
    return { height: BigInt(row.height), index: row.idx, receipt: decodeReceipt(row.receipt) };
  }

  /**
   * Log rows in [from, to] matching the address set and every topic position, in (height, log_index)
   * order. `limit` counts matching rows only (0: no limit): a caller asks for cap + 1 to tell "more
   * than cap". Answered from the index of the most selective constrained column (LOG_INDEX_PROBE_ROWS).
   */
  logRows(q: LogQuery, limit: number): StoredLog[] {
    return this.logRowsOf(q, limit, 'packed').map(([h, li, ti, p]) => unpackLog(h, li, ti, p as Buffer));
  }

  /** logRows with each log's bytes as hex text, made by SQLite (no Buffer per row, no hex conversion per field) */
  logRowsHex(q: LogQuery, limit: number): HexLogRow[] {
    return this.logRowsOf(q, limit, 'lower(hex(packed))').map(([h, li, ti, p]) => unpackLogHex(h, li, ti, p as string));
  }

  private logRowsOf(q: LogQuery, limit: number, packed: string): [number, number, number, Buffer | string][] {
    const { sql, args } = this.logSelect(q, this.logIndexFor(q), packed);
    const rows = this.logStatement(limit > 0 ? `${sql} LIMIT ?` : sql).all(...args, ...(limit > 0 ? [limit] : [])) as [
      number,
      number,
      number,
      Buffer | string,
    ][];
    // no ORDER BY in SQL: with an IN list SQLite would sort every match before the LIMIT applies
    rows.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return rows;
  }

  /** SQLite's plan of logRows(q) (tests: which index answers a query shape). */
  logQueryPlan(q: LogQuery): string[] {
    const { sql, args } = this.logSelect(q, this.logIndexFor(q));
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
  }

  private logStatement(sql: string): Database.Statement {
    let stmt = this.logStmts.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql).raw(true);
      this.logStmts.set(sql, stmt);
    }
    return stmt;
  }

  /** the constrained column whose index holds the fewest rows of the range (probe of LOG_INDEX_PROBE_ROWS) */
  private logIndexFor(q: LogQuery): LogColumn | undefined {
    const values = logColumnValues(q);
    let best: LogColumn | undefined;
    let bestCount = Infinity;
    for (const col of LOG_COLUMNS) {
      const vals = values[col];
      if (vals === undefined) continue;
      const where = `${col} IN (${vals.map(() => '?').join(',')}) AND height BETWEEN ? AND ?`;
      const probe = `SELECT count(*) FROM (SELECT 1 FROM logs INDEXED BY ${LOG_INDEX[col]} WHERE ${where} LIMIT ${LOG_INDEX_PROBE_ROWS})`;
      const [n] = this.logStatement(probe).get(...vals.map(buf), Number(q.fromBlock), Number(q.toBlock)) as [number];
      if (n < bestCount) {
        best = col;
        bestCount = n;
      }
      if (n === 0) break;
    }
    return best;
  }

  private logSelect(q: LogQuery, index: LogColumn | undefined, packed = 'packed'): { sql: string; args: unknown[] } {
    const where = ['height BETWEEN ? AND ?'];
    const args: unknown[] = [Number(q.fromBlock), Number(q.toBlock)];
    const values = logColumnValues(q);
    for (const col of LOG_COLUMNS) {
      const vals = values[col];
      if (vals === undefined) continue;
      where.push(`${col} IN (${vals.map(() => '?').join(',')})`);
      args.push(...vals.map(buf));
    }
    const from = index === undefined ? 'logs' : `logs INDEXED BY ${LOG_INDEX[index]}`;
    return { sql: `SELECT height, log_index, tx_index, ${packed} FROM ${from} WHERE ${where.join(' AND ')}`, args };
  }
}

/** The value set each constrained column must match (absent: any value). */
function logColumnValues(q: LogQuery): Partial<Record<LogColumn, Uint8Array[]>> {
  const out: Partial<Record<LogColumn, Uint8Array[]>> = {};
  if (q.addresses.length > 0) out.address = q.addresses;
  q.topics.slice(0, 4).forEach((t, i) => {
    if (t && t.length > 0) out[TOPIC_COLUMNS[i]!] = t;
  });
  return out;
}
