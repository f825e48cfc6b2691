/**
 * The consensus engine's read side for the RPC thread: committed blocks, commits and validator sets
 * from the block store, txs from the event index, and the kv indexer's search semantics for
 * tx_search and block_search (CometBFT state/txindex/kv and state/indexer/block/kv):
 *
 * - a `tx.hash` condition short-circuits: that tx or nothing, every other condition ignored;
 * - `tx.height` / `block.height` conditions are height filters (`=`, or a range; a range wins over
 *   `=`, as upstream's dedupHeight does);
 * - every other condition must hold within ONE event of the tx (or block): `=` compares text,
 *   `EXISTS` needs the key (`<type> EXISTS`, naming an event type, needs an event of that type with
 *   an indexed attribute: how subscriptions match it; upstream's kv indexer finds nothing), `CONTAINS` a substring, ranges compare numbers (values that are not
 *   whole numbers never match; DATE/TIME ranges match nothing, as upstream);
 * - only attributes marked `index:true` are searchable.
 */
import { invalidArgument } from '../lib/errors.js';
import { decodeGoHex } from '../lib/hex.js';
import {
  Token,
  compareDecimal,
  indexedNumber,
  literalNumber,
  type Condition,
  type Decimal,
  type Query,
} from '../eventquery/index.js';
import { EventIndex, SEARCH_ROW_LIMIT, SearchTooBroadError, type HeightBounds, type IndexedTx, type TxPos } from '../store/eventindex.js';
import type { Store } from '../store/store.js';
import type { ExecTxResult } from './abci.js';
import { blockProto, sortValidators, txProof, type TxProof, type Validator } from './cometbft/index.js';
import type { CometBlockRecord } from './engine.js';
import type { EvmTx } from '../types/chain.js';

export const TX_HASH_KEY = 'tx.hash';
export const TX_HEIGHT_KEY = 'tx.height';
export const BLOCK_HEIGHT_KEY = 'block.height';
/** Bound of the native mempool mirror (the pool itself is bounded; this guards against lost removals). */
export const MEMPOOL_MIRROR_MAX = 50_000;

interface Bound {
  value: Decimal | undefined;
  inclusive: boolean;
}
interface RangeSpec {
  lower?: Bound;
  upper?: Bound;
}

function addToRange(r: RangeSpec, c: Condition): void {
  const value = c.arg?.type === Token.number ? literalNumber(c.arg.text) : undefined;
  if (c.op === Token.gt || c.op === Token.geq) r.lower = { value, inclusive: c.op === Token.geq };
  else r.upper = { value, inclusive: c.op === Token.leq };
}

function isRange(c: Condition): boolean {
  return c.op === Token.lt || c.op === Token.leq || c.op === Token.gt || c.op === Token.geq;
}

function inRange(r: RangeSpec, v: Decimal): boolean {
  if (r.lower) {
    const c = compareDecimal(v, r.lower.value!);
    if (c < 0 || (c === 0 && !r.lower.inclusive)) return false;
  }
  if (r.upper) {
    const c = compareDecimal(v, r.upper.value!);
    if (c > 0 || (c === 0 && !r.upper.inclusive)) return false;
  }
  return true;
}

const TEN = 10n;
function floorDiv(d: Decimal): bigint {
  const p = TEN ** BigInt(d.scale);
  const q = d.int / p;
  return d.int < 0n && q * p !== d.int ? q - 1n : q;
}

/** Integer height bounds of a numeric range; undefined when a bound is not a number (nothing matches). */
function heightBounds(r: RangeSpec): HeightBounds | undefined {
  const out: HeightBounds = {};
  if (r.lower) {
    if (!r.lower.value) return undefined;
    const f = floorDiv(r.lower.value);
    const exact = f * TEN ** BigInt(r.lower.value.scale) === r.lower.value.int;
    out.min = Number(exact ? (r.lower.inclusive ? f : f + 1n) : f + 1n);
  }
  if (r.upper) {
    if (!r.upper.value) return undefined;
    const f = floorDiv(r.upper.value);
    const exact = f * TEN ** BigInt(r.upper.value.scale) === r.upper.value.int;
    out.max = Number(exact && !r.upper.inclusive ? f - 1n : f);
  }
  return out;
}

/** The height conditions of a query and the rest: `=` (unless a range exists), or the range. */
function splitHeight(conditions: readonly Condition[], key: string): { bounds: HeightBounds | undefined; eq: number | undefined; rest: Condition[] } {
  const range: RangeSpec = {};
  let hasRange = false;
  let eq: number | undefined;
  const rest: Condition[] = [];
  for (const c of conditions) {
    if (c.tag !== key) {
      rest.push(c);
      continue;
    }
    if (isRange(c)) {
      hasRange = true;
      addToRange(range, c);
    } else if (c.op === Token.eq && eq === undefined && c.arg) {
      const n = literalNumber(c.arg.text);
      if (n) eq = Number(floorDiv(n));
    }
  }
  if (hasRange) return { bounds: heightBounds(range), eq: undefined, rest };
  return { bounds: eq === undefined ? {} : { min: eq, max: eq }, eq, rest };
}

