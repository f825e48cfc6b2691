/**
 * Domain values → CometBFT v0.38 JSON, exactly as its two encoders write them:
 * - libs/json (every Result* struct): int64/uint64 as strings, int32/uint32 as numbers, []byte as
 *   base64, HexBytes as UPPER hex, times RFC3339Nano UTC with trailing zeros trimmed, nil slices null;
 * - gogo jsonpb with defaults emitted (ResponseCheckTx, ExecTxResult, ResponseQuery, AbciEventAttribute):
 *   every field present, int64 as strings, empty bytes null.
 * Field order follows the Go structs; the shapes are named in jsontypes.ts. Hex appears only here (and in params.ts).
 */
import type {
  AbciEvent,
  Block,
  BlockID,
  CometBlockRecord,
  CheckTxResult,
  Commit,
  CommitSig,
  AbciEventAttribute,
  ExecTxResult,
  FinalizeBlockResponse,
  Header,
  InfoResponse,
  AbciQueryResponse,
  RoundStepEvent,
  Timestamp,
  TxProof,
  TxRecord,
  Validator,
  ValidatorUpdate,
  VoteEventData,
} from './backend.js';
import { PUBKEY_TYPE_ED25519 } from '../config/genesis.js';
import { BlockIDFlag } from '../types/cometbft.js';
import type {
  BlockIdJson,
  BlockJson,
  BlockMetaJson,
  BlockResultsJson,
  CommitJson,
  CommitSigJson,
  ConsensusVersionJson,
  EventAttributeJson,
  EventDataJson,
  EventJson,
  ExecTxResultJson,
  FinalizeBlockJson,
  HeaderJson,
  InfoJson,
  PbEventJson,
  PubKeyJson,
  QueryJson,
  ResultBlockJson,
  ResultTxJson,
  RoundVoteSetJson,
  TxProofJson,
  TxResultEventJson,
  ValidatorJson,
  ValidatorUpdateJson,
  VoteJson,
  VoteSetJson,
} from './jsontypes.js';

/**
 * The CometBFT version `status` reports: a 0.38 release, so CosmJS's connectComet picks its
 * Comet38Client (it routes on the `0.38.` prefix).
 */
export const COMETBFT_VERSION = '0.38.25';
export const MONIKER = 'ferry';
/** crypto/encoding's registered name of the ed25519 oneof (abci.ValidatorUpdate.pub_key) */
export const PROTO_PUBKEY_ED25519 = 'tendermint.crypto.PublicKey_Ed25519';
/** p2p channels of a CometBFT node: blocksync, consensus ×4, mempool, evidence, statesync ×2, pex */
export const NODE_CHANNELS = '40202122233038606100';
export const P2P_PROTOCOL = '8';

export const hexUpper = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex').toUpperCase();
export const base64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
/** jsonpb bytes: base64, or null when empty */
const pbBytes = (b: Uint8Array | undefined): string | null => (b === undefined || b.length === 0 ? null : base64(b));
const str = (n: bigint | number): string => n.toString();

const NANOS_PER_MS = 1_000_000;

/** time.Time as libs/json writes it: `2024-01-01T00:00:04.9Z`. */
export function formatTime(t: Timestamp): string {
  const date = new Date(Number(t.seconds) * 1000).toISOString().slice(0, 19);
  if (t.nanos === 0) return `${date}Z`;
  return `${date}.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}Z`;
}

/** Unix nanoseconds of a timestamp. */
export function timeNanos(t: Timestamp): bigint {
  return t.seconds * 1_000_000_000n + BigInt(t.nanos);
}

export function timestampOfNanos(n: bigint): Timestamp {
  const s = n / 1_000_000_000n;
  return { seconds: s, nanos: Number(n - s * 1_000_000_000n) };
}

export function blockIdJson(id: BlockID): BlockIdJson {
  return { hash: hexUpper(id.hash), parts: { total: id.partSetHeader.total, hash: hexUpper(id.partSetHeader.hash) } };
}

export const ZERO_BLOCK_ID: BlockIdJson = { hash: '', parts: { total: 0, hash: '' } };

