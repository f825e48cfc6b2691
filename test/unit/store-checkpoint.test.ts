/**
 * store/checkpoint.ts: with `walCheckpointer`, the writer's committed blocks reach the database file
 * through the worker's checkpoints (the writer's own automatic checkpoint only past
 * WAL_WRITER_CHECKPOINT_PAGES), and what the worker copied is whole without the WAL.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { WAL_WRITER_CHECKPOINT_PAGES, type CheckpointResult } from '../../src/store/checkpoint.js';
import { Store } from '../../src/store/store.js';

test('the checkpoint worker copies committed transactions into the database file; the writer does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-ckpt-'));
  const path = join(dir, 'ferry.db');
  const store = new Store(path, { walCheckpointer: true });
  // the worker does not keep a process alive (unref): this test's loop waits for its answer
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), WAL_WRITER_CHECKPOINT_PAGES);
    const checkpointed = new Promise<CheckpointResult>((resolve) => {
      assert.ok(store.onWalCheckpoint((r) => r.log > 0 && r.checkpointed === r.log && resolve(r)));
    });
    for (let i = 0; i < 20; i++) store.transaction(() => store.putMeta(`k${i}`, Buffer.alloc(3000, i)));
    const r = await checkpointed;
    assert.equal(r.busy, 0);
    // the database file alone (no WAL beside it) holds every committed row
    const copy = join(dir, 'copy.db');
    copyFileSync(path, copy);
    const db = new Database(copy, { readonly: true });
    try {
      for (let i = 0; i < 20; i++) {
        const row = db.prepare('SELECT v FROM meta WHERE k = ?').get(`k${i}`) as { v: Buffer } | undefined;
        assert.ok(row && row.v.equals(Buffer.alloc(3000, i)), `row k${i} is in the database file`);
      }
    } finally {
      db.close();
    }
  } finally {
    clearInterval(keepAlive);
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('closing a store with the checkpoint worker leaves no WAL behind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-ckpt-'));
  const path = join(dir, 'ferry.db');
  try {
    const store = new Store(path, { walCheckpointer: true });
    for (let i = 0; i < 20; i++) store.transaction(() => store.putMeta(`k${i}`, Buffer.alloc(3000, i)));
    assert.ok(statSync(`${path}-wal`).size > 0, 'the writes are in the WAL');
    store.close();
    assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0, 'the WAL is empty after close');
    // the database file alone holds every row
    const copy = join(dir, 'copy.db');
    copyFileSync(path, copy);
    const db = new Database(copy, { readonly: true });
    try {
      for (let i = 0; i < 20; i++) assert.ok(db.prepare('SELECT v FROM meta WHERE k = ?').get(`k${i}`), `row k${i}`);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a checkpoint worker the writer keeps SQLite\'s automatic checkpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-ckpt-'));
  const store = new Store(join(dir, 'ferry.db'));
  try {
    assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
    assert.equal(store.onWalCheckpoint(() => {}), false);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
