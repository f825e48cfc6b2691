/**
 * Trie-node garbage collection (store/triegc.ts, docs/abci.md "Pruning"): an account trie whose
 * accounts own storage tries is updated block after block with random writes over small key and value
 * spaces (so later blocks re-create nodes that earlier blocks made and that were already collected,
 * and contracts share identical storage tries), and older heights are pruned at random. After every
 * prune, every retained height's trie is fully readable from the store (every node present, stored
 * under its hash) and its root is the one the same state builds from scratch; and the store holds
 * exactly the nodes the retained roots reach (nothing unreachable left behind). Once the journal of new
 * nodes' references is counted, every count equals a recount from the stored nodes and roots (each
 * node's children found by @ethereumjs/rlp's decoder, the reference for triegc.ts's own reader), and
 * the journal is counted before it grows past its bound and after a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RLP } from '@ethereumjs/rlp';
import { keccak256 } from '../../src/evm/common.js';
import { EMPTY_TRIE_ROOT } from '../../src/evm/orderedtrie.js';
import { updateTrie, type TrieNodeStore } from '../../src/evm/trieupdate.js';
import { Store } from '../../src/store/store.js';
import { EMPTY_ROOT_HEX, nodeChildren, TRIE_REFS_LOG_BLOCKS, TrieRefs } from '../../src/store/triegc.js';
import { walkStoredTrie as walk } from '../helpers/triewalk.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const CONTRACTS = 6;
const SLOTS = 12;
const VALUES = 3;
const BLOCKS = 120;

/** a small deterministic PRNG (mulberry32) so a failure replays */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const key = (i: number) => keccak256(Uint8Array.of(i));
const CODE_HASH = keccak256(new Uint8Array());

/** state: contract → slot → value (0: absent) */
type State = number[][];

function accountRlp(nonce: number, storageRoot: Uint8Array): Uint8Array {
  return RLP.encode([nonce, 1000, storageRoot, CODE_HASH]);
}

/** the state root of `state` built from scratch on a map, independent of the store */
function rootFromScratch(state: State): Uint8Array {
  const m = new Map<string, Uint8Array>();
  const s: TrieNodeStore = { node: (h) => m.get(hex(h)), putNode: (h, e) => void m.set(hex(h), e) };
  const accounts: [Uint8Array, Uint8Array][] = state.map((slots, c) => {
    const storageRoot = updateTrie(s, EMPTY_TRIE_ROOT, slots.flatMap((v, i) => (v === 0 ? [] : [[key(i), RLP.encode(v)] as const])));
    return [key(100 + c), accountRlp(c, storageRoot)];
  });
  return updateTrie(s, EMPTY_TRIE_ROOT, accounts);
}

/** the nodes a trie node names by hash, by @ethereumjs/rlp's decoder (hex) */
function childrenByLibrary(enc: Uint8Array): string[] {
  const out: string[] = [];
  const ref = (x: unknown) => {
    if (x instanceof Uint8Array && x.length === 32 && hex(x) !== EMPTY_ROOT_HEX) out.push(hex(x));
  };
  const items = RLP.decode(enc) as unknown[];
  if (items.length === 17) items.slice(0, 16).forEach(ref);
  else if (items.length === 2 && (items[0] as Uint8Array).length > 0 && (items[0] as Uint8Array)[0]! >> 4 >= 2) {
    const value = items[1] as Uint8Array;
    if (value.length > 0 && value[0]! >= 0xc0) {
      const account = RLP.decode(value) as unknown[];
      if (account.length === 4) ref(account[2]);
    }
  } else if (items.length === 2) ref(items[1]);
  return out;
}

/**
 * The counts of trie_refs equal a recount: one per stored node naming a node, one per height whose root
 * it is. Also checks triegc.ts's nodeChildren against the library's decoding on every stored node.
 */
function assertCountsExact(store: Store, what: string): void {
  const expected = new Map<string, number>();
  const add = (k: string) => expected.set(k, (expected.get(k) ?? 0) + 1);
  for (const { k, v } of store.db.prepare('SELECT k, v FROM trie WHERE length(k) = 32').all() as { k: Buffer; v: Buffer }[]) {
    const children = childrenByLibrary(v);
    assert.deepEqual(nodeChildren(v).map(hex), children, `${what}: the children of node ${hex(k)}`);
    children.forEach(add);
  }
  for (const { root } of store.db.prepare('SELECT root FROM trie_roots').all() as { root: Buffer }[]) if (hex(root) !== EMPTY_ROOT_HEX) add(hex(root));
  const counted = new Map((store.db.prepare('SELECT k, n FROM trie_refs').all() as { k: Buffer; n: number }[]).map((r) => [hex(r.k), r.n]));
  assert.deepEqual([...counted].sort(), [...expected].sort(), `${what}: reference counts`);
}

