/**
 * The listener of Surface B on `--rpc.laddr` (CometBFT's rpc/jsonrpc/server): one node:http server
 * for URI calls (`/<route>`), JSON-RPC (`/`) and WebSocket (`/websocket`). It owns the transport
 * concerns — body and header limits, connection limit, CORS, the `X-Server-Time` and cache headers,
 * WebSocket upgrade, read limit, ping/keep-alive — and hands requests to a handler (cometrpc/
 * implements it; node/ wires the two).
 *
 * As CometBFT: any HTTP method reaches a route; the server pings WebSocket clients every 27 s and
 * drops one silent for 30 s. A body over `max_body_bytes` reaches the handler as `undefined`
 * (its answer is sent with `Connection: close`); it is not read (a declared Content-Length over
 * the limit is enough: http.ts readBody, shared with Surface A). Unsent WebSocket bytes are
 * bounded per connection and for all of them (ws.ts OutgoingQueue/OutgoingBudget, shared with
 * Surface A): a connection over a bound is closed with 1008 and the reason.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { CometHttpRequest, CometHttpResponse, CometRpcHandler, CometWsPeer } from '../jsonrpc/transport.js';
import { muxRedirect, MUX_REDIRECT_STATUS, MUX_REDIRECT_TEXT, type MuxRedirect } from './gopath.js';
import { readBody } from './http.js';
import { CLOSE_POLICY_VIOLATION, OutgoingBudget, OutgoingQueue, WS_READ_WAIT_MS } from './ws.js';
import { closeGracefully, listen } from './listen.js';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../lib/log.js';

export interface CometServerOptions {
  host: string;
  /** 0 = any free port */
  port: number;
  handler: CometRpcHandler;
  /** max_body_bytes: request bodies and WebSocket messages */
  maxBodyBytes: number;
  /** max_header_bytes */
  maxHeaderBytes: number;
  /** websocket_max_queue_bytes: unsent bytes one WebSocket client may hold (see server/ws.ts OutgoingQueue) */
  websocketMaxQueueBytes: number;
  /** websocket_max_total_queue_bytes: unsent bytes all WebSocket clients together may hold */
  websocketMaxTotalQueueBytes: number;
  /** max_open_connections (0 = unlimited); over it, connections are refused */
  maxOpenConnections: number;
  /** cors_allowed_origins; empty = CORS off */
  corsAllowedOrigins: readonly string[];
  log: Logger;
}

export interface CometServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

export const WEBSOCKET_PATH = '/websocket';
/** ws_handler.go: the ping period, 9/10 of defaultWSReadWait (WS_READ_WAIT_MS, shared with Surface A) */
export const WS_PING_PERIOD_MS = (WS_READ_WAIT_MS * 9) / 10;
/** CometBFT's default CORS methods and headers (config.toml cors_allowed_methods/headers) */
export const CORS_ALLOWED_METHODS = 'HEAD, GET, POST';
export const CORS_ALLOWED_HEADERS = 'Origin, Accept, Content-Type, X-Requested-With, X-Server-Time';
export const CACHE_CONTROL = 'public, max-age=86400';
/** http_server.go DefaultConfig ReadTimeout (headers and body) */
export const READ_TIMEOUT_MS = 10_000;

const remoteOf = (socket: Socket): string => {
  const a = socket.remoteAddress ?? '';
  return `${a.includes(':') ? `[${a}]` : a}:${socket.remotePort ?? 0}`;
};

