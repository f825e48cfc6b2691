/**
 * The persisted pending dev cheats (chain/cheats.ts): rows (k, seq, v) of the `dev_cheats` table,
 * written by the chain thread. A row is one pending field (k names it, v holds its value, seq orders
 * it); the block that applies the cheats deletes their rows inside its own store transaction, so a
 * restart finds exactly the cheats no block has applied yet.
 *
 * `dev_cheats_applied` keeps, per height, the cheats that block applied at its start (JSON of
 * [k, hex v] rows), so a replay of the block (debug_trace*) starts from the same state.
 */
import type { Store } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS dev_cheats (k TEXT PRIMARY KEY, seq INTEGER NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dev_cheats_applied (height INTEGER PRIMARY KEY, rows TEXT NOT NULL);
`;

export interface CheatRow {
  k: string;
  seq: number;
  v: Uint8Array;
}

export class CheatTable {
  private readonly stmts;

  constructor(private readonly store: Store) {
    store.db.exec(SCHEMA);
    const db = store.db;
    this.stmts = {
      all: db.prepare<[], { k: string; seq: number; v: Buffer }>('SELECT k, seq, v FROM dev_cheats ORDER BY seq'),
      put: db.prepare('INSERT OR REPLACE INTO dev_cheats (k, seq, v) VALUES (?, ?, ?)'),
      deleteUpTo: db.prepare('DELETE FROM dev_cheats WHERE seq <= ?'),
      clear: db.prepare('DELETE FROM dev_cheats'),
      dropAppliedFrom: db.prepare('DELETE FROM dev_cheats_applied WHERE height >= ?'),
      putApplied: db.prepare('INSERT INTO dev_cheats_applied (height, rows) VALUES (?, ?)'),
    };
  }

  all(): CheatRow[] {
    return this.stmts.all.all().map((r) => ({ k: r.k, seq: r.seq, v: new Uint8Array(r.v) }));
  }

  /** Adds or replaces rows, in one transaction. */
  put(rows: CheatRow[]): void {
    this.store.transaction(() => {
      for (const r of rows) this.stmts.put.run(r.k, r.seq, Buffer.from(r.v.buffer, r.v.byteOffset, r.v.byteLength));
    });
  }

  /** Deletes the rows a block applied (call inside the block's store transaction). */
  deleteUpTo(seq: number): void {
    this.stmts.deleteUpTo.run(seq);
  }

  /**
   * Inside block `height`'s store transaction: what it applied (none: forget any record at this height
   * or above, left by blocks a revert removed).
   */
  recordApplied(height: number, rows: CheatRow[]): void {
    this.stmts.dropAppliedFrom.run(height);
    if (rows.length > 0) this.stmts.putApplied.run(height, JSON.stringify(rows.map((r) => [r.k, Buffer.from(r.v).toString('hex')])));
  }

  /** Replaces every row (a snapshot's cheats restored). */
  replace(rows: CheatRow[]): void {
    this.store.transaction(() => {
      this.stmts.clear.run();
      for (const r of rows) this.stmts.put.run(r.k, r.seq, Buffer.from(r.v.buffer, r.v.byteOffset, r.v.byteLength));
    });
  }
}

/** The cheats block `height` applied at its start (any store connection, a reader's too). */
export function appliedCheatRows(store: Store, height: number): CheatRow[] {
  let row: { rows: string } | undefined;
  try {
    row = store.db.prepare<[number], { rows: string }>('SELECT rows FROM dev_cheats_applied WHERE height = ?').get(height);
  } catch {
    return []; // a home whose chain thread never made the table: no cheats
  }
  if (row === undefined) return [];
  return (JSON.parse(row.rows) as [string, string][]).map(([k, v]) => ({ k, seq: 0, v: Uint8Array.from(Buffer.from(v, 'hex')) }));
}
