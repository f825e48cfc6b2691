/**
 * The stored form of the CometBFT record of a height (the `comet` table, types/cometbft.ts
 * CometBlockRecord): its own layout (store/bytelayout.ts), read back as views into the row's bytes,
 * with each tx result of the FinalizeBlock results written as the bytes the event index stores for that
 * tx (`comet_txs.result`, store/eventindex.ts; their layout is store/resultcodec.ts), so a block's tx
 * results are encoded once, not twice (docs/benchmarks.md "The block's store transaction"). Records written before hold V8 serializer bytes
 * (lib/serial.ts, first byte 0xFF), with the tx results as values or as those bytes: all read the same.
 *
 * Layout: u8 COMET_FORMAT, u8 flags (FLAG: which optional fields follow); the block: its header
 * (sbig version.block, sbig version.app, str chainId, sbig height, time, blockId lastBlockId, bytes
 * lastCommitHash, dataHash, validatorsHash, nextValidatorsHash, consensusHash, appHash,
 * lastResultsHash, evidenceHash, proposerAddress), uvarint tx count and bytes per tx, uvarint evidence
 * count (always 0), commit lastCommit; blockId; commit; the results: events, uvarint tx result count
 * and bytes per result (plain bytes, not a blob: decoded at once), bytes appHash, [validator updates: uvarint count, each bytes pubKey, sbig
 * power]; uvarint size; [validators]; [nextValidators] (validators: uvarint count, each bytes address,
 * bytes pubKey, sbig votingPower). time: sbig seconds, int nanos; blockId: bytes hash, int
 * partSetHeader.total, bytes partSetHeader.hash; commit: sbig height, int round, blockId, uvarint
 * signature count, each u8 blockIdFlag, bytes validatorAddress, time, bytes signature; events: uvarint
 * count, each str type, uvarint attribute count, each str key, str value, u8 index. Every bytes field
 * is written as a blob (bytelayout.ts: it comes back a Node Buffer when it was one, as from V8's serializer).
 */
import { decodeValue } from '../lib/serial.js';
import type { BlockID, BlockIDFlag, CometBlockRecord, Commit, CommitSig, ExecTxResult, Header, Timestamp, Validator, ValidatorUpdate } from '../types/cometbft.js';
import { LayoutWriter, layoutReader, type LayoutReader } from './bytelayout.js';
import { decodeTxResult, encodeTxResultOnce, readEvents, writeEvents } from './resultcodec.js';

/** The first byte of a record in this layout (V8's serializer output begins with 0xFF). */
export const COMET_FORMAT = 1;

/** the flags byte: which optional fields follow */
const FLAG = { validatorUpdates: 1, validators: 2, nextValidators: 4 } as const;

/** bytes of a record besides its txs and their results, about (the writer's first size) */
const RECORD_BYTES = 1500;

function writeTime(w: LayoutWriter, t: Timestamp): void {
  w.sbig(t.seconds);
  w.int(t.nanos);
}

function writeBlockId(w: LayoutWriter, id: BlockID): void {
  w.blob(id.hash);
  w.int(id.partSetHeader.total);
  w.blob(id.partSetHeader.hash);
}

function writeCommit(w: LayoutWriter, c: Commit): void {
  w.sbig(c.height);
  w.int(c.round);
  writeBlockId(w, c.blockId);
  w.uvarint(c.signatures.length);
  for (const s of c.signatures) {
    w.u8(s.blockIdFlag);
    w.blob(s.validatorAddress);
    writeTime(w, s.timestamp);
    w.blob(s.signature);
  }
}

function writeHeader(w: LayoutWriter, h: Header): void {
  w.sbig(h.version.block);
  w.sbig(h.version.app);
  w.str(h.chainId);
  w.sbig(h.height);
  writeTime(w, h.time);
  writeBlockId(w, h.lastBlockId);
  for (const b of [h.lastCommitHash, h.dataHash, h.validatorsHash, h.nextValidatorsHash, h.consensusHash, h.appHash, h.lastResultsHash, h.evidenceHash, h.proposerAddress]) w.blob(b);
}

function writeValidators(w: LayoutWriter, vs: Validator[]): void {
  w.uvarint(vs.length);
  for (const v of vs) {
    w.blob(v.address);
    w.blob(v.pubKey);
    w.sbig(v.votingPower);
  }
}

