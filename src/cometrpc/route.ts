/**
 * How a Surface B route is declared: `route(params, handler, opts)` — jsonrpc/types.ts's
 * `method(params, handler)` for CometBFT's routes, whose codecs also decode URI arguments
 * (CometParam.fromUri) and whose handlers get the CometContext (the caller's address, the request
 * id, the WebSocket session). The handler receives the tuple its codecs decode, typed from them.
 */
import type { CompiledQuery } from '../eventquery/index.js';
import type { CallContext, Decoded, MethodSpec } from '../jsonrpc/types.js';
import type { CometParam } from './params.js';

/** What a WebSocket session offers the subscription routes. */
export interface SubscriptionSession {
  /** adds a subscription whose events go to this connection under request id `id` */
  subscribe(id: unknown, queryText: string, query: CompiledQuery, key: string, eventType: string | undefined): void;
}

/** The per-call context Surface B's transports supply (a CallContext plus what CometBFT's handlers use). */
export interface CometContext extends CallContext {
  /** `IP:port` of the client: the subscriber identity */
  readonly remoteAddr: string;
  /** the JSON-RPC id of the request (-1 for URI calls) */
  readonly requestId: unknown;
  /** present on WebSocket connections */
  readonly session?: SubscriptionSession;
}

/** A Surface B route: a MethodSpec whose params are named CometBFT codecs. */
export interface CometRoute extends MethodSpec {
  readonly params: readonly CometParam[];
  /** subscribe/unsubscribe/unsubscribe_all: WebSocket only */
  readonly wsOnly?: boolean;
  /** `always` (rpc.Cacheable()), or `height` (rpc.Cacheable("height"): only with a non-zero height) */
  readonly cache?: 'always' | 'height';
  /** the envelope calls it with the tuple `params` decoded and a CometContext */
  handler(args: readonly unknown[], ctx: CometContext): unknown;
}

export type RouteTable = Readonly<Record<string, CometRoute>>;

export interface RouteFlags {
  wsOnly?: boolean;
  cache?: 'always' | 'height';
}

/** Declares a route as (param codecs, handler): the handler receives the decoded, typed tuple. */
export function route<const P extends readonly CometParam[], R>(
  params: P,
  handler: (args: Decoded<P>, ctx: CometContext) => R,
  flags: RouteFlags = {},
): CometRoute {
  return {
    params,
    ...(flags.wsOnly ? { wsOnly: true } : {}),
    ...(flags.cache ? { cache: flags.cache } : {}),
    // the envelope decodes args with exactly these codecs, in order (envelope.ts)
    handler: handler as (args: readonly unknown[], ctx: CometContext) => R,
  };
}
