/**
 * `ferry prune [--home H]`, with the node stopped (docs/abci.md "Pruning"): brings a home to what its
 * app.toml pruning keys keep, as Cosmos SDK's `<appd> prune` does (client/pruning), and collects the
 * trie nodes an archive wrote before it was switched to pruning, as go-ethereum's `geth snapshot
 * prune-state` does (store/triecollect.ts): the state and history backlog in the pruning step's
 * bounded batches, the one-time collection in its own resumable batches, then the file compacted
 * (SQLite VACUUM) so the disk shrinks. Run again after a crash, it goes on where it stopped.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { badConfig } from '../lib/errors.js';
import { loadOptions } from '../config/load.js';
import { pruningPlan } from '../config/options.js';
import { Pruner, type PrunePlan } from '../store/prune.js';
import { Store } from '../store/store.js';
import { collectionNeeded, TrieCollection, type CollectResult } from '../store/triecollect.js';
import { DB_FILE, homePaths } from './home.js';

export interface PruneReport {
  head: number;
  /** pruning steps run to work the backlog off */
  steps: number;
  /** the lowest height with state, and with a block above genesis, afterwards */
  stateFloor: number | undefined;
  historyFloor: number | undefined;
  /** the trie-node collection (undefined: the store already counted its nodes) */
  collected: CollectResult | undefined;
}

/**
 * Prunes `store` to `plan` at its head, collects uncounted trie nodes, compacts. `afterBatch` sees each
 * collection batch committed (progress; a test's cut).
 */
export function pruneStore(store: Store, plan: PrunePlan, afterBatch?: (p: { phase: string; batches: number }) => void): PruneReport {
  const latest = store.latestHeight();
  if (latest === undefined) throw badConfig('home', 'this home has no blocks: nothing to prune');
  const head = Number(latest);
  const pruner = new Pruner(store, plan);
  let steps = 0;
  for (;;) {
    const s = pruner.afterCommit(head);
    if (s.stateHeights + s.historyHeights + s.trieNodes + s.eventRows === 0) break;
    steps++;
  }
  let collected: CollectResult | undefined;
  // state pruning on: the nodes written before counting started are collected once
  if (plan.interval > 0 && collectionNeeded(store.db)) {
    const floor = pruner.stateFloor() ?? head;
    collected = new TrieCollection(store.db).run(floor, head, (h) => store.evmBlock(BigInt(h))?.header.stateRoot, afterBatch);
  }
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.db.exec('VACUUM');
  // VACUUM's pages go through the WAL: moved into the file, the WAL emptied
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  return { head, steps, stateFloor: pruner.stateFloor(), historyFloor: pruner.historyFloor(), collected };
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

/** The command: prints what it did; the home's app.toml says what to keep. */
export function pruneHome(home: string): void {
  const opts = loadOptions(home, {});
  const plan: PrunePlan = { ...pruningPlan(opts.pruning), minRetainBlocks: opts.pruning.minRetainBlocks };
  if (plan.interval === 0 && plan.minRetainBlocks === 0) {
    throw badConfig('pruning', `pruning = "${opts.pruning.strategy}" and min-retain-blocks = 0 in app.toml: this home keeps everything, nothing to prune`);
  }
  const dbPath = join(homePaths(home).dataDir, DB_FILE);
  if (!existsSync(dbPath)) throw badConfig('home', `no chain database at ${dbPath}: the node has not run on this home`);
  const size = () => statSync(dbPath).size + (existsSync(dbPath + '-wal') ? statSync(dbPath + '-wal').size : 0);
  const before = size();
  const store = new Store(dbPath);
  try {
    const tty = process.stderr.isTTY === true;
    const r = pruneStore(store, plan, (p) => {
      if (tty) process.stderr.write(`\rcollecting trie nodes: ${p.phase}, batch ${p.batches}`);
    });
    if (tty && r.collected) process.stderr.write('\n');
    const c = r.collected;
    process.stdout.write(
      `head ${r.head}: state kept from height ${r.stateFloor ?? '-'}, blocks from ${r.historyFloor ?? '-'} (${r.steps} pruning steps)\n` +
        (c ? `trie nodes: ${c.kept} kept (reached from ${c.roots} retained roots), ${c.deleted} deleted${c.resumed ? ' (went on from a run cut short)' : ''}\n` : 'trie nodes: already counted (collected as blocks are pruned)\n') +
        `database: ${mb(before)} -> ${mb(size())}\n`,
    );
  } finally {
    store.close();
  }
}