export function headerJson(h: Header): HeaderJson {
  const version: ConsensusVersionJson = { block: str(h.version.block) };
  if (h.version.app !== 0n) version.app = str(h.version.app);
  return {
    version,
    chain_id: h.chainId,
    height: str(h.height),
    time: formatTime(h.time),
    last_block_id: blockIdJson(h.lastBlockId),
    last_commit_hash: hexUpper(h.lastCommitHash),
    data_hash: hexUpper(h.dataHash),
    validators_hash: hexUpper(h.validatorsHash),
    next_validators_hash: hexUpper(h.nextValidatorsHash),
    consensus_hash: hexUpper(h.consensusHash),
    app_hash: hexUpper(h.appHash),
    last_results_hash: hexUpper(h.lastResultsHash),
    evidence_hash: hexUpper(h.evidenceHash),
    proposer_address: hexUpper(h.proposerAddress),
  };
}

function commitSigJson(s: CommitSig): CommitSigJson {
  return {
    block_id_flag: s.blockIdFlag,
    validator_address: hexUpper(s.validatorAddress),
    timestamp: formatTime(s.timestamp),
    signature: s.signature.length === 0 ? null : base64(s.signature),
  };
}

export function commitJson(c: Commit): CommitJson {
  return { height: str(c.height), round: c.round, block_id: blockIdJson(c.blockId), signatures: c.signatures.map(commitSigJson) };
}

// ---- consensus vote sets (dump_consensus_state, consensus_state) --------------------------------

/** types.nilVoteStr: a validator's slot in a vote set without its vote */
export const NIL_VOTE = 'nil-Vote';
/** how VoteSet prints a precommit's type (the proto enum name, then the short name) */
const PRECOMMIT_TYPE = 'SIGNED_MSG_TYPE_PRECOMMIT(Precommit)';
const FINGERPRINT_BYTES = 6;

/** libs/bytes.Fingerprint, upper hex: the first 6 bytes, zero-padded */
const fingerprint = (b: Uint8Array): string => {
  const out = new Uint8Array(FINGERPRINT_BYTES);
  out.set(b.subarray(0, FINGERPRINT_BYTES));
  return hexUpper(out);
};

/** Go's %.2f (ties to even, where JS's toFixed rounds them up) */
function fixed2(x: number): string {
  const scaled = x * 100;
  const floor = Math.floor(scaled);
  if (scaled - floor !== 0.5) return x.toFixed(2);
  return ((floor % 2 === 0 ? floor : floor + 1) / 100).toFixed(2);
}

/** VoteSet.bitArrayString: `BA{4:xx_x} 30/40 = 0.75` (who voted, power voted / total power) */
function voteBitArrayString(voted: readonly boolean[], votedPower: bigint, totalPower: bigint): string {
  const bits = voted.map((v) => (v ? 'x' : '_')).join('');
  return `BA{${voted.length}:${bits}} ${votedPower}/${totalPower} = ${fixed2(Number(votedPower) / Number(totalPower))}`;
}

/**
 * Vote.String() of the precommit a commit signature stands for (Commit.GetVote: a nil vote has an
 * empty block id; ferry's votes carry no extension): `Vote{0:ABCDEF012345 7/00/SIGNED_MSG_TYPE_PRECOMMIT(Precommit) <block> <sig> 000000000000 @ <time>}`.
 */
function commitVoteString(c: Commit, index: number): string {
  const sig = c.signatures[index]!;
  if (sig.blockIdFlag === BlockIDFlag.absent) return NIL_VOTE;
  const blockHash = sig.blockIdFlag === BlockIDFlag.commit ? c.blockId.hash : new Uint8Array();
  const round = String(c.round).padStart(2, '0');
  return `Vote{${index}:${fingerprint(sig.validatorAddress)} ${c.height}/${round}/${PRECOMMIT_TYPE} ${fingerprint(blockHash)} ${fingerprint(sig.signature)} ${fingerprint(new Uint8Array())} @ ${formatTime(sig.timestamp)}}`;
}

/**
 * VoteSet.MarshalJSON (VoteSetJSON) of the precommits a commit holds, as RoundState.last_commit:
 * one vote string per validator of the committed height, the bit array, and no peer claims.
 */
export function commitVoteSetJson(c: Commit, validators: readonly Validator[]): VoteSetJson {
  const voted = validators.map((_, i) => c.signatures[i] !== undefined && c.signatures[i]!.blockIdFlag !== BlockIDFlag.absent);
  const power = validators.reduce((s, v, i) => (voted[i] ? s + v.votingPower : s), 0n);
  const total = validators.reduce((s, v) => s + v.votingPower, 0n);
  return {
    votes: validators.map((_, i) => (voted[i] ? commitVoteString(c, i) : NIL_VOTE)),
    votes_bit_array: voteBitArrayString(voted, power, total),
    peer_maj_23s: {},
  };
}

