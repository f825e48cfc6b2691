/**
 * CometBFT v0.38 block, commit and validator types as domain values: int64 → bigint, int32/uint32 →
 * number, bytes → Uint8Array, times → Timestamp. Field meanings follow proto/tendermint/types.
 */
import type { Timestamp } from './time.js';

/** version.BlockProtocol: Header.version.block of every v0.38 block. */
export const BLOCK_PROTOCOL = 11n;
/** types.BlockPartSizeBytes: a block's proto encoding is split into parts of this size. */
export const BLOCK_PART_SIZE_BYTES = 65536;
/** crypto.AddressSize */
export const ADDRESS_SIZE = 20;
/** upstream DefaultBlockParams (the two consensus params that are hashed into consensus_hash) */
export const DEFAULT_BLOCK_PARAMS: Readonly<HashedParams> = Object.freeze({ maxBytes: 22020096n, maxGas: -1n });

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

/** tendermint.types.HashedParams: the part of ConsensusParams that consensus_hash covers. */
export interface HashedParams {
  maxBytes: bigint;
  maxGas: bigint;
}

/** The deterministic part of abci.ExecTxResult that last_results_hash covers. */
export interface DeterministicTxResult {
  /** uint32 */
  code: number;
  data: Uint8Array;
  gasWanted: bigint;
  gasUsed: bigint;
}

/** The fields of a Vote that its signature covers (CanonicalVote). */
export interface VoteToSign {
  type: SignedMsgType;
  height: bigint;
  /** int32 */
  round: number;
  /** the zero BlockID for a nil vote */
  blockId: BlockID;
  timestamp: Timestamp;
}

/** BlockID{} — the id of a nil block (votes for nil, last_block_id at the initial height). */
export function zeroBlockId(): BlockID {
  return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
}

export function isZeroBlockId(id: BlockID): boolean {
  return id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
}
