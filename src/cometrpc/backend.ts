/**
 * The port Surface B (the CometBFT v0.38 RPC) reads and acts through. cometrpc/ never imports the
 * engine or the application: node/ wires their readers to this interface. The domain types here
 * are structural copies of the engine's (bigint, Uint8Array, {seconds, nanos} times — never hex).
 */
import type { Query } from '../eventquery/index.js';

export interface Timestamp {
  seconds: bigint;
  nanos: number;
}

export interface PartSetHeader {
  total: number;
  hash: Uint8Array;
}

export interface BlockID {
  hash: Uint8Array;
  partSetHeader: PartSetHeader;
}

export interface Header {
  version: { block: bigint; app: bigint };
  chainId: string;
  height: bigint;
  time: Timestamp;
  lastBlockId: BlockID;
  lastCommitHash: Uint8Array;
  dataHash: Uint8Array;
  validatorsHash: Uint8Array;
  nextValidatorsHash: Uint8Array;
  consensusHash: Uint8Array;
  appHash: Uint8Array;
  lastResultsHash: Uint8Array;
  evidenceHash: Uint8Array;
  proposerAddress: Uint8Array;
}

export interface CommitSig {
  /** 1 absent, 2 commit, 3 nil */
  blockIdFlag: number;
  validatorAddress: Uint8Array;
  timestamp: Timestamp;
  signature: Uint8Array;
}

export interface Commit {
  height: bigint;
  round: number;
  blockId: BlockID;
  signatures: readonly CommitSig[];
}

export interface Block {
  header: Header;
  data: { txs: readonly Uint8Array[] };
  evidence: readonly unknown[];
  lastCommit: Commit;
}

export interface Validator {
  address: Uint8Array;
  /** ed25519, 32 bytes */
  pubKey: Uint8Array;
  votingPower: bigint;
}

export interface EventAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface AbciEvent {
  type: string;
  attributes: readonly EventAttribute[];
}

export interface ExecTxResult {
  code: number;
  data: Uint8Array;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: readonly AbciEvent[];
  codespace: string;
}

export type CheckTxResult = ExecTxResult;

export interface ValidatorUpdate {
  pubKey: Uint8Array;
  power: bigint;
}

export interface FinalizeBlockResult {
  events: readonly AbciEvent[];
  txResults: readonly ExecTxResult[];
  appHash: Uint8Array;
  validatorUpdates?: readonly ValidatorUpdate[];
}

/** One committed height as the block store keeps it. */
export interface BlockRecord {
  block: Block;
  blockId: BlockID;
  /** the seen commit of this height */
  commit: Commit;
  results: FinalizeBlockResult;
  /** bytes of the block's proto encoding */
  size: number;
}

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

export interface ProofOp {
  type: string;
  key: Uint8Array;
  data: Uint8Array;
}

/** abci.ResponseQuery */
export interface QueryResult {
  code: number;
  log: string;
  info: string;
  index: bigint;
  key: Uint8Array | undefined;
  value: Uint8Array | undefined;
  proofOps: readonly ProofOp[] | undefined;
  height: bigint;
  codespace: string;
}

export interface QueryRequest {
  path: string;
  data: Uint8Array;
  /** 0 = latest */
  height: bigint;
  prove: boolean;
}

/** abci.ResponseInfo */
export interface InfoResult {
  data: string;
  version: string;
  appVersion: bigint;
  lastBlockHeight: bigint;
  lastBlockAppHash: Uint8Array;
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

/** The mempool as unconfirmed_txs sees it. */
export interface MempoolView {
  readonly size: number;
  readonly totalBytes: number;
  txs(limit: number): Uint8Array[];
}

/** A signed vote (Vote event). */
export interface VoteData {
  type: number;
  height: bigint;
  round: number;
  blockId: BlockID;
  timestamp: Timestamp;
  validatorAddress: Uint8Array;
  validatorIndex: number;
  signature: Uint8Array;
}

/** A consensus moment of the engine's round: NewRound, NewRoundStep, CompleteProposal, Vote, Polka, ... */
export interface RoundStep {
  type: string;
  height: bigint;
  round: number;
  step: string;
  proposer?: { address: Uint8Array; index: number };
  blockId?: BlockID;
  vote?: VoteData;
}

export interface ConsensusBackend {
  identity(): NodeIdentity;
  /** the genesis document as CometBFT serializes it (compact JSON) */
  genesisJson(): string;
  /** latest committed height (0 before the first block) */
  latestHeight(): bigint;
  /** lowest height the store has */
  baseHeight(): bigint;
  block(height: bigint): BlockRecord | undefined;
  heightByHash(hash: Uint8Array): bigint | undefined;
  /** the set of `height` (≤ latest + 1), in canonical order */
  validators(height: bigint): Validator[] | undefined;
  blockParams(height: bigint): BlockParams;
  tx(hash: Uint8Array): TxRecord | undefined;
  txAt(height: bigint, index: number): TxRecord | undefined;
  txProof(height: bigint, index: number): TxProof | undefined;
  /** throws a FerryError (the route error text) for searches it refuses */
  searchTxs(q: Query): TxPosition[];
  searchBlocks(q: Query): number[];
  /** CheckTx; `submit` adds the tx to the mempool when it passes */
  checkTx(tx: Uint8Array, submit: boolean): Promise<CheckTxResult>;
  mempool(): MempoolView;
  abciInfo(): InfoResult;
  abciQuery(req: QueryRequest): Promise<QueryResult>;
}
