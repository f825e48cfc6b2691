/**
 * Spawning the chain thread (docs/architecture.md, "Cold start"). This module imports nothing but Node's
 * own, so that `ferry start` can spawn the thread before its other modules evaluate
 * (src/bin/prestart.ts): the thread loads its modules on the other core meanwhile, then waits for its
 * start data (a `start` message, sent by node/boot.ts once the config is read).
 *
 * The thread's events until the node attaches its client (ChainClient.start) are held here and
 * delivered then, in order: none is lost while the RPC thread is still loading.
 */
import { Worker } from 'node:worker_threads';
import type { StartChain, ChainWorkerData, FromChain } from './protocol.js';

/** Events of the chain thread held before the node attaches (a start sends a handful); past it the start fails. */
export const MAX_HELD_CHAIN_EVENTS = 1024;

const HELD_EVENTS = ['message', 'error', 'exit'] as const;

/**
 * A worker whose events are kept until its client is attached. `release` is called right after the
 * client's own listeners are on: it stops holding and emits what was held, in order.
 */
export class HeldWorker {
  private held: Array<[event: string, value: unknown]> = [];
  private readonly holders = new Map<string, (value: unknown) => void>();
  private overflowed = false;

  constructor(readonly worker: Worker) {
    for (const event of HELD_EVENTS) {
      const hold = (value: unknown): void => {
        if (this.held.length >= MAX_HELD_CHAIN_EVENTS) this.overflowed = true;
        else this.held.push([event, value]);
      };
      this.holders.set(event, hold);
      worker.on(event, hold);
    }
  }

  release(): void {
    for (const [event, hold] of this.holders) this.worker.off(event, hold);
    this.holders.clear();
    const held = this.held;
    this.held = [];
    if (this.overflowed) {
      // the start fails (as a chain thread that fails to start does) rather than go on with events lost
      const fatal: FromChain = { type: 'fatal', message: `the chain thread sent more than ${MAX_HELD_CHAIN_EVENTS} events (MAX_HELD_CHAIN_EVENTS) before the node attached to it` };
      this.worker.emit('message', fatal);
      return;
    }
    for (const [event, value] of held) this.worker.emit(event, value);
  }
}

let spawned: HeldWorker | undefined;

/**
 * Spawns the chain thread now; `takeChainThread` hands it over. It does not keep the process alive
 * until then: a command that ends first (`--help`, a bad flag) ends the process as before.
 */
export function spawnChainThread(): void {
  if (spawned !== undefined) return;
  const worker = new Worker(new URL('./chainworker.js', import.meta.url));
  spawned = new HeldWorker(worker);
  // after the holding listeners, which ref the worker
  worker.unref();
}

/** The chain thread (spawned now unless it was already), sent its start data. */
export function takeChainThread(data: ChainWorkerData): HeldWorker {
  spawnChainThread();
  const held = spawned!;
  spawned = undefined;
  held.worker.ref();
  held.worker.postMessage({ type: 'start', data } satisfies StartChain);
  return held;
}
