/**
 * Surface A's `debug` namespace: geth's tracing API — debug_traceTransaction,
 * debug_traceBlockByNumber, debug_traceBlockByHash (array of `{txHash, result}` or
 * `{txHash, error}`) and debug_traceCall (a call on a block's state, with state overrides).
 *
 * The trace config (geth's TraceConfig) is decoded here: `tracer`, `tracerConfig`, `timeout` (Go
 * duration, default 5s, capped by `json-rpc.trace-timeout-cap`), `disableStack`,
 * `disableStorage`, `enableMemory`, `enableReturnData`, `limit`; for debug_traceCall also
 * `stateOverrides` and `blockOverrides` (evmrpc/overrides.ts). The namespace is off unless `--json-rpc.api` names `debug`.
 */
import { parseDuration } from '../config/duration.js';
import { DEFAULT_TRACE_TIMEOUT_MS, type TraceOptions } from '../evm/tracing/types.js';
import { argumentError, jsonKind } from '../lib/hex.js';
import { invalidRequest, notFound, unsupported } from '../lib/errors.js';
import { hash } from '../jsonrpc/codecs.js';
import { method, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { CallOrigin, CallRequest, Hash } from '../types/chain.js';
import type { BlockOverrides, BlockSelector, StateOverrides } from '../types/query.js';
import type { EvmBackend } from './backend.js';
import { blockNumberOrTag, blockNumberOrTagOrHash, blockOrDefault, callArgs } from './codecs.js';
import { blockOverrides, stateOverrides } from './overrides.js';
import { hexData } from './format.js';
import { GethText } from '../lib/gethtexts.js';

/** One tx of a block trace, as the trace runner answers it. */
export interface BlockTraceEntry {
  txHash: Hash;
  result?: unknown;
  error?: string;
}

/** Where traces run (node/: chain/trace.ts's worker; debug_traceCall at `n` over the pending dev cheats). */
export interface TraceRunner {
  /** `origin`: cancel when the client goes away, answer by `answerBy` */
  traceTransaction(hash: Hash, opts: TraceOptions, origin?: CallOrigin): Promise<unknown>;
  traceBlock(n: bigint, opts: TraceOptions, origin?: CallOrigin): Promise<BlockTraceEntry[]>;
  /** `req.gas` is always set */
  traceCall(
    req: CallRequest & { gas: bigint },
    n: bigint,
    overrides: StateOverrides | undefined,
    opts: TraceOptions,
    origin?: CallOrigin,
    block?: BlockOverrides,
  ): Promise<unknown>;
}

/** The part of Surface A's modules (evmrpc/api.ts) the debug namespace uses. */
export interface DebugModules {
  /** blockByNumber: the gas limit of a committed block (the call gas when neither the call nor the gas cap sets one) */
  reader: Pick<EvmBackend, 'chainId' | 'resolveBlock' | 'blockByNumber'>;
  runs: TraceRunner;
}

export interface DebugMethodsInfo {
  /** eth_call gas cap (0 = none) */
  gasCap: bigint;
  /** the longest timeout a call may ask for, ms */
  traceTimeoutCapMs: number;
}

const CONFIG = 'TraceConfig';
const CALL_CONFIG = 'TraceCallConfig';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field the way Go's encoding/json finds it: exact name, else case-insensitive; null = absent. */
function field(obj: Json, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name] ?? undefined;
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k] ?? undefined;
  return undefined;
}

function mismatch(index: number, v: unknown, struct: string, name: string, goType: string) {
  return argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${struct}.${name} of type ${goType}`);
}

/** A decoded config plus the timeout text, which is checked when the call runs (like geth). */
export interface TraceConfigArg {
  opts: Omit<TraceOptions, 'timeoutMs'>;
  timeout: string | undefined;
  stateOverrides?: StateOverrides;
  /** geth's TraceCallConfig.BlockOverrides (evmrpc/overrides.ts) */
  blockOverrides?: BlockOverrides;
}

function decodeTraceConfig(v: unknown, index: number, forCall: boolean): TraceConfigArg {
  const struct = forCall ? CALL_CONFIG : CONFIG;
  if (!isObject(v)) throw argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go value of type tracers.${struct}`);
  const bool = (name: string): boolean => {
    const x = field(v, name);
    if (x === undefined) return false;
    if (typeof x !== 'boolean') throw mismatch(index, x, struct, name, 'bool');
    return x;
  };
  const tracer = field(v, 'tracer');
  if (tracer !== undefined && typeof tracer !== 'string') throw mismatch(index, tracer, struct, 'tracer', 'string');
  const timeout = field(v, 'timeout');
  if (timeout !== undefined && typeof timeout !== 'string') throw mismatch(index, timeout, struct, 'timeout', 'string');
  const limit = field(v, 'limit');
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit))) throw mismatch(index, limit, struct, 'limit', 'int');
  if (typeof limit === 'number' && limit < 0) throw argumentError(index, `output limit cannot be negative, got ${limit}`);
  if (field(v, 'overrides') !== undefined) throw argumentError(index, 'chain config overrides are not supported');
  const out: TraceConfigArg = {
    opts: {
      tracer: tracer === undefined || tracer === '' ? undefined : tracer,
      tracerConfig: field(v, 'tracerConfig'),
      disableStack: bool('disableStack'),
      disableStorage: bool('disableStorage'),
      enableMemory: bool('enableMemory'),
      enableReturnData: bool('enableReturnData'),
      limit: typeof limit === 'number' ? limit : 0,
    },
    timeout,
  };
  bool('debug');
  if (forCall) {
    const so = field(v, 'stateOverrides');
    if (so !== undefined) out.stateOverrides = stateOverrides.decode(so, index);
    const bo = field(v, 'blockOverrides');
    if (bo !== undefined) out.blockOverrides = blockOverrides.decode(bo, index);
    if (field(v, 'txIndex') !== undefined) throw argumentError(index, 'txIndex is not supported');
  }
  return out;
}

