/**
 * The stored form of a tx's ExecTxResult: the `comet_txs.result` column (store/eventindex.ts) and each
 * tx result inside a block's CometBFT record (store/cometcodec.ts), the same bytes for both, made once per
 * result object. Its own layout (store/bytelayout.ts), as the block and the record have: V8's serializer
 * (lib/serial.ts) called back into JavaScript for the result's data and each event and cost the chain
 * thread more than the rest of the record (docs/benchmarks.md "Tx results' own layout").
 *
 * Rows of older homes hold V8 serializer bytes (first byte 0xFF) and are read by that codec. A value
 * that is not exactly an ExecTxResult (other keys, other types: the index is generic over its results)
 * is still written by V8's serializer, so every value reads back as it was written.
 *
 * Layout: u8 RESULT_FORMAT, u8 flags (FLAG.eventsFirst: the object's `events` key came before
 * `codespace`, as in chain/abcievents.ts failedTxResult, so the keys come back in the order written),
 * uvarint code, blob data, str log, str info, sbig gasWanted, sbig gasUsed, str codespace, uvarint event
 * count, each str type, uvarint attribute count, each str key, str value, u8 index.
 */
import { decodeValue, encodeValue } from '../lib/serial.js';
import type { AbciEvent, ExecTxResult } from '../types/cometbft.js';
import { LayoutWriter, layoutReader, type LayoutReader } from './bytelayout.js';

/** The first byte of a tx result in this layout (V8's serializer output begins with 0xFF). */
export const RESULT_FORMAT = 1;

const FLAG = { eventsFirst: 1 } as const;

/** the two key orders ferry's results are made with (chain/abcievents.ts) */
const KEYS = ['code', 'data', 'log', 'info', 'gasWanted', 'gasUsed', 'codespace', 'events'] as const;
const KEYS_EVENTS_FIRST = ['code', 'data', 'log', 'info', 'gasWanted', 'gasUsed', 'events', 'codespace'] as const;

/** bytes of a result besides its data and its events' strings, about (the writer's first size) */
const RESULT_BYTES = 64;
/** bytes of an event, about (an ERC-20 transfer's `tx_log` event holds a log's JSON) */
const EVENT_BYTES = 512;

function sameKeys(keys: string[], want: readonly string[]): boolean {
  if (keys.length !== want.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== want[i]) return false;
  return true;
}

/** the key order flag when `v` is exactly an ExecTxResult this layout holds, else undefined */
function layoutFlags(v: Record<string, unknown>): number | undefined {
  const keys = Object.keys(v);
  const flags = sameKeys(keys, KEYS) ? 0 : sameKeys(keys, KEYS_EVENTS_FIRST) ? FLAG.eventsFirst : undefined;
  if (flags === undefined) return undefined;
  const { code, data, log, info, gasWanted, gasUsed, codespace, events } = v;
  if (typeof code !== 'number' || !Number.isSafeInteger(code) || code < 0 || Object.is(code, -0)) return undefined;
  if (!(data instanceof Uint8Array) || typeof log !== 'string' || typeof info !== 'string' || typeof codespace !== 'string') return undefined;
  if (typeof gasWanted !== 'bigint' || typeof gasUsed !== 'bigint' || !Array.isArray(events)) return undefined;
  // a Uint8Array of another realm or subclass, or an array with holes, stays with V8's serializer
  if (Object.getPrototypeOf(data) !== Uint8Array.prototype && !Buffer.isBuffer(data)) return undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as Record<string, unknown> | undefined;
    if (e === null || typeof e !== 'object' || !sameKeys(Object.keys(e), ['type', 'attributes'])) return undefined;
    if (typeof e.type !== 'string' || !Array.isArray(e.attributes)) return undefined;
    for (let a = 0; a < e.attributes.length; a++) {
      const at = e.attributes[a] as Record<string, unknown> | undefined;
      if (at === null || typeof at !== 'object' || !sameKeys(Object.keys(at), ['key', 'value', 'index'])) return undefined;
      if (typeof at.key !== 'string' || typeof at.value !== 'string' || typeof at.index !== 'boolean') return undefined;
    }
  }
  return flags;
}

/** events (a result's, or a block's in its CometBFT record): uvarint count, each str type, uvarint attribute count, each str key, str value, u8 index */
export function writeEvents(w: LayoutWriter, events: readonly AbciEvent[]): void {
  w.uvarint(events.length);
  for (const e of events) {
    w.str(e.type);
    w.uvarint(e.attributes.length);
    for (const a of e.attributes) {
      w.str(a.key);
      w.str(a.value);
      w.u8(a.index ? 1 : 0);
    }
  }
}

export function readEvents(r: LayoutReader): AbciEvent[] {
  const events: AbciEvent[] = new Array(r.uvarint());
  for (let i = 0; i < events.length; i++) {
    const type = r.str();
    const attributes = new Array(r.uvarint());
    for (let a = 0; a < attributes.length; a++) attributes[a] = { key: r.str(), value: r.str(), index: r.u8() === 1 };
    events[i] = { type, attributes };
  }
  return events;
}

/** The stored bytes of a tx result (encodeTxResultOnce keeps them per result object). */
export function encodeTxResult(v: object): Buffer {
  const flags = layoutFlags(v as Record<string, unknown>);
  if (flags === undefined) return encodeValue(v);
  const r = v as ExecTxResult;
  const w = new LayoutWriter(RESULT_BYTES + r.data.length + r.log.length + EVENT_BYTES * r.events.length);
  w.u8(RESULT_FORMAT);
  w.u8(flags);
  w.uvarint(r.code);
  w.blob(r.data);
  w.str(r.log);
  w.str(r.info);
  w.sbig(r.gasWanted);
  w.sbig(r.gasUsed);
  w.str(r.codespace);
  writeEvents(w, r.events);
  return w.finish();
}

/**
 * The stored bytes of a tx result, made once per result object: the block's record and the event
 * index's row of the tx are written in the same store transaction from the same objects, which are not
 * changed once FinalizeBlock has answered.
 */
const encoded = new WeakMap<object, Buffer>();
export function encodeTxResultOnce(result: object): Buffer {
  let bytes = encoded.get(result);
  if (bytes === undefined) {
    bytes = encodeTxResult(result);
    encoded.set(result, bytes);
  }
  return bytes;
}

/** A stored tx result, in either form (this layout, or V8's serializer of older rows and other values). */
export function decodeTxResult<R = ExecTxResult>(bytes: Uint8Array): R {
  const r = layoutReader(bytes, RESULT_FORMAT, 'a stored tx result');
  if (r === undefined) return decodeValue<R>(bytes);
  const flags = r.u8();
  const code = r.uvarint();
  const data = r.blob();
  const log = r.str();
  const info = r.str();
  const gasWanted = r.sbig();
  const gasUsed = r.sbig();
  const codespace = r.str();
  const events = readEvents(r);
  r.end();
  const result: ExecTxResult =
    flags & FLAG.eventsFirst ? { code, data, log, info, gasWanted, gasUsed, events, codespace } : { code, data, log, info, gasWanted, gasUsed, codespace, events };
  return result as R;
}
