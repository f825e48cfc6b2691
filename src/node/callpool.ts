/**
 * A pool of call workers (node/callworker.ts) behind the SimulatorPort: eth_call, eth_estimateGas, eth_createAccessList and eth_simulateV1 run
 * off the RPC thread, on the least busy worker, so a long call never stalls other clients. Inside a
 * worker the calls are time-sliced (lib/slices.ts), so a long call never holds up a short one either.
 *
 * Each call gets its deadline here, at arrival (evm-timeout; the RPC layer answers the timeout error
 * at the same moment), and the worker stops the run when it passes. A call whose client went away
 * (origin.signal) is cancelled in the worker.
 */
import { Worker } from 'node:worker_threads';
import type { CallOrigin, CallRequest, SimulatorOptions, SimulatorPort } from '../chain/simulator.js';
import type { BlockOverrides, StateOverrides } from '../types/query.js';
import { cancelled, fromDomainErrorData, limitExceeded, unavailable, type DomainErrorData } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { AccessListResult } from '../types/chain.js';
import type { SimBlockResult, SimulateRequest } from '../types/simulate.js';
import { TurnBatch } from '../lib/turnbatch.js';

/** Simulations waiting or running per worker before new ones are refused. */
export const CALL_QUEUE_PER_WORKER = 256;
/** Simulations running at once (time-sliced) per worker; the others wait, taking turns by client. */
export const CALL_ACTIVE_PER_WORKER = 64;
export const CALLS_BUSY_MESSAGE = 'too many concurrent calls, try again later';
export const CALL_CANCELLED_MESSAGE = 'call cancelled: the client went away';

export interface CallJob {
  op: 'call' | 'estimate' | 'accessList' | 'simulate';
  id: number;
  req: CallRequest;
  n: bigint;
  overrides: StateOverrides | undefined;
  /** geth's block overrides (eth_call, eth_estimateGas) */
  block: BlockOverrides | undefined;
  /** eth_simulateV1's request (op `simulate`; `overrides` then go under its first block) */
  simulate?: SimulateRequest;
  /** epoch ms after which the call is abandoned (Infinity = none) */
  deadline: number;
  /** the asking client's key (fairness between clients) */
  client: string;
}

/** the RPC thread gave up on a job (its client went away) */
export interface CallCancel {
  op: 'cancel';
  id: number;
}

/** a dev revert rewound the chain to `height`: drop what is kept by height (sent before any later job) */
export interface CallRewound {
  op: 'rewound';
  height: bigint;
}

export interface CallReply {
  id: number;
  value?: unknown;
  /** a domain error, or `bug`: the stack of anything else thrown in the worker */
  error?: DomainErrorData | { bug: string };
}

/** what the pool posts to a worker: its messages of one turn of the event loop, in order */
export type CallMessage = CallJob | CallCancel | CallRewound;

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
  /** messages for the worker: one postMessage per turn of the event loop, so a burst of calls wakes it once */
  outbox: TurnBatch<CallMessage>;
}

const post = (slot: Slot, m: CallMessage): void => slot.outbox.push(m);

export class CallPool implements SimulatorPort {
  private nextId = 1;
  private closing = false;

  /**
   * Settles once every worker has loaded and said so; rejects when one fails first. Calls sent
   * before then wait in the worker's message queue, so the node listens without waiting for this.
   */
  readonly ready: Promise<void>;

  private constructor(
    private readonly slots: Slot[],
    private readonly evmTimeoutMs: number,
    private readonly log: Logger,
    workers: Promise<void>[],
  ) {
    this.ready = Promise.all(workers).then(() => undefined);
    // a start failure is reported through `ready` (and `failed`); never an unhandled rejection
    this.ready.catch(() => undefined);
  }

  /** A dev revert rewound the chain: every worker forgets what it keeps by height before its next job. */
  rewound(height: bigint): void {
    for (const slot of this.slots) post(slot, { op: 'rewound', height });
  }