const journalRows = (store: Store) => (store.db.prepare('SELECT count(*) AS n FROM trie_refs_log').get() as { n: number }).n;

test('trie-node GC keeps every retained root whole and nothing else', () => {
  for (const seed of [1, 2, 3]) {
    const next = rng(seed);
    const store = new Store(':memory:');
    store.trieRefs = TrieRefs.open(store.db, true);
    assert.ok(store.trieRefs, 'an empty store counts references');
    const state: State = Array.from({ length: CONTRACTS }, () => new Array<number>(SLOTS).fill(0));
    const storageRoots: Uint8Array[] = new Array(CONTRACTS).fill(EMPTY_TRIE_ROOT);
    let root = EMPTY_TRIE_ROOT;
    const history = new Map<number, { root: Uint8Array; state: State }>();
    let floor = 0;
    let freed = 0;
    for (let h = 0; h <= BLOCKS; h++) {
      const overlay = new Map<string, Uint8Array>();
      const nodes: TrieNodeStore = {
        node: (x) => overlay.get(hex(x)) ?? store.trieGet(Buffer.from(x)),
        putNode: (x, e) => void overlay.set(hex(x), e),
      };
      // some blocks change nothing (the same root at two heights); others write a few slots
      const writes = next() < 0.15 ? 0 : 1 + Math.floor(next() * 5);
      // one batch per trie and block, as the chain writes them (evm/trieupdate.ts)
      const touched = new Map<number, Map<number, number>>();
      for (let w = 0; w < writes; w++) {
        const c = Math.floor(next() * CONTRACTS);
        const i = Math.floor(next() * SLOTS);
        const v = Math.floor(next() * VALUES);
        state[c]![i] = v;
        touched.set(c, (touched.get(c) ?? new Map()).set(i, v));
      }
      if (h === 0) for (let c = 0; c < CONTRACTS; c++) touched.set(c, touched.get(c) ?? new Map());
      for (const [c, slots] of touched) {
        storageRoots[c] = updateTrie(nodes, storageRoots[c]!, [...slots].map(([i, v]) => [key(i), v === 0 ? undefined : RLP.encode(v)] as const));
      }
      root = updateTrie(nodes, root, [...touched.keys()].map((c) => [key(100 + c), accountRlp(c, storageRoots[c]!)] as const));
      store.transaction(() => {
        store.triePutMany([...overlay].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Buffer, Uint8Array]));
        store.trieRefs!.rootAt(h, root);
      });
      history.set(h, { root, state: state.map((s) => [...s]) });
      if (h > 5 && next() < 0.3) {
        floor = h - Math.floor(next() * 6);
        freed += store.transaction(() => store.trieRefs!.pruneBelow(floor));
        for (const k of [...history.keys()]) if (k < floor) history.delete(k);
        const seen = new Set<string>();
        for (const [height, v] of history) {
          assert.equal(hex(v.root), hex(rootFromScratch(v.state)), `seed ${seed}: height ${height}'s root`);
          walk(store, v.root, seen);
        }
        const stored = store.db.prepare('SELECT count(*) AS n FROM trie WHERE length(k) = 32').get() as { n: number };
        assert.equal(stored.n, seen.size, `seed ${seed} after pruning below ${floor}: only reachable nodes stay`);
        store.transaction(() => store.trieRefs!.countLog());
        assertCountsExact(store, `seed ${seed} after pruning below ${floor}`);
      }
      assert.ok(journalRows(store) < TRIE_REFS_LOG_BLOCKS, `seed ${seed} height ${h}: the journal is counted before it reaches its bound`);
    }
    store.transaction(() => store.trieRefs!.countLog());
    assertCountsExact(store, `seed ${seed} at the end`);
    assert.ok(freed > 0, 'pruning deleted nodes');
    store.close();
  }
});

