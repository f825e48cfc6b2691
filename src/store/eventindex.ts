/**
 * The tx and block event index (CometBFT's kv indexer, in SQLite): every native tx by its hash with
 * its result, every attribute an event marks `index:true` by (key, value), with its event's ordinal
 * so that conditions can be required to hold within one event. Written by the chain thread inside
 * the block's store transaction; read by the RPC thread. Query planning lives with the reader
 * (consensus/reader.ts); this file only stores and fetches rows.
 *
 * Block events additionally get rows under `begin_block.<type>.<key>` / `end_block.<type>.<key>`
 * when the event carries `mode=BeginBlock` / `mode=EndBlock` (how CometBFT v0.38 apps mark the
 * phase), so the `begin_block` and `end_block` key forms of CometBFT ≤ 0.37 are searchable
 * (docs/cometbft-rpc.md, docs/compatibility.md).
 */
import type Database from 'better-sqlite3';
import { decodeValue, encodeValue } from '../lib/serial.js';
import { DomainError } from '../lib/errors.js';
import { rebuildTable, WITHOUT_ROWID } from './migrate.js';
import { decodeTxResult, encodeTxResultOnce } from './resultcodec.js';

/** Most index rows one search may read before it is refused (every result set has a bound). */
export const SEARCH_ROW_LIMIT = 250_000;
/**
 * Blocks whose event rows wait in `recent_events` (one row per block) before they are written into the
 * tx_events/block_events indexes together, and the rows that make them go earlier. Each index row costs a
 * b-tree insert and, written per block, a page of the WAL per key (docs/benchmarks.md "The fixed cost of
 * a block, part 2"); written per MAX_RECENT_EVENT_BLOCKS blocks, a key's tail page is written once for all.
 */
export const MAX_RECENT_EVENT_BLOCKS = 64;
export const MAX_RECENT_EVENT_ROWS = 8_192;

/** Attribute key marking a block event's phase, and the key prefixes it maps to. */
export const MODE_ATTRIBUTE = 'mode';
export const PHASE_PREFIX: Readonly<Record<string, string>> = { BeginBlock: 'begin_block', EndBlock: 'end_block' };

/** An indexed key is `<event type>.<attribute key>`; the character after '.' bounds a type's keys. */
const TYPE_SEPARATOR = '.';
const TYPE_SEPARATOR_NEXT = '/';

/** native txs with their results: rows appended in block order, found by hash or position through indexes (store/migrate.ts) */
const COMET_TXS_SCHEMA = `CREATE TABLE IF NOT EXISTS comet_txs (
  hash BLOB NOT NULL,
  height INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  code INTEGER NOT NULL,
  tx BLOB NOT NULL,
  result BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS comet_txs_hash ON comet_txs(hash);
CREATE INDEX IF NOT EXISTS comet_txs_pos ON comet_txs(height, idx);`;

const SCHEMA = `
${COMET_TXS_SCHEMA}
CREATE TABLE IF NOT EXISTS tx_events (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  height INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS tx_events_kv ON tx_events(key, value, height, idx);
CREATE INDEX IF NOT EXISTS tx_events_kh ON tx_events(key, height);
CREATE TABLE IF NOT EXISTS block_events (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  height INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS block_events_kv ON block_events(key, value, height);
CREATE INDEX IF NOT EXISTS block_events_kh ON block_events(key, height);
CREATE TABLE IF NOT EXISTS recent_events (height INTEGER PRIMARY KEY, rows BLOB NOT NULL);
`;

/** The index rows of one block waiting in `recent_events`: [key, value, tx index, event ordinal] and [key, value, event ordinal]. */
interface RecentRows {
  tx: [string, string, number, number][];
  block: [string, string, number][];
}

export interface IndexedAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface IndexedEvent {
  type: string;
  attributes: readonly IndexedAttribute[];
}

/** The parts of abci.ExecTxResult the index keeps (stored whole, opaque otherwise). */
export interface IndexedTxResult {
  code: number;
  events: readonly IndexedEvent[];
}

export interface IndexedTx<R = IndexedTxResult> {
  hash: Uint8Array;
  height: bigint;
  index: number;
  tx: Uint8Array;
  result: R;
}

/** A position: block height and the tx's index in it. */
export interface TxPos {
  height: number;
  idx: number;
}

export interface TxEventRow extends TxPos {
  seq: number;
  value: string;
}