export function encodeCometRecord(rec: CometBlockRecord): Buffer {
  const { block, results } = rec;
  if (block.evidence.length > 0) throw new Error('a CometBFT record with evidence has no stored form (ferry produces none)');
  const txResults = results.txResults.map(encodeTxResultOnce);
  let size = RECORD_BYTES;
  for (const tx of block.data.txs) size += tx.length + 4;
  for (const r of txResults) size += r.length + 4;
  const w = new LayoutWriter(size);
  let flags = 0;
  if (results.validatorUpdates !== undefined) flags |= FLAG.validatorUpdates;
  if (rec.validators !== undefined) flags |= FLAG.validators;
  if (rec.nextValidators !== undefined) flags |= FLAG.nextValidators;
  w.u8(COMET_FORMAT);
  w.u8(flags);
  writeHeader(w, block.header);
  w.uvarint(block.data.txs.length);
  for (const tx of block.data.txs) w.blob(tx);
  w.uvarint(0);
  writeCommit(w, block.lastCommit);
  writeBlockId(w, rec.blockId);
  writeCommit(w, rec.commit);
  writeEvents(w, results.events);
  w.uvarint(txResults.length);
  for (const r of txResults) w.bytes(r);
  w.blob(results.appHash);
  if (results.validatorUpdates !== undefined) {
    w.uvarint(results.validatorUpdates.length);
    for (const u of results.validatorUpdates) {
      w.blob(u.pubKey);
      w.sbig(u.power);
    }
  }
  w.uvarint(rec.size);
  if (rec.validators !== undefined) writeValidators(w, rec.validators);
  if (rec.nextValidators !== undefined) writeValidators(w, rec.nextValidators);
  return w.finish();
}

const readTime = (r: LayoutReader): Timestamp => ({ seconds: r.sbig(), nanos: r.int() });

const readBlockId = (r: LayoutReader): BlockID => ({ hash: r.blob(), partSetHeader: { total: r.int(), hash: r.blob() } });

function readCommit(r: LayoutReader): Commit {
  const height = r.sbig();
  const round = r.int();
  const blockId = readBlockId(r);
  const signatures: CommitSig[] = new Array(r.uvarint());
  for (let i = 0; i < signatures.length; i++) {
    signatures[i] = { blockIdFlag: r.u8() as BlockIDFlag, validatorAddress: r.blob(), timestamp: readTime(r), signature: r.blob() };
  }
  return { height, round, blockId, signatures };
}

function readHeader(r: LayoutReader): Header {
  return {
    version: { block: r.sbig(), app: r.sbig() },
    chainId: r.str(),
    height: r.sbig(),
    time: readTime(r),
    lastBlockId: readBlockId(r),
    lastCommitHash: r.blob(),
    dataHash: r.blob(),
    validatorsHash: r.blob(),
    nextValidatorsHash: r.blob(),
    consensusHash: r.blob(),
    appHash: r.blob(),
    lastResultsHash: r.blob(),
    evidenceHash: r.blob(),
    proposerAddress: r.blob(),
  };
}

function readValidators(r: LayoutReader): Validator[] {
  const vs: Validator[] = new Array(r.uvarint());
  for (let i = 0; i < vs.length; i++) vs[i] = { address: r.blob(), pubKey: r.blob(), votingPower: r.sbig() };
  return vs;
}

/** A record in the V8 serializer's form (older homes): tx results as values or as their bytes. */
function decodeV8Record(bytes: Uint8Array): CometBlockRecord {
  const rec = decodeValue<CometBlockRecord>(bytes);
  const results = rec.results.txResults as (ExecTxResult | Uint8Array)[];
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (r instanceof Uint8Array) results[i] = decodeTxResult(r);
  }
  return rec;
}

/** A stored record, in either form (this layout, or the V8 serializer's of older rows). */
export function decodeCometRecord(bytes: Uint8Array): CometBlockRecord {
  const r = layoutReader(bytes, COMET_FORMAT, 'a stored CometBFT record');
  if (r === undefined) return decodeV8Record(bytes);
  const flags = r.u8();
  const header = readHeader(r);
  const txs: Uint8Array[] = new Array(r.uvarint());
  for (let i = 0; i < txs.length; i++) txs[i] = r.blob();
  if (r.uvarint() !== 0) throw new Error('a stored CometBFT record holds evidence, which this layout does not');
  const lastCommit = readCommit(r);
  const blockId = readBlockId(r);
  const commit = readCommit(r);
  const events = readEvents(r);
  const txResults: ExecTxResult[] = new Array(r.uvarint());
  for (let i = 0; i < txResults.length; i++) txResults[i] = decodeTxResult(r.bytes());
  const appHash = r.blob();
  let validatorUpdates: ValidatorUpdate[] | undefined;
  if (flags & FLAG.validatorUpdates) {
    validatorUpdates = new Array(r.uvarint());
    for (let i = 0; i < validatorUpdates.length; i++) validatorUpdates[i] = { pubKey: r.blob(), power: r.sbig() };
  }
  const size = r.uvarint();
  const validators = flags & FLAG.validators ? readValidators(r) : undefined;
  const nextValidators = flags & FLAG.nextValidators ? readValidators(r) : undefined;
  r.end();
  // optional keys exist only on the records that had them (types/cometbft.ts)
  const rec: CometBlockRecord = {
    block: { header, data: { txs }, evidence: [], lastCommit },
    blockId,
    commit,
    results: validatorUpdates === undefined ? { events, txResults, appHash } : { events, txResults, appHash, validatorUpdates },
    size,
  };
  if (validators !== undefined) rec.validators = validators;
  if (nextValidators !== undefined) rec.nextValidators = nextValidators;
  return rec;
}
