/**
 * The dev operations (evm_*, anvil_*, hardhat_*; docs/dev-mode.md) as ONE typed channel from Surface A
 * to the chain thread, as Anvil carries its wire methods (foundry `crates/anvil/core/src/eth/mod.rs`
 * `EthRequest`: one variant per operation, dispatched in one place):
 *
 * - `DevOp`: one variant per operation the chain thread performs, with its arguments (seconds and
 *   wei as bigint);
 * - `DevResults`: what each operation resolves to;
 * - `DevChannel`: the port that sends one and waits for its result (node/chainclient.ts implements
 *   it; src/evmrpc/devmethods.ts and devcheats.ts use it; src/node/devops.ts performs the ops).
 *
 * Adding an operation: its variant here and its result in `DevResults`, its handler in
 * src/node/devops.ts (the compiler asks for it), its wire method in src/evmrpc/devmethods.ts.
 */
import type { Cheat } from './cheats.js';

export type DevOp =
  | { op: 'mine'; blocks: bigint; interval?: bigint; timestamp?: bigint }
  | { op: 'increaseTime'; seconds: bigint }
  | { op: 'setNextTimestamp'; seconds: bigint }
  /** anvil_setTime / evm_setTime: the clock reads `seconds` now; the next block has that time */
  | { op: 'setTime'; seconds: bigint }
  /** anvil_setBlockTimestampInterval (milliseconds) / anvil_removeBlockTimestampInterval (undefined) */
  | { op: 'setTimestampInterval'; ms?: number }
  /** anvil_rollback: removes the last `depth` blocks */
  | { op: 'rollback'; depth: bigint }
  /** anvil_reorg: removes the last `depth` blocks, then mines `blocks.length` (= depth) new ones, each holding exactly its signed EVM txs */
  | { op: 'reorg'; depth: bigint; blocks: Uint8Array[][] }
  | { op: 'setAutomine'; enabled: boolean }
  /** seconds; 0 = interval mining off */
  | { op: 'setInterval'; seconds: bigint }
  | { op: 'setBlockGasLimit'; gas: bigint }
  | { op: 'setNextBaseFee'; fee: bigint }
  /** anvil_setNextBlockPrevRandao / hardhat_setPrevRandao: the next block's mixHash (32 bytes), that block only */
  | { op: 'setNextPrevRandao'; value: Uint8Array }
  /** no hashes: every pool tx; `from`: only that sender's (anvil_removePoolTransactions) */
  | { op: 'dropTxs'; hashes?: Uint8Array[]; from?: Uint8Array }
  /** anvil_impersonateAccount (on) / stopImpersonatingAccount (off) */
  | { op: 'impersonate'; address: Uint8Array; on: boolean }
  | { op: 'autoImpersonate'; enabled: boolean }
  | { op: 'snapshot' }
  /** evm_revert */
  | { op: 'revert'; id: bigint }
  /** anvil_reset: back to genesis */
  | { op: 'reset' }
  | { op: 'status' }
  /** anvil_setBalance / setCode / setStorageAt / setNonce / loadState: pending until the next block (chain/cheats.ts) */
  | { op: 'setCheats'; cheats: Cheat[] };

export type DevOpName = DevOp['op'];

/** The operation named `K`, with its arguments. */
export type DevOpOf<K extends DevOpName> = Extract<DevOp, { op: K }>;

/** The chain thread's dev state (`status`). */
export interface DevStatus {
  automine: boolean;
  /** milliseconds; 0 = no interval mining */
  intervalMs: number;
  blockGasLimit: bigint;
  nextBaseFee: bigint;
  /** the snapshots held: [id, block number, block hash] */
  snapshots: [bigint, bigint, Uint8Array][];
}

/** What each operation resolves to. */
export interface DevResults {
  mine: void;
  /** the total increase, seconds */
  increaseTime: bigint;
  setNextTimestamp: void;
  /** seconds from the clock before the call to the time set (0 when not ahead), as Anvil */
  setTime: bigint;
  /** whether an interval was set before */
  setTimestampInterval: boolean;
  rollback: void;
  reorg: void;
  setAutomine: void;
  setInterval: void;
  setBlockGasLimit: void;
  setNextBaseFee: void;
  setNextPrevRandao: void;
  /** the hashes dropped */
  dropTxs: Uint8Array[];
  /** whether the address was impersonated before */
  impersonate: boolean;
  autoImpersonate: void;
  setCheats: void;
  /** the new snapshot's id (a limitExceeded domain error when too many are held) */
  snapshot: bigint;
  /** false for an unknown id */
  revert: boolean;
  reset: void;
  status: DevStatus;
}

/**
 * Sends a dev operation to the chain thread and resolves to its result. A domain error (a backwards
 * time, too many snapshots) rejects with its kind; anything else rejects as a plain Error.
 */
export interface DevChannel {
  dev<K extends DevOpName>(op: DevOpOf<K>): Promise<DevResults[K]>;
}
