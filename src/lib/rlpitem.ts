/**
 * Where an RLP item lies (Yellow Paper appendix B), for readers of encodings this node wrote itself
 * (stored trie nodes): no copies, lengths checked against the input, non-canonical prefixes not refused
 * (evm/rlpcanonical.ts is the strict reader for what clients send).
 */

/** An RLP item's payload [start, stop) inside its input, and whether it is a list. */
export interface RlpItemSpan {
  list: boolean;
  start: number;
  stop: number;
}

/** The item whose encoding starts at `pos` and must end by `end`; throws when it overruns. */
export function rlpItemAt(enc: Uint8Array, pos: number, end: number): RlpItemSpan {
  if (pos >= end) throw new Error('invalid RLP: an item past the end of its list');
  const b = enc[pos]!;
  if (b < 0x80) return { list: false, start: pos, stop: pos + 1 };
  const list = b >= 0xc0;
  const short = b - (list ? 0xc0 : 0x80);
  let start = pos + 1;
  let len = short;
  if (short >= 56) {
    const k = short - 55;
    len = 0;
    for (let i = 0; i < k; i++) len = len * 256 + enc[start + i]!;
    start += k;
  }
  if (start + len > end) throw new Error('invalid RLP: an item longer than its input');
  return { list, start, stop: start + len };
}
