import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationalCache } from '../../src/lib/lru.js';

test('GenerationalCache stays within its byte bound, keeps hot entries, and deletes from both generations', () => {
  const c = new GenerationalCache<string, Uint8Array>(1000, (k, v) => k.length + v.length);
  const hot = new Uint8Array(10);
  c.set('hot', hot);
  for (let i = 0; i < 500; i++) {
    c.set(`k${i}`, new Uint8Array(20));
    assert.equal(c.get('hot'), hot, `hot entry survives insert ${i}`);
    assert.ok(c.weight <= 1000, `weight ${c.weight} within the bound`);
  }
  assert.equal(c.get('k0'), undefined, 'cold entries are dropped');
  assert.ok(c.get('k499'));
  c.delete('k499');
  c.delete('hot');
  assert.equal(c.get('k499'), undefined);
  assert.equal(c.get('hot'), undefined);
  const w = c.weight;
  c.set('x', new Uint8Array(5));
  c.set('x', new Uint8Array(7));
  assert.equal(c.weight, w + 8, 'replacing an entry re-weighs it');
  c.clear();
  assert.equal(c.size, 0);
  assert.equal(c.weight, 0);
});