test('an archive store, or a store with uncounted nodes, does not count', () => {
  const archive = new Store(':memory:');
  assert.equal(TrieRefs.open(archive.db, false), undefined);
  archive.triePutMany([[Buffer.from(keccak256(Uint8Array.of(1))), Uint8Array.of(1)]]);
  assert.equal(TrieRefs.open(archive.db, true), undefined, 'nodes written uncounted: no collection');
  archive.close();
});

/** A file-backed counting store written block by block: one account (with a one-slot storage trie) changes per block, so every block inserts nodes. */
function journalChain(path: string) {
  const next = rng(7);
  let root = EMPTY_TRIE_ROOT;
  let h = 0;
  return {
    open(): Store {
      const store = new Store(path);
      store.trieRefs = TrieRefs.open(store.db, true);
      assert.ok(store.trieRefs);
      return store;
    },
    /** the block's writes, in the store transaction the caller runs them in */
    write(store: Store): void {
      const overlay = new Map<string, Uint8Array>();
      const nodes: TrieNodeStore = { node: (x) => overlay.get(hex(x)) ?? store.trieGet(Buffer.from(x)), putNode: (x, e) => void overlay.set(hex(x), e) };
      const storageRoot = updateTrie(nodes, EMPTY_TRIE_ROOT, [[key(Math.floor(next() * SLOTS)), RLP.encode(1 + h)]]);
      const newRoot = updateTrie(nodes, root, [[key(100 + Math.floor(next() * 40)), accountRlp(h, storageRoot)]]);
      store.triePutMany([...overlay].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Buffer, Uint8Array]));
      store.trieRefs!.rootAt(h, newRoot);
      root = newRoot;
      h++;
    },
    block(store: Store): void {
      store.transaction(() => this.write(store));
    },
    get root() {
      return root;
    },
    get height() {
      return h;
    },
  };
}

/** prunes below `floor` and checks that the store holds exactly `root`'s nodes, counted exactly */
function pruneToRoot(store: Store, floor: number, root: Uint8Array, what: string): void {
  store.transaction(() => store.trieRefs!.pruneBelow(floor));
  const seen = new Set<string>();
  walk(store, root, seen);
  const stored = store.db.prepare('SELECT count(*) AS n FROM trie WHERE length(k) = 32').get() as { n: number };
  assert.equal(stored.n, seen.size, `${what}: pruned down to the last root`);
  assertCountsExact(store, what);
}

test('the journal of new references outlives a restart and is counted at its bound', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-triegc-'));
  const chain = journalChain(join(dir, 'ferry.db'));
  try {
    let store = chain.open();
    for (let i = 0; i < 10; i++) chain.block(store);
    assert.equal(journalRows(store), 10);
    // a crash: the connection goes without Store.close (which counts the journal)
    store.db.close();
    store = chain.open();
    assert.equal(journalRows(store), 10, 'the journal outlived the crash');
    for (let i = 10; i < TRIE_REFS_LOG_BLOCKS - 1; i++) chain.block(store);
    assert.equal(journalRows(store), TRIE_REFS_LOG_BLOCKS - 1, 'the journal kept what the first run wrote');
    chain.block(store);
    assert.equal(journalRows(store), 0, 'counted at its bound, with the rows of both runs');
    assertCountsExact(store, 'after a restart');
    pruneToRoot(store, chain.height - 1, chain.root, 'after pruning');
    chain.block(store);
    assert.equal(journalRows(store), 1);
    store.close();
    store = chain.open();
    assert.equal(journalRows(store), 0, 'a node stopped cleanly left the journal counted');
    assertCountsExact(store, 'after a clean stop');
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a block rolled back after its pass counted the journal leaves the journal to count again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-triegc-'));
  const chain = journalChain(join(dir, 'ferry.db'));
  try {
    const store = chain.open();
    for (let i = 0; i < TRIE_REFS_LOG_BLOCKS - 1; i++) chain.block(store);
    const root = chain.root;
    const height = chain.height;
    // the next block reaches the bound (its pass counts the journal), then fails: all of it rolls back
    assert.throws(() =>
      store.transaction(() => {
        chain.write(store);
        assert.equal(journalRows(store), 0, 'the pass ran inside the block');
        throw new Error('the block fails after its pass');
      }),
    /the block fails/);
    assert.equal(journalRows(store), TRIE_REFS_LOG_BLOCKS - 1, 'the journal rolled back with the block');
    // a prune now must count it first: else nodes only the journal names would go
    pruneToRoot(store, height - 1, root, 'after the rolled-back pass');
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
