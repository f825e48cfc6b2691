/**
 * The switches a re-fork turns (docs/fork-mode.md "Reset"): Surface A's and Surface B's listeners stay up
 * across an in-place re-fork and dispatch through these; while the old chain's services stop and the new
 * chain's start, a request waits (at most MAX_REFORK_WAITING of them; past it the request is answered
 * Surface A's limitExceeded error, -32000 "node is re-forking") and is then answered by the new chain.
 */
import { evmErrors } from '../evmrpc/errors.js';
import type { Dispatcher } from '../jsonrpc/core.js';
import type { CometHttpRequest, CometHttpResponse, CometRpcHandler, CometWsPeer, CometWsSession } from '../jsonrpc/transport.js';
import type { CallContext } from '../jsonrpc/types.js';
import { limitExceeded, mapDomainError } from '../lib/errors.js';

/** Requests (of both surfaces together) that wait while a re-fork runs; past it they are answered at once. */
export const MAX_REFORK_WAITING = 1024;
export const REFORKING_MESSAGE = 'node is re-forking: too many requests waiting';

/** The gate both switches wait at: closed by `pause`, opened by `resume`. */
class Gate {
  private opened: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private waiting = 0;

  get closed(): boolean {
    return this.opened !== undefined;
  }

  close(): void {
    if (this.opened !== undefined) return;
    this.opened = new Promise((resolve) => (this.open = resolve));
  }

  reopen(): void {
    const open = this.open;
    this.opened = undefined;
    this.open = undefined;
    open?.();
  }

  /** false: too many wait already (the caller answers at once) */
  async pass(): Promise<boolean> {
    const opened = this.opened;
    if (opened === undefined) return true;
    if (this.waiting >= MAX_REFORK_WAITING) return false;
    this.waiting++;
    try {
      await opened;
    } finally {
      this.waiting--;
    }
    return true;
  }
}

/** Surface A's listeners' dispatcher: the current chain's. */
export class SwitchDispatcher implements Dispatcher {
  private readonly gate = new Gate();

  constructor(private current: Dispatcher) {}

  async handle(body: string, ctx: CallContext): Promise<string | undefined> {
    if (!(await this.gate.pass())) return JSON.stringify({ jsonrpc: '2.0', id: null, error: mapDomainError(evmErrors, limitExceeded(REFORKING_MESSAGE)) });
    return this.current.handle(body, ctx);
  }

  pause(): void {
    this.gate.close();
  }

  resume(next: Dispatcher): void {
    this.current = next;
    this.gate.reopen();
  }
}

/**
 * Surface B's listener's handler: the current chain's CometBFT RPC service. Its WebSocket clients are
 * closed when a re-fork begins (their subscriptions were to the old chain's events); one connecting
 * during the re-fork is closed at once.
 */
export class SwitchCometHandler implements CometRpcHandler {
  private readonly gate = new Gate();
  private readonly peers = new Set<CometWsPeer>();

  constructor(private current: CometRpcHandler) {}

  async http(req: CometHttpRequest): Promise<CometHttpResponse> {
    if (!(await this.gate.pass())) {
      return { status: 503, contentType: 'text/plain; charset=utf-8', body: REFORKING_MESSAGE, cacheable: false };
    }
    return this.current.http(req);
  }

  websocket(peer: CometWsPeer): CometWsSession {
    if (this.gate.closed) {
      peer.close();
      return { message: () => {}, closed: () => {} };
    }
    const session = this.current.websocket(peer);
    this.peers.add(peer);
    return {
      message: (text) => session.message(text),
      closed: () => {
        this.peers.delete(peer);
        session.closed();
      },
    };
  }

  pause(): void {
    this.gate.close();
    for (const p of this.peers) p.close();
    this.peers.clear();
  }

  resume(next: CometRpcHandler): void {
    this.current = next;
    this.gate.reopen();
  }
}
