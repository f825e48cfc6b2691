/**
 * The application interface the engine drives, shaped after ABCI 2.0 (CometBFT v0.38). It is the seam
 * where a real CometBFT node will later drive the same application over the ABCI socket protocol.
 */
import type { AbciEvent, ExecTxResult, FinalizeBlockResponse, InfoResponse } from '../types/cometbft.js';

export type { AbciEvent, AbciEventAttribute, ExecTxResult, FinalizeBlockResponse, InfoResponse, ValidatorUpdate } from '../types/cometbft.js';

export interface CheckTxResult {
  code: number;
  log: string;
  codespace: string;
  gasWanted: bigint;
  gasUsed: bigint;
  data: Uint8Array;
  events: AbciEvent[];
}

export interface FinalizeBlockRequest {
  height: bigint;
  /** unix milliseconds (ferry's block times have millisecond precision) */
  timeMs: number;
  hash: Uint8Array;
  proposerAddress: Uint8Array;
  txs: Uint8Array[];
}

export interface Application {
  info(): InfoResponse;
  /** called once on an empty store; returns the genesis app hash */
  initChain(): Promise<Uint8Array>;
  checkTx(tx: Uint8Array): Promise<CheckTxResult>;
  /** the app orders the block's txs (ferry's mempool is application-side, nonce-ordered) */
  prepareProposal(req: { height: bigint; timeMs: number; maxTxBytes: number }): Uint8Array[];
  processProposal(req: { height: bigint; txs: Uint8Array[] }): boolean;
  finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse>;
  /** synchronous; runs inside the engine's block transaction — persists what FinalizeBlock computed */
  commit(): void;
  /** after the block transaction committed (caches, mempool recheck, notifications) */
  afterCommit(): Promise<void>;
  /** the block transaction failed or was abandoned: drop what FinalizeBlock computed */
  abortBlock(): Promise<void>;
  /** number of txs waiting (for block-on-tx) */
  pendingCount(): number;
}
