/**
 * A call worker: a reader connection to the store and a Simulator, answering eth_call/eth_estimateGas/
 * eth_createAccessList/eth_simulateV1 for the RPC thread (node/callpool.ts).
 *
 * Scheduling: up to CALL_ACTIVE_PER_WORKER calls run at once, each on its own EVM, time-sliced on
 * this thread (lib/slices.ts: a run gives way at a JUMP/JUMPI after SLICE_MS, and the next turn goes
 * to the run that has had the least time), so a short call is answered within a few slices however
 * many long ones run. Calls beyond that wait; a freed place goes to the waiting call of the client
 * with the fewest calls running (then the oldest). A call stops at its deadline (set at arrival on the
 * RPC thread) or when cancelled, waiting or running.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { formatDuration } from '../config/duration.js';
import { Simulator, type SimulatorOptions } from '../chain/simulator.js';
import { DomainError, cancelled, domainErrorData, timeout, type DomainErrorData } from '../lib/errors.js';
import { SliceScheduler, type Task } from '../lib/slices.js';
import { Store } from '../store/store.js';
import { createLogger } from '../lib/log.js';
import { CALL_ACTIVE_PER_WORKER, CALL_CANCELLED_MESSAGE, type CallJob, type CallMessage, type CallReply } from './callpool.js';
import { TurnBatch } from '../lib/turnbatch.js';

const { dbPath, opts } = workerData as { dbPath: string; opts: SimulatorOptions };
const port = parentPort!;
const store = new Store(dbPath, { reader: true });
const consoleLog = createLogger({ level: 'info' }).child({ module: 'console' });
const sim = await Simulator.create(store, opts, (line) => consoleLog.info({ source: 'call' }, `console.log: ${line}`));
const sched = new SliceScheduler();

interface Running {
  job: CallJob;
  task: Task | undefined;
  cancelled: boolean;
}

const running = new Map<number, Running>();
const waiting: CallJob[] = [];
/** calls running per client key */
const perClient = new Map<string, number>();

/** answers leave together at the end of the event loop's turn (one message) */
const answers = new TurnBatch<CallReply>((batch) => port.postMessage(batch));
const send = (r: CallReply): void => answers.push(r);

function reply(id: number, e: unknown): void {
  const error: DomainErrorData | { bug: string } =
    e instanceof DomainError ? domainErrorData(e) : { bug: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  send({ id, error });
}

function timeoutError(): DomainError<'timeout'> {
  return timeout(`execution aborted (timeout = ${formatDuration(opts.evmTimeoutMs)})`);
}

async function run(r: Running): Promise<void> {
  const { job } = r;
  const task = await sched.enter(job.deadline);
  r.task = task;
  try {
    if (r.cancelled) return;
    const gate = { deadline: job.deadline, pass: () => task.pass() };
    const value = await (job.op === 'call'
      ? sim.call(job.req, job.n, job.overrides, gate, job.block)
      : job.op === 'estimate'
        ? sim.estimateGas(job.req, job.n, job.overrides, gate, job.block)
        : job.op === 'simulate'
          ? sim.simulateV1(job.simulate!, job.n, job.overrides, gate)
          : sim.createAccessList({ ...job.req, gas: job.req.gas ?? 0n }, job.n, job.overrides, gate));
    if (!r.cancelled) send({ id: job.id, value });
  } catch (e) {
    if (!r.cancelled) reply(job.id, e);
  } finally {
    task.leave();
    running.delete(job.id);
    const left = (perClient.get(job.client) ?? 1) - 1;
    if (left > 0) perClient.set(job.client, left);
    else perClient.delete(job.client);
    admit();
  }
}

function start(job: CallJob): void {
  const r: Running = { job, task: undefined, cancelled: false };
  running.set(job.id, r);
  perClient.set(job.client, (perClient.get(job.client) ?? 0) + 1);
  void run(r);
}

/** Starts waiting calls while there is room: the client with the fewest running first, then the oldest. */
function admit(): void {
  while (running.size < CALL_ACTIVE_PER_WORKER && waiting.length > 0) {
    let best = 0;
    for (let i = 1; i < waiting.length; i++) {
      if ((perClient.get(waiting[i]!.client) ?? 0) < (perClient.get(waiting[best]!.client) ?? 0)) best = i;
    }
    const job = waiting.splice(best, 1)[0]!;
    if (Date.now() > job.deadline) reply(job.id, timeoutError());
    else start(job);
  }
}

function cancel(id: number): void {
  const r = running.get(id);
  if (r) {
    r.cancelled = true;
    r.task?.cancel();
    return;
  }
  const i = waiting.findIndex((j) => j.id === id);
  if (i >= 0) {
    waiting.splice(i, 1);
    reply(id, cancelled(CALL_CANCELLED_MESSAGE));
  }
}

function receive(m: CallMessage): void {
  if (m.op === 'rewound') return sim.rewound(m.height);
  if (m.op === 'cancel') return cancel(m.id);
  waiting.push(m);
  admit();
}

// the pool posts what it has for this worker once per turn of its event loop, in order
port.on('message', (batch: CallMessage[]) => {
  for (const m of batch) receive(m);
});
port.postMessage([{ id: 0, value: 'ready' }] satisfies CallReply[]);