/** HeightVoteSet.MarshalJSON at the start of a height: round 0, no prevote or precommit yet. */
export function emptyHeightVoteSetJson(validators: readonly Validator[]): RoundVoteSetJson[] {
  const none = validators.map(() => false);
  const bits = voteBitArrayString(none, 0n, validators.reduce((s, v) => s + v.votingPower, 0n));
  const nil = validators.map(() => NIL_VOTE);
  return [{ round: 0, prevotes: nil, prevotes_bit_array: bits, precommits: nil, precommits_bit_array: bits }];
}

export function blockJson(b: Block): BlockJson {
  return {
    header: headerJson(b.header),
    data: { txs: b.data.txs.map(base64) },
    evidence: { evidence: [] },
    last_commit: commitJson(b.lastCommit),
  };
}

/** ResultBlock: `{block_id, block}` */
export function resultBlockJson(rec: CometBlockRecord | undefined): ResultBlockJson {
  if (!rec) return { block_id: ZERO_BLOCK_ID, block: null };
  return { block_id: blockIdJson(rec.blockId), block: blockJson(rec.block) };
}

/** types.BlockMeta */
export function blockMetaJson(rec: CometBlockRecord): BlockMetaJson {
  return { block_id: blockIdJson(rec.blockId), block_size: str(rec.size), header: headerJson(rec.block.header), num_txs: str(rec.block.data.txs.length) };
}

export function pubKeyJson(pubKey: Uint8Array): PubKeyJson {
  return { type: PUBKEY_TYPE_ED25519, value: base64(pubKey) };
}

/**
 * types.Validator. ferry does not run CometBFT's proposer rotation (it proposes every block), so
 * proposer_priority is reported as 0, which is what a one-validator set has.
 */
export function validatorJson(v: Validator): ValidatorJson {
  return { address: hexUpper(v.address), pub_key: pubKeyJson(v.pubKey), voting_power: str(v.votingPower), proposer_priority: '0' };
}

/** abci.AbciEventAttribute (jsonpb: every field present) */
function attributeJson(a: AbciEventAttribute): EventAttributeJson {
  return { key: a.key, value: a.value, index: a.index };
}

/** abci.Event inside a jsonpb message: type and attributes always present */
function pbEventJson(e: AbciEvent): PbEventJson {
  return { type: e.type, attributes: e.attributes.map(attributeJson) };
}

/** abci.Event under libs/json: `type` and `attributes` omitted when empty */
export function eventJson(e: AbciEvent): EventJson {
  const out: EventJson = {};
  if (e.type !== '') out.type = e.type;
  if (e.attributes.length > 0) out.attributes = e.attributes.map(attributeJson);
  return out;
}

/** abci.ExecTxResult (jsonpb) */
export function execTxResultJson(r: ExecTxResult): ExecTxResultJson {
  return {
    code: r.code,
    data: pbBytes(r.data),
    log: r.log,
    info: r.info,
    gas_wanted: str(r.gasWanted),
    gas_used: str(r.gasUsed),
    events: r.events.map(pbEventJson),
    codespace: r.codespace,
  };
}

/** abci.ResponseCheckTx (jsonpb) */
export const checkTxJson: (r: CheckTxResult) => ExecTxResultJson = execTxResultJson;

/** the ExecTxResult{} of a tx that never executed */
export const EMPTY_EXEC_TX_RESULT: ExecTxResult = Object.freeze({
  code: 0,
  data: new Uint8Array(),
  log: '',
  info: '',
  gasWanted: 0n,
  gasUsed: 0n,
  events: [],
  codespace: '',
});

/** abci.ValidatorUpdate under libs/json: the key is a proto oneof */
function validatorUpdateJson(u: ValidatorUpdate): ValidatorUpdateJson {
  return { pub_key: { Sum: { type: PROTO_PUBKEY_ED25519, value: { ed25519: base64(u.pubKey) } } }, power: str(u.power) };
}

/** ResultBlockResults */
export function blockResultsJson(height: bigint, r: FinalizeBlockResponse): BlockResultsJson {
  const updates = r.validatorUpdates ?? [];
  return {
    height: str(height),
    txs_results: r.txResults.length === 0 ? null : r.txResults.map(execTxResultJson),
    finalize_block_events: r.events.length === 0 ? null : r.events.map(eventJson),
    validator_updates: updates.length === 0 ? null : updates.map(validatorUpdateJson),
    consensus_param_updates: null,
    app_hash: base64(r.appHash),
  };
}

