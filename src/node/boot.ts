/**
 * Cold start, first step (docs/architecture.md, "Cold start"): what `ferry start` does before the RPC
 * side's modules load. The private namespaces are checked and the token secret read (nothing is sent to
 * the chain thread when they refuse), then the chain thread — spawned already by src/bin/prestart.ts,
 * or now — gets its start data, so that its store opening and engine start run on the other core while
 * this thread loads node/run.js. This module imports only what that needs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { allowAll, checkPrivateExposure, createAuthenticator, readJwtSecret } from '../server/auth.js';
import { phaseDone } from '../lib/startphases.js';
import { DB_FILE, homePaths } from './home.js';
import { takeChainThread, type HeldWorker } from './chainspawn.js';
import type { ChainWorkerData } from './protocol.js';

/** What the first step hands to runNode. */
export interface Boot {
  /** the chain thread's start data (also the RPC side's database path) */
  data: ChainWorkerData;
  /** the private namespaces' check of a request (allowAll when `private-api-auth` is off) */
  authenticate: ReturnType<typeof createAuthenticator>;
  chain: HeldWorker;
}

/** Checks the private namespaces, then starts the chain thread. Throws (nothing started) when the checks refuse. */
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
  const chain = takeChainThread(data);
  phaseDone('chainStarted');
  return { data, authenticate, chain };
}
