/**
 * Strict RLP reading (Yellow Paper appendix B) for transaction envelopes: every prefix minimal — a byte
 * below 0x80 is its own encoding, the short forms for payloads under 56 bytes, lengths without leading
 * zeros — so that bytes read this way are the one encoding of their items, the same bytes
 * @ethereumjs/rlp's `RLP.encode` gives for them. The items are found as spans (offsets) or read as views
 * of the input (no copies), where @ethereumjs/rlp's decoder copies every byte string; anything not
 * canonical answers `undefined`, and callers then use the library's decoder and its refusals.
 */
import type { RlpItem } from './rlpwrite.js';

/** An RLP item inside a byte array: where its encoding starts, its payload's [start, stop), and whether it is a list. */
export interface RlpSpan {
  at: number;
  list: boolean;
  start: number;
  stop: number;
}

/** The item whose encoding starts at `at` and ends by `end`, or undefined when its prefix is not canonical or overruns `end`. */
export function canonicalItem(b: Uint8Array, at: number, end: number): RlpSpan | undefined {
  if (at >= end) return undefined;
  const p = b[at]!;
  if (p < 0x80) return { at, list: false, start: at, stop: at + 1 };
  const list = p >= 0xc0;
  const short = p - (list ? 0xc0 : 0x80);
  let start = at + 1;
  let len = short;
  if (short >= 56) {
    const k = short - 55;
    // a length of 56 bytes or more, written without leading zeros
    if (start + k > end || b[start] === 0) return undefined;
    len = 0;
    for (let i = 0; i < k; i++) len = len * 256 + b[start + i]!;
    if (len < 56) return undefined;
    start += k;
  } else if (!list && len === 1 && b[start]! < 0x80) {
    // a byte below 0x80 is its own encoding
    return undefined;
  }
  const stop = start + len;
  return stop > end ? undefined : { at, list, start, stop };
}

/** The items of the list payload [start, stop), each canonical down to its innermost byte string, or undefined. */
export function canonicalList(b: Uint8Array, start: number, stop: number): RlpSpan[] | undefined {
  const out: RlpSpan[] = [];
  for (let at = start; at < stop; ) {
    const it = canonicalItem(b, at, stop);
    if (it === undefined || (it.list && canonicalList(b, it.start, it.stop) === undefined)) return undefined;
    out.push(it);
    at = it.stop;
  }
  return out;
}

/** The items of the list that fills `b` from `from` to its end, as views of `b`, or undefined when it is not one canonical list. */
export function canonicalListView(b: Uint8Array, from: number): RlpItem[] | undefined {
  const outer = canonicalItem(b, from, b.length);
  if (outer === undefined || !outer.list || outer.stop !== b.length) return undefined;
  const items = canonicalList(b, outer.start, outer.stop);
  return items?.map((it) => view(b, it));
}

/** a span already found canonical, read as views */
function view(b: Uint8Array, it: RlpSpan): RlpItem {
  if (!it.list) return b.subarray(it.start, it.stop);
  return canonicalList(b, it.start, it.stop)!.map((inner) => view(b, inner));
}
