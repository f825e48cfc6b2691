/**
 * The one-time trie-node collection of a home switched from archive to pruning (`ferry prune`,
 * docs/abci.md "Pruning"). Trie-node GC (store/triegc.ts) counts references only from a store's first
 * node, so the nodes an archive wrote were never counted and its trie table never shrinks. This
 * collection is offline, with the node stopped, as go-ethereum's `geth snapshot prune-state`
 * (cmd/geth/snapshot.go, core/state/pruner/pruner.go: mark what the retained roots reach, delete the
 * rest, compact) and Cosmos SDK's `<appd> prune` (client/pruning) are:
 *
 * 1. roots: every retained height (the state floor … the head) with a stored block gets its root in
 *    `trie_roots` and one reference, as a committed height does;
 * 2. mark: from those roots down, a node seen for the first time (its count becomes 1) goes on a
 *    frontier table and, when taken off it, adds one reference to each node it names — exactly the
 *    counts triegc.ts keeps, over the nodes the retained roots reach;
 * 3. sweep: every trie node without a count is deleted (contract code is kept, as triegc.ts does);
 * then the store is marked as counting, and pruning from then on collects as from genesis.
 *
 * Every batch (MAX_COLLECT_NODES_PER_BATCH nodes or heights) is one write transaction that also saves
 * where the pass stands (meta key `trie_collect`), so a collection cut short (crash, kill) goes on from
 * its last batch when run again, and the counts are never half-applied.
 */
import type Database from 'better-sqlite3';
import { EMPTY_ROOT_HEX, nodeChildren, TRIE_REFS_META_KEY, TRIE_REFS_SCHEMA } from './triegc.js';

/** Trie nodes (or retained heights) one collection batch handles in its write transaction. */
export const MAX_COLLECT_NODES_PER_BATCH = 4096;

/** meta key: a collection under way (JSON of CollectPass) */
export const TRIE_COLLECT_META_KEY = 'trie_collect';

interface CollectPass {
  phase: 'roots' | 'mark' | 'sweep';
  /** roots: the next height; its range */
  next: number;
  floor: number;
  head: number;
  /** sweep: the last trie key looked at (hex) */
  after: string;
}

export interface CollectResult {
  /** retained heights whose root was counted */
  roots: number;
  /** distinct trie nodes the retained roots reach (kept) */
  kept: number;
  /** trie nodes deleted (by this run)*/
  deleted: number;
  /** batches run (this run only) */
  batches: number;
  /** true when this run went on from a pass cut short */
  resumed: boolean;
}

/** whether a store holds trie nodes nobody counted (an archive's, or one being collected) */
export function collectionNeeded(db: Database.Database): boolean {
  const meta = db.prepare<[string], { v: Buffer }>('SELECT v FROM meta WHERE k = ?');
  if (meta.get(TRIE_COLLECT_META_KEY) !== undefined) return true;
  if (meta.get(TRIE_REFS_META_KEY) !== undefined) return false;
  return db.prepare("SELECT 1 FROM trie WHERE length(k) = 32 LIMIT 1").get() !== undefined;
}

export class TrieCollection {
  private readonly s;

  constructor(private readonly db: Database.Database) {
    db.exec(TRIE_REFS_SCHEMA);
    db.exec('CREATE TABLE IF NOT EXISTS trie_collect_frontier (k BLOB PRIMARY KEY) WITHOUT ROWID');
    this.s = {
      getMeta: db.prepare<[string], { v: Buffer }>('SELECT v FROM meta WHERE k = ?'),
      putMeta: db.prepare<[string, Buffer]>('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)'),
      delMeta: db.prepare<[string]>('DELETE FROM meta WHERE k = ?'),
      inc: db.prepare<[Buffer]>('INSERT INTO trie_refs (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1'),
      count: db.prepare<[Buffer], { n: number }>('SELECT n FROM trie_refs WHERE k = ?'),
      putRoot: db.prepare<[number, Buffer]>('INSERT OR REPLACE INTO trie_roots (height, root) VALUES (?, ?)'),
      push: db.prepare<[Buffer]>('INSERT OR IGNORE INTO trie_collect_frontier (k) VALUES (?)'),
      take: db.prepare<[number], { k: Buffer }>('SELECT k FROM trie_collect_frontier LIMIT ?'),
      drop: db.prepare<[Buffer]>('DELETE FROM trie_collect_frontier WHERE k = ?'),
      node: db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM trie WHERE k = ?'),
      keys: db.prepare<[Buffer, number], { k: Buffer }>('SELECT k FROM trie WHERE k > ? ORDER BY k LIMIT ?'),
      delNode: db.prepare<[Buffer]>('DELETE FROM trie WHERE k = ?'),
    };
  }

