/**
 * Imported first by src/bin/ferry.ts, so that it runs before the other modules evaluate: for
 * `ferry start` and `ferry dev` the chain thread is spawned at once and loads its modules on the other
 * core while this thread reads the command line, the config and the genesis (docs/architecture.md,
 * "Cold start"). It gets its start data later (node/boot.ts).
 */
import { setFlagsFromString } from 'node:v8';
import { phaseDone } from '../lib/startphases.js';
import { spawnChainThread } from '../node/chainspawn.js';

/**
 * How far V8 lets a heap grow past its live size before the next full collection, in percent (its own
 * default grows by up to 4x). Set for the whole process before any thread starts: the node keeps
 * 30-60 MB live per thread, and with V8's default each busy thread's heap reached 130-175 MB of
 * garbage before collecting it (peak RSS after a burst of 20,000 transfers: 501 MiB with V8's default,
 * 360 MiB with 30 %, throughput within the noise: docs/benchmarks.md). A `--heap-growing-percent` given to node wins.
 */
export const HEAP_GROWING_PERCENT = 30;

const command = process.argv[2];
if (command === 'start' || command === 'dev') {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'));
  if (!given) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  spawnChainThread();
  phaseDone('chainSpawned');
}