/** Attribute conditions grouped as upstream evaluates them: ranges merged per tag. */
type Group = { kind: 'cond'; c: Condition } | { kind: 'range'; tag: string; range: RangeSpec };

function groups(conditions: readonly Condition[]): Group[] {
  const out: Group[] = [];
  const ranges = new Map<string, RangeSpec>();
  for (const c of conditions) {
    if (isRange(c)) {
      let r = ranges.get(c.tag);
      if (!r) {
        r = {};
        ranges.set(c.tag, r);
        out.push({ kind: 'range', tag: c.tag, range: r });
      }
      addToRange(r, c);
    } else out.push({ kind: 'cond', c });
  }
  return out;
}

interface EventRow {
  seq: number;
  value: string;
}

/** Index rows of `key` (= `value` when given; with `withType`, also of every attribute of event type `key`). */
type EventFetch<R> = (key: string, value: string | undefined, withType?: boolean) => R[];

/** Rows of one group, filtered: the keys (position + event ordinal) that satisfy it. */
function groupKeys<R extends EventRow>(g: Group, fetch: EventFetch<R>, keyOf: (r: R) => string): Set<string> {
  const out = new Set<string>();
  if (g.kind === 'range') {
    if ((g.range.lower && !g.range.lower.value) || (g.range.upper && !g.range.upper.value)) return out;
    for (const r of fetch(g.tag, undefined)) {
      const v = indexedNumber(r.value);
      if (v && inRange(g.range, v)) out.add(keyOf(r));
    }
    return out;
  }
  const c = g.c;
  // `<type> EXISTS` asks for an event of that type: any of its attributes will do (as pubsub matches)
  const rows = c.op === Token.eq ? fetch(c.tag, c.arg!.text) : fetch(c.tag, undefined, c.op === Token.exists);
  for (const r of rows) {
    if (c.op === Token.contains && !r.value.includes(c.arg!.text)) continue;
    out.add(keyOf(r));
  }
  return out;
}

/** Intersection of the groups' key sets (stops early once empty). */
function intersect<R extends EventRow>(gs: Group[], fetch: EventFetch<R>, keyOf: (r: R) => string): Set<string> {
  let acc: Set<string> | undefined;
  for (const g of gs) {
    const keys = groupKeys(g, fetch, keyOf);
    if (!acc) acc = keys;
    else for (const k of acc) if (!keys.has(k)) acc.delete(k);
    if (acc.size === 0) break;
  }
  return acc ?? new Set();
}

function clamp(b: HeightBounds, base: number, latest: number): HeightBounds {
  return { min: Math.max(b.min ?? base, base), max: Math.min(b.max ?? latest, latest) };
}

export interface ReaderOptions {
  /** the genesis validator set (records of older versions carry none) */
  genesisValidators: readonly Validator[];
  initialHeight: bigint;
}

export class ConsensusReader {
  private readonly index: EventIndex;
  private readonly genesisValidators: Validator[];

  constructor(
    private readonly store: Store,
    private readonly opts: ReaderOptions,
  ) {
    this.index = new EventIndex(store.db);
    this.genesisValidators = sortValidators(opts.genesisValidators);
  }

  /** latest committed height (initial height - 1 before the first block) */
  latestHeight(): bigint {
    return this.store.comet.latestHeight() ?? this.opts.initialHeight - 1n;
  }

  /** lowest stored height: the initial height, or the lowest record min-retain-blocks left (store/prune.ts) */
  baseHeight(): bigint {
    const low = this.store.comet.lowestHeight();
    return low !== undefined && low > this.opts.initialHeight ? low : this.opts.initialHeight;
  }

  block(height: bigint): CometBlockRecord | undefined {
    if (height < this.baseHeight()) return undefined;
    const rec = this.store.comet.get(height);
    if (rec && rec.size === 0) rec.size = blockProto(rec.block).length;
    return rec;
  }

  heightByHash(hash: Uint8Array): bigint | undefined {
    const h = this.store.heightByHash(hash);
    return h !== undefined && h >= this.opts.initialHeight ? h : undefined;
  }

  /** The validator set of `height` (≤ latest + 1), canonical order. */
  validators(height: bigint): Validator[] | undefined {
    const latest = this.latestHeight();
    if (height > latest + 1n || height < this.baseHeight()) return undefined;
    if (height === latest + 1n) {
      const rec = this.block(latest);
      return rec?.nextValidators ?? this.genesisValidators;
    }
    return this.block(height)?.validators ?? this.genesisValidators;
  }

