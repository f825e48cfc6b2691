/**
 * Surface A's `trace` namespace: OpenEthereum's (Parity's) trace module as Anvil and Erigon answer
 * it — trace_transaction, trace_block, trace_get, trace_filter, trace_call, trace_replayTransaction
 * and trace_replayBlockTransactions. Every trace is the `flatCallTracer` in its Parity rendering
 * (src/evm/tracing/flatcall.ts) run by the trace service, so these methods share the debug
 * namespace's queue, timeout and result-size limit. docs/compatibility.md lists what differs.
 *
 * Replays answer `trace` and `stateDiff` (from the prestate tracer's diff mode, tracestate.ts);
 * `vmTrace` is refused with a clear error. trace_filter traces at most MAX_TRACE_FILTER_BLOCKS
 * blocks and returns at most MAX_TRACE_FILTER_RESULTS traces per call; with `fromAddress` or
 * `toAddress` it traces only the blocks the address index (store/addrindex.ts) lists for those
 * addresses, over a range of up to MAX_TRACE_FILTER_INDEXED_SPAN blocks.
 */
import { DEFAULT_TRACE_TIMEOUT_MS, type TraceOptions } from '../evm/tracing/types.js';
import { argumentError, jsonKind, parseData, parseQuantityNumber } from '../lib/hex.js';
import { invalidRequest, limitExceeded, notFound, unsupported } from '../lib/errors.js';
import { ADDRESS_LENGTH, hash } from '../jsonrpc/codecs.js';
import { method, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { CallOrigin, Hash } from '../types/chain.js';
import type { BlockSelector } from '../types/query.js';
import { blockNumberOrTag, blockOrDefault, blockNumberOrTagOrHash, callArgs, type CallArgs } from './codecs.js';
import type { EvmBackend } from './backend.js';
import type { TraceRunner } from './debug.js';
import { hexData } from './format.js';
import { carryOverrides, stateDiffOf } from './tracestate.js';
import { decodeTx } from '../evm/tx.js';
import type { Common } from '@ethereumjs/common';
import type { AccountOverride, StateOverrides } from '../types/query.js';

/** most blocks one trace_filter call traces */
export const MAX_TRACE_FILTER_BLOCKS = 1_000;
/** widest block range of a trace_filter by address (the index picks the blocks to trace) */
export const MAX_TRACE_FILTER_INDEXED_SPAN = 10_000_000;
/** most traces one trace_filter call returns (a larger `count` is refused) */
export const MAX_TRACE_FILTER_RESULTS = 10_000;
/** most calls one trace_callMany bundle holds */
export const MAX_TRACE_CALL_MANY = 64;

/** The part of Surface A's modules (evmrpc/api.ts) the trace namespace uses: the debug namespace's plus the chain head. */
export interface TraceModules {
  reader: Pick<EvmBackend, 'chainId' | 'resolveBlock' | 'blockByNumber' | 'latestNumber' | 'addressBlocks'>;
  runs: TraceRunner;
}

export interface TraceMethodsInfo {
  /** eth_call gas cap (0 = none) */
  gasCap: bigint;
  /** the rules a tx sent now runs under (trace_rawTransaction decodes a signed tx; evm/forks.ts) */
  commonNow(): Common;
}

type Json = Record<string, unknown>;
type TraceType = 'trace' | 'stateDiff' | 'vmTrace';
const TRACE_TYPES: readonly TraceType[] = ['trace', 'stateDiff', 'vmTrace'];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `["trace", "stateDiff"]`: the parts of a replay to answer */
const traceTypes: ParamCodec<Set<TraceType>> = {
  name: 'trace types',
  decode: (v, i) => {
    if (!Array.isArray(v)) throw argumentError(i, `trace types must be an array, got ${jsonKind(v)}`);
    const out = new Set<TraceType>();
    for (const t of v) {
      if (typeof t !== 'string' || !(TRACE_TYPES as readonly string[]).includes(t)) {
        throw argumentError(i, `unknown trace type ${JSON.stringify(t)} (want trace, stateDiff or vmTrace)`);
      }
      out.add(t as TraceType);
    }
    if (out.has('vmTrace')) throw argumentError(i, 'vmTrace is not supported (docs/compatibility.md); ask for trace and stateDiff');
    return out;
  },
};

/** a signed transaction's envelope */
const rawBytes: ParamCodec<Uint8Array> = { name: 'raw transaction', decode: (v, i) => parseData(v, i) };

/** trace_get's index list: a trace address within the transaction */
const traceIndices: ParamCodec<number[]> = {
  name: 'trace indices',
  decode: (v, i) => {
    if (!Array.isArray(v)) throw argumentError(i, `indices must be an array, got ${jsonKind(v)}`);
    return v.map((x) => (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? x : parseQuantityNumber(x, i)));
  },
};

/** trace_callMany's bundle: `[[call, traceTypes], ...]`, at most MAX_TRACE_CALL_MANY */
const callBundle: ParamCodec<{ args: CallArgs; types: Set<TraceType> }[]> = {
  name: 'call bundle',
  decode: (v, i) => {
    if (!Array.isArray(v)) throw argumentError(i, `calls must be an array of [call, traceTypes] pairs, got ${jsonKind(v)}`);
    if (v.length > MAX_TRACE_CALL_MANY) throw argumentError(i, `too many calls: ${v.length} (max ${MAX_TRACE_CALL_MANY})`);
    return v.map((pair) => {
      if (!Array.isArray(pair) || pair.length !== 2) throw argumentError(i, 'each call must be a [call, traceTypes] pair');
      return { args: callArgs.decode(pair[0], i), types: traceTypes.decode(pair[1], i) };
    });
  },
};

export interface TraceFilter {
  fromBlock?: BlockSelector;
  toBlock?: BlockSelector;
  fromAddress: Set<string>;
  toAddress: Set<string>;
  after: number;
  count: number | undefined;
  /** both address lists given: a trace matches either (union, the default) or both */
  mode: 'union' | 'intersection';
}

function addressSet(v: unknown, i: number, name: string): Set<string> {
  if (v === undefined || v === null) return new Set();
  if (!Array.isArray(v)) throw argumentError(i, `${name} must be an array of addresses, got ${jsonKind(v)}`);
  return new Set(v.map((a) => hexData(parseData(a, i, ADDRESS_LENGTH))));
}

function count(v: unknown, i: number, name: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === 'string') return parseQuantityNumber(v, i);
  throw argumentError(i, `${name} must be a non-negative integer, got ${jsonKind(v)}`);
}

