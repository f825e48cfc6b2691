/**
 * The contract between a surface's method table and the transport-neutral JSON-RPC core.
 * A surface (evmrpc/, cometrpc/) declares ONE table: wire name -> param codecs -> handler.
 */

/** Per-call context the transport supplies. */
export interface CallContext {
  readonly transport: 'http' | 'ws';
  /** true when the request carried a valid auth token (private namespaces need it) */
  readonly authenticated: boolean;
  /** WebSocket connection id (undefined over HTTP) */
  readonly connectionId?: string;
  /**
   * A key of the client connection the request came on (`ws:<id>`, `http:<address>:<port>`):
   * long jobs take turns between clients by it.
   */
  readonly client?: string;
  /**
   * Aborted when the client has gone away (HTTP: the connection closed before the answer was sent;
   * WebSocket: the connection closed): long jobs (calls, traces) stop.
   */
  readonly signal?: AbortSignal;
  /** `signal` without an AbortController: `cb` runs once when the client goes away; returns its removal */
  readonly onGone?: (cb: () => void) => () => void;
  /**
   * HTTP: epoch ms by which the answer must be written, before the server's timeout cuts the
   * connection; a long job answers a JSON-RPC error by then instead. Undefined: no such limit.
   */
  readonly answerBy?: number;
  /** sends a notification to this connection (WebSocket only) */
  readonly notify?: (method: string, params: unknown) => boolean;
  /**
   * WebSocket only: queues a message already serialized as JSON text (one notification serialized
   * once, sent to many). false when the connection is closed or closing.
   */
  readonly sendText?: (json: string) => boolean;
  /** WebSocket only: runs fn once when the connection closes (per-connection state dies with it) */
  readonly onClose?: (fn: () => void) => void;
  /**
   * WebSocket only: runs fn right after the reply to the current message (or its whole batch) has
   * been queued, so a subscription can hold its notifications until the client has its id.
   */
  readonly afterReply?: (fn: () => void) => void;
}

/**
 * A result already serialized: the core writes `text` into the reply as it is, so a large answer
 * (eth_getLogs' thousands of logs) is written once instead of built as objects and stringified
 * (docs/benchmarks.md "Reads"). `text` must be exactly what JSON.stringify writes for the value;
 * toJSON gives that value back to anything else that serializes the result.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** Decodes one positional param; throws invalidArgument naming the argument on bad input. */
export interface ParamCodec<T = unknown> {
  /** human name used in docs */
  readonly name: string;
  /** when true the param may be absent (or null) and decode receives undefined */
  readonly optional?: boolean;
  decode(value: unknown, index: number): T;
}

export interface MethodSpec {
  readonly params: readonly ParamCodec[];
  /** `private` methods need CallContext.authenticated */
  readonly private?: boolean;
  /**
   * result is JSON-ready (hex already applied by the surface's format layer). Declare methods with
   * `method(params, handler)` so the handler is typed from its codecs; the core only ever calls it
   * with the tuple those codecs decoded.
   */
  handler(args: readonly unknown[], ctx: CallContext): unknown | Promise<unknown>;
}

/** The tuple a list of codecs decodes to, e.g. `[Uint8Array, BlockSelector | undefined]`. */
export type Decoded<P extends readonly ParamCodec[]> = { -readonly [I in keyof P]: P[I] extends ParamCodec<infer T> ? T : never };

/**
 * Declares a method as (param codecs, handler): the handler receives the decoded, typed tuple, with
 * no casts between the codec and the handler.
 */
export function method<const P extends readonly ParamCodec[], R>(
  params: P,
  handler: (args: Decoded<P>, ctx: CallContext) => R,
  opts: { private?: boolean } = {},
): MethodSpec {
  return {
    params,
    ...(opts.private ? { private: true } : {}),
    // the core decodes args with exactly these codecs, in order (jsonrpc/core.ts, cometrpc/envelope.ts)
    handler: handler as (args: readonly unknown[], ctx: CallContext) => R,
  };
}

/** wire name ("eth_getBalance") -> spec */
export type MethodTable = Readonly<Record<string, MethodSpec>>;

/** Merges per-namespace tables into a surface's one table; a name declared twice is a bug. */
export function mergeTables(...tables: MethodTable[]): MethodTable {
  const out: Record<string, MethodSpec> = {};
  for (const t of tables) {
    for (const [name, spec] of Object.entries(t)) {
      if (name in out) throw new Error(`method ${name} declared twice`);
      out[name] = spec;
    }
  }
  return out;
}
