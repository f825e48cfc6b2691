/**
 * Messages between the RPC thread (main) and the chain thread (worker). Values are structured-cloned
 * (bigint, Uint8Array and Map survive).
 */
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import type { EvmLog, EvmTx } from '../types/chain.js';
import type { CheckTxResult } from '../consensus/abci.js';
import type { RoundStepEvent } from '../consensus/engine.js';
import type { AbciQueryRequest, AbciQueryResponse } from '../types/cometbft.js';
import type { BlockStats } from '../metrics/comet.js';

export interface ChainWorkerData {
  opts: NodeOptions;
  genesis: Genesis;
  dbPath: string;
  validatorKeyJson: string;
}

export type ToChain =
  | { type: 'submit'; id: number; raw: Uint8Array; rpc: boolean }
  /** Surface B's broadcast_tx_* (and check_tx with `dryRun`: checked, never added to the mempool) */
  | { type: 'submitNative'; id: number; tx: Uint8Array; dryRun?: boolean }
  /** miner_setEtherbase: fee recipient of the next blocks (persisted); answered with a reply */
  | { type: 'setCoinbase'; id: number; address: Uint8Array }
  /** the answer to a chain-thread `query` (ABCI mode) */
  | { type: 'queryReply'; id: number; res: AbciQueryResponse }
  /** the dev controls (evm_*, anvil_*, hardhat_*): answered with a `devReply` */
  | { type: 'dev'; id: number; op: DevOp }
  | { type: 'stop' };

/** A dev control for the chain thread (docs/dev-mode.md); seconds and wei as bigint. */
export type DevOp =
  | { op: 'mine'; blocks: bigint; interval?: bigint; timestamp?: bigint }
  | { op: 'increaseTime'; seconds: bigint }
  | { op: 'setNextTimestamp'; seconds: bigint }
  | { op: 'setAutomine'; enabled: boolean }
  /** seconds; 0 = interval mining off */
  | { op: 'setInterval'; seconds: bigint }
  | { op: 'setBlockGasLimit'; gas: bigint }
  | { op: 'setNextBaseFee'; fee: bigint }
  /** no hashes: every pool tx */
  | { op: 'dropTxs'; hashes?: Uint8Array[] }
  /** evm_snapshot: answered with the id (bigint) */
  | { op: 'snapshot' }
  /** evm_revert: answered with true, or false for an unknown id */
  | { op: 'revert'; id: bigint }
  /** anvil_reset: back to genesis */
  | { op: 'reset' }
  | { op: 'status' };

/** `timestamp`: the request would move time backwards (Anvil's invalid-params answer) */
/** `limit`: a dev limit was reached (too many snapshots) */
export type DevErrorKind = 'timestamp' | 'limit' | 'internal';

export type FromChain =
  | { type: 'ready'; height: bigint }
  /**
   * `stats`: what the metrics record of the height (observed on the RPC thread, which serves them);
   * absent under real CometBFT, which keeps its own consensus metrics
   */
  | { type: 'committed'; height: bigint; stats?: BlockStats }
  | { type: 'pool'; added: EvmTx[]; removed: Uint8Array[]; natives?: Uint8Array[]; evicted?: number }
  /**
   * `check`: the whole CheckTx response (submitNative); for the metrics, `checkSeconds`: time CheckTx
   * took, `txBytes`: the tx's size when it was offered to the mempool (not for a dry run)
   */
  | { type: 'reply'; id: number; code: number; log: string; hash?: Uint8Array; check?: CheckTxResult; checkSeconds?: number; txBytes?: number }
  /** a consensus step of the engine's round (Surface B's NewRound, Vote, ... events) */
  | { type: 'roundStep'; event: RoundStepEvent }
  /** ABCI mode: CometBFT's Query, answered by the RPC thread's reader (`queryReply`) */
  | { type: 'query'; id: number; req: AbciQueryRequest }
  | { type: 'devReply'; id: number; result?: unknown; error?: { kind: DevErrorKind; message: string } }
  /**
   * evm_revert / anvil_reset rewound the chain to `height` (sent before the devReply and before any
   * new block): the logs of the rewound blocks, oldest first, for `removed: true` notifications
   */
  | { type: 'rewound'; height: bigint; removedLogs: EvmLog[]; truncated: boolean }
  | { type: 'stopped' }
  | { type: 'fatal'; message: string };
