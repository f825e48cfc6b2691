/**
 * CometBFT's JSON-RPC envelope on top of the route table (rpc/jsonrpc/server + types): the three
 * transports' request forms and CometBFT's envelope texts and codes, which differ from geth's (so
 * Surface B does not use jsonrpc/core.ts's dispatcher, only its MethodTable contract; the codes,
 * texts and the map from DomainError kinds are Surface B's own, in errors.ts):
 *
 * - URI (`GET /route?arg=v`): id -1; param errors -32602 "Invalid params" (HTTP 500), route errors
 *   -32603 "Internal error" (HTTP 500), a WebSocket-only route 404 -32601.
 * - JSON-RPC over HTTP (`POST /`): params by name or position (a positional list must have every
 *   param), a missing or null id is a notification (no answer), -32601 "Method not found" (also for
 *   WebSocket-only routes), param errors -32602, route errors -32603 (all HTTP 200), a body that is
 *   not JSON -32700 "Parse error. Invalid JSON" without an id (HTTP 500), a batch over
 *   max_request_batch_size one -32600 error without an id; a batch with one answer is answered
 *   with that object alone (not an array).
 * - JSON-RPC over WebSocket: one request per message (no batches), param errors are -32603.
 *
 * Errors keep `data` (the Go error text) and omit it when empty.
 */
import { jsonText, nestingTooDeep } from '../lib/jsontext.js';
import { CometCode, ErrorText, cometError, methodNotFoundError, paramErrorAnswer, type CometWireError } from './errors.js';
import { ParamError, goJsonError } from './params.js';
import type { CometContext, CometRoute, RouteTable } from './route.js';
import type { CometHttpResponse } from '../jsonrpc/transport.js';

export const JSONRPC_VERSION = '2.0';
/** the id of every URI answer */
export const URI_REQUEST_ID = -1;
/**
 * Deepest nesting of arrays and objects a request may have (encoding/json's maxNestingDepth, which
 * CometBFT's request parsing inherits); deeper is a parse error.
 */
export const MAX_NESTING_DEPTH = 10_000;

/** encoding/json's text for a request that is not an object (Go names the anonymous request struct) */
const NOT_A_REQUEST_TYPE =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';

export type Id = string | number;

/** the context of a call, without the request id the envelope fills in */
export type TransportContext = Omit<CometContext, 'requestId'>;

export interface EnvelopeOptions {
  /** max_request_batch_size; 0 = unlimited */
  maxBatch: number;
  /** a thrown value that is not a DomainError (a bug) */
  onInternalError(err: unknown, method: string): void;
}

interface Request {
  id: Id | undefined;
  method: string;
  params: unknown;
}

class RequestError extends Error {}

function goJsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** types.RPCRequest.UnmarshalJSON: the id must be a string or a number (truncated); absent/null = notification. */
function toRequest(v: unknown): Request {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new RequestError(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type ${NOT_A_REQUEST_TYPE}`);
  }
  const o = v as Record<string, unknown>;
  for (const f of ['jsonrpc', 'method'] as const) {
    if (o[f] !== undefined && o[f] !== null && typeof o[f] !== 'string') {
      throw new RequestError(`json: cannot unmarshal ${goJsonKind(o[f])} into Go struct field .${f} of type string`);
    }
  }
  let id: Id | undefined;
  if (o.id === undefined || o.id === null) id = undefined;
  else if (typeof o.id === 'string') id = o.id;
  else if (typeof o.id === 'number') id = Math.trunc(o.id);
  else {
    const shown = typeof o.id === 'boolean' ? String(o.id) : jsonText(o.id);
    const type = typeof o.id === 'boolean' ? 'bool' : Array.isArray(o.id) ? '[]interface {}' : 'map[string]interface {}';
    throw new RequestError(`json-rpc ID (${shown}) is of unknown type (${type})`);
  }
  return { id, method: typeof o.method === 'string' ? o.method : '', params: o.params };
}

/**
 * JSON.parse of a request, with encoding/json's text for what it refuses (`fallback` when the text
 * is cut short in a way goJsonError does not name).
 */
function parseRequestText(text: string, fallback: string): { ok: true; value: unknown } | { ok: false; detail: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, detail: goJsonError(text) ?? fallback };
  }
  const deep = nestingTooDeep(text, MAX_NESTING_DEPTH);
  if (deep !== undefined) return { ok: false, detail: `invalid character '${deep}' exceeded max depth` };
  return { ok: true, value };
}

function idPart(id: Id | undefined): string {
  return id === undefined ? '' : `"id":${JSON.stringify(id)},`;
}

export function errorText(id: Id | undefined, code: number, message: string, data = ''): string {
  const error = data === '' ? { code, message } : { code, message, data };
  return `{"jsonrpc":"${JSONRPC_VERSION}",${idPart(id)}"error":${JSON.stringify(error)}}`;
}

/** an answer carrying a mapped error */
export const wireErrorText = (id: Id | undefined, e: CometWireError): string => errorText(id, e.code, e.message, e.data);

function successText(id: Id | undefined, resultJson: string): string {
  return `{"jsonrpc":"${JSONRPC_VERSION}",${idPart(id)}"result":${resultJson}}`;
}

/** `expected 2 parameters ([hash prove]), got 1 ([[34 …]])`, as Go prints the names and raw params */
function countError(names: readonly string[], given: readonly unknown[]): string {
  const raw = given.map((p) => `[${[...Buffer.from(jsonText(p), 'utf8')].join(' ')}]`);
  return `expected ${names.length} parameters ([${names.join(' ')}]), got ${given.length} ([${raw.join(' ')}])`;
}

type Transport = 'json' | 'ws' | 'uri';

export class CometEnvelope {
  constructor(
    private readonly table: RouteTable,
    private readonly opts: EnvelopeOptions,
  ) {}

  route(name: string): CometRoute | undefined {
    return Object.hasOwn(this.table, name) ? this.table[name] : undefined;
  }

  /** Decodes JSON-RPC params (object by name, or a complete positional array). */
  private jsonArgs(route: CometRoute, params: unknown): unknown[] {
    const codecs = route.params;
    if (params === undefined || params === null) return codecs.map((c, i) => c.decode(undefined, i));
    if (Array.isArray(params)) {
      if (params.length !== codecs.length) throw new ParamError(countError(codecs.map((c) => c.name), params));
      return codecs.map((c, i) => c.decode(params[i], i));
    }
    if (typeof params === 'object') {
      const o = params as Record<string, unknown>;
      return codecs.map((c, i) => c.decode(Object.hasOwn(o, c.name) ? o[c.name] : undefined, i));
    }
    throw new ParamError(`unknown type for JSON params: json: cannot unmarshal ${goJsonKind(params)} into Go value of type []json.RawMessage. Expected map or array`);
  }

  private cacheable(route: CometRoute, args: readonly unknown[]): boolean {
    if (route.cache === 'always') return true;
    if (route.cache !== 'height') return false;
    const i = route.params.findIndex((p) => p.name === 'height');
    return args[i] !== undefined && args[i] !== 0n;
  }

  /** One call → its answer text, whether it may be cached, and whether it failed. */
  private async call(
    transport: Transport,
    id: Id | undefined,
    name: string,
    route: CometRoute,
    argsOf: () => unknown[],
    ctx: TransportContext,
  ): Promise<{ text: string; cacheable: boolean; failed: boolean }> {
    let args: unknown[];
    try {
      args = argsOf();
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      return { text: wireErrorText(id, paramErrorAnswer(transport, e)), cacheable: false, failed: true };
    }
    try {
      const callCtx: CometContext = { ...ctx, requestId: id ?? URI_REQUEST_ID };
      const result = await route.handler(args, callCtx);
      return { text: successText(id, JSON.stringify(result === undefined ? null : result)), cacheable: this.cacheable(route, args), failed: false };
    } catch (e) {
      const wire = cometError(e, (err) => this.opts.onInternalError(err, name));
      return { text: wireErrorText(id, wire), cacheable: false, failed: true };
    }
  }

  /** `POST /` (and any method on `/` with a body). */
  async httpJson(body: string, ctx: TransportContext): Promise<CometHttpResponse> {
    const json = 'application/json';
    const p = parseRequestText(body, 'unexpected end of JSON input');
    if (!p.ok) {
      return { status: 500, contentType: json, body: errorText(undefined, CometCode.parse, ErrorText.parse, `error unmarshaling request: ${p.detail}`), cacheable: false };
    }
    const parsed = p.value;
    let requests: Request[];
    try {
      requests = Array.isArray(parsed) ? parsed.map(toRequest) : [toRequest(parsed)];
    } catch (e) {
      const message = Array.isArray(parsed) ? `json: cannot unmarshal array into Go value of type ${NOT_A_REQUEST_TYPE}` : (e as Error).message;
      return { status: 500, contentType: json, body: errorText(undefined, CometCode.parse, ErrorText.parse, `error unmarshaling request: ${message}`), cacheable: false };
    }
    if (Array.isArray(parsed) && this.opts.maxBatch > 0 && requests.length > this.opts.maxBatch) {
      const text = errorText(undefined, CometCode.invalidRequest, ErrorText.invalidRequest, `batch request exceeds maximum (${this.opts.maxBatch}) allowed number of requests`);
      return { status: 200, contentType: json, body: text, cacheable: false };
    }
    const answers: string[] = [];
    let cacheable = true;
    for (const r of requests) {
      if (r.id === undefined) continue;
      const route = this.route(r.method);
      if (!route || route.wsOnly) {
        answers.push(wireErrorText(r.id, methodNotFoundError(r.method)));
        cacheable = false;
        continue;
      }
      const out = await this.call('json', r.id, r.method, route, () => this.jsonArgs(route, r.params), ctx);
      answers.push(out.text);
      cacheable &&= out.cacheable;
    }
    if (answers.length === 0) return { status: 200, contentType: json, body: undefined, cacheable: false };
    const text = answers.length === 1 ? answers[0]! : `[${answers.join(',')}]`;
    return { status: 200, contentType: json, body: text, cacheable };
  }

  /** `GET /route?…` — undefined when there is no such route (the listener answers 404). */
  async uri(name: string, arg: (param: string) => string | undefined, ctx: TransportContext): Promise<CometHttpResponse | undefined> {
    const route = this.route(name);
    if (!route) return undefined;
    const json = 'application/json';
    if (route.wsOnly) {
      return { status: 404, contentType: json, body: wireErrorText(URI_REQUEST_ID, methodNotFoundError(name)), cacheable: false };
    }
    const out = await this.call(
      'uri',
      URI_REQUEST_ID,
      name,
      route,
      () =>
        route.params.map((c, i) => {
          const v = arg(c.name);
          return v === undefined || v === '' ? c.decode(undefined, i) : c.fromUri(v);
        }),
      ctx,
    );
    return { status: out.failed ? 500 : 200, contentType: json, body: out.text, cacheable: out.cacheable };
  }

  /** One WebSocket message → the answer to send (undefined for a notification). */
  async ws(text: string, ctx: TransportContext): Promise<string | undefined> {
    const p = parseRequestText(text, 'unexpected EOF');
    if (!p.ok) {
      const detail = text.trim() === '' ? 'EOF' : p.detail;
      return errorText(undefined, CometCode.parse, ErrorText.parse, `error unmarshaling request: ${detail}`);
    }
    let r: Request;
    try {
      r = toRequest(p.value);
    } catch (e) {
      if (!(e instanceof RequestError)) throw e;
      return errorText(undefined, CometCode.parse, ErrorText.parse, `error unmarshaling request: ${(e as Error).message}`);
    }
    if (r.id === undefined) return undefined;
    const route = this.route(r.method);
    if (!route) return wireErrorText(r.id, methodNotFoundError(r.method));
    return (await this.call('ws', r.id, r.method, route, () => this.jsonArgs(route, r.params), ctx)).text;
  }

  /** The HTML list of endpoints CometBFT serves for an empty request to `/`. */
  listing(host: string): string {
    // upstream counts the context argument too, so every route is listed as taking arguments
    const names = Object.keys(this.table).sort();
    let out = '<html><body><br>Available endpoints:<br><br>Endpoints that require arguments:<br>';
    for (const name of names) {
      const link = `//${host}/${name}?` + this.table[name]!.params.map((p) => `${p.name}=_`).join('&');
      out += `<a href="${link}">${link}</a></br>`;
    }
    return out + '</body></html>';
  }
}

/** The -32000 notification that ends a subscription (id = the subscribe request's). */
export function cancellationText(id: unknown, reason: string): string {
  return errorText(id as Id, CometCode.server, ErrorText.server, `subscription was canceled (reason: ${reason})`);
}
