/**
 * Proto encodings and hashes of CometBFT v0.38 blocks, exactly as types/block.go, canonical.go,
 * vote.go, part_set.go, validator_set.go, params.go and results.go compute them.
 */
import { BLOCK_PART_SIZE_BYTES, isZeroBlockId } from './types.js';
import type {
  Block,
  BlockID,
  Commit,
  CommitSig,
  ConsensusVersion,
  DeterministicTxResult,
  HashedParams,
  Header,
  PartSetHeader,
  Validator,
  VoteToSign,
} from './types.js';
import type { Timestamp } from './time.js';
import { merkleProof, merkleRoot, sha256 } from './merkle.js';
import type { MerkleProof } from './merkle.js';
import { ProtoWriter, lengthPrefixed } from './proto.js';

// ---- message encodings -------------------------------------------------------------------------

/** google.protobuf.Timestamp{1: seconds, 2: nanos} (gogo StdTimeMarshal). */
export function timestampProto(t: Timestamp): Uint8Array {
  return new ProtoWriter().int(1, t.seconds).int(2, t.nanos).finish();
}

/** tendermint.version.Consensus{1: block, 2: app}. */
function consensusVersionProto(v: ConsensusVersion): Uint8Array {
  return new ProtoWriter().uint(1, v.block).uint(2, v.app).finish();
}

/** PartSetHeader (and CanonicalPartSetHeader, which has the same layout). */
function partSetHeaderProto(p: PartSetHeader): Uint8Array {
  return new ProtoWriter().uint(1, p.total).bytes(2, p.hash).finish();
}

/** BlockID (and CanonicalBlockID): hash, then the always-present part set header. */
export function blockIdProto(id: BlockID): Uint8Array {
  return new ProtoWriter().bytes(1, id.hash).lengthDelimited(2, partSetHeaderProto(id.partSetHeader)).finish();
}

function headerProto(h: Header): Uint8Array {
  return new ProtoWriter()
    .lengthDelimited(1, consensusVersionProto(h.version))
    .string(2, h.chainId)
    .int(3, h.height)
    .lengthDelimited(4, timestampProto(h.time))
    .lengthDelimited(5, blockIdProto(h.lastBlockId))
    .bytes(6, h.lastCommitHash)
    .bytes(7, h.dataHash)
    .bytes(8, h.validatorsHash)
    .bytes(9, h.nextValidatorsHash)
    .bytes(10, h.consensusHash)
    .bytes(11, h.appHash)
    .bytes(12, h.lastResultsHash)
    .bytes(13, h.evidenceHash)
    .bytes(14, h.proposerAddress)
    .finish();
}

export function commitSigProto(cs: CommitSig): Uint8Array {
  return new ProtoWriter()
    .uint(1, cs.blockIdFlag)
    .bytes(2, cs.validatorAddress)
    .lengthDelimited(3, timestampProto(cs.timestamp))
    .bytes(4, cs.signature)
    .finish();
}

export function commitProto(c: Commit): Uint8Array {
  const w = new ProtoWriter().int(1, c.height).int(2, c.round).lengthDelimited(3, blockIdProto(c.blockId));
  for (const sig of c.signatures) w.lengthDelimited(4, commitSigProto(sig));
  return w.finish();
}

/** proto(Block){1: Header, 2: Data{repeated txs}, 3: EvidenceList, 4: Commit}: the bytes split into parts. */
export function blockProto(block: Block): Uint8Array {
  const data = new ProtoWriter();
  for (const tx of block.data.txs) data.lengthDelimited(1, tx);
  if (block.evidence.length > 0) throw new Error('blockProto: evidence is not supported');
  return new ProtoWriter()
    .lengthDelimited(1, headerProto(block.header))
    .lengthDelimited(2, data.finish())
    .lengthDelimited(3, new Uint8Array(0))
    .lengthDelimited(4, commitProto(block.lastCommit))
    .finish();
}

// ---- hashes ------------------------------------------------------------------------------------

const stringValue = (s: string): Uint8Array => new ProtoWriter().string(1, s).finish();
const int64Value = (v: bigint): Uint8Array => new ProtoWriter().int(1, v).finish();
const bytesValue = (b: Uint8Array): Uint8Array => new ProtoWriter().bytes(1, b).finish();

/**
 * `Header.Hash()`: the Merkle root of the 14 fields, each proto-encoded (scalars in gogo wrapper
 * types). Upstream returns nil for a header without validators_hash; that header is invalid, so
 * this throws instead.
 */
