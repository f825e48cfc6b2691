/**
 * JSON-RPC over HTTP (node:http, keep-alive) in front of a transport-neutral Dispatcher.
 *
 * Like Evmos (gorilla/mux `HandleFunc("/", …).Methods("POST")` in front of geth's rpc.Server):
 * - a path other than `/` → 404; a verb other than POST → 405 (OPTIONS answers the CORS preflight
 *   when CORS is configured; GET is 405 too, so geth's GET health check is not reachable);
 * - body larger than the limit → 413 `content length too large (N>LIMIT)` (checked from
 *   Content-Length first, then while reading); wrong Content-Type → 415
 *   `invalid content type, only application/json is supported` (geth's accepted media types);
 *   these plain-text bodies end with a newline as Go's http.Error writes them;
 * - answers carry `Content-Type: application/json`; a request that needs no answer (notifications
 *   only) gets 200 with an empty body, as geth does.
 * Timeouts map Evmos' http-timeout to header, whole-request and socket-inactivity timeouts, and
 * http-idle-timeout to the keep-alive idle timeout. A request's context carries the moment its answer
 * is due (`answerBy`, a margin before the inactivity timeout would cut the connection) and a signal
 * aborted when the client closes the connection before its answer (`signal`, or `onGone` without an
 * AbortController). max-open-connections uses Node's
 * server.maxConnections: connections over the limit are closed at once (Go's LimitListener makes
 * them wait instead).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeGracefully, listen } from './listen.js';
import type { Dispatcher } from '../jsonrpc/core.js';
import type { CallContext } from '../jsonrpc/types.js';
import type { Logger } from '../lib/log.js';

const noop = (): void => undefined;

export interface HttpLimits {
  /** max request body bytes */
  readonly bodyLimit: number;
  /** 0 = unlimited */
  readonly maxOpenConnections: number;
  /** reading a request (headers and body) and socket inactivity, milliseconds */
  readonly timeoutMs: number;
  /** keep-alive idle timeout, milliseconds */
  readonly idleTimeoutMs: number;
}

export interface HttpServerOptions {
  readonly host: string;
  /** 0 = any free port */
  readonly port: number;
  readonly dispatcher: Dispatcher;
  readonly limits: HttpLimits;
  /** allowed browser origins; `*` allows any. Absent: no CORS headers, OPTIONS is 405 */
  readonly cors?: readonly string[];
  /** true when the request carries a valid auth token (private namespaces need it) */
  authenticate?(headers: IncomingHttpHeaders): boolean;
  /** GET (and HEAD) handlers by path, besides JSON-RPC on `/` (the node page, the readiness check) */
  readonly getRoutes?: ReadonlyMap<string, (req: IncomingMessage, res: ServerResponse) => void>;
  readonly log: Logger;
}

export interface HttpServerHandle {
  /** the bound port (useful with port 0) */
  readonly port: number;
  /** stops accepting, closes idle keep-alive connections, lets running requests finish */
  close(): Promise<void>;
}

/** geth `rpc/http.go` acceptedContentTypes */
export const ACCEPTED_CONTENT_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest']);
/**
 * A request's answer is due this long before http-timeout cuts the idle connection (at least
 * ANSWER_MARGIN_MIN_MS, else a tenth of the timeout), so a long job can still answer with JSON.
 */
export const ANSWER_MARGIN_MIN_MS = 1_000;
function answerMarginMs(timeoutMs: number): number {
  return Math.max(ANSWER_MARGIN_MIN_MS, Math.floor(timeoutMs / 10));
}
/** At most one "connection dropped" warning per this interval. */
const DROP_WARN_INTERVAL_MS = 10_000;
/**
 * A body over the limit is read and discarded (up to these bounds) before the 413 is sent, so a client
 * that writes the whole body before reading (fetch, node:http) sees the answer instead of a reset
 * connection — geth similarly keeps reading for a while before it drops the connection.
 */
export const TOO_LARGE_DRAIN_BYTES = 64 * 1024 * 1024;
export const TOO_LARGE_DRAIN_MS = 1_000;
const PREFLIGHT_MAX_AGE_SECONDS = '600';
const PREFLIGHT_DEFAULT_HEADERS = 'Content-Type, Authorization';

const JSON_CONTENT_TYPE = 'application/json';
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';
const UNSUPPORTED_MEDIA_TYPE = 'invalid content type, only application/json is supported\n';


function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semi = header.indexOf(';');
  const mediaType = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  return ACCEPTED_CONTENT_TYPES.has(mediaType);
}

function sendText(res: ServerResponse, status: number, text: string, close = false): void {
  const headers: Record<string, string | number> = { 'Content-Type': TEXT_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) };
  if (close) headers['Connection'] = 'close';
  res.writeHead(status, headers).end(text);
}

/**
 * Discards the rest of a refused body (bounded by TOO_LARGE_DRAIN_BYTES and TOO_LARGE_DRAIN_MS), then
 * calls `answer` once: the caller writes its 413 and closes the connection.
 */
function drainThen(req: IncomingMessage, answer: () => void): void {
  let drained = 0;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.removeListener('data', onData);
    answer();
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > TOO_LARGE_DRAIN_BYTES) finish();
  };
  const timer = setTimeout(finish, TOO_LARGE_DRAIN_MS);
  req.on('data', onData);
  req.on('end', finish);
  req.on('error', finish);
  req.resume();
}

/**
 * Reads a request body of at most `limit` bytes (both listeners use it). Over the limit — declared
 * by Content-Length before any byte is read, or counted while reading — the body is drained (see
 * drainThen) and `tooLarge(size)` is called instead of `body`; `size` is the declared or counted length.
 */
