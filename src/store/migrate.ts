/**
 * Table shape migrations, run by the writer's open before any reader opens the database. The lookup
 * tables of each tx (`txs`: receipt by EVM hash; `comet_txs`: result by native hash) were clustered on
 * their random hash keys (WITHOUT ROWID), so every insert of a row of about a kilobyte landed in a
 * random page and split one every few rows; they are now rowid tables (rows appended in block order)
 * with a unique index on the hash. Same columns, same answers.
 */
import type Database from 'better-sqlite3';

/** A table to rebuild when its stored schema has the old shape. */
export interface TableRebuild {
  table: string;
  /** the stored CREATE TABLE text has the old shape */
  isOld: (createSql: string) => boolean;
  /** the old table's indexes (their names are reused by the new ones) */
  oldIndexes: string[];
  /** the new CREATE TABLE and CREATE INDEX statements */
  create: string;
  columns: string[];
  /** the copy's row order (the new rowids follow it) */
  orderBy: string;
}

/** Rebuilds the table in one transaction when it has the old shape; true when it did. */
export function rebuildTable(db: Database.Database, r: TableRebuild): boolean {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(r.table) as { sql: string } | undefined;
  if (row === undefined || !r.isOld(row.sql)) return false;
  const old = `${r.table}_old_shape`;
  const cols = r.columns.join(', ');
  db.transaction(() => {
    for (const ix of r.oldIndexes) db.exec(`DROP INDEX IF EXISTS ${ix}`);
    db.exec(`ALTER TABLE ${r.table} RENAME TO ${old}`);
    db.exec(r.create);
    db.exec(`INSERT INTO ${r.table} (${cols}) SELECT ${cols} FROM ${old} ORDER BY ${r.orderBy}`);
    db.exec(`DROP TABLE ${old}`);
  })();
  return true;
}

export const WITHOUT_ROWID = /WITHOUT\s+ROWID/i;