export function headerHash(h: Header): Uint8Array {
  if (h.validatorsHash.length === 0) throw new Error('headerHash: header has no validators_hash');
  return merkleRoot([
    consensusVersionProto(h.version),
    stringValue(h.chainId),
    int64Value(h.height),
    timestampProto(h.time),
    blockIdProto(h.lastBlockId),
    bytesValue(h.lastCommitHash),
    bytesValue(h.dataHash),
    bytesValue(h.validatorsHash),
    bytesValue(h.nextValidatorsHash),
    bytesValue(h.consensusHash),
    bytesValue(h.appHash),
    bytesValue(h.lastResultsHash),
    bytesValue(h.evidenceHash),
    bytesValue(h.proposerAddress),
  ]);
}

/** Split `blockBytes` into 64 KiB parts: {total, hash = Merkle root of the raw parts}. */
export function partSetHeader(blockBytes: Uint8Array): PartSetHeader {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < blockBytes.length; at += BLOCK_PART_SIZE_BYTES) {
    parts.push(blockBytes.subarray(at, at + BLOCK_PART_SIZE_BYTES));
  }
  return { total: parts.length, hash: merkleRoot(parts) };
}

/** BlockID of a complete block (its header hashes already filled in). */
export function makeBlockId(block: Block): BlockID {
  return { hash: headerHash(block.header), partSetHeader: partSetHeader(blockProto(block)) };
}

/** `Tx.Hash()`: SHA-256 of the raw tx bytes. */
export function txHash(tx: Uint8Array): Uint8Array {
  return sha256(tx);
}

/** data_hash: Merkle root over the tx hashes. */
export function txsHash(txs: readonly Uint8Array[]): Uint8Array {
  return merkleRoot(txs.map(txHash));
}

/** types.TxProof of txs[index]: the Merkle proof of its hash in data_hash. */
export interface TxProof {
  rootHash: Uint8Array;
  data: Uint8Array;
  proof: MerkleProof;
}

export function txProof(txs: readonly Uint8Array[], index: number): TxProof {
  const hashes = txs.map(txHash);
  return { rootHash: merkleRoot(hashes), data: txs[index]!, proof: merkleProof(hashes, index) };
}

/** last_commit_hash: Merkle root over proto(CommitSig). */
export function commitHash(commit: Commit): Uint8Array {
  return merkleRoot(commit.signatures.map(commitSigProto));
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** A copy in CometBFT's canonical order: voting power descending, then address ascending. */
export function sortValidators(validators: readonly Validator[]): Validator[] {
  return [...validators].sort((a, b) =>
    a.votingPower !== b.votingPower ? (a.votingPower > b.votingPower ? -1 : 1) : compareBytes(a.address, b.address),
  );
}

/** `Validator.Bytes()`: proto(SimpleValidator{1: PublicKey{1: ed25519}, 2: voting_power}). */
function simpleValidatorProto(v: Validator): Uint8Array {
  const pubKey = new ProtoWriter().bytes(1, v.pubKey).finish();
  return new ProtoWriter().lengthDelimited(1, pubKey).int(2, v.votingPower).finish();
}

/** validators_hash: Merkle root over the validators in canonical order. */
export function validatorSetHash(validators: readonly Validator[]): Uint8Array {
  return merkleRoot(sortValidators(validators).map(simpleValidatorProto));
}

/** consensus_hash: SHA-256(proto(HashedParams{block_max_bytes, block_max_gas})). */
export function consensusParamsHash(params: HashedParams): Uint8Array {
  return sha256(new ProtoWriter().int(1, params.maxBytes).int(2, params.maxGas).finish());
}

/** proto(ExecTxResult{code, data, gas_wanted, gas_used}) — the deterministic fields only. */
export function txResultProto(r: DeterministicTxResult): Uint8Array {
  return new ProtoWriter().uint(1, r.code).bytes(2, r.data).int(5, r.gasWanted).int(6, r.gasUsed).finish();
}

/** last_results_hash: Merkle root over the previous block's deterministic tx results. */
export function lastResultsHash(results: readonly DeterministicTxResult[]): Uint8Array {
  return merkleRoot(results.map(txResultProto));
}

/** evidence_hash: Merkle root over the evidence; ferry has none, so always SHA-256(""). */
export function evidenceHash(evidence: readonly never[]): Uint8Array {
  if (evidence.length > 0) throw new Error('evidenceHash: evidence is not supported');
  return merkleRoot([]);
}

/** proto(CanonicalVote), without the length prefix. */
function canonicalVoteProto(chainId: string, vote: VoteToSign): Uint8Array {
  const w = new ProtoWriter().uint(1, vote.type).sfixed64(2, vote.height).sfixed64(3, vote.round);
  if (!isZeroBlockId(vote.blockId)) w.lengthDelimited(4, blockIdProto(vote.blockId));
  return w.lengthDelimited(5, timestampProto(vote.timestamp)).string(6, chainId).finish();
}

/** `VoteSignBytes`: uvarint(len) || proto(CanonicalVote) — what a validator signs. */
export function voteSignBytes(chainId: string, vote: VoteToSign): Uint8Array {
  return lengthPrefixed(canonicalVoteProto(chainId, vote));
}
