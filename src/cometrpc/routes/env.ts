/**
 * What several route groups share (rpc/core/env.go): the height rule, paging and ordering, with
 * CometBFT's texts.
 */
import { invalidArgument, notFound } from '../../lib/errors.js';
import type { BlockStore } from '../backend.js';

export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;

/** rpc/core/env.go getHeight: `h` (default `top`) within [base, top] */
export function getHeight(blocks: BlockStore, h: bigint | undefined, top = blocks.latestHeight()): bigint {
  if (h === undefined) return top;
  if (h <= 0n) throw invalidArgument(`height must be greater than 0, but got ${h}`);
  if (h > top) throw notFound(`height ${h} must be less than or equal to the current blockchain height ${top}`);
  const base = blocks.baseHeight();
  if (h < base) throw notFound(`height ${h} is not available, lowest height is ${base}`);
  return h;
}

/** validatePerPage */
export function perPage(p: number | undefined): number {
  if (p === undefined || p < 1) return DEFAULT_PER_PAGE;
  return p > MAX_PER_PAGE ? MAX_PER_PAGE : p;
}

/** validatePage */
function validatePage(p: number | undefined, per: number, total: number): number {
  if (p === undefined) return 1;
  const pages = Math.max(1, Math.trunc((total - 1) / per) + 1);
  if (p <= 0 || p > pages) throw invalidArgument(`page should be within [1, ${pages}] range, given ${p}`);
  return p;
}

/** the slice of a page (paging as rpc/core/env.go does it) */
export function pageOf<T>(items: readonly T[], page: number | undefined, per_page: number | undefined): T[] {
  const per = perPage(per_page);
  const p = validatePage(page, per, items.length);
  const skip = (p - 1) * per;
  return items.slice(skip, skip + Math.min(per, items.length - skip));
}

/** `order_by`: '' → the route's default; +1 ascending, -1 descending */
export function orderOf(order: string, dflt: 'asc' | 'desc'): 1 | -1 {
  const o = order === '' ? dflt : order;
  if (o === 'asc') return 1;
  if (o === 'desc') return -1;
  throw invalidArgument('expected order_by to be either `asc` or `desc` or empty');
}
