/**
 * Transaction, block and call tracing, off the RPC thread. `TraceService` (RPC thread) starts a
 * dedicated worker thread — this same module, loaded with `workerData.ferryTrace` — that opens its
 * own read connection to the store and its own EvmRunner, and replays committed blocks on their
 * parent state with a tracer attached. So a long trace never stalls other RPC clients, and the
 * chain's block-making runner is never touched.
 *
 * Jobs run one at a time, in arrival order (at most MAX_QUEUED_TRACES waiting), and are handed to the
 * worker only once it has said it is ready: a job abandoned while the worker still starts leaves the
 * queue without ever running (handing it over early made the worker miss the cancel grace while it
 * loaded, and be restarted — the next trace then waited for the grace and a second start). Each job is
 * bounded twice: inside the worker by its deadline (the EVM and the JS sandbox stop themselves:
 * "execution timeout"), and from outside by a watchdog that terminates and restarts the worker
 * if a job overruns its timeout by WATCHDOG_GRACE_MS — whatever it held is released with it.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ForkSchedule } from '../evm/forks.js';
import type { ForkTimes } from '../config/genesis.js';
import { EvmRunner, withBlockOverrides, type BlockContext, type RunGate, type StateRef } from '../evm/runner.js';
import type { SimCall } from '../evm/simulate.js';
import type { BlockOverrides, StateOverrides } from '../types/query.js';
import { TIMEOUT_MESSAGE, TraceEngine, TraceError, TraceResultTooLarge, TraceTimeout, type TraceOptions, type TxTraceOutcome } from '../evm/tracing/index.js';
import { decodeTx } from '../evm/tx.js';
import {
  DomainError,
  cancelled,
  domainErrorData,
  executionFailed,
  fromDomainErrorData,
  invalidRequest,
  limitExceeded,
  resultTooLarge,
  timeout,
  unavailable,
  type DomainErrorData,
} from '../lib/errors.js';
import { TaskCancelled } from '../lib/slices.js';
import { FlatState } from '../store/flatstate.js';
import { TrieDB } from '../store/triedb.js';
import { Store } from '../store/store.js';
import { blockHashLookup } from '../store/hashwindow.js';
import type { CallOrigin, EvmHeader, Hash } from '../types/chain.js';
import { appliedCheats, CheatOverlay } from './cheats.js';
import { GethText } from '../lib/gethtexts.js';

/** trace requests waiting for the worker; more are refused */
export const MAX_QUEUED_TRACES = 64;
/** how long past its own timeout a job may run before the worker is restarted */
export const WATCHDOG_GRACE_MS = 10_000;
/** how long a cancelled job may take to stop before the worker is restarted (a tracer's own JS loop) */
export const CANCEL_GRACE_MS = 2_000;
/**
 * A job is answered this long before its origin's `answerBy`, so the client hears the trace's own
 * `execution timeout` (geth's answer) rather than the transport's `request timed out`, which
 * jsonrpc/core.ts gives at `answerBy` itself: two timers due at the same moment would race.
 */
export const ANSWER_LEAD_MS = 100;
export const TRACE_CANCELLED_MESSAGE = 'trace cancelled: the client went away';

export interface TraceServiceOptions {
  dbPath: string;
  chainId: bigint;
  hardfork: string;
  /** the chain's later forks by block time (evm/forks.ts) */
  forkTimes?: ForkTimes;
  /** max characters of one trace result's JSON (json-rpc.trace-result-max-size; 0 = unlimited) */
  maxResultSize: number;
}

/** One entry of debug_traceBlockBy*: geth's txTraceResult. */
export interface BlockTraceEntry {
  txHash: Hash;
  result?: unknown;
  error?: string;
}

type Job =
  | { kind: 'tx'; hash: Hash; opts: TraceOptions }
  | { kind: 'block'; height: bigint; opts: TraceOptions }
  | { kind: 'call'; call: SimCall; height: bigint; overrides: StateOverrides | undefined; block: BlockOverrides | undefined; opts: TraceOptions }
  | { kind: 'replay'; block: ReplayBlock; opts: TraceOptions };

/** A block given by a client (debug_traceBlock): replayed on the state of committed `parent`. */
export interface ReplayBlock {
  parent: bigint;
  ctx: BlockContext;
  /** the hash tracers see */
  hash: Hash;
  /** each tx's signed envelope */
  rawTxs: Uint8Array[];
}

type JobReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: DomainErrorData };
/** the worker's messages: a job's outcome, or (once, after start) that it takes jobs */
type Reply = JobReply | { ready: true };

