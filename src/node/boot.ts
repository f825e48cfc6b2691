/**
 * Cold start, first step (docs/architecture.md, "Cold start"): what `ferry start` does before the RPC
 * side's modules load. The private namespaces are checked and the token secret read (nothing starts
 * when they refuse), then the chain thread is spawned at once, so that its module loading and store
 * opening run on the other core while this thread loads node/run.js. This module imports only what
 * that needs.
 *
 * The chain thread's events until the node attaches its client (ChainClient.start) are held here and
 * delivered then, in order: none is lost while this thread is still loading.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { allowAll, checkPrivateExposure, createAuthenticator, readJwtSecret } from '../server/auth.js';
import { DB_FILE, homePaths } from './home.js';
import type { ChainWorkerData, FromChain } from './protocol.js';

/**
 * When each start-up phase ended, in ms since the process started (performance.now()): `ferry start`
 * logs them at debug level once the node listens (docs/benchmarks.md, cold start).
 */
export const startPhases: Record<string, number> = {};

export function phaseDone(name: string): void {
  startPhases[name] = Math.round(performance.now());
}

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

/** What the first step hands to runNode. */
export interface Boot {
  /** the chain thread's start data (also the RPC side's database path) */
  data: ChainWorkerData;
  /** the private namespaces' check of a request (allowAll when `private-api-auth` is off) */
  authenticate: ReturnType<typeof createAuthenticator>;
  chain: HeldWorker;
}

/** Checks the private namespaces, then spawns the chain thread. Throws (nothing started) when the checks refuse. */
export function boot(opts: NodeOptions, genesis: Genesis): Boot {
  const paths = homePaths(opts.home);
  // private namespaces: refuse an unauthenticated exposure, and read the token secret, before anything starts
  if (opts.jsonRpc.enable) {
    checkPrivateExposure({
      api: opts.jsonRpc.api,
      privateApiAuth: opts.jsonRpc.privateApiAuth,
      listeners: [
        { key: 'json-rpc.address', address: opts.jsonRpc.address },
        { key: 'json-rpc.ws-address', address: opts.jsonRpc.wsAddress },
      ],
    });
  }
  const authenticate = opts.jsonRpc.privateApiAuth ? createAuthenticator(readJwtSecret(paths.jwtSecret)) : allowAll;
  const data: ChainWorkerData = {
    opts,
    genesis,
    dbPath: join(paths.dataDir, DB_FILE),
    validatorKeyJson: readFileSync(paths.privValidatorKey, 'utf8'),
  };
  const worker = new Worker(new URL('./chainworker.js', import.meta.url), { workerData: data });
  phaseDone('chainSpawned');
  return { data, authenticate, chain: new HeldWorker(worker) };
}
