/**
 * store/migrate.ts: a database whose `txs` and `comet_txs` tables have the old shape (clustered on the
 * hash, WITHOUT ROWID) is rebuilt by the writer's open into rowid tables with a unique hash index, and
 * every lookup answers as before; a fresh database gets the new shape at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { encodeValue } from '../../src/lib/serial.js';
import { EventIndex } from '../../src/store/eventindex.js';
import { Store } from '../../src/store/store.js';

/** the shapes these tables had before (test data, as an older ferry wrote them) */
const OLD_SHAPES = `
CREATE TABLE txs (hash BLOB PRIMARY KEY, height INTEGER NOT NULL, idx INTEGER NOT NULL, native_hash BLOB NOT NULL, receipt BLOB NOT NULL) WITHOUT ROWID;
CREATE INDEX txs_native ON txs(native_hash);
CREATE TABLE comet_txs (hash BLOB PRIMARY KEY, height INTEGER NOT NULL, idx INTEGER NOT NULL, code INTEGER NOT NULL, tx BLOB NOT NULL, result BLOB NOT NULL) WITHOUT ROWID;
CREATE INDEX comet_txs_pos ON comet_txs(height, idx);
`;

const h = (n: number, tag: number) => Buffer.alloc(32, 0).fill(tag, 0, 1).fill(n, 1, 2);

function shapeOf(db: Database.Database, table: string): string {
  return (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
}

test('old txs and comet_txs tables are rebuilt as rowid tables with the same rows and answers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-tables-'));
  const path = join(dir, 'ferry.db');
  try {
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(OLD_SHAPES);
    for (let n = 0; n < 30; n++) {
      const height = 1 + Math.floor(n / 4);
      old.prepare('INSERT INTO txs VALUES (?, ?, ?, ?, ?)').run(h(n, 1), height, n % 4, h(n, 2), encodeValue({ receipt: n }));
      old.prepare('INSERT INTO comet_txs VALUES (?, ?, ?, ?, ?, ?)').run(h(n, 2), height, n % 4, n % 3 === 0 ? 1 : 0, Buffer.from([n]), encodeValue({ code: n % 3 === 0 ? 1 : 0, events: [] }));
    }
    old.close();

    const store = new Store(path);
    const index = new EventIndex(store.db, { writer: true });
    try {
      for (const table of ['txs', 'comet_txs']) assert.doesNotMatch(shapeOf(store.db, table), /WITHOUT\s+ROWID/i, `${table} is a rowid table`);
      for (let n = 0; n < 30; n++) {
        const height = BigInt(1 + Math.floor(n / 4));
        const loc = store.txLocation(h(n, 1));
        assert.deepEqual(loc && { height: loc.height, index: loc.index, receipt: loc.receipt }, { height, index: n % 4, receipt: { receipt: n } });
        assert.deepEqual(store.db.prepare('SELECT native_hash AS n FROM txs WHERE hash = ?').get(h(n, 1)), { n: h(n, 2) });
        const t = index.tx(h(n, 2));
        assert.equal(t?.height, height);
        assert.equal(t?.index, n % 4);
        assert.deepEqual(index.txAt(height, n % 4)?.tx, Uint8Array.of(n));
      }
      assert.equal(index.txPositions({}).length, 30);
      // the hash stays unique: a failed retry of a successful tx does not replace it, a success does
      index.indexBlock(20n, [h(1, 2)], [Uint8Array.of(99)], [{ code: 1, events: [] }], []);
      assert.equal(index.tx(h(1, 2))?.height, 1n);
      index.indexBlock(21n, [h(0, 2)], [Uint8Array.of(98)], [{ code: 0, events: [] }], []);
      assert.equal(index.tx(h(0, 2))?.height, 21n);
      assert.equal(index.txPositions({}).length, 30);
    } finally {
      store.close();
    }
    // a second open finds the new shape and leaves it
    const again = new Store(path);
    new EventIndex(again.db, { writer: true });
    assert.equal(again.txLocation(h(5, 1))?.index, 1);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a fresh database gets rowid txs and comet_txs tables', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-tables-'));
  try {
    const store = new Store(join(dir, 'ferry.db'));
    new EventIndex(store.db, { writer: true });
    for (const table of ['txs', 'comet_txs']) assert.doesNotMatch(shapeOf(store.db, table), /WITHOUT\s+ROWID/i);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an older home's index of txs by native hash (no query reads it) is dropped at the writer's open, the rows kept", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-tables-'));
  const path = join(dir, 'ferry.db');
  const indexes = (db: Database.Database) =>
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'txs' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  try {
    const first = new Store(path);
    first.db.exec('CREATE INDEX txs_native ON txs(native_hash)');
    first.db.prepare('INSERT INTO txs (hash, height, idx, native_hash, receipt) VALUES (?, ?, ?, ?, ?)').run(h(1, 1), 1, 0, h(1, 2), encodeValue({ receipt: 1 }));
    assert.deepEqual(indexes(first.db), ['txs_hash', 'txs_native']);
    first.close();
    const again = new Store(path);
    try {
      assert.deepEqual(indexes(again.db), ['txs_hash']);
      assert.deepEqual(again.txLocation(h(1, 1))?.receipt, { receipt: 1 });
    } finally {
      again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
