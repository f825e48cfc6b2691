/**
 * Trie-node garbage collection for a pruning node (docs/abci.md "Pruning"): a reference count per
 * stored trie node, kept in the store's write transactions, like go-ethereum's hash-based node
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
 * The references a block's new nodes add are not counted in its own transaction: the children they
 * name go into the journal `trie_refs_log` (one row per block, appended), and the journal is counted
 * in one pass every TRIE_REFS_LOG_BLOCKS blocks (or TRIE_REFS_LOG_MAX_REFS references) and before any
 * root is dropped. One pass adds each child's references once, in key order, where counting as each
 * node is inserted wrote a random row per child (a branch has up to 16), which cost a pruning node a
 * fifth of its block time (docs/benchmarks.md "The trie's reference counts"). The journal is in the
 * same transactions as the nodes, so a crash or a rolled-back block keeps it exactly as the trie
 * table; what it lists is counted on the next pass. Its size is read from the table, never kept in
 * memory, so a pass that rolled back is done again.
 *
 * So a node is deleted only when no stored node and no retained height names it: every retained root
 * stays fully readable (test/unit/triegc.test.ts checks it after random updates and prunes). Contract
 * code (the `trie` table's 'c'-prefixed rows) is not counted and never deleted.
 *
 * Only a store that counted from its first node can collect (the meta key below): an archive's nodes
 * were never counted, and switching it to pruning leaves its trie nodes uncollected.
 */
import type Database from 'better-sqlite3';
import { rlpItemAt, type RlpItemSpan } from '../lib/rlpitem.js';

/** the counts' tables (store/triecollect.ts makes them too) */
export const TRIE_REFS_SCHEMA = `
CREATE TABLE IF NOT EXISTS trie_refs (k BLOB PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS trie_roots (height INTEGER PRIMARY KEY, root BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS trie_refs_log (id INTEGER PRIMARY KEY, refs BLOB NOT NULL);
`;

/**
 * Blocks whose new nodes wait in the journal before their children's references are counted: the
 * larger, the more references to one node (a sibling every block names again) are added in one write,
 * and the longer the pass that counts them (about 1 ms of a pruning node's chain thread per block it
 * covers, measured with ERC-20 transfers).
 */
export const TRIE_REFS_LOG_BLOCKS = 64;

/**
 * References in the journal at which it is counted whatever its blocks (a state sync's batches, a
 * genesis of many accounts): a pass sums at most this many, and one block's more, in its map.
 */
export const TRIE_REFS_LOG_MAX_REFS = 262_144;

/** meta key: this store counts trie-node references (set when counting started on an empty trie table) */
export const TRIE_REFS_META_KEY = 'trie_refs';

/** keccak256 of RLP(''): the empty trie, never stored as a node of its own */
export const EMPTY_ROOT_HEX = '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

const EMPTY_ROOT = Buffer.from(EMPTY_ROOT_HEX, 'hex');

/** the items of the RLP list payload [start, stop): at most `max` + 1, enough to tell a longer list (the rest are not read) */
function rlpItems(b: Uint8Array, start: number, stop: number, max: number): RlpItemSpan[] {
  const out: RlpItemSpan[] = [];
  for (let at = start; at < stop && out.length < max + 1; ) {
    const it = rlpItemAt(b, at, stop);
    out.push(it);
    at = it.stop;
  }
  return out;
}

/**
 * The stored nodes a trie node's encoding names by hash (Ethereum yellow paper appendix D), as views
 * of `enc`: a branch's and an extension's 32-byte children, and an account leaf's storage root.
 */
export function nodeChildren(enc: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  const b = buf(enc);
  const hashRef = (it: RlpItemSpan) => {
    if (!it.list && it.stop - it.start === 32) {
      const h = b.subarray(it.start, it.stop);
      if (!h.equals(EMPTY_ROOT)) out.push(h);
    }
  };
  const node = rlpItemAt(b, 0, b.length);
  if (!node.list) return out;
  const items = rlpItems(b, node.start, node.stop, 17);
  if (items.length === 17) {
    for (let i = 0; i < 16; i++) hashRef(items[i]!);
  } else if (items.length === 2) {
    const path = items[0]!;
    const leaf = path.stop > path.start && b[path.start]! >> 4 >= 2;
    if (!leaf) hashRef(items[1]!);
    else {
      // a leaf's value: an account is an RLP list [nonce, balance, storageRoot, codeHash]; a storage
      // slot's value is an RLP string (first byte below 0xc0)
      const value = items[1]!;
      if (!value.list && value.stop > value.start && b[value.start]! >= 0xc0) {
        const account = rlpItemAt(b, value.start, value.stop);
        if (account.list) {
          const fields = rlpItems(b, account.start, account.stop, 4);
          if (fields.length === 4) hashRef(fields[2]!);
        }
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
      add: db.prepare<[Buffer, number]>('INSERT INTO trie_refs (k, n) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET n = n + excluded.n'),
      logPut: db.prepare<[Buffer]>('INSERT INTO trie_refs_log (refs) VALUES (?)'),
      logAll: db.prepare<[], { refs: Buffer }>('SELECT refs FROM trie_refs_log ORDER BY id'),
      logCount: db.prepare<[], { n: number; bytes: number | null }>('SELECT count(*) AS n, sum(length(refs)) AS bytes FROM trie_refs_log'),
      logClear: db.prepare<[]>('DELETE FROM trie_refs_log'),
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

  /**
   * Trie rows newly inserted together (a block's, in its transaction; encodings by key): their
   * hash-named children gain a reference when the journal is next counted. Contract code ('c' + hash)
   * names none.
   */
  inserted(nodes: readonly (readonly [Uint8Array, Uint8Array])[]): void {
    const refs: Buffer[] = [];
    for (const [key, enc] of nodes) if (key.length === 32) refs.push(...nodeChildren(enc));
    if (refs.length === 0) return;
    this.stmts.logPut.run(Buffer.concat(refs));
    const log = this.stmts.logCount.get()!;
    if (log.n >= TRIE_REFS_LOG_BLOCKS || (log.bytes ?? 0) / 32 >= TRIE_REFS_LOG_MAX_REFS) this.countLog();
  }

  /**
   * Counts the journal (call in a write transaction): each reference it lists is added, summed per
   * child and written in key order, and the journal is emptied. Returns the references added.
   */
  countLog(): number {
    const s = this.stmts;
    const sums = new Map<string, number>();
    let added = 0;
    for (const { refs } of s.logAll.all()) {
      for (let o = 0; o < refs.length; o += 32) {
        const k = refs.toString('latin1', o, o + 32);
        sums.set(k, (sums.get(k) ?? 0) + 1);
        added++;
      }
    }
    for (const k of [...sums.keys()].sort()) s.add.run(Buffer.from(k, 'latin1'), sums.get(k)!);
    s.logClear.run();
    return added;
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
    if (rows.length > 0) this.countLog();
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
