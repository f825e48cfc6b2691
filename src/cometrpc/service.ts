/**
 * Surface B as a whole: the route table, the envelope and the event bus behind one handler that the
 * listener (server/comet.ts) calls — HTTP requests by path, and one session per WebSocket.
 *
 * Slow subscribers (CometBFT's pubsub buffer): each subscription may have at most
 * `experimental_subscription_buffer_size` notifications queued and not yet written to its socket;
 * one more cancels it with `-32000 subscription was canceled (reason: internal subscription event
 * buffer is out of capacity)`. With `experimental_close_on_slow_client`, a connection that has more
 * than `experimental_websocket_write_buffer_size` messages queued has its subscriptions cancelled
 * with reason `slow client`. The listener bounds the unsent bytes of each connection and of all of
 * them (`websocket_max_queue_bytes`, `websocket_max_total_queue_bytes`). Nothing
 * here ever waits for a client, so a dead one costs its own buffers only.
 */
import type { CompiledQuery } from '../eventquery/index.js';
import type { ConsensusBackend } from './backend.js';
import type { CometHttpRequest, CometHttpResponse, CometWsPeer } from '../jsonrpc/transport.js';
import { BUG_ERROR, CometCode, ErrorText } from './errors.js';
import { CometEnvelope, URI_REQUEST_ID, cancellationText, errorText, wireErrorText, type TransportContext } from './envelope.js';
import { EventBus, type BusEvent, type Subscription } from './events.js';
import { createCometRoutes, type RouteTable, type SubscriptionSession } from './routes.js';

/** A WebSocket connection with more requests waiting to run than this is closed. */
export const WS_MAX_PENDING_REQUESTS = 1_000;
export const OUT_OF_CAPACITY = 'internal subscription event buffer is out of capacity';
export const SLOW_CLIENT = 'slow client';

export interface CometServiceOptions {
  /** config.toml `rpc.unsafe` */
  unsafe: boolean;
  maxRequestBatchSize: number;
  maxSubscriptionClients: number;
  maxSubscriptionsPerClient: number;
  subscriptionBufferSize: number;
  websocketWriteBufferSize: number;
  closeOnSlowClient: boolean;
  timeoutBroadcastTxCommitMs: number;
  timeoutCommitMs: number;
}

