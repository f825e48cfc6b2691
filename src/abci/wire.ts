/**
 * ABCI 2.0 (CometBFT v0.38) socket messages: decodes `tendermint.abci.Request` and encodes
 * `tendermint.abci.Response` with the project's protobuf wire format (src/lib/protobuf.ts). Field
 * numbers follow cometbft v0.38 `proto/tendermint/abci/types.proto`; fields ferry does not use
 * (consensus params, commit info, misbehavior) are skipped on decode.
 */
import { ProtoDecodeError, ProtoWriter, readFields, uvarint, type ProtoField } from '../lib/protobuf.js';
import type { AbciEvent, AbciQueryRequest, AbciQueryResponse, ExecTxResult, ValidatorUpdate } from '../types/cometbft.js';
import type { ApplyChunkResult, OfferResult, SnapshotInfo } from '../types/abci.js';

/** The `Request` oneof, as ferry needs it. */
export type AbciRequest =
  | { kind: 'echo'; message: string }
  | { kind: 'flush' }
  | { kind: 'info' }
  | { kind: 'initChain'; timeMs: number; chainId: string; validators: ValidatorUpdate[]; appStateBytes: Uint8Array; initialHeight: bigint }
  | ({ kind: 'query' } & AbciQueryRequest)
  | { kind: 'checkTx'; tx: Uint8Array; recheck: boolean }
  | { kind: 'commit' }
  | { kind: 'listSnapshots' }
  | { kind: 'offerSnapshot'; snapshot: SnapshotInfo; appHash: Uint8Array }
  | { kind: 'loadSnapshotChunk'; height: bigint; format: number; chunk: number }
  | { kind: 'applySnapshotChunk'; index: number; chunk: Uint8Array; sender: string }
  | { kind: 'prepareProposal'; maxTxBytes: bigint; txs: Uint8Array[]; height: bigint; timeMs: number }
  | { kind: 'processProposal'; txs: Uint8Array[]; hash: Uint8Array; height: bigint; timeMs: number }
  | { kind: 'extendVote'; height: bigint }
  | { kind: 'verifyVoteExtension'; height: bigint }
  | { kind: 'finalizeBlock'; txs: Uint8Array[]; hash: Uint8Array; height: bigint; timeMs: number; proposerAddress: Uint8Array }
  // CometBFT v0.39's application-side mempool (`[mempool] type = "app"`)
  | { kind: 'insertTx'; tx: Uint8Array }
  | { kind: 'reapTxs'; maxBytes: bigint; maxGas: bigint };

export type AbciResponse =
  | { kind: 'exception'; error: string }
  | { kind: 'echo'; message: string }
  | { kind: 'flush' }
  | { kind: 'info'; data: string; version: string; appVersion: bigint; lastBlockHeight: bigint; lastBlockAppHash: Uint8Array }
  | { kind: 'initChain'; appHash: Uint8Array }
  | ({ kind: 'query' } & AbciQueryResponse)
  | { kind: 'checkTx'; code: number; data: Uint8Array; log: string; gasWanted: bigint; gasUsed: bigint; events: AbciEvent[]; codespace: string }
  | { kind: 'commit'; retainHeight: bigint }
  | { kind: 'listSnapshots'; snapshots?: SnapshotInfo[] }
  | { kind: 'offerSnapshot'; result: number }
  | { kind: 'loadSnapshotChunk'; chunk?: Uint8Array }
  | { kind: 'applySnapshotChunk'; result: number; refetchChunks?: number[]; rejectSenders?: string[] }
  | { kind: 'prepareProposal'; txs: Uint8Array[] }
  | { kind: 'processProposal'; accept: boolean }
  | { kind: 'extendVote' }
  | { kind: 'verifyVoteExtension'; accept: boolean }
  | { kind: 'finalizeBlock'; events: AbciEvent[]; txResults: ExecTxResult[]; validatorUpdates: ValidatorUpdate[]; appHash: Uint8Array }
  | { kind: 'insertTx'; code: number }
  | { kind: 'reapTxs'; txs: Uint8Array[] };