  /**
   * Runs (or goes on with) the collection keeping the roots of heights `floor`…`head` (`rootOf`: a
   * height's state root, undefined when its block is not stored). `afterBatch` sees each committed
   * batch (progress; a test's cut).
   */
  run(floor: number, head: number, rootOf: (height: number) => Uint8Array | undefined, afterBatch?: (p: { phase: string; batches: number }) => void): CollectResult {
    const saved = this.s.getMeta.get(TRIE_COLLECT_META_KEY);
    const result: CollectResult = { roots: 0, kept: 0, deleted: 0, batches: 0, resumed: false };
    let pass: CollectPass | undefined = saved && (JSON.parse(saved.v.toString('utf8')) as CollectPass);
    // a pass cut short over other heights (the node ran blocks, or pruned, since): its marks would miss
    // the newer roots' nodes, so it starts again
    if (pass && (pass.floor !== floor || pass.head !== head)) pass = undefined;
    result.resumed = pass !== undefined;
    if (!pass) {
      pass = { phase: 'roots', next: floor, floor, head, after: '' };
      const fresh = pass;
      // a fresh pass: no count of an earlier attempt survives (counts are only ever made by a pass)
      this.db.transaction(() => {
        this.db.exec('DELETE FROM trie_refs; DELETE FROM trie_roots; DELETE FROM trie_collect_frontier');
        this.save(fresh);
      })();
    }
    let cur: CollectPass = pass;
    for (;;) {
      const done = this.db.transaction(() => {
        const finished = cur.phase === 'roots' ? this.rootsBatch(cur, rootOf, result) : cur.phase === 'mark' ? this.markBatch() : this.sweepBatch(cur, result);
        if (finished && cur.phase === 'sweep') {
          this.s.delMeta.run(TRIE_COLLECT_META_KEY);
          this.s.putMeta.run(TRIE_REFS_META_KEY, Buffer.from([1]));
          return true;
        }
        if (finished) cur = { ...cur, phase: cur.phase === 'roots' ? 'mark' : 'sweep' };
        this.save(cur);
        return false;
      })();
      result.batches++;
      afterBatch?.({ phase: cur.phase, batches: result.batches });
      if (done) break;
    }
    this.db.exec('DROP TABLE IF EXISTS trie_collect_frontier');
    result.kept = (this.db.prepare('SELECT count(*) AS n FROM trie_refs').get() as { n: number }).n;
    return result;
  }

  private save(pass: CollectPass): void {
    this.s.putMeta.run(TRIE_COLLECT_META_KEY, Buffer.from(JSON.stringify(pass)));
  }

  /** a reference to `k`; the first one puts it on the frontier (its children are counted when it is taken off) */
  private ref(k: Buffer): void {
    this.s.inc.run(k);
    if (this.s.count.get(k)!.n === 1) this.s.push.run(k);
  }

  private rootsBatch(pass: CollectPass, rootOf: (height: number) => Uint8Array | undefined, result: CollectResult): boolean {
    const end = Math.min(pass.head, pass.next + MAX_COLLECT_NODES_PER_BATCH - 1);
    for (let h = pass.next; h <= end; h++) {
      const root = rootOf(h);
      if (!root) continue;
      const k = Buffer.from(root);
      this.s.putRoot.run(h, k);
      result.roots++;
      if (k.toString('hex') !== EMPTY_ROOT_HEX) this.ref(k);
    }
    pass.next = end + 1;
    return pass.next > pass.head;
  }

  private markBatch(): boolean {
    const batch = this.s.take.all(MAX_COLLECT_NODES_PER_BATCH);
    for (const { k } of batch) {
      this.s.drop.run(k);
      const enc = this.s.node.get(k)?.v;
      // a retained root's node missing: the store was already short of it (nothing to keep)
      if (enc !== undefined) for (const child of nodeChildren(enc)) this.ref(child);
    }
    return batch.length === 0;
  }

  private sweepBatch(pass: CollectPass, result: CollectResult): boolean {
    const rows = this.s.keys.all(Buffer.from(pass.after, 'hex'), MAX_COLLECT_NODES_PER_BATCH);
    for (const { k } of rows) {
      // contract code ('c' ‖ hash) is not counted and never collected (store/triegc.ts)
      if (k.length === 32 && this.s.count.get(k) === undefined) {
        this.s.delNode.run(k);
        result.deleted++;
      }
    }
    if (rows.length > 0) pass.after = rows.at(-1)!.k.toString('hex');
    return rows.length < MAX_COLLECT_NODES_PER_BATCH;
  }
}
