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

/**
 * How much bytecode TurboFan inlines into one optimized function, in bytes (V8's
 * --max-inlined-bytecode-size-cumulative, default 920). Each thread compiles its hot functions on V8's
 * platform threads; with half the default budget those jobs are smaller, and a burst of transfers cost
 * 10-20 % less CPU over all threads, the compiler jobs and the threads that run the code alike, in runs of
 * 2,000 and of 8,000 transfers, eth_call and ERC-20 transfers no slower (docs/benchmarks.md "Ingest:
 * admission and the V8 platform threads"). A `--max-inlined-bytecode-size-cumulative` given to node wins.
 */
export const TURBOFAN_INLINING_BUDGET = 460;

/** V8 flags set for the whole process before any thread starts, each unless node was given it */
const START_FLAGS: ReadonlyArray<[flag: string, value: number]> = [
  ['heap-growing-percent', HEAP_GROWING_PERCENT],
  ['max-inlined-bytecode-size-cumulative', TURBOFAN_INLINING_BUDGET],
];

const command = process.argv[2];
if (command === 'start' || command === 'dev') {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''];
  for (const [flag, value] of START_FLAGS) if (!given.some((a) => a.includes(flag))) setFlagsFromString(`--${flag}=${value}`);
  spawnChainThread();
  phaseDone('chainSpawned');
}
