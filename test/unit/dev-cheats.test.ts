/**
 * The pending dev-cheat overlay (chain/cheats.ts): a block applies exactly the fields pending when it
 * started (a field set while it executes stays pending), the persisted copy follows, and
 * save/restore (evm_snapshot / evm_revert) bring back a pending set a block had already applied.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { appliedCheats, CheatOverlay } from '../../src/chain/cheats.js';
import { CheatTable } from '../../src/store/cheats.js';
import { Store } from '../../src/store/store.js';

const A = new Uint8Array(20).fill(0xa1);
const B = new Uint8Array(20).fill(0xb2);
const SLOT = new Uint8Array(32).fill(1);
const word = (n: number) => {
  const w = new Uint8Array(32);
  w[31] = n;
  return w;
};

test('a block applies the fields pending at its start; a later set of the same field stays pending, also across a reopen', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-cheats-'));
  try {
    const store = new Store(join(dir, 'db.sqlite'));
    const overlay = new CheatOverlay(new CheatTable(store));
    overlay.set([{ kind: 'balance', address: A, value: 5n }, { kind: 'slot', address: A, slot: SLOT, value: word(7) }]);
    const block = overlay.forBlock();
    assert.equal(block.cheats.length, 2);
    // set while the block executes: newer than what the block took
    overlay.set([{ kind: 'balance', address: A, value: 6n }]);
    store.transaction(() => overlay.persistApplied(1, block));
    overlay.applied(block.upTo);
    assert.equal(overlay.size, 1);
    assert.equal(overlay.slot(A, SLOT), undefined);
    assert.equal(overlay.account(A, undefined)?.balance, 6n);
    assert.equal(overlay.touches(B), false);
    store.close();

    const reopenedStore = new Store(join(dir, 'db.sqlite'));
    const reopened = new CheatOverlay(new CheatTable(reopenedStore));
    assert.deepEqual(reopened.all().map(([c]) => c.kind), ['balance']);
    assert.equal(reopened.account(A, undefined)?.balance, 6n);
    // the block's record for replays, readable from any connection; a later block at that height replaces it
    assert.deepEqual(appliedCheats(reopenedStore, 1).map((c) => c.kind).sort(), ['balance', 'slot']);
    reopenedStore.transaction(() => reopened.persistApplied(1, undefined));
    assert.deepEqual(appliedCheats(reopenedStore, 1), []);
    reopenedStore.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('restore brings back saved fields a block had applied, numbered so the next block applies them again', () => {
  const overlay = new CheatOverlay();
  const restored: number[] = [];
  overlay.onRestore = (p) => restored.push(p.length);
  overlay.set([{ kind: 'nonce', address: B, value: 9n }]);
  const saved = overlay.save();
  const first = overlay.forBlock();
  overlay.applied(first.upTo);
  assert.equal(overlay.size, 0);
  overlay.restore(saved);
  assert.deepEqual(restored, [1]);
  assert.equal(overlay.account(B, undefined)?.nonce, 9n);
  const again = overlay.forBlock();
  assert.ok(again.upTo > first.upTo);
  overlay.applied(again.upTo);
  assert.equal(overlay.size, 0);
});

test('as call overrides: the caller wins per field, and a caller `state` drops the pending slots', () => {
  const overlay = new CheatOverlay();
  overlay.set([{ kind: 'balance', address: A, value: 5n }, { kind: 'slot', address: A, slot: SLOT, value: word(7) }]);
  const of = (o: ReturnType<typeof overlay.overrides>) => o!.find((x) => Buffer.compare(x.address, A) === 0)!;
  const merged = of(overlay.overrides([{ address: A, balance: 1n, stateDiff: [{ slot: SLOT, value: word(9) }] }]));
  assert.equal(merged.balance, 1n);
  assert.deepEqual(merged.stateDiff, [{ slot: SLOT, value: word(9) }], 'the caller\'s value of the same slot wins, and the slot appears once');
  const diff = of(overlay.overrides([{ address: A, balance: 1n }]));
  assert.deepEqual(diff.stateDiff, [{ slot: SLOT, value: word(7) }]);
  const replaced = of(overlay.overrides([{ address: A, state: [] }]));
  assert.equal(replaced.stateDiff, undefined);
  assert.deepEqual(replaced.state, []);
  assert.equal(replaced.balance, 5n);
});
