/**
 * CometBFT v0.38 and ABCI 2.0 values as domain types, shared by the engine (consensus/) and the
 * CometBFT RPC surface (cometrpc/, which reads them through its port): int64 → bigint, int32/uint32
 * → number, bytes → Uint8Array, times → Timestamp. Field meanings follow proto/tendermint.
 */

/** google.protobuf.Timestamp */
export interface Timestamp {
  /** whole seconds since 1970-01-01T00:00:00Z; may be negative */
  seconds: bigint;
  /** 0 ≤ nanos < 1e9 */
  nanos: number;
}

export interface ConsensusVersion {
  block: bigint;
  app: bigint;
}

export interface PartSetHeader {
  /** uint32 */
  total: number;
  hash: Uint8Array;
}

export interface BlockID {
  hash: Uint8Array;
  partSetHeader: PartSetHeader;
}

export interface Header {
  version: ConsensusVersion;
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

/** tendermint.types.BlockIDFlag */
export const BlockIDFlag = { absent: 1, commit: 2, nil: 3 } as const;
export type BlockIDFlag = (typeof BlockIDFlag)[keyof typeof BlockIDFlag];

/** tendermint.types.SignedMsgType */
export const SignedMsgType = { unknown: 0, prevote: 1, precommit: 2, proposal: 32 } as const;
export type SignedMsgType = (typeof SignedMsgType)[keyof typeof SignedMsgType];

export interface CommitSig {
  blockIdFlag: BlockIDFlag;
  /** 20 bytes; empty when absent */
  validatorAddress: Uint8Array;
  /** ZERO_TIME when absent */
  timestamp: Timestamp;
  /** 64 bytes; empty when absent */
  signature: Uint8Array;
}

export interface Commit {
  height: bigint;
  /** int32 */
  round: number;
  blockId: BlockID;
  /** index-aligned with the validator set in canonical order */
  signatures: CommitSig[];
}

export interface Block {
  header: Header;
  data: { txs: Uint8Array[] };
  /** ferry produces no evidence */
  evidence: readonly never[];
  lastCommit: Commit;
}

/** An ed25519 validator. */
export interface Validator {
  /** SHA-256(pubKey)[:20] */
  address: Uint8Array;
  /** 32-byte ed25519 public key */
  pubKey: Uint8Array;
  votingPower: bigint;
}

export interface AbciEventAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface AbciEvent {
  type: string;
  attributes: AbciEventAttribute[];
}

export interface ExecTxResult {
  code: number;
  data: Uint8Array;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: AbciEvent[];
  codespace: string;
}

/** abci.ValidatorUpdate: an ed25519 key and its new voting power (0 removes the validator). */
export interface ValidatorUpdate {
  pubKey: Uint8Array;
  power: bigint;
}

export interface FinalizeBlockResponse {
  events: AbciEvent[];
  txResults: ExecTxResult[];
  appHash: Uint8Array;
  /** validator set changes; they take effect at height + 2 (CometBFT's rule) */
  validatorUpdates?: ValidatorUpdate[];
}

/** abci.ResponseInfo */
export interface InfoResponse {
  data: string;
  version: string;
  appVersion: bigint;
  lastBlockHeight: bigint;
  lastBlockAppHash: Uint8Array;
}

/** What the engine stores per height (the `comet` record). */
export interface CometBlockRecord {
  block: Block;
  blockId: BlockID;
  /** the seen commit for this height (CometBFT's `commit?height=H` answer) */
  commit: Commit;
  results: FinalizeBlockResponse;
  /** byte size of the block's proto encoding */
  size: number;
  /** the validator set of this height and of the next one (absent in records of older versions: genesis set) */
  validators?: Validator[];
  nextValidators?: Validator[];
}

/** A signed vote, as CometBFT's Vote event carries it. */
export interface VoteEventData {
  type: SignedMsgType;
  height: bigint;
  round: number;
  blockId: BlockID;
  timestamp: Timestamp;
  validatorAddress: Uint8Array;
  validatorIndex: number;
  signature: Uint8Array;
}

/** A consensus moment of the single validator's round (CometBFT's NewRound, NewRoundStep, Vote, ...). */
export interface RoundStepEvent {
  type: string;
  height: bigint;
  round: number;
  /** cstypes.RoundStepType name, e.g. `RoundStepPropose` */
  step: string;
  proposer?: { address: Uint8Array; index: number };
  blockId?: BlockID;
  vote?: VoteEventData;
}

/** abci.RequestQuery */
export interface AbciQueryRequest {
  path: string;
  data: Uint8Array;
  /** 0 = latest */
  height: bigint;
  prove: boolean;
}

/** crypto.ProofOp */
export interface ProofOp {
  type: string;
  key: Uint8Array;
  data: Uint8Array;
}

/** abci.ResponseQuery */
export interface AbciQueryResponse {
  code: number;
  log: string;
  info: string;
  index: bigint;
  key: Uint8Array | undefined;
  value: Uint8Array | undefined;
  proofOps: ProofOp[] | undefined;
  height: bigint;
  codespace: string;
}
