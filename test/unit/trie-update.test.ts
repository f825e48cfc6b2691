/**
 * evm/trieupdate.ts: batched puts and deletes on a stored trie give ethereumjs' MPT root after the same
 * operations, write only nodes reachable from the new root, and leave a trie the MPT reads back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP, type Input } from '@ethereumjs/rlp';
import { keccak256 } from '../../src/evm/common.js';
import { EMPTY_TRIE_ROOT } from '../../src/evm/orderedtrie.js';
import { updateTrie, type TrieNodeStore } from '../../src/evm/trieupdate.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** a node store over a Map, counting what each batch writes */
class MapStore implements TrieNodeStore {
  readonly nodes = new Map<string, Uint8Array>();
  written: string[] = [];
  node(hash: Uint8Array): Uint8Array | undefined {
    return this.nodes.get(hex(hash));
  }
  putNode(hash: Uint8Array, encoded: Uint8Array): void {
    assert.equal(hex(keccak256(encoded)), hex(hash), 'a node is stored under its hash');
    this.nodes.set(hex(hash), encoded);
    this.written.push(hex(hash));
  }
}

/** every hash-referenced node reachable from root (including the root) */
function reachable(store: MapStore, root: Uint8Array): Set<string> {
  const seen = new Set<string>();
  const walk = (raw: Input): void => {
    if (Array.isArray(raw)) {
      if (raw.length === 17) for (let i = 0; i < 16; i++) walk(raw[i]!);
      else {
        const flag = (raw[0] as Uint8Array)[0]! >> 4;
        if (flag < 2) walk(raw[1]!);
      }
      return;
    }
    const b = raw as Uint8Array;
    if (b.length !== 32 || seen.has(hex(b))) return;
    seen.add(hex(b));
    walk(RLP.decode(store.node(b)!) as Input[]);
  };
  if (hex(root) !== hex(EMPTY_TRIE_ROOT)) walk(root);
  return seen;
}

/** a deterministic pseudo-random stream (xorshift32) */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

test('random batches of puts and deletes: the MPT root, reachable writes only, readable by the MPT', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const rand = rng(seed * 7919);
    const store = new MapStore();
    const mpt = new MerklePatriciaTrie({ useKeyHashing: true, useKeyHashingFunction: keccak256 });
    let root = EMPTY_TRIE_ROOT;
    // few distinct keys so batches overwrite and delete existing ones; short values make embedded nodes
    const keys = Array.from({ length: 40 + seed * 30 }, (_, i) => Uint8Array.of(seed, i >> 8, i & 255));
    const live = new Map<string, Uint8Array>();
    for (let block = 0; block < 25; block++) {
      const ops: [Uint8Array, Uint8Array | undefined][] = [];
      const n = 1 + Math.floor(rand() * (block % 5 === 4 ? 120 : 12));
      for (let j = 0; j < n; j++) {
        const key = keys[Math.floor(rand() * keys.length)]!;
        const r = rand();
        const value = r < 0.3 ? undefined : r < 0.4 && live.has(hex(key)) ? live.get(hex(key))! : Uint8Array.from(Buffer.alloc(1 + Math.floor(rand() * 40), Math.floor(rand() * 256)));
        ops.push([key, value]);
      }
      for (const [key, value] of ops) {
        if (value === undefined) {
          await mpt.del(key);
          live.delete(hex(key));
        } else {
          await mpt.put(key, value);
          live.set(hex(key), value);
        }
      }
      store.written = [];
      root = updateTrie(store, root, ops.map(([k, v]) => [keccak256(k), v] as const));
      assert.equal(hex(root), hex(mpt.root()), `seed ${seed} block ${block}: same root as the MPT`);
      const reach = reachable(store, root);
      for (const w of store.written) assert.ok(reach.has(w), `seed ${seed} block ${block}: a written node is reachable from the root`);
    }
    // the MPT reads every live key back from the nodes the batches stored
    const reader = new MerklePatriciaTrie({ useKeyHashing: true, useKeyHashingFunction: keccak256, root });
    for (const [h, v] of store.nodes) await reader.database().put(Uint8Array.from(Buffer.from(h, 'hex')), v);
    for (const key of keys) {
      const got = await reader.get(key);
      const want = live.get(hex(key));
      assert.equal(got === null ? undefined : hex(got), want === undefined ? undefined : hex(want), `seed ${seed}: key ${hex(key)}`);
    }
  }
});

test('deleting every key gives the empty root; a batch changing nothing writes nothing', () => {
  const store = new MapStore();
  const keys = Array.from({ length: 50 }, (_, i) => keccak256(Uint8Array.of(i)));
  const root = updateTrie(store, EMPTY_TRIE_ROOT, keys.map((k, i) => [k, Uint8Array.of(i + 1)] as const));
  store.written = [];
  assert.equal(hex(updateTrie(store, root, keys.map((k, i) => [k, Uint8Array.of(i + 1)] as const))), hex(root));
  assert.equal(hex(updateTrie(store, root, [[keccak256(Uint8Array.of(200)), undefined]])), hex(root));
  assert.deepEqual(store.written, []);
  assert.equal(hex(updateTrie(store, root, keys.map((k) => [k, undefined] as const))), hex(EMPTY_TRIE_ROOT));
});

test('a node missing from the store is an error, not a wrong root', () => {
  const store = new MapStore();
  const root = updateTrie(store, EMPTY_TRIE_ROOT, Array.from({ length: 20 }, (_, i) => [keccak256(Uint8Array.of(i)), Buffer.alloc(40, i)] as const));
  store.nodes.clear();
  assert.throws(() => updateTrie(store, root, [[keccak256(Uint8Array.of(1)), Uint8Array.of(9)]]), /missing trie node/);
});

test('keys that are prefixes of others (values in branches) give the MPT root', async () => {
  // the state tries' keys are all 32 bytes, so only a trie of keys used as given puts a value in a branch
  const rand = rng(99991);
  const store = new MapStore();
  const mpt = new MerklePatriciaTrie();
  let root = EMPTY_TRIE_ROOT;
  // 1-3 byte keys sharing prefixes: a key ending where another goes on
  const keys = Array.from({ length: 120 }, (_, i) => Uint8Array.from([0x12, 0x34, i].slice(0, 1 + (i % 3)).map((x, j) => (j === 2 ? x : x ^ (i & 1)))));
  for (let block = 0; block < 40; block++) {
    const ops: [Uint8Array, Uint8Array | undefined][] = [];
    const n = 1 + Math.floor(rand() * 15);
    for (let j = 0; j < n; j++) {
      const value = rand() < 0.35 ? undefined : Uint8Array.from(Buffer.alloc(1 + Math.floor(rand() * 40), 1 + Math.floor(rand() * 200)));
      ops.push([keys[Math.floor(rand() * keys.length)]!, value]);
    }
    for (const [k, v] of ops) {
      if (v === undefined) await mpt.del(k);
      else await mpt.put(k, v);
    }
    root = updateTrie(store, root, ops);
    assert.equal(hex(root), hex(mpt.root()), `block ${block}: the MPT's root`);
  }
});
