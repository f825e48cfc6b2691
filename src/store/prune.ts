/**
 * Pruning (docs/abci.md "Pruning"): app.toml's `pruning` keys remove old state versions, and
 * `min-retain-blocks` removes old block history, in small batches after a block's transaction, so a
 * long-running node's disk stays bounded without stalling block execution.
 *
 * State: the flat layer (store/flatstate.ts) keeps one row per key and height that changed it. Pruning
 * to floor F deletes, for every key a block in (old floor, F] changed, the rows below that block's row,
 * and drops the change sets below F: every key then still answers its value at F and above, and no
 * height below F (the flat layer's low() moves to F). The trie nodes only heights below F reached
 * are deleted by their reference counts (store/triegc.ts), in the same step.
 *
 * History: blocks, tx lookups and receipts, logs, address index rows, CometBFT records, native tx results
 * and the tx_search/block_search event index of heights below the retain height are deleted (the genesis
 * block stays), the same height Commit returns to CometBFT as retain_height
 * (Cosmos SDK baseapp GetBlockRetentionHeight without the evidence and snapshot terms). The hash of a
 * deleted block within BLOCKHASH's 256 blocks of the head is kept (store/hashwindow.ts): with
 * min-retain-blocks below 256, BLOCKHASH must still answer it, as an archive validator does.
 */
import type Database from 'better-sqlite3';
import type { Store } from './store.js';
import { BLOCKHASH_WINDOW, HashWindow } from './hashwindow.js';

/** Heights of state or of history one pruning step removes at most (the rest waits for the next block). */
export const MAX_PRUNE_HEIGHTS_PER_STEP = 64;
/** Rows of each event-index table (tx_events, block_events) one pruning step removes at most. */
export const MAX_PRUNE_EVENT_ROWS_PER_STEP = 4096;

export interface PrunePlan {
  /** heights of state kept below the head (0 with interval 0: archive) */
  keepRecent: number;
  /** prune every this many blocks (0: state is never pruned) */
  interval: number;
  /** blocks of history kept below the head (0: every block) */
  minRetainBlocks: number;
}

