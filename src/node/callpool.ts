/**
 * A pool of call workers (node/callworker.ts) behind the SimulatorPort: eth_call and eth_estimateGas run
 * off the RPC thread, on the least busy worker, so a long call never stalls other clients.
 */
import { Worker } from 'node:worker_threads';
import type { CallRequest, SimulatorOptions, SimulatorPort } from '../chain/simulator.js';
import type { SimOverrides } from '../evm/executor.js';
import { FerryError, ErrorCode } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';

/** Simulations waiting or running per worker before new ones are refused. */
export const CALL_QUEUE_PER_WORKER = 256;

export interface CallJob {
  id: number;
  op: 'call' | 'estimate';
  req: CallRequest;
  n: bigint;
  overrides: SimOverrides | undefined;
}

export interface CallReply {
  id: number;
  value?: unknown;
  /** code 0: not a FerryError (a bug in the worker) */
  error?: { code: number; message: string; data?: unknown };
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
}

export class CallPool implements SimulatorPort {
  private nextId = 1;
  private closing = false;

  private constructor(
    private readonly slots: Slot[],
    private readonly log: Logger,
  ) {}

  static async start(size: number, dbPath: string, opts: SimulatorOptions, log: Logger): Promise<CallPool> {
    const slots: Slot[] = [];
    const pool = new CallPool(slots, log);
    await Promise.all(
      Array.from({ length: Math.max(1, size) }, async () => {
        const worker = new Worker(new URL('./callworker.js', import.meta.url), { workerData: { dbPath, opts } });
        const slot: Slot = { worker, pending: new Map() };
        await new Promise<void>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('message', () => resolve());
        });
        worker.on('message', (r: CallReply) => pool.settle(slot, r));
        worker.on('error', (e) => pool.failed(slot, e));
        worker.on('exit', (code) => pool.failed(slot, new Error(`call worker exited with code ${code}`)));
        slots.push(slot);
      }),
    );
    return pool;
  }

  private settle(slot: Slot, r: CallReply): void {
    const p = slot.pending.get(r.id);
    if (!p) return;
    slot.pending.delete(r.id);
    if (!r.error) return p.resolve(r.value);
    if (r.error.code === 0) {
      this.log.error({ err: r.error.message }, 'call worker failed');
      return p.reject(new Error(r.error.message));
    }
    p.reject(new FerryError(r.error.code, r.error.message, r.error.data));
  }

  private failed(slot: Slot, e: unknown): void {
    for (const p of slot.pending.values()) p.reject(new FerryError(ErrorCode.server, 'call worker stopped'));
    slot.pending.clear();
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (!this.closing) this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'call worker died');
  }

  private submit<T>(op: CallJob['op'], req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<T> {
    let best: Slot | undefined;
    for (const s of this.slots) if (!best || s.pending.size < best.pending.size) best = s;
    if (!best) return Promise.reject(new FerryError(ErrorCode.server, 'no call worker available'));
    if (best.pending.size >= CALL_QUEUE_PER_WORKER) {
      return Promise.reject(new FerryError(ErrorCode.server, 'too many concurrent calls, try again later'));
    }
    const id = this.nextId++;
    const slot = best;
    return new Promise<T>((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      slot.worker.postMessage({ id, op, req, n, overrides } satisfies CallJob);
    });
  }

  /** jobs sent to the workers and not answered yet (metrics) */
  queued(): number {
    let n = 0;
    for (const s of this.slots) n += s.pending.size;
    return n;
  }

  call(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<Uint8Array> {
    return this.submit<Uint8Array>('call', req, n, overrides);
  }

  estimateGas(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<bigint> {
    return this.submit<bigint>('estimate', req, n, overrides);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
