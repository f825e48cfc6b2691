/**
 * ethereumjs' MPT database interface over the store's `trie` table. Writes go to an in-memory overlay;
 * the writer drains the overlay into the block's transaction at commit. A scratch TrieDB (on a reader
 * store, or a view) never commits: what lands in its overlay (the state manager re-writes every account
 * it read when it moves root; eth_call's intermediate nodes) is dropped whenever its runner moves root.
 */
import type { BatchDBOp, DB } from '@ethereumjs/util';
import { Lru } from '../lib/lru.js';
import { READER_TRIE_NODE_CACHE_BYTES, TRIE_NODE_CACHE_BYTES, TRIE_NODE_CACHE_ENTRY_OVERHEAD, type Store } from './store.js';

const hexOf = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

const weighNode = (key: string, value: Uint8Array) => TRIE_NODE_CACHE_ENTRY_OVERHEAD + key.length + value.byteLength;

export class TrieDB implements DB<string, Uint8Array> {
  private overlay = new Map<string, Uint8Array>();

  constructor(
    private readonly store: Store,
    private readonly cache: Lru<string, Uint8Array> = new Lru(store.reader ? READER_TRIE_NODE_CACHE_BYTES : TRIE_NODE_CACHE_BYTES, weighNode),
    private readonly scratch = store.reader,
  ) {}

  /** A fresh scratch view sharing the node cache, with its own overlay. */
  view(): TrieDB {
    return new TrieDB(this.store, this.cache, true);
  }

  /** reads of the node cache (shared with views) that hit / missed, since it was made */
  cacheStats(): { hits: number; misses: number } {
    return { hits: this.cache.hits, misses: this.cache.misses };
  }

  /** nodes waiting in the overlay */
  get pending(): number {
    return this.overlay.size;
  }

  /** The runner on this TrieDB moved to another root: a scratch TrieDB forgets what it wrote. */
  rootMoved(): void {
    if (this.scratch) this.overlay = new Map();
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.getSync(key);
  }

  /** get, synchronously: the overlay, the node cache, then the store */
  getSync(key: string): Uint8Array | undefined {
    const o = this.overlay.get(key);
    if (o !== undefined) return o;
    const c = this.cache.get(key);
    if (c !== undefined) return c;
    const v = this.store.trieGet(Buffer.from(key, 'hex'));
    if (v === undefined) return undefined;
    const bytes = new Uint8Array(v);
    this.cache.set(key, bytes);
    return bytes;
  }

  async put(key: string, val: Uint8Array): Promise<void> {
    this.overlay.set(key, val);
  }

  /** a trie node's encoding by its hash (TrieNodeStore, evm/trieupdate.ts) */
  node(hash: Uint8Array): Uint8Array | undefined {
    return this.getSync(hexOf(hash));
  }

  putNode(hash: Uint8Array, encoded: Uint8Array): void {
    this.overlay.set(hexOf(hash), encoded);
  }

  /** archive node: nothing is ever deleted (old roots stay readable) */
  async del(): Promise<void> {}

  async batch(ops: BatchDBOp<string, Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') this.overlay.set(op.key, op.value);
  }

  shallowCopy(): DB<string, Uint8Array> {
    return this;
  }

  async open(): Promise<void> {}

  /**
   * Writes the overlay into the store (call inside the block transaction): the block's new trie nodes
   * and contract code. The writer's overlay holds only nodes of the block's new tries — its state
   * trie is updated in one batch per block (evm/trieupdate.ts), which encodes and stores each node of
   * the final tries once and no intermediate version (test/unit/triedb-flush.test.ts walks every
   * committed root and finds exactly the stored nodes). Returns the number of entries written.
   */
  flushInto(store: Store): number {
    const overlay = this.overlay;
    store.triePutMany((function* () {
      for (const [k, v] of overlay) yield [Buffer.from(k, 'hex'), v] as [Buffer, Uint8Array];
    })());
    return overlay.size;
  }

  /** After a successful commit: keep the written nodes warm and start a fresh overlay. */
  afterCommit(): void {
    for (const [k, v] of this.overlay) this.cache.set(k, v);
    this.overlay = new Map();
  }

  /** Abandons uncommitted writes (block aborted). */
  discard(): void {
    this.overlay = new Map();
  }
}