  tx(hash: Uint8Array): IndexedTx<ExecTxResult> | undefined {
    return this.index.tx<ExecTxResult>(hash);
  }

  txAt(height: bigint, index: number): IndexedTx<ExecTxResult> | undefined {
    return this.index.txAt<ExecTxResult>(height, index);
  }

  txProof(height: bigint, index: number): TxProof | undefined {
    const rec = this.block(height);
    if (!rec || index >= rec.block.data.txs.length) return undefined;
    return txProof(rec.block.data.txs, index);
  }

  /**
   * Positions of the txs a query selects (unordered; the caller sorts and pages). A bad tx.hash is
   * an invalidArgument, too broad a search a limitExceeded (store/eventindex.ts SearchTooBroadError).
   */
  searchTxs(q: Query): TxPos[] {
    const hashCond = q.conditions.find((c) => c.tag === TX_HASH_KEY);
    if (hashCond) {
      let hash: Uint8Array;
      try {
        hash = decodeGoHex(hashCond.arg?.text ?? '');
      } catch (e) {
        throw invalidArgument(`error during searching for a hash in the query: ${(e as Error).message}`);
      }
      if (hash.length === 0) throw invalidArgument('error while retrieving the result: transaction hash cannot be empty');
      const t = this.index.tx(hash);
      return t ? [{ height: Number(t.height), idx: t.index }] : [];
    }
    const { bounds, rest } = splitHeight(q.conditions, TX_HEIGHT_KEY);
    if (!bounds) return [];
    if (rest.length === 0) return this.index.txPositions(bounds);
    const keys = intersect(
      groups(rest),
      (key, value, withType) => this.index.txEventRows(key, value, bounds, withType),
      (r) => `${r.height}:${r.idx}:${r.seq}`,
    );
    const seen = new Set<string>();
    const out: TxPos[] = [];
    for (const k of keys) {
      const [height, idx] = k.split(':').map(Number) as [number, number];
      const pos = `${height}:${idx}`;
      if (seen.has(pos)) continue;
      seen.add(pos);
      out.push({ height, idx });
    }
    return out;
  }

  /** Heights of the blocks a query selects (unordered); too broad a search is a limitExceeded. */
  searchBlocks(q: Query): number[] {
    const latest = Number(this.latestHeight());
    const base = Number(this.baseHeight());
    const { bounds, eq, rest } = splitHeight(q.conditions, BLOCK_HEIGHT_KEY);
    if (!bounds) return [];
    if (rest.length === 0) {
      if (eq !== undefined) return eq >= base && eq <= latest ? [eq] : [];
      const b = clamp(bounds, base, latest);
      const out: number[] = [];
      if (b.max! - b.min! + 1 > SEARCH_ROW_LIMIT) throw new SearchTooBroadError();
      for (let h = b.min!; h <= b.max!; h++) out.push(h);
      return out;
    }
    const keys = intersect(
      groups(rest),
      (key, value, withType) => this.index.blockEventRows(key, value, bounds, withType),
      (r) => `${r.height}:${r.seq}`,
    );
    return [...new Set([...keys].map((k) => Number(k.split(':')[0])))];
  }
}

/** A mempool change as the chain thread reports it; `natives[i]` is the native form of `added[i]`. */
export interface NativePoolChange {
  added: readonly EvmTx[];
  removed: readonly Uint8Array[];
  natives?: readonly Uint8Array[];
}

/** The native bytes of the txs in the mempool, in arrival order (for unconfirmed_txs). */
export class NativeMempool {
  private readonly byEvmHash = new Map<string, Uint8Array>();
  private bytes = 0;

  apply(change: NativePoolChange): void {
    for (const h of change.removed) {
      const k = Buffer.from(h).toString('hex');
      const tx = this.byEvmHash.get(k);
      if (tx) {
        this.bytes -= tx.length;
        this.byEvmHash.delete(k);
      }
    }
    change.added.forEach((t, i) => {
      const native = change.natives?.[i];
      if (!native || this.byEvmHash.size >= MEMPOOL_MIRROR_MAX) return;
      const k = Buffer.from(t.hash).toString('hex');
      const old = this.byEvmHash.get(k);
      if (old) this.bytes -= old.length;
      this.byEvmHash.set(k, native);
      this.bytes += native.length;
    });
  }

  /** A re-fork: the new chain's pool starts empty (node/refork.ts). */
  clear(): void {
    this.byEvmHash.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.byEvmHash.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  /** up to `limit` txs, oldest first */
  txs(limit: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const t of this.byEvmHash.values()) {
      if (out.length >= limit) break;
      out.push(t);
    }
    return out;
  }
}
