/**
 * Surface A's start-up (the Ethereum JSON-RPC; docs/architecture.md "Surface A's assembly"): the
 * services it keeps (the event feed, filters, subscriptions, the trace worker, the profiler), the bag
 * of modules its one factory takes (src/evmrpc/api.ts), the dispatcher, and the HTTP and WebSocket
 * listeners. Closes in reverse.
 */
import { join } from 'node:path';
import type { ChainReader } from '../chain/reader.js';
import { TraceService } from '../chain/trace.js';
import { formatHostPort, parseHostPort } from '../config/address.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import type { AccountSigner } from '../evmrpc/accounts.js';
import { createEvmApi, type EvmApiModules } from '../evmrpc/api.js';
import { evmErrors } from '../evmrpc/errors.js';
import { EvmFeed } from '../evmrpc/feed.js';
import { createFilterMethods } from '../evmrpc/filters.js';
import type { MinerBackend } from '../evmrpc/miner.js';
import { createSubscriptionMethods } from '../evmrpc/subscriptions.js';
import { createDispatcher, type Dispatcher } from '../jsonrpc/core.js';
import { phaseDone } from '../lib/startphases.js';
import type { Logger } from '../lib/log.js';
import { startHttpServer } from '../server/http.js';
import { startWsServer } from '../server/ws.js';
import type { Store } from '../store/store.js';
import type { ForkState } from '../fork/lazystate.js';
import { OriginHistory } from '../fork/history.js';
import type { DevChannel } from '../types/dev.js';
import type { Refork } from '../evmrpc/devmethods.js';
import { SwitchDispatcher } from './switch.js';
import type { Boot } from './boot.js';
import type { CallPool } from './callpool.js';
import { EvmRuns } from './evmruns.js';
import type { NodeObservability } from './observe.js';
import { nodePageRoutes } from './page.js';
import { NodeProfiler, PROFILES_DIR } from './profiler.js';

export interface EthRpcDeps {
  opts: NodeOptions;
  genesis: Genesis;
  dbPath: string;
  store: Store;
  reader: ChainReader;
  calls: CallPool;
  signer: AccountSigner;
  miner: MinerBackend;
  chain: DevChannel;
  observe: NodeObservability;
  authenticate: Boot['authenticate'];
  /** Surface B's URL once it listens (the node page links to it) */
  cometUrl(): string | undefined;
  /** anvil_reset naming another fork block or origin (node/refork.ts); undefined: not a fork */
  refork?: Refork;
  /** the services the gauges read (set by startEthRpc: a re-fork replaces them) */
  current?: () => EthServices;
  log: Logger;
}

export interface EthRpc {
  endpoints: { jsonRpc: string; ws: string; page?: string };
  /** a dev revert rewound the chain: the trace worker forgets what it keeps by height */
  rewound(): void;
  /** a re-fork begins: requests arriving now wait for `attach` (node/refork.ts SwitchDispatcher) */
  pause(): void;
  /** the old chain's services stop; the listeners stay */
  detach(): Promise<void>;
  /** the new chain's services start and the waiting requests go to them */
  attach(next: EthRpcDeps): void;
  close(): Promise<void>;
}

const url = (scheme: string, host: string, port: number) => `${scheme}://${formatHostPort({ host, port })}`;

/** A fork's history port: the origin's answers, counted in the home's origin totals (docs/fork-mode.md). */
function forkHistory(fork: ForkState): OriginHistory {
  return new OriginHistory(fork.record, (t) => fork.addTotals(t));
}

/** Surface A's services over one chain (a re-fork makes new ones; the listeners stay: node/refork.ts). */
interface EthServices {
  dispatcher: Dispatcher;
  store: Store;
  genesis: Genesis;
  calls: CallPool;
  subscriptions: ReturnType<typeof createSubscriptionMethods>;
  filters: ReturnType<typeof createFilterMethods>;
  traces: TraceService;
  close(): Promise<void>;
}

