/**
 * The application interface, shaped after ABCI 2.0 (CometBFT v0.38). Two drivers call it: the embedded
 * engine (src/consensus/engine.ts) and the ABCI socket server that real CometBFT talks to
 * (src/abci/). The application (src/chain/app.ts) does not know which one drives it.
 */
import type { AbciEvent, FinalizeBlockResponse, InfoResponse, ValidatorUpdate } from './cometbft.js';

export type { AbciEvent, AbciEventAttribute, ExecTxResult, FinalizeBlockResponse, InfoResponse, ValidatorUpdate } from './cometbft.js';

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
  /** the CometBFT header hash: also the EVM block hash */
  hash: Uint8Array;
  proposerAddress: Uint8Array;
  txs: Uint8Array[];
}

/** abci.RequestInitChain (what CometBFT hands over at genesis). */
export interface InitChainRequest {
  chainId: string;
  /** genesis time, unix milliseconds */
  timeMs: number;
  validators: ValidatorUpdate[];
  /** the `app_state` of genesis.json, as JSON bytes */
  appStateBytes: Uint8Array;
  initialHeight: bigint;
}

/** abci.RequestPrepareProposal / RequestProcessProposal: the txs CometBFT's mempool (or a proposer) supplied. */
export interface ProposalRequest {
  height: bigint;
  timeMs: number;
  txs: Uint8Array[];
  /** PrepareProposal only: the byte budget of the txs */
  maxTxBytes?: number;
}

export interface Application {
  info(): InfoResponse;
  /**
   * Called on an empty store (again after a crash before the first block; idempotent); returns the
   * genesis app hash. `req` comes from CometBFT (the ABCI driver) and is checked against the genesis
   * the application was started with.
   */
  initChain(req?: InitChainRequest): Promise<Uint8Array>;
  checkTx(tx: Uint8Array): Promise<CheckTxResult>;
  /** CheckTx RECHECK after a commit: still valid against the new state? (evicts from the pool if not) */
  recheckTx(tx: Uint8Array): Promise<CheckTxResult>;
  /** the embedded engine's proposal: the app orders the block's txs from its own pool */
  prepareProposal(req: { height: bigint; timeMs: number; maxTxBytes: number }): Uint8Array[];
  /** CometBFT's proposal: orders `req.txs` (nonce order per sender, fee priority) and drops what would fail */
  orderProposal(req: ProposalRequest): Promise<Uint8Array[]>;
  /** a proposal from another validator: false rejects it (deterministic: block + state only) */
  processProposal(req: ProposalRequest): Promise<boolean>;
  /**
   * CometBFT v0.39's application-side mempool (`[mempool] type = "app"`, ABCI ReapTxs): the pool's txs
   * not handed out before, in arrival order, within the bounds (0: none), for CometBFT to gossip.
   */
  reapTxs(maxBytes: bigint, maxGas: bigint): Uint8Array[];
  finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse>;
  /** synchronous; runs inside the driver's block transaction — persists what FinalizeBlock computed */
  commit(): void;
  /** after the block transaction committed (caches, mempool recheck, notifications) */
  afterCommit(): Promise<void>;
  /** Commit's retain_height after committing `height` (0: CometBFT keeps every block; docs/abci.md "Pruning") */
  retainHeight(height: bigint): bigint;
  /** the block transaction failed or was abandoned: drop what FinalizeBlock computed */
  abortBlock(): Promise<void>;
  /** number of txs waiting, executable or not (a height without empty blocks waits for one) */
  pendingCount(): number;
  /** whether a block made now would include a tx (block-on-tx makes the next block at once only then) */
  hasExecutable(): boolean;
}

/** abci.Snapshot (CometBFT v0.38 proto/tendermint/abci/types.proto): a state-sync snapshot, listed or offered. */
export interface SnapshotInfo {
  height: bigint;
  format: number;
  chunks: number;
  hash: Uint8Array;
  metadata: Uint8Array;
}

/** ResponseOfferSnapshot.Result */
export type OfferResult = 'accept' | 'abort' | 'reject' | 'rejectFormat' | 'rejectSender';

/** ResponseApplySnapshotChunk: Result, and the chunks to fetch again and the peers to reject */
export interface ApplyChunkResult {
  result: 'accept' | 'abort' | 'retry' | 'retrySnapshot' | 'rejectSnapshot';
  refetchChunks?: number[];
  rejectSenders?: string[];
}

/** The application's side of state sync (docs/abci.md "State sync"): ABCI's four snapshot calls. */
export interface SnapshotApp {
  listSnapshots(): SnapshotInfo[];
  loadSnapshotChunk(height: bigint, format: number, index: number): Uint8Array;
  /** `appHash`: the app hash of the snapshot height that CometBFT's light client verified */
  offerSnapshot(snapshot: SnapshotInfo, appHash: Uint8Array): OfferResult;
  applySnapshotChunk(index: number, chunk: Uint8Array, sender: string): Promise<ApplyChunkResult>;
}
