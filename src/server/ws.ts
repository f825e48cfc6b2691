/**
 * JSON-RPC over WebSocket (the `ws` package) in front of the same transport-neutral Dispatcher as
 * HTTP: same method table, namespaces, limits and errors; batches too. Every message is handled
 * here — nothing is proxied to the HTTP listener (Evmos proxies everything but eth_subscribe).
 *
 * Per connection:
 * - state: an id (CallContext.connectionId), close hooks (subscriptions die with the connection),
 *   and `authenticated`, decided once from the upgrade request's headers (`authenticate` hook).
 * - an outgoing queue bounded in bytes (OutgoingQueue, shared with Surface B's listener). Its
 *   subscriptions are dropped at once when it overflows; nobody else waits: sends never block.
 * - at most MAX_IN_FLIGHT requests answered at once: reading pauses above it (back-pressure on a
 *   client that floods requests instead of an unbounded backlog).
 * - a message over `maxMessageSize` closes the connection with 1009 (ws' "Max payload size
 *   exceeded").
 * - keep-alive: a ping every `pingIntervalMs` (geth: 30 s); a connection that has not answered the
 *   previous ping by the next one is terminated.
 *
 * Per listener: at most `maxConnections` connections (the upgrade is refused with HTTP 503 above
 * it), and an origin allow-list checked at the upgrade (HTTP 403 when refused). Origin rules are
 * geth's (`rpc/websocket.go` ruleAllowsOrigin): a request without an Origin header (not a browser)
 * is allowed; `*` allows any; a rule is `[scheme://]host[:port]` and each part it names must match,
 * so cosmos/evm's default `["127.0.0.1", "localhost"]` allows those hosts on any scheme and port.
 * A plain HTTP request (no upgrade) is answered 426.
 */
import { STATUS_CODES, createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Dispatcher } from '../jsonrpc/core.js';
import type { CallContext } from '../jsonrpc/types.js';
import type { Logger } from '../lib/log.js';
import { CLOSE_GRACE_MS } from './listen.js';

/**
 * Keep-alive of both WebSocket stacks: a connection silent (no message, no pong) for this long is
 * cut. geth rpc/websocket.go wsPingInterval and wsPongTimeout, CometBFT ws_handler.go
 * defaultWSReadWait: 30 s each.
 */
export const WS_READ_WAIT_MS = 30_000;
/** Surface A pings every WS_READ_WAIT_MS (geth) */
export const PING_INTERVAL_MS = WS_READ_WAIT_MS;
/** requests of one connection being answered at once; reading pauses above */
export const MAX_IN_FLIGHT = 64;

/** WebSocket close codes (RFC 6455) */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY_VIOLATION = 1008;
export const CLOSE_TRY_AGAIN_LATER = 1013;

export const QUEUE_FULL_REASON = 'outgoing queue full: client too slow to read its messages';
export const TOTAL_QUEUE_FULL_REASON = 'outgoing queues of all clients full: client too slow to read its messages';
export const SHUTDOWN_REASON = 'server shutting down';
const TOO_MANY_REASON = 'too many connections';
const UPGRADE_REQUIRED = 'this endpoint speaks JSON-RPC over WebSocket: send an Upgrade: websocket request\n';

export interface WsLimits {
  /** max bytes of one incoming message */
  readonly maxMessageSize: number;
  /** max open connections (0 = unlimited) */
  readonly maxConnections: number;
  /** max bytes waiting to be sent on one connection */
  readonly maxQueueBytes: number;
  /** ping period; default PING_INTERVAL_MS */
  readonly pingIntervalMs?: number;
}

export interface WsHandlerOptions {
  readonly dispatcher: Dispatcher;
  readonly limits: WsLimits;
  /** allowed browser origins (see above); empty: only clients that send no Origin */
  readonly origins: readonly string[];
  /** true when the upgrade request carries a valid auth token (private namespaces need it) */
  authenticate?(headers: IncomingHttpHeaders): boolean;
  readonly log: Logger;
}

export interface WsServerOptions extends WsHandlerOptions {
  readonly host: string;
  /** 0 = any free port */
  readonly port: number;
}

/** Serves WebSocket upgrades of any node:http server (so another listener can reuse it). */
export interface WsHandler {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** open connections */
  connections(): number;
  /** closes every connection (1001), stops the keep-alive */
  close(): Promise<void>;
}

export interface WsServerHandle {
  readonly port: number;
  connections(): number;
  close(): Promise<void>;
}

/** Bytes waiting to be sent on a whole set of connections (a listener's), against one bound. */
export class OutgoingBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** bytes queued on every connection together */
  get bytes(): number {
    return this.held;
  }

  get full(): boolean {
    return this.held >= this.maxBytes;
  }

  take(n: number): void {
    this.held += n;
  }

  give(n: number): void {
    this.held -= n;
  }
}