export interface PruneStep {
  /** the heights whose superseded state rows were removed */
  stateHeights: number;
  /** the heights whose blocks and history were removed */
  historyHeights: number;
  /** trie nodes deleted (no retained height reaches them any more) */
  trieNodes: number;
  /** rows of the tx_search/block_search event index removed */
  eventRows: number;
}

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export class Pruner {
  private readonly stmts;
  /** where pruned blocks' hashes stay while BLOCKHASH can ask (only a node that prunes history) */
  private readonly window: HashWindow | undefined;

  constructor(
    private readonly store: Store,
    private readonly plan: PrunePlan,
  ) {
    const db = store.db;
    this.window = plan.minRetainBlocks > 0 ? new HashWindow(db) : undefined;
    const hasTable = (name: string) =>
      db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;
    this.stmts = {
      stateLow: db.prepare<[], { h: number | null }>('SELECT min(height) AS h FROM state_changes'),
      changes: db.prepare<[number, number], { height: number; accounts: Buffer; slots: Buffer }>(
        'SELECT height, accounts, slots FROM state_changes WHERE height > ? AND height <= ? ORDER BY height',
      ),
      delAcctBelow: db.prepare<[Buffer, number]>('DELETE FROM state_accounts WHERE addr = ? AND height < ?'),
      delSlotBelow: db.prepare<[Buffer, number]>('DELETE FROM state_slots WHERE k = ? AND height < ?'),
      delChangesBelow: db.prepare('DELETE FROM state_changes WHERE height < ?'),
      // the genesis block stays (InitChain at every start finds it; geth keeps it too when it prunes history)
      historyLow: db.prepare<[], { h: number | null }>('SELECT min(height) AS h FROM blocks WHERE height > 0'),
      delTx: db.prepare('DELETE FROM txs WHERE hash = ?'),
      delLogs: db.prepare('DELETE FROM logs WHERE height = ?'),
      delBlock: db.prepare('DELETE FROM blocks WHERE height = ?'),
      delComet: hasTable('comet') ? db.prepare('DELETE FROM comet WHERE height = ?') : undefined,
      delCometTxs: hasTable('comet_txs') ? db.prepare('DELETE FROM comet_txs WHERE height = ?') : undefined,
      // event rows still waiting to enter the index (store/eventindex.ts MAX_RECENT_EVENT_BLOCKS)
      delRecentEvents: hasTable('recent_events') ? db.prepare('DELETE FROM recent_events WHERE height = ?') : undefined,
      ...eventIndexStatements(db, hasTable),
    } satisfies Record<string, Database.Statement | undefined>;
  }

  /** true when this plan removes anything */
  get active(): boolean {
    return this.plan.interval > 0 || this.plan.minRetainBlocks > 0;
  }

  /** the lowest height whose state is answered (undefined: no state yet) */
  stateFloor(): number | undefined {
    return this.stmts.stateLow.get()?.h ?? undefined;
  }

  /** the lowest height above genesis whose block is stored (undefined: no block yet) */
  historyFloor(): number | undefined {
    return this.stmts.historyLow.get()?.h ?? undefined;
  }

  /**
   * Commit's retain_height after committing `height`: height - min-retain-blocks, 0 (keep all) when
   * that is not above 0 or min-retain-blocks is 0 (Cosmos SDK baseapp GetBlockRetentionHeight).
   */
  retainHeight(height: bigint): bigint {
    if (this.plan.minRetainBlocks === 0) return 0n;
    const r = height - BigInt(this.plan.minRetainBlocks);
    return r > 0n ? r : 0n;
  }

  /**
   * The state floor pruning aims at after committing `height`: height - keep-recent - 1 is the
   * highest height removed (Cosmos SDK store/pruning/manager.go GetPruningHeight), so the floor is
   * height - keep-recent; undefined when nothing is due at this height.
   */
  private stateTarget(height: number): number | undefined {
    const { keepRecent, interval } = this.plan;
    if (interval === 0 || height <= keepRecent) return undefined;
    return height - keepRecent;
  }

  /**
   * One bounded pruning step after block `height` committed, in its own write transaction. Runs on
   * every interval-th block, and on any block while an earlier step left work behind.
   */
  afterCommit(height: number): PruneStep {
    const step: PruneStep = { stateHeights: 0, historyHeights: 0, trieNodes: 0, eventRows: 0 };
    if (!this.active || !this.due(height)) return step;
    this.store.transaction(() => {
      step.stateHeights = this.pruneState(height);
      step.trieNodes = this.pruneTrie();
      step.historyHeights = this.pruneHistory(height);
      step.eventRows = this.pruneEventIndex(height);
    });
    if (step.historyHeights > 0) this.store.forgetCaches();
    return step;
  }

  /** whether a step after `height` has anything to remove (no write transaction otherwise) */
  private due(height: number): boolean {
    const floor = this.stateFloor();
    const target = this.stateTarget(height - (height % Math.max(1, this.plan.interval)));
    if (floor !== undefined && target !== undefined && target > floor) return true;
    const retain = Number(this.retainHeight(BigInt(height)));
    const low = this.historyFloor();
    if (retain > 0 && low !== undefined && low < retain) return true;
    return retain > 0 && this.eventIndexLow() < retain;
  }

  private pruneState(height: number): number {
    const floor = this.stateFloor();
    if (floor === undefined) return 0;
    // a backlog (pruning switched on for an archive, or a step's bound hit) is worked off on every
    // block; otherwise pruning waits for the next multiple of the interval
    let target = this.stateTarget(height - (height % Math.max(1, this.plan.interval)));
    if (target === undefined || target <= floor) return 0;
    target = Math.min(target, floor + MAX_PRUNE_HEIGHTS_PER_STEP);
    const s = this.stmts;
    for (const row of s.changes.all(floor, target)) {
      for (let i = 0; i < row.accounts.length; i += 20) s.delAcctBelow.run(row.accounts.subarray(i, i + 20), row.height);
      for (let i = 0; i < row.slots.length; i += 52) s.delSlotBelow.run(row.slots.subarray(i, i + 52), row.height);
    }
    s.delChangesBelow.run(target);
    return target - floor;
  }

  private pruneHistory(height: number): number {
    const retain = Number(this.retainHeight(BigInt(height)));
    const low = this.historyFloor();
    if (retain === 0 || low === undefined || low >= retain) return 0;
    const upTo = Math.min(retain, low + MAX_PRUNE_HEIGHTS_PER_STEP);
    const s = this.stmts;
    for (let h = low; h < upTo; h++) {
      const block = this.store.evmBlock(BigInt(h));
      if (block && h > height - BLOCKHASH_WINDOW) this.window?.put(h, block.header.hash);
      for (const tx of block?.transactions ?? []) s.delTx.run(buf(tx.hash));
      s.delLogs.run(h);
      s.delBlock.run(h);
      s.delComet?.run(h);
      s.delCometTxs?.run(h);
      s.delRecentEvents?.run(h);
      this.store.addrs.prune(h);
    }
    this.window?.dropOutside(height);
    return upTo - low;
  }

  /**
   * The trie nodes of the state heights pruned so far: the roots of heights below the state floor lose
   * their reference, and nodes no retained root reaches are deleted (store/triegc.ts). The work is
   * that of the heights the state step just removed, so it is bounded the same way.
   */
  private pruneTrie(): number {
    const refs = this.store.trieRefs;
    const floor = this.stateFloor();
    return refs === undefined || floor === undefined ? 0 : refs.pruneBelow(floor);
  }

  /** the lowest height in the event index (Infinity: empty, or no index) */
  private eventIndexLow(): number {
    let low = Infinity;
    for (const st of [this.stmts.txEventsLow, this.stmts.blockEventsLow]) {
      const h = st?.get()?.h;
      if (h !== undefined && h !== null) low = Math.min(low, h);
    }
    return low;
  }

  /**
   * The tx_search/block_search index rows of heights below the retain height. Rows are appended in
   * block order (store/eventindex.ts), so rowid order is height order and the rows to remove are the
   * table's first ones: at most MAX_PRUNE_EVENT_ROWS_PER_STEP of each table per step, found without a
   * height index (which every node would pay for).
   */
  private pruneEventIndex(height: number): number {
    const retain = Number(this.retainHeight(BigInt(height)));
    if (retain === 0) return 0;
    const s = this.stmts;
    let removed = 0;
    for (const [last, del] of [
      [s.txEventsLast, s.delTxEvents],
      [s.blockEventsLast, s.delBlockEvents],
    ] as const) {
      const r = last?.get(MAX_PRUNE_EVENT_ROWS_PER_STEP, retain)?.r;
      if (r !== undefined && r !== null) removed += del!.run(r).changes;
    }
    return removed;
  }
}

/** the event index's pruning statements (absent tables: none) */
function eventIndexStatements(db: Database.Database, hasTable: (name: string) => boolean) {
  const low = (t: string) => db.prepare<[], { h: number | null }>(`SELECT height AS h FROM ${t} ORDER BY rowid LIMIT 1`);
  const last = (t: string) =>
    db.prepare<[number, number], { r: number | null }>(
      `SELECT max(r) AS r FROM (SELECT rowid AS r, height FROM ${t} ORDER BY rowid LIMIT ?) WHERE height < ?`,
    );
  const del = (t: string) => db.prepare<[number]>(`DELETE FROM ${t} WHERE rowid <= ?`);
  const tx = hasTable('tx_events');
  const block = hasTable('block_events');
  return {
    txEventsLow: tx ? low('tx_events') : undefined,
    txEventsLast: tx ? last('tx_events') : undefined,
    delTxEvents: tx ? del('tx_events') : undefined,
    blockEventsLow: block ? low('block_events') : undefined,
    blockEventsLast: block ? last('block_events') : undefined,
    delBlockEvents: block ? del('block_events') : undefined,
  };
}