export interface ServiceLog {
  error(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

const NOT_FOUND: CometHttpResponse = { status: 404, contentType: 'text/plain; charset=utf-8', body: '404 page not found\n', cacheable: false };
/** a body over max_body_bytes: CometBFT's text, with HTTP 413 (refused before the body is read; CometBFT reads it and answers 400) */
const BODY_TOO_LARGE: CometHttpResponse = {
  status: 413,
  contentType: 'application/json',
  body: errorText(undefined, CometCode.invalidRequest, ErrorText.invalidRequest, 'error reading request body: http: request body too large'),
  cacheable: false,
};
/** what a bug (a thrown value that is not ours) is answered with: id -1, -32603, no library text */
const bugAnswer = (): string => wireErrorText(URI_REQUEST_ID, BUG_ERROR);

interface LiveSubscription extends Subscription {
  id: unknown;
  queued: number;
}

class WsSession implements SubscriptionSession {
  private readonly subs = new Set<LiveSubscription>();
  private queued = 0;
  private closed = false;
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private readonly ctx: TransportContext;

  constructor(
    private readonly svc: CometService,
    private readonly peer: CometWsPeer,
  ) {
    this.ctx = { transport: 'ws', authenticated: false, remoteAddr: peer.remoteAddr, session: this, connectionId: peer.remoteAddr };
  }

  /** Requests of one connection run one at a time, in order (as CometBFT's read routine does). */
  message(text: string): void {
    if (this.pending >= WS_MAX_PENDING_REQUESTS) {
      this.svc.log.info({ remoteAddr: this.peer.remoteAddr }, 'cometbft rpc: closing a websocket client that sends faster than it is answered');
      this.peer.close();
      return;
    }
    this.pending++;
    this.queue = this.queue.then(() =>
      this.svc.envelope.ws(text, this.ctx).then(
        (answer) => {
          if (answer !== undefined) this.send(answer);
        },
        (err: unknown) => {
          this.svc.reportBug(err, 'cometbft rpc: websocket call failed');
          this.send(bugAnswer());
        },
      ).finally(() => this.pending--),
    );
  }

  private send(text: string, done?: () => void): void {
    if (this.closed) return;
    this.queued++;
    this.peer.send(text, () => {
      this.queued--;
      done?.();
    });
  }

  subscribe(id: unknown, queryText: string, query: CompiledQuery, key: string, eventType: string | undefined): void {
    const sub: LiveSubscription = {
      clientId: this.peer.remoteAddr,
      text: queryText,
      key,
      query,
      eventType,
      id,
      queued: 0,
      deliver: (ev) => this.deliver(sub, ev),
      cancelled: (reason) => {
        this.subs.delete(sub);
        this.send(cancellationText(sub.id, reason));
      },
    };
    this.subs.add(sub);
    this.svc.bus.add(sub);
  }

  private deliver(sub: LiveSubscription, ev: BusEvent): void {
    if (this.closed) return;
    if (sub.queued >= this.svc.opts.subscriptionBufferSize) {
      this.svc.bus.cancel(sub, OUT_OF_CAPACITY);
      return;
    }
    if (this.svc.opts.closeOnSlowClient && this.queued >= this.svc.opts.websocketWriteBufferSize) {
      for (const s of [...this.subs]) this.svc.bus.cancel(s, SLOW_CLIENT);
      return;
    }
    sub.queued++;
    const text = `{"jsonrpc":"2.0","id":${JSON.stringify(sub.id)},"result":{"query":${JSON.stringify(sub.text)},"data":${ev.dataText()},"events":${ev.eventsText()}}}`;
    this.send(text, () => sub.queued--);
  }

  closed_(): void {
    this.closed = true;
    if (this.subs.size > 0) {
      try {
        this.svc.bus.unsubscribeAll(this.peer.remoteAddr);
      } catch {
        // nothing left
      }
    }
    this.subs.clear();
  }
}

export class CometService {
  readonly bus: EventBus;
  readonly envelope: CometEnvelope;
  readonly table: RouteTable;

  constructor(
    readonly backend: ConsensusBackend,
    readonly opts: CometServiceOptions,
    readonly log: ServiceLog,
  ) {
    this.bus = new EventBus(backend.blocks, { maxClients: opts.maxSubscriptionClients, maxPerClient: opts.maxSubscriptionsPerClient });
    this.table = createCometRoutes(backend, this.bus, {
      unsafe: opts.unsafe,
      timeoutBroadcastTxCommitMs: opts.timeoutBroadcastTxCommitMs,
      timeoutCommitMs: opts.timeoutCommitMs,
    });
    this.bus.onStart();
    this.envelope = new CometEnvelope(this.table, {
      maxBatch: opts.maxRequestBatchSize,
      onInternalError: (err, method) => log.error({ method, err: err instanceof Error ? err.stack : String(err) }, 'cometbft rpc: internal error'),
    });
  }

  /** Never rejects: a bug is answered as CometBFT's panic recovery does (HTTP 500, id -1, -32603). */
  async http(req: CometHttpRequest): Promise<CometHttpResponse> {
    try {
      return await this.route(req);
    } catch (err) {
      this.reportBug(err, 'cometbft rpc: request failed');
      return { status: 500, contentType: 'application/json', body: bugAnswer(), cacheable: false };
    }
  }

  private async route(req: CometHttpRequest): Promise<CometHttpResponse> {
    const ctx: TransportContext = { transport: 'http', authenticated: false, remoteAddr: req.remoteAddr };
    if (req.body === undefined) return BODY_TOO_LARGE;
    if (req.path === '/') {
      if (req.body === '') return { status: 200, contentType: 'text/html', body: this.envelope.listing(req.host), cacheable: false };
      return this.envelope.httpJson(req.body, ctx);
    }
    const name = req.path.slice(1);
    if (req.path.indexOf('/', 1) >= 0) return NOT_FOUND;
    const answer = await this.envelope.uri(name, (p) => req.query.get(p) ?? undefined, ctx);
    return answer ?? NOT_FOUND;
  }

  reportBug(err: unknown, msg: string): void {
    this.log.error({ err: err instanceof Error ? err.stack : String(err) }, msg);
  }

  websocket(peer: CometWsPeer): { message(text: string): void; closed(): void } {
    const s = new WsSession(this, peer);
    return { message: (t) => s.message(t), closed: () => s.closed_() };
  }

  /** node shutdown: every subscriber is told CometBFT's way */
  close(): void {
    this.bus.close();
  }
}