function startEthServices(d: EthRpcDeps, wsConnections: () => number): EthServices {
  const { opts, genesis, reader, log } = d;
  const o = opts.jsonRpc;
  // filters and eth_subscribe: committed blocks and mempool changes from the chain reader
  const events = reader.events;
  const feed = new EvmFeed(
    reader,
    { onBlock: (l) => events.blocks.on(l), onPool: (l) => events.pool.on(l), onRewind: (l) => events.rewound.on(l) },
    log.child({ module: 'evm-events' }),
  );
  const filters = createFilterMethods(
    reader,
    feed,
    { filterCap: o.filterCap, timeoutMs: o.filterTimeoutMs, blockRangeCap: o.blockRangeCap, logsCap: o.logsCap },
    log.child({ module: 'filters' }),
  );
  // debug_trace*: replays on a worker thread of their own (started at the first trace)
  const traces = new TraceService({ dbPath: d.dbPath, chainId: genesis.evmChainId, hardfork: genesis.evm.hardfork, forkTimes: genesis.evm.forkTimes, maxResultSize: o.traceResultMaxSize });
  const subscriptions = createSubscriptionMethods(feed, { maxPerConnection: o.wsMaxSubscriptions }, log.child({ module: 'subscriptions' }));
  // the runtime reports (debug_memStats, debug_gcStats, debug_stacks) follow `debug`; the methods that write
  // profile files exist only behind json-rpc.enable-profiling (docs/compatibility.md)
  const profiler = new NodeProfiler(join(opts.home, PROFILES_DIR), log.child({ module: 'profiler' }));
  const modules: EvmApiModules = {
    reader,
    runs: new EvmRuns(reader, d.calls, traces),
    signer: d.signer,
    miner: d.miner,
    chain: d.chain,
    feed,
    filters,
    subscriptions,
    profiler,
    ...(d.store.fork !== undefined ? { history: forkHistory(d.store.fork) } : {}),
    ...(d.refork !== undefined ? { refork: d.refork } : {}),
  };
  const table = createEvmApi({ jsonRpc: o, chainId: genesis.evmChainId, hardfork: genesis.evm.hardfork, forkTimes: genesis.evm.forkTimes }, modules);
  const dispatcher = createDispatcher({
    table,
    enabledNamespaces: new Set(o.api),
    limits: { batchRequestLimit: o.batchRequestLimit, batchResponseMaxSize: o.batchResponseMaxSize },
    errors: evmErrors,
    onInternalError: (err, method) => log.error({ method, err: err instanceof Error ? err.stack : String(err) }, 'internal error'),
    recorder: d.observe.rpcRecorder({
      wsConnections,
      // a re-fork makes new services; the gauges read the current ones
      subscriptions: () => current().subscriptions.count(),
      filters: () => current().filters.size(),
      callQueue: () => current().calls.queued(),
      traceQueue: () => current().traces.queued(),
    }),
  });
  const services: EthServices = {
    dispatcher,
    store: d.store,
    genesis,
    calls: d.calls,
    subscriptions,
    filters,
    traces,
    async close() {
      subscriptions.close();
      filters.close();
      feed.close();
      await traces.close();
      await profiler?.close();
    },
  };
  const current = (): EthServices => d.current?.() ?? services;
  return services;
}

export async function startEthRpc(d: EthRpcDeps): Promise<EthRpc> {
  const { opts, log } = d;
  const o = opts.jsonRpc;
  let ws: Awaited<ReturnType<typeof startWsServer>> | undefined;
  let services: EthServices | undefined;
  const current = (): EthServices => services!;
  services = startEthServices({ ...d, current }, () => ws?.connections() ?? 0);
  // the listeners dispatch through a switch a re-fork turns to the new chain's services (node/refork.ts)
  const dispatcher = new SwitchDispatcher(services.dispatcher);
  const httpAddr = parseHostPort(o.address)!;
  const http = await startHttpServer({
    ...httpAddr,
    dispatcher,
    limits: { bodyLimit: o.httpBodyLimit, maxOpenConnections: o.maxOpenConnections, timeoutMs: o.httpTimeoutMs, idleTimeoutMs: o.httpIdleTimeoutMs },
    authenticate: d.authenticate,
    getRoutes: nodePageRoutes({
      page: o.nodePage,
      health: () => d.observe.health(),
      config: () => ({ wsPort: ws?.port, cometUrl: d.cometUrl(), chainId: current().genesis.chainId, evmChainId: Number(current().genesis.evmChainId) }),
      rpcRequests: () => d.observe.rpcRequests(),
      get store() {
        return current().store;
      },
    }),
    cors: o.enableUnsafeCors ? ['*'] : undefined,
    log: log.child({ module: 'http' }),
  });
  const jsonRpc = url('http', httpAddr.host, http.port);
  log.info({ address: jsonRpc }, 'JSON-RPC HTTP server listening');
  phaseDone('httpListening');
  const wsAddr = parseHostPort(o.wsAddress)!;
  ws = await startWsServer({
    ...wsAddr,
    dispatcher,
    limits: { maxMessageSize: o.wsMaxMessageSize, maxConnections: o.wsMaxConnections, maxQueueBytes: o.wsMaxQueueBytes },
    origins: o.enableUnsafeCors ? ['*'] : o.wsOrigins,
    authenticate: d.authenticate,
    log: log.child({ module: 'ws' }),
  });
  const wsUrl = url('ws', wsAddr.host, ws.port);
  log.info({ address: wsUrl }, 'JSON-RPC WebSocket server listening');
  const wsServer = ws;
  const endpoints: EthRpc['endpoints'] = { jsonRpc, ws: wsUrl };
  if (o.nodePage) endpoints.page = `${jsonRpc}/explorer`;
  return {
    endpoints,
    rewound: () => current().traces.rewound(),
    pause: () => dispatcher.pause(),
    async detach() {
      // the old chain's subscriptions end: nothing more is sent on them (docs/fork-mode.md "Reset")
      await current().close();
    },
    attach(next) {
      services = startEthServices({ ...next, current }, () => wsServer.connections());
      dispatcher.resume(services.dispatcher);
    },
    async close() {
      await wsServer.close();
      await http.close();
      await current().close();
    },
  };
}