interface Queued {
  id: number;
  job: Job;
  /** epoch ms by which the client needs the answer (Infinity = no limit) */
  answerBy: number;
  /** settles the request once (later outcomes are dropped) */
  settle(outcome: { value: unknown } | { error: DomainError }): void;
}

// ---- RPC thread side ------------------------------------------------------------------------

/**
 * Jobs run one at a time in arrival order on the worker. A job whose client goes away
 * (origin.signal) leaves the queue, or, running, is stopped: the worker sees the cancelled id in
 * shared memory at its next JUMP/JUMPI; if it has not answered CANCEL_GRACE_MS later, it is
 * restarted. A job is answered ANSWER_LEAD_MS before its origin's `answerBy` whatever happens (`execution timeout`),
 * and runs at most until then.
 */
export class TraceService {
  private worker: Worker | undefined;
  /** the worker once it said it is ready for jobs */
  private readyWorker: Worker | undefined;
  /** workers terminated because a job overran its timeout or its cancel grace (tests, metrics) */
  private restartCount = 0;
  private readonly queue: Queued[] = [];
  private current: (Queued & { timer: NodeJS.Timeout }) | undefined;
  private nextId = 1;
  private closed = false;
  /** [0]: the id of the running job the RPC thread gave up on (read by the worker at every jump) */
  private readonly cancelled = new Int32Array(new SharedArrayBuffer(4));

  constructor(
    private readonly opts: TraceServiceOptions,
    /** how long a cancelled job may take to stop before the worker is restarted */
    private readonly cancelGraceMs = CANCEL_GRACE_MS,
  ) {}

  private spawn(): Worker {
    const w = new Worker(new URL(import.meta.url), { workerData: { ferryTrace: this.opts, cancelled: this.cancelled } });
    w.on('message', (r: Reply) => {
      if ('ready' in r) {
        if (this.worker === w) this.readyWorker = w;
        return this.pump();
      }
      this.onReply(r);
    });
    w.on('error', (e) => this.onCrash(w, e));
    w.on('exit', () => this.onCrash(w, new Error('trace worker exited')));
    w.unref();
    return w;
  }

  /** traces waiting for the worker (metrics) */
  queued(): number {
    return this.queue.length;
  }

  /** workers terminated so far because a job would not stop (tests, metrics) */
  restarts(): number {
    return this.restartCount;
  }

  traceTransaction(hash: Hash, opts: TraceOptions, origin?: CallOrigin): Promise<unknown> {
    return this.submit({ kind: 'tx', hash, opts }, origin);
  }

  traceBlock(height: bigint, opts: TraceOptions, origin?: CallOrigin): Promise<BlockTraceEntry[]> {
    return this.submit({ kind: 'block', height, opts }, origin) as Promise<BlockTraceEntry[]>;
  }

  /** `block`: geth's block overrides, applied to the block's context in the worker */
  traceCall(
    call: SimCall,
    height: bigint,
    overrides: StateOverrides | undefined,
    opts: TraceOptions,
    origin?: CallOrigin,
    block?: BlockOverrides,
  ): Promise<unknown> {
    return this.submit({ kind: 'call', call, height, overrides, block, opts }, origin);
  }

  /** debug_traceBlock: a block that need not be committed, on its (committed) parent's state */
  traceReplay(block: ReplayBlock, opts: TraceOptions, origin?: CallOrigin): Promise<BlockTraceEntry[]> {
    return this.submit({ kind: 'replay', block, opts }, origin) as Promise<BlockTraceEntry[]>;
  }

