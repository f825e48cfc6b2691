/**
 * Imported first by src/bin/ferry.ts, so that it runs before the other modules evaluate: for
 * `ferry start` and `ferry dev` the chain thread is spawned at once and loads its modules on the other
 * core while this thread reads the command line, the config and the genesis (docs/architecture.md,
 * "Cold start"). It gets its start data later (node/boot.ts).
 */
import { phaseDone } from '../lib/startphases.js';
import { spawnChainThread } from '../node/chainspawn.js';

const command = process.argv[2];
if (command === 'start' || command === 'dev') {
  spawnChainThread();
  phaseDone('chainSpawned');
}