export interface BlockEventRow {
  height: number;
  seq: number;
  value: string;
}

/** Inclusive height bounds (undefined = open). */
export interface HeightBounds {
  min?: number;
  max?: number;
}

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** The `(composite key, value)` pairs of an event that are indexed (empty types and keys skipped). */
function indexedPairs(e: IndexedEvent, extraPrefix?: string): [string, string][] {
  if (e.type === '') return [];
  const out: [string, string][] = [];
  for (const a of e.attributes) {
    if (a.key === '' || !a.index) continue;
    out.push([`${e.type}${TYPE_SEPARATOR}${a.key}`, a.value]);
    if (extraPrefix) out.push([`${extraPrefix}${TYPE_SEPARATOR}${e.type}${TYPE_SEPARATOR}${a.key}`, a.value]);
  }
  return out;
}

/** What eventRows' WHERE selects, for a row of `recent_events`: the key (or, `withType`, any key of the type) and the value. */
function rowFilter(key: string, value: string | undefined, withType: boolean): (k: string, v: string) => boolean {
  const typePrefix = `${key}${TYPE_SEPARATOR}`;
  return (k, v) => (k === key || (withType && k.startsWith(typePrefix))) && (value === undefined || v === value);
}

/** `begin_block` / `end_block` for an event with `mode=BeginBlock|EndBlock`, else undefined. */
function phaseOf(e: IndexedEvent): string | undefined {
  const mode = e.attributes.find((a) => a.key === MODE_ATTRIBUTE)?.value;
  return mode === undefined ? undefined : PHASE_PREFIX[mode];
}

/** A search the index refuses to run (a `limitExceeded`): it would read too many index rows. */
export class SearchTooBroadError extends DomainError<'limitExceeded'> {
  constructor() {
    super('limitExceeded', `the search matched more than ${SEARCH_ROW_LIMIT} index entries; narrow the query (for example with a tx.height or block.height range)`, undefined);
  }
}

function boundsSql(col: string, b: HeightBounds, args: unknown[]): string {
  let sql = '';
  if (b.min !== undefined) {
    sql += ` AND ${col} >= ?`;
    args.push(b.min);
  }
  if (b.max !== undefined) {
    sql += ` AND ${col} <= ?`;
    args.push(b.max);
  }
  return sql;
}

export class EventIndex {
  private readonly stmts;
  /** the writer's count of blocks and rows in `recent_events` */
  private recentBlocks = 0;
  private recentRows = 0;

  /** `writer`: the chain thread's connection, which creates the tables first. */
  constructor(
    private readonly db: Database.Database,
    opts: { writer?: boolean } = {},
  ) {
    if (opts.writer) {
      // a database made when comet_txs was a WITHOUT ROWID table: rebuilt once, before the rest of the schema
      rebuildTable(db, {
        table: 'comet_txs',
        isOld: (sql) => WITHOUT_ROWID.test(sql),
        oldIndexes: ['comet_txs_pos'],
        create: COMET_TXS_SCHEMA,
        columns: ['hash', 'height', 'idx', 'code', 'tx', 'result'],
        orderBy: 'height, idx',
      });
      db.exec(SCHEMA);
    }
    this.stmts = {
      putTx: db.prepare(
        `INSERT INTO comet_txs (hash, height, idx, code, tx, result) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(hash) DO UPDATE SET height = excluded.height, idx = excluded.idx, code = excluded.code,
           tx = excluded.tx, result = excluded.result
         WHERE excluded.code = 0 OR comet_txs.code != 0`,
      ),
      putTxEvent: db.prepare('INSERT INTO tx_events (key, value, height, idx, seq) VALUES (?, ?, ?, ?, ?)'),
      putBlockEvent: db.prepare('INSERT INTO block_events (key, value, height, seq) VALUES (?, ?, ?, ?)'),
      txByHash: db.prepare<[Buffer], { hash: Buffer; height: number; idx: number; tx: Buffer; result: Buffer }>(
        'SELECT hash, height, idx, tx, result FROM comet_txs WHERE hash = ?',
      ),
      txAt: db.prepare<[number, number], { hash: Buffer; height: number; idx: number; tx: Buffer; result: Buffer }>(
        'SELECT hash, height, idx, tx, result FROM comet_txs WHERE height = ? AND idx = ?',
      ),
      delTxsAbove: db.prepare('DELETE FROM comet_txs WHERE height > ?'),
      delTxEvent: db.prepare('DELETE FROM tx_events WHERE key = ? AND value = ? AND height = ? AND idx = ?'),
      delBlockEvent: db.prepare('DELETE FROM block_events WHERE key = ? AND value = ? AND height = ?'),
    };
    if (opts.writer) this.recentBlocks = (db.prepare('SELECT count(*) AS n FROM recent_events').get() as { n: number }).n;
  }

