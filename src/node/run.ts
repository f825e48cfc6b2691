/**
 * Composition root: starts the chain thread (worker), then the RPC side on this thread — the store
 * reader, Surface A's method table, the JSON-RPC dispatcher and the HTTP listener. Closes in reverse.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ChainReader } from '../chain/reader.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { clientVersion } from '../config/version.js';
import { createEvmMethods } from '../evmrpc/methods.js';
import { createDispatcher } from '../jsonrpc/core.js';
import { mergeTables } from '../jsonrpc/types.js';
import type { Logger } from '../lib/log.js';
import { startHttpServer, type HttpServerHandle } from '../server/http.js';
import { Store } from '../store/store.js';
import { homePaths } from './home.js';
import type { ChainWorkerData, FromChain, ToChain } from './protocol.js';

export const DB_FILE = 'ferry.db';

export interface RunningNode {
  endpoints: { jsonRpc?: string; ws?: string; rpc?: string };
  close(): Promise<void>;
}

function splitHostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(addr.slice(i + 1)) };
}

export async function runNode(opts: NodeOptions, genesis: Genesis, log: Logger): Promise<RunningNode> {
  const paths = homePaths(opts.home);
  const dbPath = join(paths.dataDir, DB_FILE);
  const workerData: ChainWorkerData = {
    opts,
    genesis,
    dbPath,
    validatorKeyJson: readFileSync(paths.privValidatorKey, 'utf8'),
  };
  const worker = new Worker(new URL('./chainworker.js', import.meta.url), { workerData });
  let reader: ChainReader | undefined;
  let nextId = 1;
  const waiting = new Map<number, (r: { code: number; log: string; hash?: Uint8Array }) => void>();
  let onStopped: (() => void) | undefined;
  let closing = false;

  const ready = new Promise<bigint>((resolve, reject) => {
    worker.on('message', (m: FromChain) => {
      switch (m.type) {
        case 'ready':
          resolve(m.height);
          break;
        case 'committed':
          reader?.onCommitted(m.height);
          break;
        case 'pool':
          reader?.onPoolChange(m);
          break;
        case 'reply':
          waiting.get(m.id)?.(m);
          waiting.delete(m.id);
          break;
        case 'stopped':
          onStopped?.();
          break;
        case 'fatal':
          reject(new Error(m.message));
          break;
      }
    });
    worker.on('error', (e) => {
      log.error({ err: e.stack }, 'chain thread crashed');
      reject(e);
      if (!closing) process.exit(1);
    });
    worker.on('exit', (code) => {
      if (!closing) {
        log.error({ code }, 'chain thread exited');
        process.exit(1);
      }
    });
  });
  await ready;

  const store = new Store(dbPath, { reader: true });
  const post = (m: ToChain) => worker.postMessage(m);
  reader = await ChainReader.create(store, {
    chainId: genesis.evmChainId,
    hardfork: genesis.evm.hardfork,
    gasCap: opts.jsonRpc.gasCap,
    logsCap: opts.jsonRpc.logsCap,
    evmTimeoutMs: opts.jsonRpc.evmTimeoutMs,
    coinbase: genesis.evm.coinbase,
    submit: (raw) =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        post({ type: 'submit', id, raw, rpc: true });
      }),
  });
  reader.onCommitted(store.latestHeight() ?? 0n);

  const endpoints: RunningNode['endpoints'] = {};
  let http: HttpServerHandle | undefined;
  if (opts.jsonRpc.enable) {
    // Surface A: one table, merged from one part per namespace group
    const table = mergeTables(
      createEvmMethods(reader, {
        clientVersion: clientVersion(),
        gasCap: opts.jsonRpc.gasCap,
        blockRangeCap: opts.jsonRpc.blockRangeCap,
        logsCap: opts.jsonRpc.logsCap,
        feeHistoryCap: opts.jsonRpc.feeHistoryCap,
        evmTimeoutMs: opts.jsonRpc.evmTimeoutMs,
      }),
    );
    const dispatcher = createDispatcher({
      table,
      enabledNamespaces: new Set(opts.jsonRpc.api),
      limits: { batchRequestLimit: opts.jsonRpc.batchRequestLimit, batchResponseMaxSize: opts.jsonRpc.batchResponseMaxSize },
      onInternalError: (err, method) => log.error({ method, err: err instanceof Error ? err.stack : String(err) }, 'internal error'),
    });
    const { host, port } = splitHostPort(opts.jsonRpc.address);
    http = await startHttpServer({
      host,
      port,
      dispatcher,
      limits: {
        bodyLimit: opts.jsonRpc.httpBodyLimit,
        maxOpenConnections: opts.jsonRpc.maxOpenConnections,
        timeoutMs: opts.jsonRpc.httpTimeoutMs,
        idleTimeoutMs: opts.jsonRpc.httpIdleTimeoutMs,
      },
      log: log.child({ module: 'http' }) as never,
    });
    endpoints.jsonRpc = `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
    log.info({ address: endpoints.jsonRpc }, 'JSON-RPC HTTP server listening');
  }

  return {
    endpoints,
    async close() {
      closing = true;
      await http?.close();
      await new Promise<void>((resolve) => {
        onStopped = resolve;
        post({ type: 'stop' });
      });
      await worker.terminate();
      store.close();
    },
  };
}
