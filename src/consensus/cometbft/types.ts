/**
 * CometBFT v0.38 block, commit and validator types as domain values: int64 → bigint, int32/uint32 →
 * number, bytes → Uint8Array, times → Timestamp. Field meanings follow proto/tendermint/types.
 */
import type { BlockID, SignedMsgType, Timestamp } from '../../types/cometbft.js';

export { BlockIDFlag, SignedMsgType } from '../../types/cometbft.js';
export type { Block, BlockID, Commit, CommitSig, ConsensusVersion, Header, PartSetHeader, Validator } from '../../types/cometbft.js';

/** version.BlockProtocol: Header.version.block of every v0.38 block. */
export const BLOCK_PROTOCOL = 11n;
/** types.BlockPartSizeBytes: a block's proto encoding is split into parts of this size. */
export const BLOCK_PART_SIZE_BYTES = 65536;
/** crypto.AddressSize */
export const ADDRESS_SIZE = 20;
/** upstream DefaultBlockParams (the two consensus params that are hashed into consensus_hash) */
export const DEFAULT_BLOCK_PARAMS: Readonly<HashedParams> = Object.freeze({ maxBytes: 22020096n, maxGas: -1n });

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
