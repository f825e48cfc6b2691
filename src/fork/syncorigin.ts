/**
 * A synchronous face of the origin client, for the flat state layer: ethereumjs and the JS tracers read
 * state synchronously (store/flatstate.ts), so a first touch of forked state blocks its thread until the
 * origin answered. The async client (fork/origin.ts) runs on a worker thread of its own; the caller posts
 * a batch and waits on a shared flag (Atomics.wait — allowed on Node's main thread and in workers), then
 * takes the answer with receiveMessageOnPort. One waiting call per thread; threads ask concurrently.
 */
import { MessageChannel, type MessagePort, Worker, isMainThread, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { unavailable } from '../lib/errors.js';
import { DEFAULT_FORK_RETRIES, DEFAULT_FORK_TIMEOUT_MS, MAX_ORIGIN_BACKOFF_MS, OriginClient, type OriginOptions, type OriginStats, type RpcCall } from './origin.js';

interface WorkerData {
  ferryForkOrigin: { opts: OriginOptions; port: MessagePort; flag: Int32Array };
}

type Reply = { ok: true; results: unknown[]; stats: OriginStats } | { ok: false; message: string; stats: OriginStats };

export class SyncOrigin {
  private worker: Worker | undefined;
  private port: MessagePort | undefined;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  /** the worker's counters as of its last answer */
  stats: OriginStats = { requests: 0, calls: 0, retries: 0, errors: 0, inFlight: 0 };
  readonly label: string;

  constructor(readonly opts: OriginOptions) {
    this.label = new OriginClient(opts).label;
  }

  private start(): MessagePort {
    if (this.port) return this.port;
    const { port1, port2 } = new MessageChannel();
    const data: WorkerData = { ferryForkOrigin: { opts: this.opts, port: port2, flag: this.flag } };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data, transferList: [port2] });
    this.worker.unref();
    this.port = port1;
    return port1;
  }

  /** Sends `calls` as one batch and blocks until the answer; a failure is DomainError `unavailable` naming the origin. */
  batch(calls: RpcCall[]): unknown[] {
    const port = this.start();
    Atomics.store(this.flag, 0, 0);
    port.postMessage(calls);
    const attempts = (this.opts.retries ?? DEFAULT_FORK_RETRIES) + 1;
    const bound = attempts * ((this.opts.timeoutMs ?? DEFAULT_FORK_TIMEOUT_MS) + MAX_ORIGIN_BACKOFF_MS) + 10_000;
    if (Atomics.wait(this.flag, 0, 0, bound) === 'timed-out') throw unavailable(`fork origin ${this.label}: the origin client thread did not answer`);
    const m = receiveMessageOnPort(port)?.message as Reply | undefined;
    if (m === undefined) throw unavailable(`fork origin ${this.label}: the origin client thread gave no answer`);
    this.stats = m.stats;
    // the origin is a service the node depends on: each surface maps `unavailable` once (lib/errors.ts)
    if (!m.ok) throw unavailable(m.message);
    return m.results;
  }

  close(): void {
    void this.worker?.terminate();
    this.port?.close();
    this.worker = undefined;
    this.port = undefined;
  }
}

function runWorker({ opts, port, flag }: WorkerData['ferryForkOrigin']): void {
  const client = new OriginClient(opts);
  port.on('message', (calls: RpcCall[]) => {
    client.batch(calls).then(
      (results) => port.postMessage({ ok: true, results, stats: { ...client.stats } } satisfies Reply),
      (e: unknown) => port.postMessage({ ok: false, message: (e as Error).message, stats: { ...client.stats } } satisfies Reply),
    ).finally(() => {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    });
  });
}

if (!isMainThread && (workerData as Partial<WorkerData> | undefined)?.ferryForkOrigin) {
  runWorker((workerData as WorkerData).ferryForkOrigin);
}