export function readBody(req: IncomingMessage, limit: number, body: (text: string) => void, tooLarge: (size: number) => void): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    drainThen(req, () => tooLarge(Number(declared)));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let rejected = false;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      rejected = true;
      chunks.length = 0;
      req.removeListener('data', onData);
      drainThen(req, () => tooLarge(size));
      return;
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.on('end', () => {
    if (rejected) return;
    body(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
  });
}

function bodyTooLarge(size: number, limit: number): string {
  return `content length too large (${size}>${limit})\n`;
}

export function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  const { dispatcher, log, authenticate } = opts;
  const { bodyLimit, timeoutMs } = opts.limits;
  const corsAny = opts.cors?.includes('*') ?? false;
  const corsOrigins = new Set(opts.cors ?? []);
  let closing = false;
  let lastDropWarning = 0;

  /** The Access-Control-Allow-Origin value for this request, if CORS allows its origin. */
  function allowedOrigin(req: IncomingMessage): string | undefined {
    if (opts.cors === undefined) return undefined;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    if (corsAny) return '*';
    return corsOrigins.has(origin) ? origin : undefined;
  }

  function preflight(req: IncomingMessage, res: ServerResponse): void {
    const origin = allowedOrigin(req);
    if (origin !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? PREFLIGHT_DEFAULT_HEADERS);
      res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
      if (!corsAny) res.setHeader('Vary', 'Origin');
    }
    res.writeHead(204).end();
  }

  function respond(res: ServerResponse, origin: string | undefined, text: string | undefined): void {
    if (closing) res.setHeader('Connection', 'close');
    if (origin !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      if (!corsAny) res.setHeader('Vary', 'Origin');
    }
    const length = text === undefined ? 0 : Buffer.byteLength(text);
    res.writeHead(200, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': length }).end(text);
  }

  function dispatch(req: IncomingMessage, res: ServerResponse, body: string): void {
    // the client going away before its answer (connection closed) aborts the request's long jobs; the
    // AbortController is made only when a handler asks for its signal: most calls never do
    // (docs/benchmarks.md "The RPC thread per transfer")
    let gone: AbortController | undefined;
    /** the callbacks of `onGone`, run once when the client goes away before its answer */
    let onGone: (() => void)[] | undefined;
    let closedEarly = false;
    res.once('close', () => {
      if (res.writableFinished) return;
      closedEarly = true;
      gone?.abort();
      if (onGone !== undefined) for (const cb of onGone.splice(0)) cb();
    });
    const ctx: CallContext = {
      transport: 'http',
      authenticated: authenticate !== undefined && authenticate(req.headers),
      client: `http:${req.socket.remoteAddress}:${req.socket.remotePort}`,
      get signal(): AbortSignal {
        if (gone === undefined) {
          gone = new AbortController();
          if (closedEarly) gone.abort();
        }
        return gone.signal;
      },
      onGone(cb: () => void): () => void {
        if (closedEarly) {
          cb();
          return noop;
        }
        (onGone ??= []).push(cb);
        return () => {
          const i = onGone!.indexOf(cb);
          if (i >= 0) onGone!.splice(i, 1);
        };
      },
      answerBy: timeoutMs > 0 ? Date.now() + Math.max(0, timeoutMs - answerMarginMs(timeoutMs)) : undefined,
    };
    dispatcher.handle(body, ctx).then(
      (text) => respond(res, allowedOrigin(req), text),
      (err: unknown) => {
        // the dispatcher maps every error itself; reaching this is a bug
        log.error({ err }, 'json-rpc dispatcher failed');
        if (!res.headersSent) sendText(res, 500, 'internal server error\n');
      },
    );
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path !== '/') {
      const route = opts.getRoutes?.get(path);
      if (route === undefined) return sendText(res, 404, '404 page not found\n');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      return route(req, res);
    }
    if (req.method !== 'POST') {
      if (req.method === 'OPTIONS' && opts.cors !== undefined) return preflight(req, res);
      res.writeHead(405, { Allow: opts.cors === undefined ? 'POST' : 'POST, OPTIONS' }).end();
      return;
    }
    // a declared size over the limit is refused first (413), whatever the content type
    const declaredTooLarge = Number(req.headers['content-length']) > bodyLimit;
    if (!declaredTooLarge && !isJsonContentType(req.headers['content-type'])) return sendText(res, 415, UNSUPPORTED_MEDIA_TYPE);
    readBody(
      req,
      bodyLimit,
      (body) => dispatch(req, res, body),
      (size) => sendText(res, 413, bodyTooLarge(size, bodyLimit), true),
    );
  }

  const server = createServer({ keepAlive: true }, onRequest);
  server.headersTimeout = opts.limits.timeoutMs;
  server.requestTimeout = opts.limits.timeoutMs;
  server.timeout = opts.limits.timeoutMs;
  server.keepAliveTimeout = opts.limits.idleTimeoutMs;
  if (opts.limits.maxOpenConnections > 0) server.maxConnections = opts.limits.maxOpenConnections;
  server.on('drop', () => {
    const now = Date.now();
    if (now - lastDropWarning < DROP_WARN_INTERVAL_MS) return;
    lastDropWarning = now;
    log.warn({ maxOpenConnections: opts.limits.maxOpenConnections }, 'json-rpc http: connection limit reached, dropping connections');
  });

  function close(): Promise<void> {
    closing = true;
    return closeGracefully(server);
  }

  return listen(server, opts.host, opts.port, (err) => log.error({ err }, 'json-rpc http server error')).then((port) => ({ port, close }));
}
