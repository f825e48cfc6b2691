/**
 * The port Surface B (the CometBFT v0.38 RPC) reads and acts through. cometrpc/ never imports the
 * engine or the application: node/ wires their readers to this interface. The CometBFT values it
 * carries are the shared domain types of src/types/cometbft.ts (bigint, Uint8Array — never hex).
 */
import type { Query } from '../eventquery/index.js';
import type { AbciQueryRequest, AbciQueryResponse, CometBlockRecord, ExecTxResult, InfoResponse, Validator } from '../types/cometbft.js';

export type {
  AbciEvent,
  AbciQueryRequest,
  AbciQueryResponse,
  AbciEventAttribute,
  Block,
  BlockID,
  CometBlockRecord,
  Commit,
  CommitSig,
  ExecTxResult,
  FinalizeBlockResponse,
  Header,
  InfoResponse,
  PartSetHeader,
  ProofOp,
  RoundStepEvent,
  Timestamp,
  Validator,
  ValidatorUpdate,
  VoteEventData,
} from '../types/cometbft.js';

/** CheckTx answers with ExecTxResult's fields */
export type CheckTxResult = ExecTxResult;

/** A tx as the index keeps it. */
export interface TxRecord {
  /** SHA-256 of the tx bytes */
  hash: Uint8Array;
  height: bigint;
  index: number;
  tx: Uint8Array;
  result: ExecTxResult;
}

export interface TxProof {
  rootHash: Uint8Array;
  data: Uint8Array;
  proof: { total: bigint; index: bigint; leafHash: Uint8Array; aunts: readonly Uint8Array[] };
}

/** What status and net_info report about this node. */
export interface NodeIdentity {
  /** lowercase hex p2p id */
  nodeId: string;
  moniker: string;
  network: string;
  /** CometBFT version reported (`0.38.x`, so CosmJS picks its Comet38 client) */
  version: string;
  listenAddr: string;
  rpcAddress: string;
  appVersion: bigint;
  validator: { address: Uint8Array; pubKey: Uint8Array };
}

/** The block-size and block-gas consensus params (the rest are fixed, see format.ts). */
export interface BlockParams {
  maxBytes: bigint;
  maxGas: bigint;
}

/** A position in the chain: height and the tx's index in its block. */
export interface TxPosition {
  height: number;
  idx: number;
}

/** The mempool as unconfirmed_txs sees it (consensus/reader.ts NativeMempool). */
export interface MempoolView {
  readonly size: number;
  readonly totalBytes: number;
  txs(limit: number): Uint8Array[];
}

/** Committed blocks, commits and validator sets (consensus/reader.ts ConsensusReader). */
export interface BlockStore {
  /** latest committed height (0 before the first block) */
  latestHeight(): bigint;
  /** lowest height the store has */
  baseHeight(): bigint;
  block(height: bigint): CometBlockRecord | undefined;
  heightByHash(hash: Uint8Array): bigint | undefined;
  /** the set of `height` (≤ latest + 1), in canonical order */
  validators(height: bigint): Validator[] | undefined;
}

/** The tx and block index with the kv indexer's search (consensus/reader.ts ConsensusReader). */
export interface TxIndex {
  tx(hash: Uint8Array): TxRecord | undefined;
  txAt(height: bigint, index: number): TxRecord | undefined;
  txProof(height: bigint, index: number): TxProof | undefined;
  /** throws a DomainError (invalidArgument, limitExceeded) for searches it refuses */
  searchTxs(q: Query): TxPosition[];
  searchBlocks(q: Query): number[];
}

/** The application's CheckTx (over the chain thread). */
export interface TxChecker {
  /** `submit` adds the tx to the mempool when it passes */
  checkTx(tx: Uint8Array, submit: boolean): Promise<CheckTxResult>;
}

/** The application's Info and Query (abci_info, abci_query). */
export interface AppQuery {
  abciInfo(): InfoResponse;
  abciQuery(req: AbciQueryRequest): Promise<AbciQueryResponse>;
}

/** This node as status, genesis and consensus_params describe it. */
export interface NodeInfo {
  readonly identity: NodeIdentity;
  /** the genesis document as CometBFT serializes it (compact JSON) */
  readonly genesisJson: string;
  blockParams(height: bigint): BlockParams;
}

/**
 * Everything Surface B reads and acts through, one narrow port each: node/ hands in the objects
 * that implement them (the consensus reader serves `blocks` and `txs`).
 */
export interface ConsensusBackend {
  readonly blocks: BlockStore;
  readonly txs: TxIndex;
  readonly mempool: MempoolView;
  readonly checker: TxChecker;
  readonly app: AppQuery;
  readonly node: NodeInfo;
}