/**
 * One connection's outgoing messages, bounded in bytes: a message counts from the moment it is
 * handed to ws until ws has written it to the socket (or the connection is gone). A message is
 * refused, and the caller closes the connection with 1008 and the returned reason, when
 * - this connection already holds `maxBytes` (QUEUE_FULL_REASON): the queue never exceeds the limit
 *   plus one message, and one message bigger than the limit still goes out to a client that reads;
 * - or the shared `budget` is used up and this connection holds anything itself
 *   (TOTAL_QUEUE_FULL_REASON): a client that keeps up is not blamed for the others.
 * The close frame follows what is already queued; a peer that never reads again is cut after ws'
 * close timeout (30 s), and what it held counts until then.
 */
export class OutgoingQueue {
  private held = 0;
  private released = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly maxBytes: number,
    private readonly budget?: OutgoingBudget,
  ) {}

  /** bytes this connection holds */
  get bytes(): number {
    return this.held;
  }

  /** Queues `text`; undefined when queued, else why it was refused (`done` is not called then). */
  send(text: string, done?: (err?: Error) => void): string | undefined {
    if (this.held >= this.maxBytes) return QUEUE_FULL_REASON;
    if (this.budget?.full && this.held > 0) return TOTAL_QUEUE_FULL_REASON;
    const n = Buffer.byteLength(text);
    this.held += n;
    this.budget?.take(n);
    this.ws.send(text, (err) => {
      if (!this.released) {
        this.held -= n;
        this.budget?.give(n);
      }
      done?.(err ?? undefined);
    });
    return undefined;
  }

  /** The connection is gone: what it still holds goes back to the budget. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget?.give(this.held);
    this.held = 0;
  }
}

interface OriginRule {
  scheme: string;
  host: string;
  port: string;
}

/** geth's parseOriginURL: `scheme://host:port`, or `host[:port]` without a scheme. */
function parseOrigin(text: string): OriginRule | undefined {
  const s = text.trim().toLowerCase();
  if (s.includes('://')) {
    try {
      const u = new URL(s);
      return { scheme: u.protocol.replace(/:$/, ''), host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port };
    } catch {
      return undefined;
    }
  }
  const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(s);
  return m ? { scheme: '', host: m[1]!, port: m[2] ?? '' } : undefined;
}

/** Whether a browser Origin header value passes the allow-list. */
export function originAllowed(allowed: readonly string[], origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (allowed.includes('*')) return true;
  const o = parseOrigin(origin);
  if (o === undefined) return false;
  return allowed.some((rule) => {
    const r = parseOrigin(rule);
    return (
      r !== undefined &&
      (r.scheme === '' || r.scheme === o.scheme) &&
      (r.host === '' || r.host === o.host) &&
      (r.port === '' || r.port === o.port)
    );
  });
}

function refuse(socket: Duplex, status: number, text: string): void {
  const body = text.endsWith('\n') ? text : text + '\n';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Connection: close\r\nContent-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function messageText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** connection ids are unique in the process (several listeners may share one dispatcher) */
let connectionSeq = 0;

class Connection {
  private inFlight = 0;
  private closing = false;
  private closeHooks: (() => void)[] | undefined = [];
  /** aborted when the connection closes: its long jobs (calls, traces) stop */
  private readonly gone = new AbortController();
  /** answered the last ping */
  alive = true;
  readonly outgoing: OutgoingQueue;

  constructor(
    readonly id: string,
    readonly ws: WebSocket,
    private readonly authenticated: boolean,
    private readonly opts: WsHandlerOptions,
  ) {
    this.outgoing = new OutgoingQueue(ws, opts.limits.maxQueueBytes);
    ws.on('message', (data) => this.onMessage(messageText(data)));
    ws.on('pong', () => (this.alive = true));
    ws.on('error', (err) => opts.log.debug({ connection: id, err: err.message }, 'websocket error'));
  }

  /** Queues one message; false when it cannot be (closing, or the queue is full: then it closes). */
  readonly send = (text: string): boolean => {
    if (this.closing || this.ws.readyState !== this.ws.OPEN) return false;
    const refused = this.outgoing.send(text);
    if (refused === undefined) return true;
    this.opts.log.warn({ connection: this.id, queued: this.outgoing.bytes }, 'websocket client too slow: disconnected');
    this.close(CLOSE_POLICY_VIOLATION, refused);
    return false;
  };

  private readonly notify = (method: string, params: unknown): boolean =>
    this.send(JSON.stringify({ jsonrpc: '2.0', method, params }));

  private readonly onClose = (fn: () => void): void => {
    if (this.closeHooks === undefined) fn();
    else this.closeHooks.push(fn);
  };

  private onMessage(text: string): void {
    if (this.closing) return;
    if (++this.inFlight >= MAX_IN_FLIGHT && !this.ws.isPaused) this.ws.pause();
    const after: (() => void)[] = [];
    const ctx: CallContext = {
      transport: 'ws',
      authenticated: this.authenticated,
      connectionId: this.id,
      client: `ws:${this.id}`,
      signal: this.gone.signal,
      notify: this.notify,
      sendText: this.send,
      onClose: this.onClose,
      afterReply: (fn) => after.push(fn),
    };
    this.opts.dispatcher
      .handle(text, ctx)
      .then(
        (reply) => {
          if (reply !== undefined) this.send(reply);
        },
        (err: unknown) => this.opts.log.error({ err }, 'json-rpc dispatcher failed'),
      )
      .finally(() => {
        for (const fn of after) this.guard(fn);
        if (--this.inFlight < MAX_IN_FLIGHT / 2 && this.ws.isPaused && !this.closing) this.ws.resume();
      });
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'websocket hook failed');
    }
  }

  /** Runs the close hooks once (subscriptions dropped). */
  released(): void {
    const hooks = this.closeHooks;
    this.closeHooks = undefined;
    for (const fn of hooks ?? []) this.guard(fn);
    this.gone.abort();
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.released();
    this.ws.close(code, reason);
  }
}