export function startCometServer(opts: CometServerOptions): Promise<CometServerHandle> {
  const { handler, log } = opts;
  const corsAny = opts.corsAllowedOrigins.includes('*');
  const corsOrigins = new Set(opts.corsAllowedOrigins);
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxBodyBytes, perMessageDeflate: false });
  const budget = new OutgoingBudget(opts.websocketMaxTotalQueueBytes);

  function corsOrigin(req: IncomingMessage): string | undefined {
    if (opts.corsAllowedOrigins.length === 0) return undefined;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    return corsAny ? '*' : corsOrigins.has(origin) ? origin : undefined;
  }

  function writeAnswer(req: IncomingMessage, res: ServerResponse, a: CometHttpResponse): void {
    const headers: Record<string, string | number> = {
      'Content-Type': a.contentType,
      'X-Server-Time': Math.floor(Date.now() / 1000),
      'Content-Length': a.body === undefined ? 0 : Buffer.byteLength(a.body),
    };
    if (a.cacheable) headers['Cache-Control'] = CACHE_CONTROL;
    const origin = corsOrigin(req);
    if (origin !== undefined) {
      headers['Access-Control-Allow-Origin'] = origin;
      if (!corsAny) headers['Vary'] = 'Origin';
    }
    res.writeHead(a.status, headers).end(a.body);
  }

  /** ServeMux's answer to an unclean path (gopath.ts): CORS and X-Server-Time as on any answer */
  function writeRedirect(req: IncomingMessage, res: ServerResponse, r: MuxRedirect): void {
    const headers: Record<string, string | number> = { Location: r.location, 'X-Server-Time': Math.floor(Date.now() / 1000) };
    const origin = corsOrigin(req);
    if (origin !== undefined) {
      headers['Access-Control-Allow-Origin'] = origin;
      if (!corsAny) headers['Vary'] = 'Origin';
    }
    if (req.method === 'GET' || req.method === 'HEAD') headers['Content-Type'] = 'text/html; charset=utf-8';
    const body = req.method === 'GET' ? r.body : '';
    if (req.method !== 'HEAD') headers['Content-Length'] = Buffer.byteLength(body);
    res.writeHead(MUX_REDIRECT_STATUS, MUX_REDIRECT_TEXT, headers).end(body);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'OPTIONS' && opts.corsAllowedOrigins.length > 0) {
      const origin = corsOrigin(req);
      if (origin !== undefined) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
        res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
      }
      res.writeHead(204).end();
      return;
    }
    // as Go's ServeMux: `//status`, `/./status` are redirected, not routed (a WHATWG URL would read `//status` as a host)
    const redirect = muxRedirect(req.url ?? '/');
    if (redirect !== undefined) return writeRedirect(req, res, redirect);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === WEBSOCKET_PATH) {
      // gorilla's Upgrade refuses a request that is not a WebSocket handshake
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end('Bad Request\n');
      return;
    }
    const answer = (body: string | undefined): void => {
      const request: CometHttpRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        body,
        remoteAddr: remoteOf(req.socket),
        host: req.headers.host ?? '',
      };
      handler.http(request).then(
        (a) => {
          if (body === undefined) res.setHeader('Connection', 'close');
          writeAnswer(req, res, a);
        },
        (err: unknown) => {
          log.error({ err: err instanceof Error ? err.stack : String(err) }, 'cometbft rpc: handler failed');
          if (!res.headersSent) res.writeHead(500).end();
        },
      );
    };
    // a body over max_body_bytes (declared or counted) reaches the handler as undefined
    readBody(req, opts.maxBodyBytes, answer, () => answer(undefined));
  }

  function onConnection(ws: WebSocket, remoteAddr: string): void {
    let lastSeen = Date.now();
    const seen = () => (lastSeen = Date.now());
    const outgoing = new OutgoingQueue(ws, opts.websocketMaxQueueBytes, budget);
    const peer: CometWsPeer = {
      remoteAddr,
      send(text, done) {
        if (ws.readyState !== ws.OPEN) {
          done?.(new Error('connection is closed'));
          return;
        }
        const refused = outgoing.send(text, done);
        if (refused === undefined) return;
        log.warn({ remoteAddr, queued: outgoing.bytes, allClients: budget.bytes }, 'cometbft rpc: websocket client too slow: disconnected');
        ws.close(CLOSE_POLICY_VIOLATION, refused);
        done?.(new Error(refused));
        // its subscriptions end now, not when the close handshake does
        ended();
      },
      close: () => ws.terminate(),
    };
    const session = handler.websocket(peer);
    let sessionEnded = false;
    function ended(): void {
      if (sessionEnded) return;
      sessionEnded = true;
      session.closed();
    }
    const ping = setInterval(() => {
      if (Date.now() - lastSeen > WS_READ_WAIT_MS) {
        ws.terminate();
        return;
      }
      if (ws.readyState === ws.OPEN) ws.ping();
    }, WS_PING_PERIOD_MS);
    ping.unref();
    ws.on('message', (data, isBinary) => {
      seen();
      session.message(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString());
    });
    ws.on('pong', seen);
    ws.on('ping', seen);
    ws.on('error', (err) => log.debug({ err: err.message, remoteAddr }, 'cometbft rpc: websocket error'));
    ws.on('close', () => {
      clearInterval(ping);
      outgoing.release();
      ended();
    });
  }

  const server = createServer({ maxHeaderSize: opts.maxHeaderBytes }, onRequest);
  if (opts.maxOpenConnections > 0) server.maxConnections = opts.maxOpenConnections;
  server.headersTimeout = READ_TIMEOUT_MS;
  server.requestTimeout = READ_TIMEOUT_MS;
  server.on('upgrade', (req, socket, head) => {
    const redirect = muxRedirect(req.url ?? '/');
    if (redirect !== undefined) {
      const body = req.method === 'GET' ? redirect.body : '';
      socket.end(
        `HTTP/1.1 ${MUX_REDIRECT_STATUS} ${MUX_REDIRECT_TEXT}\r\nContent-Type: text/html; charset=utf-8\r\nLocation: ${redirect.location}\r\n` +
          `X-Server-Time: ${Math.floor(Date.now() / 1000)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== WEBSOCKET_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const remoteAddr = remoteOf(req.socket);
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, remoteAddr));
  });
  server.on('clientError', (err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    log.debug({ err: err.message }, 'cometbft rpc: bad http request');
  });

  async function close(): Promise<void> {
    for (const ws of wss.clients) ws.terminate();
    await closeGracefully(server);
    wss.close();
  }

  return listen(server, opts.host, opts.port, (err) => log.error({ err: err.message }, 'cometbft rpc server error')).then((port) => ({ port, close }));
}
