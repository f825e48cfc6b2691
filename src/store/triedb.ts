/**
 * ethereumjs' MPT database interface over the store's `trie` table. Writes go to an in-memory overlay;
 * the writer drains the overlay into the block's transaction at commit. A scratch TrieDB (on a reader
 * store, or a view) never commits: what lands in its overlay (the state manager re-writes every account
 * it read when it moves root; eth_call's intermediate nodes) is dropped whenever its runner moves root.
 */
import { RLP } from '@ethereumjs/rlp';
import type { BatchDBOp, DB } from '@ethereumjs/util';
import { Lru } from '../lib/lru.js';
import { READER_TRIE_NODE_CACHE_BYTES, TRIE_NODE_CACHE_BYTES, TRIE_NODE_CACHE_ENTRY_OVERHEAD, type Store } from './store.js';

/** an embedded node (a list) or a reference (32-byte hash, or empty) */
type NodeRef = Uint8Array | NodeRef[];
/** trie nodes are keyed by their 32-byte hash in hex; other entries (code: 'c' + hash) are longer */
const NODE_KEY_HEX_LENGTH = 64;
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
   * Writes into the store (call inside the block transaction) the overlay's trie nodes reachable from
   * the block's state `root` — through the account trie and the storage tries its changed accounts
   * point to — and every entry that is not a trie node (contract code). The MPT writes each node of a
   * path on every put, so most of a block's overlay is intermediate versions no root refers to;
   * storing those cost most of the commit's time and about half the database. Returns the number of
   * entries written.
   */
  flushInto(store: Store, root: Uint8Array): number {
    const keep = this.reachable(root);
    for (const k of this.overlay.keys()) if (k.length !== NODE_KEY_HEX_LENGTH) keep.add(k);
    const overlay = this.overlay;
    store.triePutMany((function* () {
      for (const k of keep) yield [Buffer.from(k, 'hex'), overlay.get(k)!] as [Buffer, Uint8Array];
    })());
    this.kept = keep;
    return keep.size;
  }

  /** what the last flushInto wrote (afterCommit keeps those warm) */
  private kept: Set<string> | undefined;

  /** The overlay's nodes reachable from `root`; a node not in the overlay is stored already, and so is its subtree. */
  private reachable(root: Uint8Array): Set<string> {
    const keep = new Set<string>();
    const stack: { key: string; accounts: boolean }[] = [{ key: hexOf(root), accounts: true }];
    const push = (ref: NodeRef, accounts: boolean) => {
      if (ref instanceof Uint8Array) {
        if (ref.length === 32) stack.push({ key: hexOf(ref), accounts });
      } else visit(ref, accounts);
    };
    // a node is a branch (17 items) or a leaf/extension (2 items: hex-prefixed path, value or child);
    // an account trie leaf holds the account, whose storage root leads into that account's storage trie
    const visit = (node: NodeRef[], accounts: boolean) => {
      if (node.length === 17) {
        for (let i = 0; i < 16; i++) push(node[i]!, accounts);
      } else if (node.length === 2) {
        const path = node[0] as Uint8Array;
        const leaf = path.length > 0 && path[0]! >> 4 >= 2;
        if (!leaf) push(node[1]!, accounts);
        else if (accounts) {
          const account = RLP.decode(node[1] as Uint8Array) as Uint8Array[];
          if (account.length === 4 && account[2]!.length === 32) stack.push({ key: hexOf(account[2]!), accounts: false });
        }
      }
    };
    while (stack.length > 0) {
      const { key, accounts } = stack.pop()!;
      if (keep.has(key)) continue;
      const enc = this.overlay.get(key);
      if (enc === undefined) continue;
      keep.add(key);
      visit(RLP.decode(enc) as NodeRef[], accounts);
    }
    return keep;
  }

  /** After a successful commit: keep the written nodes warm and start a fresh overlay. */
  afterCommit(): void {
    for (const k of this.kept ?? this.overlay.keys()) {
      const v = this.overlay.get(k);
      if (v !== undefined) this.cache.set(k, v);
    }
    this.kept = undefined;
    this.overlay = new Map();
  }

  /** Abandons uncommitted writes (block aborted). */
  discard(): void {
    this.kept = undefined;
    this.overlay = new Map();
  }
}
