/**
 * The paging of ots_searchTransactionsBefore/After (Otterscan docs/custom-jsonrpc.md): which blocks
 * a page reads from the address index and its `firstPage` / `lastPage` flags, as Anvil 1.7.1 answers
 * them (crates/anvil/src/eth/otterscan/api.rs): a page holds whole blocks — blocks are taken until
 * the page has `pageSize` txs or more; "before" reads down from the block below `blockNumber` (0: the
 * head, included), "after" up from the block above it (0: block 1). `firstPage` means the page
 * reaches the head, `lastPage` that it reaches block 1. Results are newest first in both directions
 * (Anvil orders an "after" page's txs within one block oldest first; docs/compatibility.md).
 */
import type { TxPosition } from '../types/query.js';

export type SearchDirection = 'before' | 'after';

/** the heights a page reads, in the order it reads them */
export interface SearchRange {
  lo: bigint;
  hi: bigint;
  desc: boolean;
}

export function searchRange(dir: SearchDirection, blockNumber: bigint, best: bigint): SearchRange {
  if (dir === 'before') return { lo: 1n, hi: blockNumber === 0n ? best : blockNumber - 1n, desc: true };
  return { lo: blockNumber === 0n ? 1n : blockNumber + 1n, hi: best, desc: false };
}

/** the flags of a page whose index rows (in read order, whole blocks) are `rows` */
export function pageFlags(dir: SearchDirection, r: SearchRange, best: bigint, rows: readonly TxPosition[], pageSize: number): { firstPage: boolean; lastPage: boolean } {
  const filled = rows.length >= pageSize;
  // the block the page was filled in (the read stops before the next one)
  const end = filled ? rows[rows.length - 1]!.height : undefined;
  const reads = r.lo <= r.hi;
  if (dir === 'before') {
    return { firstPage: r.hi >= best, lastPage: reads && (end === undefined || end === r.lo) };
  }
  return { firstPage: r.lo >= best || (reads && (end === undefined || end === r.hi)), lastPage: reads && r.lo === 1n };
}

/** newest first: by block, then by index in the block */
export function newestFirst(rows: readonly TxPosition[]): TxPosition[] {
  return [...rows].sort((a, b) => (a.height === b.height ? b.index - a.index : a.height > b.height ? -1 : 1));
}