const traceFilter: ParamCodec<TraceFilter> = {
  name: 'trace filter',
  decode: (v, i) => {
    if (!isObject(v)) throw argumentError(i, `trace filter must be an object, got ${jsonKind(v)}`);
    const known = new Set(['fromBlock', 'toBlock', 'fromAddress', 'toAddress', 'after', 'count', 'mode']);
    for (const k of Object.keys(v)) if (!known.has(k)) throw argumentError(i, `unknown trace filter field ${JSON.stringify(k)}`);
    const mode = v.mode ?? 'union';
    if (mode !== 'union' && mode !== 'intersection') throw argumentError(i, 'mode must be "union" or "intersection"');
    const out: TraceFilter = {
      fromAddress: addressSet(v.fromAddress, i, 'fromAddress'),
      toAddress: addressSet(v.toAddress, i, 'toAddress'),
      after: count(v.after, i, 'after') ?? 0,
      count: count(v.count, i, 'count'),
      mode,
    };
    if (v.fromBlock !== undefined && v.fromBlock !== null) out.fromBlock = blockNumberOrTag.decode(v.fromBlock, i);
    if (v.toBlock !== undefined && v.toBlock !== null) out.toBlock = blockNumberOrTag.decode(v.toBlock, i);
    return out;
  },
};

