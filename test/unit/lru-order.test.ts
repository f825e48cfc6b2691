/**
 * lib/lru.ts keeps one iterator over its map for eviction (a fresh `entries()` per eviction walked every
 * deleted slot first: docs/benchmarks.md "The fixed cost of a dev block"). These runs check it against a
 * plain model of least-recently-used order through many evictions, hits, deletes, replacements, clears and
 * long stretches without an eviction (the iterator dropped and made again).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Lru } from '../../src/lib/lru.js';

/** The model: an array in use order, oldest first. */
class ModelLru {
  keys: number[] = [];
  values = new Map<number, number>();
  constructor(readonly capacity: number) {}
  get(k: number): number | undefined {
    const v = this.values.get(k);
    if (v !== undefined) this.touch(k);
    return v;
  }
  set(k: number, v: number): void {
    this.values.set(k, v);
    this.touch(k);
    while (this.keys.length > this.capacity && this.keys.length > 1) this.values.delete(this.keys.shift()!);
  }
  delete(k: number): void {
    this.values.delete(k);
    this.keys = this.keys.filter((x) => x !== k);
  }
  clear(): void {
    this.keys = [];
    this.values.clear();
  }
  private touch(k: number): void {
    this.keys = this.keys.filter((x) => x !== k);
    this.keys.push(k);
  }
}


/** operations in a repeatable order: a linear congruential stream (Numerical Recipes' constants), in [0, 1) */
function stream(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function sameAsModel(seed: number, capacity: number, steps: number): void {
  const random = stream(seed);
  const lru = new Lru<number, number>(capacity);
  const model = new ModelLru(capacity);
  const keySpace = capacity * 3;
  for (let step = 0; step < steps; step++) {
    const k = Math.floor(random() * keySpace);
    const op = random();
    // stretches of hits only (no eviction for longer than the map's size) come from the 0.6-0.9 band
    if (op < 0.45) {
      lru.set(k, step);
      model.set(k, step);
    } else if (op < 0.9) {
      assert.equal(lru.get(k), model.get(k), `get ${k} at step ${step}`);
    } else if (op < 0.995) {
      lru.delete(k);
      model.delete(k);
    } else {
      lru.clear();
      model.clear();
    }
    assert.equal(lru.size, model.keys.length, `size at step ${step}`);
  }
  // the oldest go first, in use order
  for (const k of model.keys) assert.equal(lru.get(k), model.values.get(k));
}

describe('Lru eviction order', () => {
  it('matches a model of least-recently-used order through evictions, hits, deletes and clears', () => {
    for (const [seed, capacity] of [[1, 1], [2, 2], [3, 7], [4, 64], [5, 500]] as const) sameAsModel(seed, capacity, 20_000);
  });

  it('evicts in use order after a long stretch of hits without an eviction', () => {
    const lru = new Lru<number, number>(100);
    for (let k = 0; k < 100; k++) lru.set(k, k);
    // 1,000 hits in reverse: the use order is now 99 … 0 oldest first, and no eviction ran meanwhile
    for (let r = 0; r < 10; r++) for (let k = 99; k >= 0; k--) lru.get(k);
    for (let k = 100; k < 150; k++) lru.set(k, k);
    for (let k = 99; k >= 50; k--) assert.equal(lru.get(k), undefined, `${k} was among the 50 oldest`);
    for (let k = 49; k >= 0; k--) assert.equal(lru.get(k), k);
    assert.equal(lru.size, 100);
  });

  it('goes on evicting after every entry it had walked is gone', () => {
    const lru = new Lru<number, number>(3);
    for (let k = 0; k < 1_000; k++) lru.set(k, k);
    assert.deepEqual([lru.get(997), lru.get(998), lru.get(999), lru.get(996)], [997, 998, 999, undefined]);
    lru.clear();
    for (let k = 0; k < 5; k++) lru.set(k, k);
    assert.deepEqual([lru.get(2), lru.get(3), lru.get(4), lru.get(1)], [2, 3, 4, undefined]);
  });
});