  private recentStmts?: {
    put: Database.Statement<[number, Buffer]>;
    all: Database.Statement<[], { height: number; rows: Buffer }>;
    clear: Database.Statement<[]>;
    delAt: Database.Statement<[number]>;
  };

  private recent() {
    this.recentStmts ??= {
      put: this.db.prepare('INSERT OR REPLACE INTO recent_events (height, rows) VALUES (?, ?)'),
      all: this.db.prepare('SELECT height, rows FROM recent_events ORDER BY height'),
      clear: this.db.prepare('DELETE FROM recent_events'),
      delAt: this.db.prepare('DELETE FROM recent_events WHERE height = ?'),
    };
    return this.recentStmts;
  }

  /**
   * Writes the rows waiting in `recent_events` into tx_events/block_events, in height order (as if each
   * block had written its own), and empties it. Call inside a store transaction (indexBlock does).
   */
  flushRecent(): void {
    const r = this.recent();
    for (const { height, rows } of r.all.all()) {
      const w = decodeValue<RecentRows>(rows);
      for (const [key, value, idx, seq] of w.tx) this.stmts.putTxEvent.run(key, value, height, idx, seq);
      for (const [key, value, seq] of w.block) this.stmts.putBlockEvent.run(key, value, height, seq);
    }
    r.clear.run();
    this.recentBlocks = 0;
    this.recentRows = 0;
  }

  /**
   * Indexes one block: its txs (by hash, with their results and indexed attributes) and its
   * FinalizeBlock events. Call inside the block's store transaction.
   */
  indexBlock<R extends IndexedTxResult>(
    height: bigint,
    hashes: readonly Uint8Array[],
    txs: readonly Uint8Array[],
    results: readonly R[],
    blockEvents: readonly IndexedEvent[],
  ): void {
    const h = Number(height);
    const rows: RecentRows = { tx: [], block: [] };
    txs.forEach((tx, i) => {
      const r = results[i]!;
      // the same bytes as the tx's result in the block's CometBFT record (store/cometcodec.ts)
      this.stmts.putTx.run(buf(hashes[i]!), h, i, r.code, buf(tx), encodeTxResultOnce(r));
      r.events.forEach((e, seq) => {
        for (const [key, value] of indexedPairs(e)) rows.tx.push([key, value, i, seq]);
      });
    });
    blockEvents.forEach((e, seq) => {
      for (const [key, value] of indexedPairs(e, phaseOf(e))) rows.block.push([key, value, seq]);
    });
    const n = rows.tx.length + rows.block.length;
    if (n === 0) return;
    // the rows wait with the block's other records (same transaction); searches read them there too
    this.recent().put.run(h, encodeValue(rows));
    this.recentBlocks++;
    this.recentRows += n;
    if (this.recentBlocks >= MAX_RECENT_EVENT_BLOCKS || this.recentRows >= MAX_RECENT_EVENT_ROWS) this.flushRecent();
  }

  /**
   * Dev revert: removes the rows indexBlock wrote for block `height` (given the same txs, results and
   * events), by their indexes. Call for every block above the new head, inside the rewinding store
   * transaction, then rewindTxs(newHead).
   */
  unindexBlock<R extends IndexedTxResult>(height: bigint, txs: readonly Uint8Array[], results: readonly R[], blockEvents: readonly IndexedEvent[]): void {
    const h = Number(height);
    if (this.recent().delAt.run(h).changes > 0) this.recentBlocks--;
    txs.forEach((_, i) => {
      for (const e of results[i]?.events ?? []) {
        for (const [key, value] of indexedPairs(e)) this.stmts.delTxEvent.run(key, value, h, i);
      }
    });
    for (const e of blockEvents) {
      for (const [key, value] of indexedPairs(e, phaseOf(e))) this.stmts.delBlockEvent.run(key, value, h);
    }
  }

  /** Dev revert: the tx records of the blocks above `height` (inside the rewinding transaction). */
  rewindTxs(height: bigint): void {
    this.stmts.delTxsAbove.run(Number(height));
  }