/** the addresses a trace is from and to (OpenEthereum's filter: a creation is "to" its new contract) */
function ends(t: Json): { from?: string; to?: string } {
  const a = t.action as Json;
  const r = t.result as Json | null | undefined;
  if (t.type === 'suicide') return { from: a.address as string, to: a.refundAddress as string };
  if (t.type === 'create') return { from: a.from as string, to: r?.address as string | undefined };
  return { from: a.from as string, to: a.to as string };
}

export function traceMatches(t: Json, f: TraceFilter): boolean {
  const { from, to } = ends(t);
  const fromOk = f.fromAddress.size === 0 || (from !== undefined && f.fromAddress.has(from));
  const toOk = f.toAddress.size === 0 || (to !== undefined && f.toAddress.has(to));
  if (f.fromAddress.size > 0 && f.toAddress.size > 0 && f.mode === 'union') {
    return (from !== undefined && f.fromAddress.has(from)) || (to !== undefined && f.toAddress.has(to));
  }
  return fromOk && toOk;
}

/** a replay's trace entry: the flat trace without where it sits */
function replayTrace(t: Json): Json {
  const { blockHash, blockNumber, transactionHash, transactionPosition, ...rest } = t;
  void blockHash, blockNumber, transactionHash, transactionPosition;
  return rest;
}

/** OpenEthereum's TraceResults `{output, stateDiff, trace, vmTrace}` */
function replayResult(list: Json[], diff: unknown, types: Set<TraceType>): Json {
  const top = list[0];
  const r = top?.result as Json | null | undefined;
  const output = (r?.output ?? r?.code ?? '0x') as string;
  return {
    output,
    stateDiff: types.has('stateDiff') ? diff : null,
    trace: types.has('trace') ? list.map(replayTrace) : [],
    vmTrace: null,
  };
}

