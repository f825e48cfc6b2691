/**
 * The address index (docs/architecture.md "The address index"): for every EVM tx, each address it
 * touched — sender, recipient or created contract, and the addresses its internal calls reached
 * (evm/touched.ts) — as one row (address, height, tx index), so an address's history is a range of
 * one primary key, newest or oldest first: what ots_searchTransactionsBefore/After page through
 * (evmrpc/ots.ts) and trace_filter narrows its blocks by (evmrpc/trace.ts).
 *
 * Written by the chain thread inside the block's store transaction (Store.putBlock). Each block also
 * keeps the list of distinct addresses it indexed (`addr_blocks`), so a dev revert (Store.rewindBlocks)
 * and history pruning (store/prune.ts) delete a block's rows by key, without an index on height.
 * Homes written before the index existed are built once at start (chain/addrmigration.ts): the
 * blocks not yet indexed are recorded under a meta key, and the build moves it up in batches.
 */
import type Database from 'better-sqlite3';
import type { TxPos } from './eventindex.js';
import type { EvmTx } from '../types/chain.js';

/** meta key: `<done>:<top>` — blocks done+1…top of an older home still to index (absent: complete) */
export const ADDRESS_INDEX_BUILD_KEY = 'addr_index_build';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS addr_txs (
  addr BLOB NOT NULL,
  height INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  PRIMARY KEY (addr, height, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS addr_blocks (height INTEGER PRIMARY KEY, addrs BLOB NOT NULL);
`;

const ADDRESS_BYTES = 20;
const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** where a build of an older home stands: blocks done+1…top still to index */
export interface IndexBuild {
  done: number;
  top: number;
}

export class AddressIndex {
  private readonly stmts;

  /** `writer`: the chain thread's connection; `latest`: its head when the tables are new (an older home) */
  constructor(
    private readonly db: Database.Database,
    opts: { writer?: boolean; latest?: () => number | undefined; putMeta?: (k: string, v: Uint8Array) => void } = {},
  ) {
    if (opts.writer) {
      const existed = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'addr_txs'").get() as { n: number };
      db.exec(SCHEMA);
      const top = existed.n === 0 ? opts.latest?.() : undefined;
      // blocks written before the index existed: built at start (chain/addrmigration.ts)
      if (top !== undefined && top > 0) opts.putMeta?.(ADDRESS_INDEX_BUILD_KEY, Buffer.from(`0:${top}`));
    }
    this.stmts = {
      put: db.prepare('INSERT OR IGNORE INTO addr_txs (addr, height, idx) VALUES (?, ?, ?)'),
      putBlock: db.prepare('INSERT OR REPLACE INTO addr_blocks (height, addrs) VALUES (?, ?)'),
      blocksAbove: db.prepare<[number], { height: number; addrs: Buffer }>('SELECT height, addrs FROM addr_blocks WHERE height > ?'),
      blockAt: db.prepare<[number], { addrs: Buffer }>('SELECT addrs FROM addr_blocks WHERE height = ?'),
      del: db.prepare('DELETE FROM addr_txs WHERE addr = ? AND height = ?'),
      delBlock: db.prepare('DELETE FROM addr_blocks WHERE height = ?'),
      desc: db.prepare<[Buffer, number, number, number], TxPos>(
        'SELECT height, idx FROM addr_txs WHERE addr = ? AND height >= ? AND height <= ? ORDER BY height DESC, idx DESC LIMIT ?',
      ),
      asc: db.prepare<[Buffer, number, number, number], TxPos>(
        'SELECT height, idx FROM addr_txs WHERE addr = ? AND height >= ? AND height <= ? ORDER BY height, idx LIMIT ?',
      ),
      below: db.prepare<[Buffer, number, number, number], TxPos>('SELECT height, idx FROM addr_txs WHERE addr = ? AND height = ? AND idx < ? ORDER BY idx DESC LIMIT ?'),
      above: db.prepare<[Buffer, number, number, number], TxPos>('SELECT height, idx FROM addr_txs WHERE addr = ? AND height = ? AND idx > ? ORDER BY idx LIMIT ?'),
      heights: db.prepare<[Buffer, number, number, number], { height: number }>(
        'SELECT DISTINCT height FROM addr_txs WHERE addr = ? AND height >= ? AND height <= ? ORDER BY height LIMIT ?',
      ),
    };
  }

  /** Indexes block `height`: `touched[i]` are the addresses tx i touched. Call inside the block's transaction. */
  indexBlock(height: number, touched: readonly (readonly Uint8Array[])[]): void {
    const distinct = new Map<string, Uint8Array>();
    touched.forEach((addrs, i) => {
      for (const a of addrs) {
        const b = buf(a);
        this.stmts.put.run(b, height, i);
        distinct.set(b.toString('latin1'), a);
      }
    });
    if (distinct.size > 0) this.stmts.putBlock.run(height, Buffer.concat([...distinct.values()]));
  }

  /** Dev revert: removes the rows of the blocks above `height` (inside the rewinding transaction). */
  rewind(height: number): void {
    for (const row of this.stmts.blocksAbove.all(height)) this.dropBlock(row.height, row.addrs);
  }

  /** History pruning: removes block `height`'s rows (store/prune.ts). */
  prune(height: number): void {
    const row = this.stmts.blockAt.get(height);
    if (row) this.dropBlock(height, row.addrs);
  }

  private dropBlock(height: number, addrs: Buffer): void {
    for (let i = 0; i < addrs.length; i += ADDRESS_BYTES) this.stmts.del.run(addrs.subarray(i, i + ADDRESS_BYTES), height);
    this.stmts.delBlock.run(height);
  }

  /**
   * The positions of txs touching `addr` in heights [lo, hi], newest first (`desc`) or oldest first:
   * the first `count`, then the rest of the last block they reach (an explorer's page holds whole
   * blocks); at most `cap` + 1, so a caller can tell a result over its bound.
   */
  positions(addr: Uint8Array, lo: number, hi: number, desc: boolean, count: number, cap: number): TxPos[] {
    if (lo > hi) return [];
    const a = buf(addr);
    const rows = (desc ? this.stmts.desc : this.stmts.asc).all(a, lo, hi, Math.min(count, cap + 1));
    if (rows.length < count || rows.length > cap) return rows;
    const last = rows[rows.length - 1]!;
    const rest = (desc ? this.stmts.below : this.stmts.above).all(a, last.height, last.idx, cap + 1 - rows.length);
    return rows.concat(rest);
  }

  /** the heights in [lo, hi] with a tx touching `addr`, oldest first, at most `limit` */
  heights(addr: Uint8Array, lo: number, hi: number, limit: number): number[] {
    return this.stmts.heights.all(buf(addr), lo, hi, limit).map((r) => r.height);
  }
}

/** Parses the build marker (ADDRESS_INDEX_BUILD_KEY): undefined when no build is due. */
export function parseBuild(v: Uint8Array | undefined): IndexBuild | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+):(\d+)$/.exec(Buffer.from(v).toString());
  if (!m || Number(m[1]) >= Number(m[2])) return undefined;
  return { done: Number(m[1]), top: Number(m[2]) };
}

/** A tx's own ends: sender, and recipient or the contract it created (a block replayed without its touched sets). */
export function txEnds(tx: Pick<EvmTx, 'from' | 'to'>, created: Uint8Array | undefined): Uint8Array[] {
  const out = [tx.from];
  const to = tx.to ?? created;
  if (to !== undefined && Buffer.compare(to, tx.from) !== 0) out.push(to);
  return out;
}