  /** Starts the workers without waiting for them to load (cold start: the listeners open meanwhile). */
  static start(size: number, dbPath: string, opts: SimulatorOptions, log: Logger): CallPool {
    const slots: Slot[] = [];
    const loaded: Promise<void>[] = [];
    for (let i = 0; i < Math.max(1, size); i++) {
      const worker = new Worker(new URL('./callworker.js', import.meta.url), { workerData: { dbPath, opts } });
      const slot: Slot = { worker, pending: new Map(), outbox: new TurnBatch<CallMessage>((batch) => worker.postMessage(batch)) };
      loaded.push(
        new Promise<void>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`call worker exited with code ${code} while starting`)));
          // the worker's first message is its `ready` (id 0, which no call has)
          worker.once('message', () => resolve());
        }),
      );
      slots.push(slot);
    }
    const pool = new CallPool(slots, opts.evmTimeoutMs, log, loaded);
    for (const slot of slots) {
      // a worker answers in batches too (node/callworker.ts)
      slot.worker.on('message', (batch: CallReply[]) => {
        for (const r of batch) pool.settle(slot, r);
      });
      slot.worker.on('error', (e) => pool.failed(slot, e));
      slot.worker.on('exit', (code) => pool.failed(slot, new Error(`call worker exited with code ${code}`)));
    }
    return pool;
  }

  private settle(slot: Slot, r: CallReply): void {
    const p = slot.pending.get(r.id);
    if (!p) return;
    slot.pending.delete(r.id);
    if (!r.error) return p.resolve(r.value);
    if ('bug' in r.error) {
      this.log.error({ err: r.error.bug }, 'call worker failed');
      return p.reject(new Error(r.error.bug));
    }
    p.reject(fromDomainErrorData(r.error));
  }

  private failed(slot: Slot, e: unknown): void {
    for (const p of slot.pending.values()) p.reject(unavailable('call worker stopped'));
    slot.pending.clear();
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (!this.closing) this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'call worker died');
  }

  private submit<T>(
    op: CallJob['op'],
    req: CallRequest,
    n: bigint,
    overrides: StateOverrides | undefined,
    origin?: CallOrigin,
    block?: BlockOverrides,
    simulate?: SimulateRequest,
  ): Promise<T> {
    let best: Slot | undefined;
    for (const s of this.slots) if (!best || s.pending.size < best.pending.size) best = s;
    if (!best) return Promise.reject(unavailable('no call worker available'));
    if (best.pending.size >= CALL_QUEUE_PER_WORKER) return Promise.reject(limitExceeded(CALLS_BUSY_MESSAGE));
    // a transport with `onGone` (HTTP) is watched without its AbortSignal, which it would make for this call only
    const signal = origin?.onGone === undefined ? origin?.signal : undefined;
    if (signal?.aborted) return Promise.reject(cancelled(CALL_CANCELLED_MESSAGE));
    const id = this.nextId++;
    const slot = best;
    const deadline = this.evmTimeoutMs > 0 ? Date.now() + this.evmTimeoutMs : Infinity;
    return new Promise<T>((resolve, reject) => {
      let unwatch: (() => void) | undefined;
      const onAbort = () => {
        if (!slot.pending.delete(id)) return;
        post(slot, { op: 'cancel', id });
        reject(cancelled(CALL_CANCELLED_MESSAGE));
      };
      slot.pending.set(id, {
        resolve: (v) => (unwatch?.(), resolve(v as T)),
        reject: (e) => (unwatch?.(), reject(e)),
      });
      post(slot, { op, id, req, n, overrides, block, deadline, client: origin?.client ?? '', ...(simulate ? { simulate } : {}) });
      // a client already gone cancels the job at once: its cancel follows it in the same message
      if (origin?.onGone !== undefined) unwatch = origin.onGone(onAbort);
      else if (signal !== undefined) {
        signal.addEventListener('abort', onAbort, { once: true });
        unwatch = () => signal.removeEventListener('abort', onAbort);
      }
    });
  }

  /** jobs sent to the workers and not answered yet (metrics) */
  queued(): number {
    let n = 0;
    for (const s of this.slots) n += s.pending.size;
    return n;
  }

  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<Uint8Array> {
    return this.submit<Uint8Array>('call', req, n, overrides, origin, block);
  }

  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<bigint> {
    return this.submit<bigint>('estimate', req, n, overrides, origin, block);
  }

  createAccessList(req: CallRequest & { gas: bigint }, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin): Promise<AccessListResult> {
    return this.submit<AccessListResult>('accessList', req, n, overrides, origin);
  }

  /** eth_simulateV1 on the workers, scheduled and timed as eth_call; `pre` goes under the first block */
  simulateV1(req: SimulateRequest, n: bigint, pre: StateOverrides | undefined, origin?: CallOrigin): Promise<SimBlockResult[]> {
    return this.submit<SimBlockResult[]>('simulate', {}, n, pre, origin, undefined, req);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
