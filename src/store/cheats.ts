/**
 * The persisted pending dev cheats (chain/cheats.ts): rows (k, seq, v) of the `dev_cheats` table,
 * written by the chain thread. A row is one pending field (k names it, v holds its value, seq orders
 * it); the block that applies the cheats deletes their rows inside its own store transaction, so a
 * restart finds exactly the cheats no block has applied yet.
 */
import type { Store } from './store.js';

const SCHEMA = 'CREATE TABLE IF NOT EXISTS dev_cheats (k TEXT PRIMARY KEY, seq INTEGER NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;';

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

  /** Replaces every row (a snapshot's cheats restored). */
  replace(rows: CheatRow[]): void {
    this.store.transaction(() => {
      this.stmts.clear.run();
      for (const r of rows) this.stmts.put.run(r.k, r.seq, Buffer.from(r.v.buffer, r.v.byteOffset, r.v.byteLength));
    });
  }
}