  private txRow<R>(row: { hash: Buffer; height: number; idx: number; tx: Buffer; result: Buffer } | undefined): IndexedTx<R> | undefined {
    if (!row) return undefined;
    return {
      hash: new Uint8Array(row.hash),
      height: BigInt(row.height),
      index: row.idx,
      tx: new Uint8Array(row.tx),
      result: decodeTxResult<R>(row.result),
    };
  }

  tx<R = IndexedTxResult>(hash: Uint8Array): IndexedTx<R> | undefined {
    return this.txRow<R>(this.stmts.txByHash.get(buf(hash)));
  }

  txAt<R = IndexedTxResult>(height: bigint, index: number): IndexedTx<R> | undefined {
    return this.txRow<R>(this.stmts.txAt.get(Number(height), index));
  }

  /** Positions of every indexed tx within the bounds, by (height, idx). */
  txPositions(b: HeightBounds): TxPos[] {
    const args: unknown[] = [];
    const sql = `SELECT height, idx FROM comet_txs WHERE 1${boundsSql('height', b, args)} ORDER BY height, idx LIMIT ${SEARCH_ROW_LIMIT + 1}`;
    return this.capped(this.db.prepare(sql).all(...args) as TxPos[]);
  }

  /**
   * Tx event rows of `key` (equal to `value` when given) within the bounds; with `withType`, also
   * the rows of every attribute of event type `key` (`key.*`), so `<type> EXISTS` can be answered.
   */
  txEventRows(key: string, value: string | undefined, b: HeightBounds, withType = false): TxEventRow[] {
    return this.read(() => {
      const rows = this.eventRows<TxEventRow>('SELECT height, idx, seq, value FROM tx_events', key, value, b, withType);
      const wanted = rowFilter(key, value, withType);
      for (const { height, rows: w } of this.recentIn(b)) {
        for (const [k, v, idx, seq] of w.tx) if (wanted(k, v)) rows.push({ height, idx, seq, value: v });
      }
      return this.capped(rows);
    });
  }

  /** Block event rows, as txEventRows. */
  blockEventRows(key: string, value: string | undefined, b: HeightBounds, withType = false): BlockEventRow[] {
    return this.read(() => {
      const rows = this.eventRows<BlockEventRow>('SELECT height, seq, value FROM block_events', key, value, b, withType);
      const wanted = rowFilter(key, value, withType);
      for (const { height, rows: w } of this.recentIn(b)) {
        for (const [k, v, seq] of w.block) if (wanted(k, v)) rows.push({ height, seq, value: v });
      }
      return this.capped(rows);
    });
  }

  /** `fn` over one snapshot: a flush (rows leaving recent_events for the indexes) is seen whole or not at all. */
  private read<T>(fn: () => T): T {
    return this.db.inTransaction ? fn() : this.db.transaction(fn)();
  }

  /** The blocks of `recent_events` within the bounds, decoded. */
  private recentIn(b: HeightBounds): { height: number; rows: RecentRows }[] {
    const args: unknown[] = [];
    const sql = `SELECT height, rows FROM recent_events WHERE 1${boundsSql('height', b, args)}`;
    return (this.db.prepare(sql).all(...args) as { height: number; rows: Buffer }[]).map((r) => ({ height: r.height, rows: decodeValue<RecentRows>(r.rows) }));
  }

  private eventRows<T>(select: string, key: string, value: string | undefined, b: HeightBounds, withType: boolean): T[] {
    const args: unknown[] = [key];
    // `type.` ≤ k < `type/` holds exactly the keys that begin with `type.` ('/' follows '.')
    let sql = `${select} WHERE (key = ?${withType ? ' OR (key >= ? AND key < ?)' : ''})`;
    if (withType) args.push(`${key}${TYPE_SEPARATOR}`, `${key}${TYPE_SEPARATOR_NEXT}`);
    if (value !== undefined) {
      sql += ' AND value = ?';
      args.push(value);
    }
    sql += boundsSql('height', b, args) + ` LIMIT ${SEARCH_ROW_LIMIT + 1}`;
    return this.capped(this.db.prepare(sql).all(...args) as T[]);
  }

  private capped<T>(rows: T[]): T[] {
    if (rows.length > SEARCH_ROW_LIMIT) throw new SearchTooBroadError();
    return rows;
  }
}