const NO_CONFIG: TraceConfigArg = {
  opts: { disableStack: false, disableStorage: false, enableMemory: false, enableReturnData: false, limit: 0 },
  timeout: undefined,
};

export const traceConfig: ParamCodec<TraceConfigArg> = {
  name: 'trace config',
  optional: true,
  decode: (v, i) => (v === undefined || v === null ? NO_CONFIG : decodeTraceConfig(v, i, false)),
};

const traceCallConfig: ParamCodec<TraceConfigArg> = {
  name: 'trace call config',
  optional: true,
  decode: (v, i) => (v === undefined || v === null ? NO_CONFIG : decodeTraceConfig(v, i, true)),
};

/**
 * The options of a trace: geth parses the timeout when the trace starts (`time: invalid duration
 * "x"`); default 5s, at most `capMs` (0 = no cap).
 */
export function traceOptions(c: TraceConfigArg, capMs: number): TraceOptions {
  let ms = DEFAULT_TRACE_TIMEOUT_MS;
  if (c.timeout !== undefined) {
    try {
      ms = parseDuration(c.timeout);
    } catch {
      throw invalidRequest(`time: invalid duration ${JSON.stringify(c.timeout)}`);
    }
  }
  if (ms < 0) ms = 0;
  if (capMs > 0 && ms > capMs) ms = capMs;
  return { ...c.opts, timeoutMs: ms };
}

/** geth's txTraceResult list on the wire. */
export function blockTraceJson(entries: readonly BlockTraceEntry[]): unknown[] {
  return entries.map((e) => (e.error !== undefined ? { txHash: hexData(e.txHash), error: e.error } : { txHash: hexData(e.txHash), result: e.result }));
}

export function createDebugMethods({ reader, runs }: DebugModules, info: DebugMethodsInfo): MethodTable {
  const options = (c: TraceConfigArg) => traceOptions(c, info.traceTimeoutCapMs);

  function blockNumber(sel: BlockSelector): bigint {
    const n = reader.resolveBlock(sel);
    if (n === undefined) {
      if (sel.kind === 'hash') throw notFound(`block ${hexData(sel.hash)} not found`);
      throw notFound(`block #${sel.kind === 'number' ? sel.number : sel.tag} not found`);
    }
    return n;
  }

  async function blockTrace(n: bigint, c: TraceConfigArg, ctx: CallContext) {
    return blockTraceJson(await runs.traceBlock(n, options(c), ctx));
  }

  const table: Record<string, MethodSpec> = {
    debug_traceTransaction: method([hash, traceConfig], ([h, c], ctx) => runs.traceTransaction(h, options(c), ctx)),
    debug_traceBlockByNumber: method([blockNumberOrTag, traceConfig], ([sel, c], ctx) => {
      if (sel.kind === 'tag' && sel.tag === 'pending') throw unsupported('tracing on top of pending is not supported');
      return blockTrace(blockNumber(sel), c, ctx);
    }),
    debug_traceBlockByHash: method([hash, traceConfig], ([h, c], ctx) =>
      blockTrace(blockNumber({ kind: 'hash', hash: h, requireCanonical: false }), c, ctx),
    ),
    debug_traceCall: method(
      [callArgs, blockOrDefault(blockNumberOrTagOrHash), traceCallConfig],
      ([args, sel, c], ctx) => {
        if (sel.kind === 'tag' && sel.tag === 'pending') throw unsupported('tracing on top of pending is not supported');
        const { chainId, ...req } = args;
        if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
          throw invalidRequest(GethText.mixedFeeFields);
        }
        if (chainId !== undefined && chainId !== reader.chainId) {
          throw invalidRequest(`chainId does not match node's (have=${chainId}, want=${reader.chainId})`);
        }
        const n = blockNumber(sel);
        const cap = info.gasCap > 0n ? info.gasCap : (c.blockOverrides?.gasLimit ?? reader.blockByNumber(n)?.header.gasLimit ?? 0n);
        const gas = req.gas === undefined || req.gas > cap ? cap : req.gas;
        return runs.traceCall({ ...req, gas }, n, c.stateOverrides, options(c), ctx, c.blockOverrides);
      },
    ),
  };
  return Object.freeze(table);
}