/** `ResponseOfferSnapshot.Result` values (cometbft v0.38 proto/tendermint/abci/types.proto) */
export const OFFER_SNAPSHOT_RESULT: Readonly<Record<OfferResult, number>> = { accept: 1, abort: 2, reject: 3, rejectFormat: 4, rejectSender: 5 };
/** `ResponseApplySnapshotChunk.Result` values */
export const APPLY_SNAPSHOT_CHUNK_RESULT: Readonly<Record<ApplyChunkResult['result'], number>> = { accept: 1, abort: 2, retry: 3, retrySnapshot: 4, rejectSnapshot: 5 };
const PROPOSAL_ACCEPT = 1;
const PROPOSAL_REJECT = 2;

export class AbciDecodeError extends Error {}

export const REQUEST_KINDS: Readonly<Record<number, AbciRequest['kind']>> = {
  1: 'echo', 2: 'flush', 3: 'info', 5: 'initChain', 6: 'query', 8: 'checkTx', 11: 'commit',
  12: 'listSnapshots', 13: 'offerSnapshot', 14: 'loadSnapshotChunk', 15: 'applySnapshotChunk',
  16: 'prepareProposal', 17: 'processProposal', 18: 'extendVote', 19: 'verifyVoteExtension', 20: 'finalizeBlock',
  // v0.39 (cometbft proto/tendermint/abci/types.proto)
  21: 'insertTx', 22: 'reapTxs',
};

