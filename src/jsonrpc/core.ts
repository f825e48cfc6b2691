/**
 * Transport-neutral JSON-RPC 2.0 core: envelope checks, method lookup, param decoding, batches and
 * their limits, error mapping. Transports (src/server/) hand it a request body and send back the
 * text it returns. Behaviour follows geth's `rpc` package (handler.go, json.go, errors.go):
 *
 * - Body that is not JSON: -32700 "parse error", id null (an empty body included).
 * - A message that is not a request: -32600 "invalid request", with its id when the id is valid.
 *   Valid ids are strings, numbers and null (JSON-RPC 2.0). A request without `id` is a
 *   notification: it runs, and nothing is sent for it.
 * - Unknown method, or a method of a namespace that is not enabled: -32601
 *   "the method X does not exist/is not available" — the two cases are indistinguishable.
 * - params absent or null → []; not an array → -32602 "non-array args"; codec errors are -32602.
 * - Empty batch: ONE error object (not an array), -32600 "empty batch".
 * - More items than batchRequestLimit: geth ≥1.13 (`respondWithBatchTooLarge`) answers an array
 *   holding a single -32600 "batch too large" error whose id is that of the first call in the batch
 *   (null when there is none), and runs nothing.
 * - Batch response over batchResponseMaxSize: responses are added in order; the one that crosses
 *   the limit is kept, and every later call is answered -32003 "response too large" (geth's
 *   `respondWithError`). Sizes are counted in characters of each serialized response.
 * - Batch items are started in order (so their synchronous parts run in order) and awaited
 *   together; responses keep request order. Items are no longer started once the responses already
 *   known exceed the size limit, since all later items are answered "response too large" anyway.
 *
 * Numeric ids are echoed as the same JSON number value (JSON.parse/stringify): exact for every safe
 * integer, normalised for forms such as `1e3` or `1.50`.
 */
import { invalidArgument, resultTooLarge, type DomainError } from '../lib/errors.js';
import { INTERNAL_ERROR_MESSAGE, JsonRpcCode, methodNotFound, REQUEST_TIMED_OUT_MESSAGE, toJsonRpcError, unauthorized, type JsonRpcErrorMap } from './errors.js';
import { JsonText, type CallContext, type MethodSpec, type MethodTable } from './types.js';

/** what a handler's promise is rejected with when its answer is due first (answered -32002, geth's text) */
const TIMED_OUT = Symbol('request timed out');

export const JSONRPC_VERSION = '2.0';

export interface BatchLimits {
  /** max requests in one batch; 0 = unlimited */
  readonly batchRequestLimit: number;
  /** max characters of a batch response; 0 = unlimited */
  readonly batchResponseMaxSize: number;
}

export interface DispatcherOptions {
  readonly table: MethodTable;
  /** namespaces served (text before the first `_` of a method name); null = all */
  readonly enabledNamespaces: ReadonlySet<string> | null;
  readonly limits: BatchLimits;
  /** the surface's map from every domain error kind to its wire error (Surface A: src/evmrpc/errors.ts) */
  readonly errors: JsonRpcErrorMap;
  /** called with a thrown value that is not a DomainError (a bug); the caller logs its stack */
  onInternalError(err: unknown, method: string): void;
  /** metrics of the calls (geth counts calls of existing methods; see src/metrics/rpc.ts) */
  readonly recorder?: CallRecorder;
}

/** What one method's calls are recorded with; made once per method when the dispatcher is created. */
export interface MethodRecorder {
  /** `startMs`: performance.now() when the call began */
  done(ok: boolean, startMs: number): void;
}

export interface CallRecorder {
  method(name: string): MethodRecorder;
  methodNotFound(): void;
}

interface Entry {
  readonly spec: MethodSpec;
  readonly rec: MethodRecorder | undefined;
}

export interface Dispatcher {
  /** Response JSON text, or undefined when there is nothing to send (only notifications). */
  handle(body: string, ctx: CallContext): Promise<string | undefined>;
}

type Id = string | number | null;
/** A serialized response, nothing (notification), or one still running. */
type Reply = string | undefined | Promise<string | undefined>;

const NO_ARGS: readonly unknown[] = Object.freeze([]);

