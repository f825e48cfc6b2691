/**
 * Dev snapshots on the chain thread (docs/dev-mode.md): evm_snapshot, evm_revert and anvil_reset.
 *
 * A snapshot is the head height and hash plus what each registered participant saved; it lives in
 * memory only (as in Anvil: a restart forgets every snapshot). Ids are Anvil's: a counter from 0
 * that never goes back, so an id is never reused; reverting to id N removes N and every later id.
 * At most MAX_DEV_SNAPSHOTS are held at once; one more is refused until a revert or reset frees some.
 *
 * A revert rewinds the stored chain (engine.rewind: blocks, receipts, logs, tx lookups, flat state,
 * CometBFT records and event index, in ONE store transaction), then puts every participant back
 * (in registration order), then announces the rewind (the RPC thread drops its caches and tells
 * subscribers) — all before the next block can start.
 *
 * ## Joining: SnapshotParticipant
 *
 * Other dev state that a revert must undo (the state-cheat overlay, say) registers once at start, in
 * node/devops.ts beside the clock and block-field participants:
 *
 *     snapshots.register('cheats', { save: () => overlay.copy(), restore: (s) => overlay.replace(s), reset: () => overlay.clear() });
 *
 * `save` runs at evm_snapshot, between blocks, and returns a value nobody mutates afterwards (a
 * copy, or an immutable value). `restore` runs at evm_revert once the chain and the application are
 * at the snapshot's height, before the next block. `reset` runs at anvil_reset (fresh-node state); without one, `restore` gets the value
 * `save` returned at registration. None of them may throw for a value they made.
 */
import { invalidArgument, limitExceeded } from '../lib/errors.js';
import type { EvmLog } from '../types/chain.js';

/** Snapshots held at once (each costs what its participants save; heights and hashes are small). */
export const MAX_DEV_SNAPSHOTS = 10_000;
/**
 * Removed logs one revert announces at most (`logs` subscriptions and log filters get them with
 * `removed: true`); beyond it the rest are not announced, and the node logs a warning.
 */
export const MAX_REMOVED_LOGS = 100_000;

/** Dev state that evm_snapshot saves and evm_revert puts back (see the file comment). */
export interface SnapshotParticipant<T> {
  save(): T;
  restore(saved: T): void;
  /** anvil_reset: back to a fresh node's state (default: restore the value saved at registration) */
  reset?(): void;
}

/** What the chain thread does for a revert (node/devops.ts wires the engine and the application). */
export interface RewindPort {
  /** the EVM head: height and hash */
  head(): { height: bigint; hash: Uint8Array };
  /** the genesis block's height (0; a fork's: the fork block, chain/genesisblock.ts) */
  base(): bigint;
  /** waits until no block is being made */
  idle(): Promise<void>;
  /** the logs a rewind to `height` removes, oldest first, at most `limit` */
  logsAbove(height: bigint, limit: number): { logs: EvmLog[]; truncated: boolean };
  /** rewinds chain and state to `height` atomically; `after` runs before any new block */
  rewind(height: bigint, after: () => void): Promise<void>;
}

/** A completed rewind, as the RPC thread is told. */
export interface Rewound {
  height: bigint;
  /** the logs of the rewound blocks, oldest block first, in block order */
  removedLogs: EvmLog[];
  truncated: boolean;
}

interface Snapshot {
  height: bigint;
  hash: Uint8Array;
  saved: unknown[];
}

interface Registered {
  name: string;
  p: SnapshotParticipant<unknown>;
  initial: unknown;
}

export class DevSnapshots {
  private readonly participants: Registered[] = [];
  private readonly snapshots = new Map<bigint, Snapshot>();
  private nextId = 0n;

  constructor(
    private readonly port: RewindPort,
    private readonly announce: (r: Rewound) => void,
    private readonly onTruncated: (height: bigint, limit: number) => void = () => {},
  ) {}

  /** Adds dev state to every later snapshot, revert and reset (call at start, before the first snapshot). */
  register<T>(name: string, p: SnapshotParticipant<T>): void {
    if (this.participants.some((r) => r.name === name)) throw new Error(`snapshot participant ${name} registered twice`);
    this.participants.push({ name, p: p as SnapshotParticipant<unknown>, initial: p.save() });
  }

  /** evm_snapshot: the new id. */
  async take(): Promise<bigint> {
    if (this.snapshots.size >= MAX_DEV_SNAPSHOTS) {
      throw limitExceeded(`too many snapshots (at most ${MAX_DEV_SNAPSHOTS}): revert to an earlier one or call anvil_reset`);
    }
    await this.port.idle();
    const { height, hash } = this.port.head();
    const id = this.nextId++;
    this.snapshots.set(id, { height, hash, saved: this.participants.map((r) => r.p.save()) });
    return id;
  }

  /** the snapshots held: id → [height, hash] (anvil_metadata) */
  list(): [bigint, bigint, Uint8Array][] {
    return [...this.snapshots].map(([id, s]) => [id, s.height, s.hash]);
  }

  /** evm_revert: false for an unknown id (never taken, or removed by an earlier revert or reset). */
  async revert(id: bigint): Promise<boolean> {
    const snap = this.snapshots.get(id);
    if (snap === undefined) return false;
    for (const k of [...this.snapshots.keys()]) if (k >= id) this.snapshots.delete(k);
    await this.rewindTo(snap.height, () => this.participants.forEach((r, i) => r.p.restore(snap.saved[i])));
    return true;
  }

  /**
   * anvil_rollback: the last `depth` blocks removed, as a revert removes them (their logs announced
   * with `removed: true`); the other dev state stays as it is, and so do the snapshots at or below
   * the new head. Refused deeper than the chain (Anvil's message: foundry crates/anvil/src/eth/api.rs).
   */
  async rollback(depth: bigint): Promise<void> {
    await this.port.idle();
    const head = this.port.head().height;
    if (depth > head - this.port.base()) throw invalidArgument(`Rollback depth must not exceed current chain height: current height ${head}, depth ${depth}`);
    const height = head - depth;
    for (const [k, s] of [...this.snapshots]) if (s.height > height) this.snapshots.delete(k);
    await this.rewindTo(height, () => {});
  }

  /** anvil_reset: back to genesis; every snapshot is removed (the id counter goes on, as Anvil's). */
  async reset(): Promise<void> {
    this.snapshots.clear();
    await this.rewindTo(this.port.base(), () => {
      for (const r of this.participants) {
        if (r.p.reset) r.p.reset();
        else r.p.restore(r.initial);
      }
    });
  }

  private async rewindTo(height: bigint, restore: () => void): Promise<void> {
    await this.port.idle();
    // snapshots are taken at the head and a revert removes every later one: never above the head
    if (height > this.port.head().height) throw new Error(`cannot rewind to height ${height}: the chain is at ${this.port.head().height}`);
    const { logs, truncated } = this.port.logsAbove(height, MAX_REMOVED_LOGS);
    if (truncated) this.onTruncated(height, MAX_REMOVED_LOGS);
    await this.port.rewind(height, () => {
      restore();
      this.announce({ height, removedLogs: logs, truncated });
    });
  }
}