function createWsHandler(opts: WsHandlerOptions): WsHandler {
  const { limits, log } = opts;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxMessageSize,
    clientTracking: false,
    perMessageDeflate: false,
  });
  const open = new Set<Connection>();
  let closing = false;

  const full = (): boolean => limits.maxConnections > 0 && open.size >= limits.maxConnections;

  function onConnection(ws: WebSocket, req: IncomingMessage): void {
    if (closing) return ws.close(CLOSE_GOING_AWAY, SHUTDOWN_REASON);
    // upgrades that passed the check together may overshoot it: the late ones are closed at once
    if (full()) return ws.close(CLOSE_TRY_AGAIN_LATER, TOO_MANY_REASON);
    const authenticated = opts.authenticate !== undefined && opts.authenticate(req.headers);
    const conn = new Connection(`ws-${++connectionSeq}`, ws, authenticated, opts);
    open.add(conn);
    ws.on('close', () => {
      open.delete(conn);
      conn.outgoing.release();
      conn.released();
    });
  }

  const pingMs = limits.pingIntervalMs ?? PING_INTERVAL_MS;
  const pinger = setInterval(() => {
    for (const c of open) {
      if (!c.alive) {
        log.debug({ connection: c.id }, 'websocket keep-alive: no pong, connection cut');
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }, pingMs);
  pinger.unref();

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', () => socket.destroy());
      if (closing) return refuse(socket, 503, SHUTDOWN_REASON);
      if (!originAllowed(opts.origins, req.headers.origin)) {
        log.warn({ origin: String(req.headers.origin).slice(0, 200) }, 'websocket connection refused: origin not allowed');
        return refuse(socket, 403, 'websocket: origin not allowed');
      }
      if (full()) return refuse(socket, 503, `too many WebSocket connections (limit ${limits.maxConnections})`);
      wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
    },
    connections: () => open.size,
    async close() {
      closing = true;
      clearInterval(pinger);
      const closed = [...open].map((c) => new Promise<void>((resolve) => c.ws.once('close', () => resolve())));
      for (const c of open) c.close(CLOSE_GOING_AWAY, SHUTDOWN_REASON);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(closed), new Promise<void>((r) => (timer = setTimeout(r, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
      for (const c of open) c.ws.terminate();
      wss.close();
    },
  };
}

/** A listener on host:port that serves only WebSocket upgrades. */
export function startWsServer(opts: WsServerOptions): Promise<WsServerHandle> {
  const handler = createWsHandler(opts);
  const server = createServer((req, res) => {
    res.writeHead(426, { Upgrade: 'websocket', 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' }).end(UPGRADE_REQUIRED);
  });
  server.on('upgrade', (req, socket, head) => handler.handleUpgrade(req, socket, head));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      server.on('error', (err) => opts.log.error({ err }, 'json-rpc websocket server error'));
      resolve({
        port: (server.address() as AddressInfo).port,
        connections: handler.connections,
        async close() {
          const stopped = new Promise<void>((r) => server.close(() => r()));
          await handler.close();
          server.closeAllConnections();
          await stopped;
        },
      });
    });
  });
}