/** abci.ResponseFinalizeBlock under libs/json (NewBlock event): omitempty fields dropped */
export function finalizeBlockJson(r: FinalizeBlockResponse): FinalizeBlockJson {
  const updates = r.validatorUpdates ?? [];
  return {
    ...(r.events.length > 0 ? { events: r.events.map(eventJson) } : {}),
    ...(r.txResults.length > 0 ? { tx_results: r.txResults.map(execTxResultJson) } : {}),
    validator_updates: updates.length === 0 ? null : updates.map(validatorUpdateJson),
    ...(r.appHash.length > 0 ? { app_hash: base64(r.appHash) } : {}),
  };
}

/** types.TxProof; `aunts` is written even when empty (CosmJS requires the array) */
function txProofJson(p: TxProof): TxProofJson {
  return {
    root_hash: hexUpper(p.rootHash),
    data: base64(p.data),
    proof: { total: str(p.proof.total), index: str(p.proof.index), leaf_hash: base64(p.proof.leafHash), aunts: p.proof.aunts.map(base64) },
  };
}

/** ResultTx */
export function resultTxJson(t: TxRecord, proof: TxProof | undefined): ResultTxJson {
  const out: ResultTxJson = {
    hash: hexUpper(t.hash),
    height: str(t.height),
    index: t.index,
    tx_result: execTxResultJson(t.result),
    tx: base64(t.tx),
  };
  if (proof) out.proof = txProofJson(proof);
  return out;
}

/** abci.TxResult under libs/json (Tx event): `index` omitted when 0 */
export function txResultEventJson(height: bigint, index: number, tx: Uint8Array, result: ExecTxResult): TxResultEventJson {
  return { height: str(height), ...(index !== 0 ? { index } : {}), tx: base64(tx), result: execTxResultJson(result) };
}

/** abci.ResponseInfo under libs/json: zero fields omitted */
export function infoJson(r: InfoResponse): InfoJson {
  const out: InfoJson = {};
  if (r.data !== '') out.data = r.data;
  if (r.version !== '') out.version = r.version;
  if (r.appVersion !== 0n) out.app_version = str(r.appVersion);
  if (r.lastBlockHeight !== 0n) out.last_block_height = str(r.lastBlockHeight);
  if (r.lastBlockAppHash.length > 0) out.last_block_app_hash = base64(r.lastBlockAppHash);
  return out;
}

/** abci.ResponseQuery (jsonpb) */
export function queryJson(r: AbciQueryResponse): QueryJson {
  return {
    code: r.code,
    log: r.log,
    info: r.info,
    index: str(r.index),
    key: pbBytes(r.key),
    value: pbBytes(r.value),
    proofOps: r.proofOps === undefined ? null : { ops: r.proofOps.map((o) => ({ type: o.type, key: pbBytes(o.key), data: pbBytes(o.data) })) },
    height: str(r.height),
    codespace: r.codespace,
  };
}

function voteJson(v: VoteEventData): VoteJson {
  return {
    type: v.type,
    height: str(v.height),
    round: v.round,
    block_id: blockIdJson(v.blockId),
    timestamp: formatTime(v.timestamp),
    validator_address: hexUpper(v.validatorAddress),
    validator_index: v.validatorIndex,
    signature: base64(v.signature),
    extension: null,
    extension_signature: null,
  };
}

/** The `data` of a consensus event: `{type: "tendermint/event/…", value}` (types/events.go). */
export function roundStepData(e: RoundStepEvent): EventDataJson {
  const rs = { height: str(e.height), round: e.round, step: e.step };
  switch (e.type) {
    case 'NewRound':
      return {
        type: 'tendermint/event/NewRound',
        value: { ...rs, proposer: { address: hexUpper(e.proposer!.address), index: e.proposer!.index } },
      };
    case 'CompleteProposal':
      return { type: 'tendermint/event/CompleteProposal', value: { ...rs, block_id: blockIdJson(e.blockId!) } };
    case 'Vote':
      return { type: 'tendermint/event/Vote', value: { Vote: voteJson(e.vote!) } };
    default:
      return { type: 'tendermint/event/RoundState', value: rs };
  }
}

/** ms → the number a Go time.Duration holds (nanoseconds) */
export const durationNanos = (ms: number): string => (BigInt(ms) * BigInt(NANOS_PER_MS)).toString();