  private submit(job: Job, origin: CallOrigin | undefined): Promise<unknown> {
    if (this.closed) return Promise.reject(unavailable('node is shutting down'));
    if (this.queue.length >= MAX_QUEUED_TRACES) {
      return Promise.reject(limitExceeded(`too many trace requests waiting (max ${MAX_QUEUED_TRACES})`));
    }
    const signal = origin?.signal;
    if (signal?.aborted) return Promise.reject(cancelled(TRACE_CANCELLED_MESSAGE));
    return new Promise((resolve, reject) => {
      let settled = false;
      let dueTimer: NodeJS.Timeout | undefined;
      const q: Queued = {
        id: this.nextId++,
        job,
        answerBy: origin?.answerBy === undefined ? Infinity : origin.answerBy - ANSWER_LEAD_MS,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(dueTimer);
          signal?.removeEventListener('abort', onAbort);
          if ('error' in outcome) reject(outcome.error);
          else resolve(outcome.value);
        },
      };
      const onAbort = () => this.abandon(q, cancelled(TRACE_CANCELLED_MESSAGE));
      signal?.addEventListener('abort', onAbort, { once: true });
      // the transport's limit: answered by then, whether the job waits or runs
      if (q.answerBy !== Infinity) dueTimer = setTimeout(() => this.abandon(q, timeout(TIMEOUT_MESSAGE)), Math.max(0, q.answerBy - Date.now()));
      this.queue.push(q);
      this.pump();
    });
  }

  /** The request is answered with `error` now; its job leaves the queue, or is stopped if it runs. */
  private abandon(q: Queued, error: DomainError): void {
    q.settle({ error });
    const i = this.queue.indexOf(q);
    if (i >= 0) {
      this.queue.splice(i, 1);
      return;
    }
    const cur = this.current;
    if (cur?.id !== q.id) return;
    Atomics.store(this.cancelled, 0, q.id);
    clearTimeout(cur.timer);
    cur.timer = setTimeout(() => this.overrun(), this.cancelGraceMs);
  }

  private pump(): void {
    if (this.current || this.closed || this.queue.length === 0) return;
    this.worker ??= this.spawn();
    if (this.readyWorker !== this.worker) return;
    const next = this.queue.shift()!;
    // the run ends before the answer is due (the rest of the time is the queue's)
    const left = next.answerBy - Date.now();
    const timeoutMs = Math.max(0, Math.min(next.job.opts.timeoutMs, left));
    const job = { ...next.job, opts: { ...next.job.opts, timeoutMs, maxResultSize: this.opts.maxResultSize } } as Job;
    const timer = setTimeout(() => this.overrun(), timeoutMs + WATCHDOG_GRACE_MS);
    this.current = { ...next, timer };
    this.worker.postMessage({ id: next.id, job });
  }

  private onReply(r: JobReply): void {
    const cur = this.current;
    if (!cur || cur.id !== r.id) return;
    clearTimeout(cur.timer);
    this.current = undefined;
    if (r.ok) cur.settle({ value: r.value });
    else cur.settle({ error: fromDomainErrorData(r.error) });
    this.pump();
  }

  /** the job outlived its timeout (or its cancel): drop the worker (and all it holds) and go on with a fresh one */
  private overrun(): void {
    const cur = this.current;
    if (!cur) return;
    this.current = undefined;
    cur.settle({ error: timeout(TIMEOUT_MESSAGE) });
    const w = this.worker;
    this.worker = undefined;
    this.restartCount++;
    void w?.terminate();
    this.pump();
  }

  private onCrash(w: Worker, e: unknown): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    const cur = this.current;
    this.current = undefined;
    if (cur) {
      clearTimeout(cur.timer);
      cur.settle({ error: executionFailed(`tracing failed: ${e instanceof Error ? e.message : String(e)}`) });
    }
    this.pump();
  }

  /** A dev revert rewound the chain: the worker (if running) forgets the blocks it keeps by height. */
  rewound(): void {
    this.worker?.postMessage({ rewound: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.queue.splice(0)) q.settle({ error: unavailable('node is shutting down') });
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.settle({ error: unavailable('node is shutting down') });
      this.current = undefined;
    }
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

// ---- worker side ------------------------------------------------------------------------------

/** the state after a committed block, as the flat runner reads it */
function refOf(h: EvmHeader): StateRef {
  return { height: h.number, root: h.stateRoot };
}

function contextOf(h: EvmHeader): BlockContext {
  return { number: h.number, timestamp: h.timestamp, coinbase: h.miner, gasLimit: h.gasLimit, baseFee: h.baseFeePerGas, mixHash: h.mixHash };
}

async function workerMain(opts: TraceServiceOptions, cancelled: Int32Array): Promise<void> {
  const store = new Store(opts.dbPath, { reader: true });
  const forks = new ForkSchedule(opts.chainId, opts);
  // state reads come from the flat layer (no trie walks); the trie database is never written (no commit)
  const flat = new FlatState(store);
  const trieDb = new TrieDB(store);
  /** the job running now: its EVM stops at the next jump once the RPC thread cancels this id */
  let jobId = 0;
  const gate: RunGate = {
    deadline: Infinity,
    pass: () => {
      if (Atomics.load(cancelled, 0) === jobId) throw new TaskCancelled();
      return undefined;
    },
  };
  const makeEngine = async () => {
    const runner = await EvmRunner.createFlat(forks, flat, trieDb, blockHashLookup(store));
    runner.gate = gate;
    return new TraceEngine(runner);
  };
  let engine = await makeEngine();

  const blockAt = (height: bigint) => {
    if (height === 0n) throw new TraceError(GethText.genesisNotTraceable);
    const block = store.evmBlock(height);
    const parent = store.evmBlock(height - 1n);
    if (!block || !parent) throw new TraceError(`block #${height} not found`);
    // the senders stored with the block were recovered when it was made; the dev cheats the block
    // applied before its first tx (chain/cheats.ts) run first
    const prelude = CheatOverlay.prelude(appliedCheats(store, Number(height)));
    return { block, parent, prelude, txs: block.transactions.map((t) => decodeTx(t.raw, forks.commonAt(block.header.timestamp), t.from)) };
  };

  const run = async (job: Job): Promise<unknown> => {
    switch (job.kind) {
      case 'tx': {
        const loc = store.txLocation(job.hash);
        if (!loc) throw new TraceError('transaction not found');
        const { block, parent, txs, prelude } = blockAt(loc.height);
        const [out] = await engine.traceBlock(refOf(parent.header), contextOf(block.header), block.header.hash, txs, job.opts, loc.index, false, prelude);
        return unwrap(out!);
      }
      case 'block': {
        const { block, parent, txs, prelude } = blockAt(job.height);
        const outs = await engine.traceBlock(refOf(parent.header), contextOf(block.header), block.header.hash, txs, job.opts, undefined, false, prelude);
        return outs.map((o, i) => ({ txHash: txs[i]!.evm.hash, ...o }));
      }
      case 'replay': {
        const parent = store.evmBlock(job.block.parent);
        if (!parent) throw new TraceError(`block #${job.block.parent} not found`);
        const txs = job.block.rawTxs.map((raw) => decodeTx(raw, forks.commonAt(job.block.ctx.timestamp)));
        const outs = await engine.traceBlock(refOf(parent.header), job.block.ctx, job.block.hash, txs, job.opts, undefined, true);
        return outs.map((o, i) => ({ txHash: txs[i]!.evm.hash, ...o }));
      }
      case 'call': {
        const block = store.evmBlock(job.height);
        if (!block) throw new TraceError(`block #${job.height} not found`);
        return engine.traceCall(refOf(block.header), withBlockOverrides(contextOf(block.header), job.block), job.call, job.overrides, job.opts);
      }
    }
  };

  const runJob = async (job: Job): Promise<unknown> => {
    try {
      return await run(job);
    } finally {
      // an aborted replay leaves the runner's state half-open: start over with a fresh one
      if (engine.broken) engine = await makeEngine();
    }
  };

  /** the result, unless its JSON is over the size limit (then the RPC thread never sees it) */
  const bounded = (value: unknown): unknown => {
    if (opts.maxResultSize > 0) {
      const size = JSON.stringify(value ?? null).length;
      if (size > opts.maxResultSize) throw new TraceResultTooLarge(size, opts.maxResultSize);
    }
    return value;
  };

  parentPort!.on('message', (m: { id: number; job: Job } | { rewound: true }) => {
    if ('rewound' in m) return store.forgetCaches();
    jobId = m.id;
    runJob(m.job).then(bounded).then(
      (value) => parentPort!.postMessage({ id: m.id, ok: true, value } satisfies Reply),
      (e: unknown) => {
        if (!(e instanceof TraceError || e instanceof DomainError)) process.stderr.write(`trace worker: ${e instanceof Error ? e.stack : String(e)}\n`);
        parentPort!.postMessage({ id: m.id, ok: false, error: domainErrorData(traceFailure(e)) } satisfies Reply);
      },
    );
  });
  // loaded and listening: the RPC thread hands over jobs from now on
  parentPort!.postMessage({ ready: true } satisfies Reply);
}

function unwrap(o: TxTraceOutcome): unknown {
  if ('error' in o) throw new TraceError(o.error);
  return o.result;
}

if (!isMainThread && (workerData as { ferryTrace?: TraceServiceOptions } | null)?.ferryTrace) {
  const data = workerData as { ferryTrace: TraceServiceOptions; cancelled: Int32Array };
  workerMain(data.ferryTrace, data.cancelled).catch((e) => {
    process.stderr.write(`trace worker failed to start: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}

/** A failed trace job as the domain error the RPC thread answers with. */
function traceFailure(e: unknown): DomainError {
  if (e instanceof TraceTimeout) return timeout(TIMEOUT_MESSAGE);
  if (e instanceof TraceResultTooLarge) return resultTooLarge(e.message);
  if (e instanceof TraceError) return invalidRequest(e.message);
  if (e instanceof DomainError) return e;
  return executionFailed(`tracing failed: ${e instanceof Error ? e.message.replace(/ \(tx type=[\s\S]*$/, '') : String(e)}`);
}
