/**
 * A call worker: a reader connection to the store and a Simulator, answering eth_call/eth_estimateGas/eth_createAccessList
 * for the RPC thread (node/callpool.ts). One simulation at a time per worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Simulator, type SimulatorOptions } from '../chain/simulator.js';
import { FerryError } from '../lib/errors.js';
import { Store } from '../store/store.js';
import type { CallJob, CallReply } from './callpool.js';

const { dbPath, opts } = workerData as { dbPath: string; opts: SimulatorOptions };
const port = parentPort!;
const store = new Store(dbPath, { reader: true });
const sim = await Simulator.create(store, opts);

port.on('message', (job: CallJob | { op: 'close' }) => {
  if (job.op === 'close') {
    store.close();
    port.close();
    return;
  }
  const work =
    job.op === 'call'
      ? sim.call(job.req, job.n, job.overrides)
      : job.op === 'estimate'
        ? sim.estimateGas(job.req, job.n, job.overrides)
        : sim.createAccessList({ ...job.req, gas: job.req.gas ?? 0n }, job.n, job.overrides);
  work.then(
    (value) => port.postMessage({ id: job.id, value } satisfies CallReply),
    (e: unknown) => {
      const error =
        e instanceof FerryError
          ? { code: e.code, message: e.message, data: e.data }
          : { code: 0, message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
      port.postMessage({ id: job.id, error } satisfies CallReply);
    },
  );
});
port.postMessage({ id: 0, value: 'ready' } satisfies CallReply);