/** The namespace of a method name: the text before its first `_` (the whole name if none). */
export function namespaceOf(method: string): string {
  const i = method.indexOf('_');
  return i < 0 ? method : method.slice(0, i);
}

function errorText(id: Id, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, error });
}

const PARSE_ERROR = errorText(null, JsonRpcCode.parse, 'parse error');
const EMPTY_BATCH = errorText(null, JsonRpcCode.invalidRequest, 'empty batch');
const INVALID_REQUEST_NULL_ID = errorText(null, JsonRpcCode.invalidRequest, 'invalid request');

function isValidId(id: unknown): id is Id {
  return id === null || typeof id === 'string' || typeof id === 'number';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A valid call (not a notification): geth's `isCall`. */
function isCall(msg: unknown): msg is Record<string, unknown> & { id: Id } {
  return (
    isObject(msg) && msg.jsonrpc === JSONRPC_VERSION && isValidId(msg.id) && typeof msg.method === 'string' && msg.method !== ''
  );
}

/** A valid notification: geth's `isNotification`. */
function isNotification(msg: unknown): boolean {
  return isObject(msg) && msg.jsonrpc === JSONRPC_VERSION && msg.id === undefined && typeof msg.method === 'string' && msg.method !== '';
}

function missingArgument(index: number): DomainError<'invalidArgument'> {
  return invalidArgument(`missing value for required argument ${index}`);
}

/** Decodes positional params with the method's codecs; geth's parsePositionalArguments texts. */
function decodeParams(spec: MethodSpec, params: unknown): unknown[] {
  const codecs = spec.params;
  const want = codecs.length;
  let given: readonly unknown[];
  if (params === undefined || params === null) given = NO_ARGS;
  else if (Array.isArray(params)) given = params;
  else throw invalidArgument('non-array args');
  if (want === 0 && given.length === 0) return NO_ARGS as unknown[];
  const args = new Array<unknown>(want);
  for (let i = 0; i < given.length; i++) {
    if (i >= want) throw invalidArgument(`too many arguments, want at most ${want}`);
    const codec = codecs[i]!;
    const v = given[i];
    if (v === null) {
      if (!codec.optional) throw missingArgument(i);
      args[i] = codec.decode(undefined, i);
    } else {
      args[i] = codec.decode(v, i);
    }
  }
  for (let i = given.length; i < want; i++) {
    const codec = codecs[i]!;
    if (!codec.optional) throw missingArgument(i);
    args[i] = codec.decode(undefined, i);
  }
  return args;
}

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { enabledNamespaces, onInternalError, errors } = opts;
  const { batchRequestLimit, batchResponseMaxSize } = opts.limits;

  // Only methods of enabled namespaces are in the map, so a disabled one is simply unknown.
  const { recorder } = opts;
  const methods = new Map<string, Entry>();
  for (const name of Object.keys(opts.table)) {
    if (enabledNamespaces === null || enabledNamespaces.has(namespaceOf(name))) {
      methods.set(name, { spec: opts.table[name]!, rec: recorder?.method(name) });
    }
  }

  function failure(id: Id | undefined, method: string, err: unknown): string | undefined {
    if (err === TIMED_OUT) return id === undefined ? undefined : errorText(id, JsonRpcCode.timeout, REQUEST_TIMED_OUT_MESSAGE);
    const e = toJsonRpcError(err, (bug) => onInternalError(bug, method), errors);
    if (id === undefined) return undefined;
    try {
      return errorText(id, e.code, e.message, e.data);
    } catch (bug) {
      // error data JSON cannot encode: a bug in whoever threw it
      onInternalError(bug, method);
      return errorText(id, JsonRpcCode.internal, INTERNAL_ERROR_MESSAGE);
    }
  }

  function success(id: Id | undefined, method: string, result: unknown): string | undefined {
    if (id === undefined) return undefined;
    try {
      // the bytes JSON.stringify writes for the same envelope, the result spliced in as it is
      if (result instanceof JsonText) return `{"jsonrpc":"${JSONRPC_VERSION}","id":${JSON.stringify(id)},"result":${result.text}}`;
      return JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, result: result === undefined ? null : result });
    } catch (err) {
      // a result JSON cannot encode (bigint, cycle) is a bug in the surface's format layer
      return failure(id, method, err);
    }
  }

  /** One message → its reply. Never throws, and a returned promise never rejects. */
  function callOne(msg: unknown, ctx: CallContext): Reply {
    if (!isObject(msg)) return INVALID_REQUEST_NULL_ID;
    const id = msg.id;
    if (id !== undefined && !isValidId(id)) return INVALID_REQUEST_NULL_ID;
    const method = msg.method;
    if (msg.jsonrpc !== JSONRPC_VERSION || typeof method !== 'string' || method === '') {
      return errorText(id ?? null, JsonRpcCode.invalidRequest, 'invalid request');
    }
    const entry = methods.get(method);
    if (entry === undefined) {
      recorder?.methodNotFound();
      return failure(id, method, methodNotFound(method));
    }
    const { spec, rec } = entry;
    const startMs = rec === undefined ? 0 : performance.now();
    let result: unknown;
    try {
      if (spec.private && !ctx.authenticated) throw unauthorized();
      result = spec.handler(decodeParams(spec, msg.params), ctx);
    } catch (err) {
      rec?.done(false, startMs);
      return failure(id, method, err);
    }
    if (result instanceof Promise) {
      // a handler still working when its answer is due gets geth's timeout answer, so the client hears
      // JSON before http-timeout cuts the connection (the handler's work is not cancelled by this)
      const work = ctx.answerBy === undefined ? result : answerInTime(result, ctx.answerBy);
      return work.then(
        (value) => {
          rec?.done(true, startMs);
          return success(id, method, value);
        },
        (err) => {
          rec?.done(false, startMs);
          return failure(id, method, err);
        },
      );
    }
    rec?.done(true, startMs);
    return success(id, method, result);
  }

  function answerInTime(work: Promise<unknown>, answerBy: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const due = setTimeout(() => reject(TIMED_OUT), Math.max(0, answerBy - Date.now()));
      work.then(
        (v) => (clearTimeout(due), resolve(v)),
        (e: unknown) => (clearTimeout(due), reject(e)),
      );
    });
  }

  async function handleBatch(items: unknown[], ctx: CallContext): Promise<string | undefined> {
    if (items.length === 0) return EMPTY_BATCH;
    if (batchRequestLimit > 0 && items.length > batchRequestLimit) {
      const first = items.find(isCall);
      return '[' + errorText(first === undefined ? null : first.id, JsonRpcCode.invalidRequest, 'batch too large') + ']';
    }
    const replies = new Array<Reply>(items.length);
    let knownSize = 0;
    for (let i = 0; i < items.length; i++) {
      if (batchResponseMaxSize > 0 && knownSize > batchResponseMaxSize) break;
      const reply = callOne(items[i], ctx);
      replies[i] = reply;
      if (typeof reply === 'string') knownSize += reply.length;
    }
    const out: string[] = [];
    const tooLargeError = toJsonRpcError(resultTooLarge('response too large'), undefined, errors);
    let size = 0;
    let tooLarge = false;
    for (let i = 0; i < items.length; i++) {
      if (tooLarge) {
        const item = items[i];
        if (!isNotification(item)) {
          const id = isObject(item) && isValidId(item.id) ? item.id : null;
          out.push(errorText(id, tooLargeError.code, tooLargeError.message, tooLargeError.data));
        }
        continue;
      }
      const pending = replies[i];
      const reply = typeof pending === 'object' ? await pending : pending;
      if (reply === undefined) continue;
      out.push(reply);
      size += reply.length;
      if (batchResponseMaxSize > 0 && size > batchResponseMaxSize) tooLarge = true;
    }
    return out.length === 0 ? undefined : '[' + out.join(',') + ']';
  }

  return {
    handle(body: string, ctx: CallContext): Promise<string | undefined> {
      let msg: unknown;
      try {
        msg = JSON.parse(body);
      } catch {
        return Promise.resolve(PARSE_ERROR);
      }
      if (Array.isArray(msg)) return handleBatch(msg, ctx);
      const reply = callOne(msg, ctx);
      return typeof reply === 'object' ? reply : Promise.resolve(reply);
    },
  };
}
