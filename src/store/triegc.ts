/**
 * Trie-node garbage collection for a pruning node (docs/abci.md "Pruning"): a reference count per
 * stored trie node, kept in the block's own write transaction, like go-ethereum's hash-based node
 * database (trie/triedb/hashdb/database.go: a node's parents count, and a root's reference is
 * dropped when its version goes).
 *
 * - A trie node row that is newly inserted (the `trie` table's INSERT OR IGNORE changed a row) adds
 *   one reference to each node it names by hash: a branch's or an extension's 32-byte children, and
 *   an account leaf's storage root. A node already stored (re-created by a later block: content
 *   addressing) adds nothing, its children being counted already.
 * - Every committed height adds one reference to its state root (`trie_roots` remembers it).
 * - Pruning a height drops its root's reference; a node whose count reaches zero is deleted and drops
 *   one reference from each of its children, and so on down.
 *
 * So a node is deleted only when no stored node and no retained height names it: every retained root
 * stays fully readable (test/unit/triegc.test.ts checks it after random updates and prunes). Contract
 * code (the `trie` table's 'c'-prefixed rows) is not counted and never deleted.
 *
 * Only a store that counted from its first node can collect (the meta key below): an archive's nodes
 * were never counted, and switching it to pruning leaves its trie nodes uncollected.
 */
import type Database from 'better-sqlite3';
import { RLP } from '@ethereumjs/rlp';

/** the counts' tables (store/triecollect.ts makes them too) */
export const TRIE_REFS_SCHEMA = `
CREATE TABLE IF NOT EXISTS trie_refs (k BLOB PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS trie_roots (height INTEGER PRIMARY KEY, root BLOB NOT NULL);
`;

/** meta key: this store counts trie-node references (set when counting started on an empty trie table) */
export const TRIE_REFS_META_KEY = 'trie_refs';

/** keccak256 of RLP(''): the empty trie, never stored as a node of its own */
export const EMPTY_ROOT_HEX = '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** the stored nodes a trie node's encoding names by hash (Ethereum yellow paper appendix D) */
export function nodeChildren(enc: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  const hashRef = (item: unknown) => {
    if (item instanceof Uint8Array && item.length === 32 && buf(item).toString('hex') !== EMPTY_ROOT_HEX) out.push(buf(item));
  };
  const items = RLP.decode(enc) as unknown[];
  if (items.length === 17) {
    for (let i = 0; i < 16; i++) hashRef(items[i]);
  } else if (items.length === 2) {
    const path = items[0] as Uint8Array;
    const leaf = path.length > 0 && path[0]! >> 4 >= 2;
    if (!leaf) hashRef(items[1]);
    else {
      // a leaf's value: an account is an RLP list [nonce, balance, storageRoot, codeHash]; a storage
      // slot's value is an RLP string (first byte below 0xc0)
      const value = items[1] as Uint8Array;
      if (value.length > 0 && value[0]! >= 0xc0) {
        const account = RLP.decode(value) as unknown[];
        if (account.length === 4) hashRef(account[2]);
      }
    }
  }
  return out;
}

export class TrieRefs {
  private readonly stmts;

  private constructor(db: Database.Database) {
    db.exec(TRIE_REFS_SCHEMA);
    this.stmts = {
      inc: db.prepare('INSERT INTO trie_refs (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1'),
      count: db.prepare<[Buffer], { n: number }>('SELECT n FROM trie_refs WHERE k = ?'),
      setCount: db.prepare<[number, Buffer]>('UPDATE trie_refs SET n = ? WHERE k = ?'),
      delRef: db.prepare('DELETE FROM trie_refs WHERE k = ?'),
      node: db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM trie WHERE k = ?'),
      delNode: db.prepare('DELETE FROM trie WHERE k = ?'),
      putRoot: db.prepare<[number, Buffer]>('INSERT INTO trie_roots (height, root) VALUES (?, ?)'),
      rootsBelow: db.prepare<[number], { height: number; root: Buffer }>('SELECT height, root FROM trie_roots WHERE height < ? ORDER BY height'),
      rootsAbove: db.prepare<[number], { height: number; root: Buffer }>('SELECT height, root FROM trie_roots WHERE height > ? ORDER BY height'),
      delRoot: db.prepare('DELETE FROM trie_roots WHERE height = ?'),
    } satisfies Record<string, Database.Statement>;
  }

  /**
   * The store's reference counter: when it already counts, or when `wanted` (state pruning is on)
   * and no trie node is stored yet; undefined otherwise (an archive, or an archive's home switched to
   * pruning, whose nodes were never counted).
   */
  static open(db: Database.Database, wanted: boolean): TrieRefs | undefined {
    const get = db.prepare<[string], { v: Buffer }>('SELECT v FROM meta WHERE k = ?');
    if (get.get(TRIE_REFS_META_KEY) !== undefined) return new TrieRefs(db);
    if (!wanted || db.prepare('SELECT 1 FROM trie LIMIT 1').get() !== undefined) return undefined;
    db.prepare('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)').run(TRIE_REFS_META_KEY, Buffer.from([1]));
    return new TrieRefs(db);
  }

  /** a trie row was newly inserted (call in the same transaction): its hash-named children gain a reference */
  inserted(key: Uint8Array, enc: Uint8Array): void {
    if (key.length !== 32) return; // contract code ('c' + hash)
    for (const child of nodeChildren(enc)) this.stmts.inc.run(child);
  }

  /** height `height` committed with state root `root` (call in the block's transaction) */
  rootAt(height: number, root: Uint8Array): void {
    this.stmts.putRoot.run(height, buf(root));
    if (buf(root).toString('hex') !== EMPTY_ROOT_HEX) this.stmts.inc.run(buf(root));
  }

  /** Drops the roots of the heights below `floor`; returns the number of trie nodes deleted. */
  pruneBelow(floor: number): number {
    return this.dropRoots(this.stmts.rootsBelow.all(floor));
  }

  /** Drops the roots of the heights above `height` (dev revert); returns the number of trie nodes deleted. */
  dropAbove(height: number): number {
    return this.dropRoots(this.stmts.rootsAbove.all(height));
  }

  private dropRoots(rows: { height: number; root: Buffer }[]): number {
    let freed = 0;
    for (const r of rows) {
      this.stmts.delRoot.run(r.height);
      freed += this.release(r.root);
    }
    return freed;
  }

  /** one reference to `root` goes; nodes left without any are deleted, their children released in turn */
  private release(root: Buffer): number {
    const s = this.stmts;
    const stack = [root];
    let freed = 0;
    for (let k = stack.pop(); k !== undefined; k = stack.pop()) {
      const n = s.count.get(k)?.n;
      if (n === undefined) continue; // the empty trie, or a node never counted
      if (n > 1) {
        s.setCount.run(n - 1, k);
        continue;
      }
      s.delRef.run(k);
      const enc = s.node.get(k)?.v;
      if (enc === undefined) continue;
      s.delNode.run(k);
      freed++;
      for (const child of nodeChildren(enc)) stack.push(child);
    }
    return freed;
  }
}