const RESPONSE_FIELDS: Readonly<Record<AbciResponse['kind'], number>> = {
  exception: 1, echo: 2, flush: 3, info: 4, initChain: 6, query: 7, checkTx: 9, commit: 12,
  listSnapshots: 13, offerSnapshot: 14, loadSnapshotChunk: 15, applySnapshotChunk: 16,
  prepareProposal: 17, processProposal: 18, extendVote: 19, verifyVoteExtension: 20, finalizeBlock: 21,
  insertTx: 22, reapTxs: 23,
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

function fields(buf: Uint8Array): ProtoField[] {
  try {
    return readFields(buf);
  } catch (e) {
    if (e instanceof ProtoDecodeError) throw new AbciDecodeError(e.message);
    throw e;
  }
}

const int64 = (f: ProtoField): bigint => BigInt.asIntN(64, f.int ?? 0n);
const bytesOf = (f: ProtoField): Uint8Array => f.bytes ?? new Uint8Array();
const text = (f: ProtoField): string => {
  try {
    return utf8.decode(bytesOf(f));
  } catch {
    throw new AbciDecodeError(`field ${f.field}: invalid UTF-8`);
  }
};

/** google.protobuf.Timestamp → unix milliseconds (truncated). */
function timestampMs(buf: Uint8Array): number {
  let seconds = 0n;
  let nanos = 0n;
  for (const f of fields(buf)) {
    if (f.field === 1) seconds = int64(f);
    else if (f.field === 2) nanos = BigInt.asIntN(32, f.int ?? 0n);
  }
  return Number(seconds) * 1000 + Math.floor(Number(nanos) / 1_000_000);
}

const uint32 = (f: ProtoField): number => Number(BigInt.asUintN(32, f.int ?? 0n));

/** abci.Snapshot: height (uint64), format (uint32), chunks (uint32), hash, metadata */
function snapshotOf(buf: Uint8Array): SnapshotInfo {
  const s: SnapshotInfo = { height: 0n, format: 0, chunks: 0, hash: new Uint8Array(), metadata: new Uint8Array() };
  for (const f of fields(buf)) {
    if (f.field === 1) s.height = BigInt.asUintN(64, f.int ?? 0n);
    else if (f.field === 2) s.format = uint32(f);
    else if (f.field === 3) s.chunks = uint32(f);
    else if (f.field === 4) s.hash = bytesOf(f);
    else if (f.field === 5) s.metadata = bytesOf(f);
  }
  return s;
}

function snapshotBytes(s: SnapshotInfo): Uint8Array {
  return new ProtoWriter().uint(1, s.height).uint(2, s.format).uint(3, s.chunks).bytes(4, s.hash).bytes(5, s.metadata).finish();
}

function validatorUpdate(buf: Uint8Array): ValidatorUpdate {
  let pubKey: Uint8Array = new Uint8Array();
  let power = 0n;
  for (const f of fields(buf)) {
    if (f.field === 1) {
      for (const k of fields(bytesOf(f))) {
        if (k.field === 1) pubKey = bytesOf(k);
        else throw new AbciDecodeError('validator update: only ed25519 keys are supported');
      }
    } else if (f.field === 2) power = int64(f);
  }
  return { pubKey, power };
}

/** Decodes one `Request` message (without its length prefix). */
export function decodeRequest(buf: Uint8Array): AbciRequest {
  const top = fields(buf);
  if (top.length !== 1 || top[0]!.wire !== 2) throw new AbciDecodeError('Request: want exactly one oneof field');
  const which = top[0]!;
  const kind = REQUEST_KINDS[which.field];
  if (!kind) throw new AbciDecodeError(`Request: unknown field ${which.field}`);
  const fs = fields(bytesOf(which));
  const get = (n: number): ProtoField | undefined => fs.filter((f) => f.field === n).at(-1);
  const all = (n: number): Uint8Array[] => fs.filter((f) => f.field === n).map(bytesOf);
  const b = (n: number) => { const f = get(n); return f ? bytesOf(f) : new Uint8Array(); };
  const i64 = (n: number) => { const f = get(n); return f ? int64(f) : 0n; };
  const time = (n: number) => { const f = get(n); return f ? timestampMs(bytesOf(f)) : 0; };
  const str = (n: number) => { const f = get(n); return f ? text(f) : ''; };
  switch (kind) {
    case 'echo':
      return { kind, message: str(1) };
    case 'initChain':
      return { kind, timeMs: time(1), chainId: str(2), validators: all(4).map(validatorUpdate), appStateBytes: b(5), initialHeight: i64(6) };
    case 'query':
      return { kind, data: b(1), path: str(2), height: i64(3), prove: (get(4)?.int ?? 0n) !== 0n };
    case 'checkTx':
      return { kind, tx: b(1), recheck: (get(2)?.int ?? 0n) === 1n };
    case 'prepareProposal':
      return { kind, maxTxBytes: i64(1), txs: all(2), height: i64(5), timeMs: time(6) };
    case 'processProposal':
      return { kind, txs: all(1), hash: b(4), height: i64(5), timeMs: time(6) };
    case 'extendVote':
      return { kind, height: i64(2) };
    case 'verifyVoteExtension':
      return { kind, height: i64(3) };
    case 'finalizeBlock':
      return { kind, txs: all(1), hash: b(4), height: i64(5), timeMs: time(6), proposerAddress: b(8) };
    case 'insertTx':
      return { kind, tx: b(1) };
    case 'offerSnapshot': {
      const f = get(1);
      return { kind, snapshot: snapshotOf(f ? bytesOf(f) : new Uint8Array()), appHash: b(2) };
    }
    case 'loadSnapshotChunk':
      return { kind, height: BigInt.asUintN(64, get(1)?.int ?? 0n), format: Number(BigInt.asUintN(32, get(2)?.int ?? 0n)), chunk: Number(BigInt.asUintN(32, get(3)?.int ?? 0n)) };
    case 'applySnapshotChunk':
      return { kind, index: Number(BigInt.asUintN(32, get(1)?.int ?? 0n)), chunk: b(2), sender: str(3) };
    case 'reapTxs':
      return { kind, maxBytes: BigInt.asUintN(64, get(1)?.int ?? 0n), maxGas: BigInt.asUintN(64, get(2)?.int ?? 0n) };
    default:
      return { kind } as AbciRequest;
  }
}

function eventBytes(e: AbciEvent): Uint8Array {
  const w = new ProtoWriter().string(1, e.type);
  for (const a of e.attributes) {
    w.lengthDelimited(2, new ProtoWriter().string(1, a.key).string(2, a.value).uint(3, a.index ? 1 : 0).finish());
  }
  return w.finish();
}

function validatorUpdateBytes(v: ValidatorUpdate): Uint8Array {
  return new ProtoWriter().lengthDelimited(1, new ProtoWriter().bytes(1, v.pubKey).finish()).int(2, v.power).finish();
}

function execTxResultBytes(r: ExecTxResult): Uint8Array {
  const w = new ProtoWriter().uint(1, r.code).bytes(2, r.data).string(3, r.log).string(4, r.info).int(5, r.gasWanted).int(6, r.gasUsed);
  for (const e of r.events) w.lengthDelimited(7, eventBytes(e));
  return w.string(8, r.codespace).finish();
}

/** The body of a `Response` (the message inside its oneof): what gRPC transport sends. */
export function responseBody(r: AbciResponse): Uint8Array {
  const w = new ProtoWriter();
  switch (r.kind) {
    case 'exception':
      return w.string(1, r.error).finish();
    case 'echo':
      return w.string(1, r.message).finish();
    case 'info':
      return w.string(1, r.data).string(2, r.version).uint(3, r.appVersion).int(4, r.lastBlockHeight).bytes(5, r.lastBlockAppHash).finish();
    case 'initChain':
      return w.bytes(3, r.appHash).finish();
    case 'query': {
      w.uint(1, r.code).string(3, r.log).string(4, r.info).int(5, r.index).bytes(6, r.key ?? new Uint8Array()).bytes(7, r.value ?? new Uint8Array());
      if (r.proofOps) {
        const ops = new ProtoWriter();
        for (const op of r.proofOps) ops.lengthDelimited(1, new ProtoWriter().string(1, op.type).bytes(2, op.key).bytes(3, op.data).finish());
        w.lengthDelimited(8, ops.finish());
      }
      return w.int(9, r.height).string(10, r.codespace).finish();
    }
    case 'checkTx': {
      w.uint(1, r.code).bytes(2, r.data).string(3, r.log).int(5, r.gasWanted).int(6, r.gasUsed);
      for (const e of r.events) w.lengthDelimited(7, eventBytes(e));
      return w.string(8, r.codespace).finish();
    }
    case 'commit':
      return w.int(3, r.retainHeight).finish();
    case 'listSnapshots':
      for (const snap of r.snapshots ?? []) w.lengthDelimited(1, snapshotBytes(snap));
      return w.finish();
    case 'offerSnapshot':
      return w.uint(1, r.result).finish();
    case 'loadSnapshotChunk':
      return w.bytes(1, r.chunk ?? new Uint8Array()).finish();
    case 'applySnapshotChunk': {
      w.uint(1, r.result);
      // refetch_chunks: a packed repeated uint32 (proto3's default)
      const refetch = r.refetchChunks ?? [];
      if (refetch.length > 0) w.lengthDelimited(2, new Uint8Array(Buffer.concat(refetch.map((i) => uvarint(i)))));
      for (const s of r.rejectSenders ?? []) w.string(3, s);
      return w.finish();
    }
    case 'prepareProposal':
      for (const tx of r.txs) w.lengthDelimited(1, tx);
      return w.finish();
    case 'processProposal':
    case 'verifyVoteExtension':
      return w.uint(1, r.accept ? PROPOSAL_ACCEPT : PROPOSAL_REJECT).finish();
    case 'finalizeBlock':
      for (const e of r.events) w.lengthDelimited(1, eventBytes(e));
      for (const t of r.txResults) w.lengthDelimited(2, execTxResultBytes(t));
      for (const v of r.validatorUpdates) w.lengthDelimited(3, validatorUpdateBytes(v));
      return w.bytes(5, r.appHash).finish();
    case 'insertTx':
      return w.uint(1, r.code).finish();
    case 'reapTxs':
      for (const tx of r.txs) w.lengthDelimited(1, tx);
      return w.finish();
    default:
      return w.finish();
  }
}

/** Encodes one `Response` message (without its length prefix). */
export function encodeResponse(r: AbciResponse): Uint8Array {
  return new ProtoWriter().lengthDelimited(RESPONSE_FIELDS[r.kind], responseBody(r)).finish();
}

/** Bytes the txs take inside a block's `Data` message (CometBFT's `ComputeProtoSizeForTxs`). */
export function protoSizeOfTxs(txs: readonly Uint8Array[]): number {
  let n = 0;
  for (const tx of txs) {
    let len = tx.length;
    let varint = 1;
    while (len >= 0x80) {
      len = Math.floor(len / 128);
      varint++;
    }
    n += 1 + varint + tx.length;
  }
  return n;
}