export function createTraceMethods({ reader, runs }: TraceModules, info: TraceMethodsInfo): MethodTable {
  const opts = (types: Set<TraceType> = new Set(['trace'])): TraceOptions => {
    const base = { disableStack: false, disableStorage: false, enableMemory: false, enableReturnData: false, limit: 0, timeoutMs: DEFAULT_TRACE_TIMEOUT_MS, parity: true };
    if (!types.has('stateDiff')) return { ...base, tracer: 'flatCallTracer' };
    return { ...base, tracer: 'muxTracer', tracerConfig: { flatCallTracer: {}, prestateTracer: { diffMode: true } } };
  };
  /** one tx's answer from the tracer: the flat list and, when asked, the prestate diff */
  const parts = (r: unknown, types?: Set<TraceType>): { list: Json[]; diff: unknown } => {
    if (types?.has('stateDiff')) {
      const m = r as { flatCallTracer: Json[]; prestateTracer: Parameters<typeof stateDiffOf>[0] };
      return { list: m.flatCallTracer, diff: stateDiffOf(m.prestateTracer) };
    }
    return { list: r as Json[], diff: null };
  };

  function blockNumber(sel: BlockSelector): bigint {
    if (sel.kind === 'tag' && sel.tag === 'pending') throw unsupported('tracing on top of pending is not supported');
    const n = reader.resolveBlock(sel);
    if (n === undefined) {
      if (sel.kind === 'hash') throw notFound(`block ${hexData(sel.hash)} not found`);
      throw notFound(`block #${sel.kind === 'number' ? sel.number : sel.tag} not found`);
    }
    return n;
  }

  async function blockTraces(n: bigint, types: Set<TraceType> | undefined, origin: CallOrigin): Promise<{ txHash: Hash; list: Json[]; diff: unknown }[]> {
    const entries = await runs.traceBlock(n, opts(types), origin);
    return entries.map((e) => {
      if (e.error !== undefined) throw invalidRequest(`tracing transaction ${hexData(e.txHash)} failed: ${e.error}`);
      return { txHash: e.txHash, ...parts(e.result, types) };
    });
  }

  /** one call traced on block `n` (with `overrides`); `carry`: lay the state it leaves onto it */
  async function callTrace(
    args: CallArgs,
    n: bigint,
    types: Set<TraceType>,
    ctx: CallContext,
    carry?: Map<string, AccountOverride>,
  ): Promise<Json> {
    const { chainId, ...req } = args;
    if (chainId !== undefined && chainId !== reader.chainId) {
      throw invalidRequest(`chainId does not match node's (have=${chainId}, want=${reader.chainId})`);
    }
    const cap = info.gasCap > 0n ? info.gasCap : (reader.blockByNumber(n)?.header.gasLimit ?? 0n);
    const gas = req.gas === undefined || req.gas > cap ? cap : req.gas;
    if (carry === undefined) {
      const { list, diff } = parts(await runs.traceCall({ ...req, gas }, n, undefined, opts(types), ctx), types);
      return replayResult(list, diff, types);
    }
    const overrides: StateOverrides | undefined = carry.size > 0 ? [...carry.values()].map((o) => ({ ...o })) : undefined;
    const withDiff = new Set<TraceType>([...types, 'stateDiff']);
    const m = (await runs.traceCall({ ...req, gas }, n, overrides, opts(withDiff), ctx)) as { flatCallTracer: Json[]; prestateTracer: Parameters<typeof stateDiffOf>[0] };
    carryOverrides(carry, m.prestateTracer);
    return replayResult(m.flatCallTracer, types.has('stateDiff') ? stateDiffOf(m.prestateTracer) : null, types);
  }

  /** trace_callMany: each call sees the state the ones before it left (Erigon, OpenEthereum) */
  async function callMany(bundle: { args: CallArgs; types: Set<TraceType> }[], sel: BlockSelector, ctx: CallContext): Promise<Json[]> {
    const n = blockNumber(sel);
    const carry = new Map<string, AccountOverride>();
    const out: Json[] = [];
    for (const c of bundle) out.push(await callTrace(c.args, n, c.types, ctx, carry));
    return out;
  }

  /** trace_rawTransaction: a signed tx run as a call from its signer on the latest block (Erigon trace_adhoc.go) */
  function rawCall(raw: Uint8Array): CallArgs {
    const { evm } = decodeTx(raw, info.commonNow());
    const args: CallArgs = { from: evm.from, gas: evm.gasLimit, value: evm.value, data: evm.input, accessList: evm.accessList };
    if (evm.to !== undefined) args.to = evm.to;
    if (evm.gasPrice !== undefined) args.gasPrice = evm.gasPrice;
    if (evm.maxFeePerGas !== undefined) args.maxFeePerGas = evm.maxFeePerGas;
    if (evm.maxPriorityFeePerGas !== undefined) args.maxPriorityFeePerGas = evm.maxPriorityFeePerGas;
    return args;
  }

  async function filter(f: TraceFilter, ctx: CallContext): Promise<Json[]> {
    const latest = reader.latestNumber();
    const from = f.fromBlock === undefined ? latest : blockNumber(f.fromBlock);
    const to = f.toBlock === undefined ? latest : blockNumber(f.toBlock);
    if (from > to) throw invalidRequest(`invalid block range: fromBlock ${from} is after toBlock ${to}`);
    const blocks = filterBlocks(f, from, to);
    if (f.count !== undefined && f.count > MAX_TRACE_FILTER_RESULTS) {
      throw limitExceeded(`trace_filter count ${f.count} is over the limit of ${MAX_TRACE_FILTER_RESULTS}`);
    }
    const want = f.count ?? MAX_TRACE_FILTER_RESULTS;
    const out: Json[] = [];
    let skip = f.after;
    for (let k = 0; k < blocks.length && out.length < want; k++) {
      if (k === MAX_TRACE_FILTER_BLOCKS) {
        throw limitExceeded(`trace_filter would trace more than ${MAX_TRACE_FILTER_BLOCKS} blocks; narrow the range or page with after/count`);
      }
      for (const { list } of await blockTraces(blocks[k]!, undefined, ctx)) {
        for (const t of list) {
          if (!traceMatches(t, f)) continue;
          if (skip > 0) {
            skip--;
            continue;
          }
          if (out.length >= want) break;
          out.push(t);
        }
      }
    }
    if (f.count === undefined && out.length >= MAX_TRACE_FILTER_RESULTS) {
      throw limitExceeded(`trace_filter matched more than ${MAX_TRACE_FILTER_RESULTS} traces; narrow the range or page with after/count`);
    }
    return out;
  }

  /**
   * The blocks a filter traces, oldest first: with addresses, those the address index lists for any
   * of them (a superset of the blocks whose traces match; at most MAX_TRACE_FILTER_BLOCKS + 1);
   * without, every block of a range of at most MAX_TRACE_FILTER_BLOCKS.
   */
  function filterBlocks(f: TraceFilter, from: bigint, to: bigint): bigint[] {
    const span = to - from + 1n;
    const addrs = new Set([...f.fromAddress, ...f.toAddress]);
    if (addrs.size === 0 || reader.addressBlocks === undefined) {
      if (span > BigInt(MAX_TRACE_FILTER_BLOCKS)) throw limitExceeded(`trace_filter spans ${span} blocks, over the limit of ${MAX_TRACE_FILTER_BLOCKS}`);
      return Array.from({ length: Number(span) }, (_, i) => from + BigInt(i));
    }
    if (span > BigInt(MAX_TRACE_FILTER_INDEXED_SPAN)) {
      throw limitExceeded(`trace_filter spans ${span} blocks, over the limit of ${MAX_TRACE_FILTER_INDEXED_SPAN} for a filter by address`);
    }
    const heights = new Set<bigint>();
    for (const a of addrs) for (const h of reader.addressBlocks(parseData(a, 0, ADDRESS_LENGTH), from, to, MAX_TRACE_FILTER_BLOCKS + 1)) heights.add(h);
    return [...heights].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).slice(0, MAX_TRACE_FILTER_BLOCKS + 1);
  }

  const table: Record<string, MethodSpec> = {
    trace_transaction: method([hash], ([h], ctx) => runs.traceTransaction(h, opts(), ctx)),
    trace_get: method([hash, traceIndices], async ([h, indices], ctx) => {
      // OpenEthereum: the indices are a trace address (Erigon and reth read one index as a list position)
      const list = (await runs.traceTransaction(h, opts(), ctx)) as Json[];
      const want = indices.join(',');
      return list.find((t) => (t.traceAddress as number[]).join(',') === want) ?? null;
    }),
    trace_block: method([blockNumberOrTag], async ([sel], ctx) => (await blockTraces(blockNumber(sel), undefined, ctx)).flatMap((t) => t.list)),
    trace_filter: method([traceFilter], ([f], ctx) => filter(f, ctx)),
    trace_call: method([callArgs, traceTypes, blockOrDefault(blockNumberOrTagOrHash)], ([args, types, sel], ctx) => callTrace(args, blockNumber(sel), types, ctx)),
    trace_callMany: method([callBundle, blockOrDefault(blockNumberOrTagOrHash)], ([bundle, sel], ctx) => callMany(bundle, sel, ctx)),
    trace_rawTransaction: method([rawBytes, traceTypes], ([raw, types], ctx) => callTrace(rawCall(raw), reader.latestNumber(), types, ctx)),
    trace_replayTransaction: method([hash, traceTypes], async ([h, types], ctx) => {
      const { list, diff } = parts(await runs.traceTransaction(h, opts(types), ctx), types);
      return replayResult(list, diff, types);
    }),
    trace_replayBlockTransactions: method([blockNumberOrTag, traceTypes], async ([sel, types], ctx) =>
      (await blockTraces(blockNumber(sel), types, ctx)).map((t) => ({ ...replayResult(t.list, t.diff, types), transactionHash: hexData(t.txHash) })),
    ),
  };
  return Object.freeze(table);
}
