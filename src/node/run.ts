/**
 * Composition root: attaches to the chain thread (worker; spawned and given its data by node/boot.ts
 * before this module loads), then starts the RPC side on this thread — the store reader, Surface A's
 * method table, the JSON-RPC dispatcher and the HTTP listener. Closes in reverse.
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCoinbase } from '../chain/app.js';
import { ChainReader } from '../chain/reader.js';
import { TraceService } from '../chain/trace.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { clientVersion } from '../config/version.js';
import { EvmFeed } from '../evmrpc/feed.js';
import { createFilterMethods, type FilterService } from '../evmrpc/filters.js';
import { AccountSigner, createAccountMethods } from '../evmrpc/accounts.js';
import { createEvmMethods } from '../evmrpc/methods.js';
import { createDebugMethods } from '../evmrpc/debug.js';
import { createTraceMethods } from '../evmrpc/trace.js';
import { createOtsMethods } from '../evmrpc/ots.js';
import { createExtraEthMethods } from '../evmrpc/extra.js';
import { createProfilingMethods } from '../evmrpc/profiling.js';
import { createRawDebugMethods } from '../evmrpc/rawdebug.js';
import { makeCommon } from '../evm/common.js';
import { NodeProfiler, PROFILES_DIR } from './profiler.js';
import { createMinerMethods } from '../evmrpc/miner.js';
import { createDevMethods } from '../evmrpc/devmethods.js';
import { createCheatMethods, encodeState, loadState, MAX_STATE_BYTES, type CheatControls } from '../evmrpc/devcheats.js';
import { devAccounts } from '../config/devaccounts.js';
import { COMMIT } from '../config/version.js';
import { createPersonalMethods } from '../evmrpc/personal.js';
import { createTxPoolMethods } from '../evmrpc/txpool.js';
import { KeyStore } from '../keystore/index.js';
import { createSubscriptionMethods, type SubscriptionService } from '../evmrpc/subscriptions.js';
import { createDispatcher } from '../jsonrpc/core.js';
import { evmErrors } from '../evmrpc/errors.js';
import { accepted } from '../chain/checkcodes.js';
import { mergeTables } from '../jsonrpc/types.js';
import type { Logger } from '../lib/log.js';
import { startHttpServer, type HttpServerHandle } from '../server/http.js';
import { startWsServer, type WsServerHandle } from '../server/ws.js';
import { Store } from '../store/store.js';
import { CallPool } from './callpool.js';
import { homePaths } from './home.js';
import { ChainClient } from './chainclient.js';
import { createDevControls, createMinerBackend } from './miner.js';
import type { Boot } from './boot.js';
import { phaseDone } from '../lib/startphases.js';
import { APP_VERSION } from '../chain/app.js';
import { abciQuery, queryFailure, QueryCode } from '../chain/query.js';
import { parseLaddr, formatHostPort } from '../config/address.js';
import { VERSION } from '../config/version.js';
import { nodeId, readNodeKey, readValidatorKey } from '../consensus/cometbft/index.js';
import type { RoundStepEvent } from '../consensus/engine.js';
import { ConsensusReader, NativeMempool } from '../consensus/reader.js';
import type { AppQuery, ConsensusBackend, NodeInfo } from '../cometrpc/backend.js';
import { COMETBFT_VERSION, MONIKER } from '../cometrpc/format.js';
import { CometService } from '../cometrpc/service.js';
import { startCometServer } from '../server/comet.js';
import type { HomePaths } from './home.js';
import { NodeObservability } from './observe.js';
import { nodePageRoutes } from './page.js';


export interface RunningNode {
  endpoints: { jsonRpc?: string; ws?: string; rpc?: string; cometMetrics?: string; rpcMetrics?: string; page?: string };
  close(): Promise<void>;
}

function splitHostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(addr.slice(i + 1)) };
}

/** `boot`: the first step (node/boot.ts), taken by the caller before it loads this module (cold start). */
export async function runNode(opts: NodeOptions, genesis: Genesis, log: Logger, boot: Boot): Promise<RunningNode> {
  const paths = homePaths(opts.home);
  const { authenticate } = boot;
  const dbPath = boot.data.dbPath;
  const keystore = new KeyStore(paths.keystoreDir, { log: log.child({ module: 'keystore' }) });
  let reader: ChainReader | undefined;
  // Surface B: the native mempool mirror (fed by the chain thread's pool changes)
  const nativePool = new NativeMempool();
  let consensusRpc: ConsensusRpc | undefined;
  const observe = new NodeObservability(opts, genesis, dbPath, nativePool);
  /** what else follows a dev revert besides the reader (call workers, trace worker), set once they exist */
  const onRewound: ((height: bigint) => void)[] = [];
  const { chain, height, cheats: startCheats } = await ChainClient.start(
    boot.chain,
    {
      onMessage: (m) => observe.onChainMessage(m),
      onCommitted: (h, cheatsApplied) => {
        reader?.onCommitted(h);
        // after the height moved: the cheats this block applied leave the mirror (chain/cheats.ts)
        if (cheatsApplied !== undefined) reader?.cheats.applied(cheatsApplied);
      },
      onCheats: (m) => {
        if (m.replace) reader?.cheats.replaceAll(m.pending);
        else reader?.cheats.receive(m.pending);
      },
      onRewound: (m) => {
        // a dev revert (before its devReply and before any new block): every reader forgets, subscribers hear
        for (const f of onRewound) f(m.height);
        reader?.onRewound({ height: m.height, removedLogs: m.removedLogs, truncated: m.truncated });
      },
      onPool: (m) => {
        nativePool.apply(m);
        reader?.onPoolChange(m);
      },
      onRoundStep: (event) => reader?.events.consensus.emit({ type: event.type, height: event.height, round: event.round, data: event }),
      query: (req) => (reader ? abciQuery(reader, req) : ChainClient.notReady()),
    },
    log,
  );
  observe.started(height);
  phaseDone('chainReady');

  const store = new Store(dbPath, { reader: true });
  // the call workers load while the rest starts; calls sent meanwhile wait in their queues
  const calls = CallPool.start(
    opts.jsonRpc.callWorkers,
    dbPath,
    { chainId: genesis.evmChainId, hardfork: genesis.evm.hardfork, gasCap: opts.jsonRpc.gasCap, evmTimeoutMs: opts.jsonRpc.evmTimeoutMs },
    log.child({ module: 'calls' }),
  );
  reader = await ChainReader.create(store, {
    chainId: genesis.evmChainId,
    hardfork: genesis.evm.hardfork,
    gasCap: opts.jsonRpc.gasCap,
    logsCap: opts.jsonRpc.logsCap,
    simulator: calls,
    coinbase: loadCoinbase(store, genesis.evm.coinbase),
    submit: (raw, signed) => chain.submitEvm(raw, signed),
  });
  reader.onCommitted(store.latestHeight() ?? 0n);
  reader.cheats.receive(startCheats);
  // the dev preset: the dev accounts sign without a passphrase and are listed first by eth_accounts
  const signer = new AccountSigner(reader, keystore, opts.dev ? devAccounts() : []);
  const miner = createMinerBackend({ chain, reader, home: opts.home, minimumGasPriceFromFlag: opts.minimumGasPriceFromFlag, log });
  const devControls = createDevControls(chain, miner, signer);
  const cheatControls: CheatControls = {
    setCheats: (cheats) => chain.dev({ op: 'setCheats', cheats }),
  };
  if (opts.stateFile !== undefined) await loadStateFile(opts.stateFile, reader, cheatControls, log);
  onRewound.push((h) => calls.rewound(h));

  const endpoints: RunningNode['endpoints'] = {};
  let http: HttpServerHandle | undefined;
  let ws: WsServerHandle | undefined;
  let feed: EvmFeed | undefined;
  let filters: FilterService | undefined;
  let subscriptions: SubscriptionService | undefined;
  let traces: TraceService | undefined;
  let profiler: NodeProfiler | undefined;
  if (opts.jsonRpc.enable) {
    // filters and eth_subscribe: committed blocks and mempool changes from the chain reader
    const events = reader.events;
    feed = new EvmFeed(
      reader,
      { onBlock: (l) => events.blocks.on(l), onPool: (l) => events.pool.on(l), onRewind: (l) => events.rewound.on(l) },
      log.child({ module: 'evm-events' }),
    );
    filters = createFilterMethods(
      reader,
      feed,
      {
        filterCap: opts.jsonRpc.filterCap,
        timeoutMs: opts.jsonRpc.filterTimeoutMs,
        blockRangeCap: opts.jsonRpc.blockRangeCap,
        logsCap: opts.jsonRpc.logsCap,
      },
      log.child({ module: 'filters' }),
    );
    // debug_trace*: replays on a worker thread of their own (started at the first trace)
    traces = new TraceService({ dbPath, chainId: genesis.evmChainId, hardfork: genesis.evm.hardfork, maxResultSize: opts.jsonRpc.traceResultMaxSize });
    onRewound.push(() => traces?.rewound());
    subscriptions = createSubscriptionMethods(feed, { maxPerConnection: opts.jsonRpc.wsMaxSubscriptions }, log.child({ module: 'subscriptions' }));
    // Surface A: one table, merged from one part per namespace group
    const ethCore = createEvmMethods(reader, {
      clientVersion: clientVersion(opts.jsonRpc.clientVersionPrefix),
      gasCap: opts.jsonRpc.gasCap,
      blockRangeCap: opts.jsonRpc.blockRangeCap,
      logsCap: opts.jsonRpc.logsCap,
      feeHistoryCap: opts.jsonRpc.feeHistoryCap,
      evmTimeoutMs: opts.jsonRpc.evmTimeoutMs,
    });
    // debug profiling only behind its own flag (DESIGN.md); off, the methods do not exist
    if (opts.jsonRpc.enableProfiling) profiler = new NodeProfiler(join(opts.home, PROFILES_DIR), log.child({ module: 'profiler' }));
    const table = mergeTables(
      ethCore,
      createExtraEthMethods(
        {
          chainId: reader.chainId,
          resolveBlock: (sel) => reader!.resolveBlock(sel),
          blockByNumber: (n) => reader!.blockByNumber(n),
          blockByHash: (h) => reader!.blockByHash(h),
          maxPriorityFeePerGas: () => reader!.maxPriorityFeePerGas(),
          createAccessList: (req, n, overrides, origin) => calls.createAccessList(req, n, reader!.callOverrides(n, overrides), origin),
        },
        { gasCap: opts.jsonRpc.gasCap, evmTimeoutMs: opts.jsonRpc.evmTimeoutMs },
        ethCore,
      ),
      createRawDebugMethods(
        {
          resolveBlock: (sel) => reader!.resolveBlock(sel),
          blockByNumber: (n) => reader!.blockByNumber(n),
          blockByHash: (h) => reader!.blockByHash(h),
          blockReceipts: (n) => reader!.blockReceipts(n),
          transactionByHash: (h) => reader!.transactionByHash(h),
          traceReplay: (b, o, origin) => traces!.traceReplay(b, o, origin),
        },
        { common: makeCommon(genesis.evmChainId, genesis.evm.hardfork), traceTimeoutCapMs: opts.jsonRpc.traceTimeoutCapMs },
      ),
      profiler === undefined ? {} : createProfilingMethods(profiler),
      filters.table,
      subscriptions.table,
      createAccountMethods(signer),
      createPersonalMethods(signer),
      createMinerMethods(miner),
      createDevMethods(reader, devControls, { clientVersion: clientVersion(), clientSemver: `ferry/${VERSION}`, commit: COMMIT, hardfork: genesis.evm.hardfork }),
      createCheatMethods(reader, cheatControls),
      createTxPoolMethods({ poolContent: () => reader!.pool.content((a) => reader!.nonce(a, reader!.latestNumber())) }),
      createDebugMethods(
        {
          chainId: reader.chainId,
          resolveBlock: (sel) => reader!.resolveBlock(sel),
          blockGasLimit: (n) => reader!.blockByNumber(n)?.header.gasLimit,
          traceTransaction: (h, o, origin) => traces!.traceTransaction(h, o, origin),
          traceBlock: (n, o, origin) => traces!.traceBlock(n, o, origin),
          traceCall: (req, n, overrides, o, origin) => traces!.traceCall(req, n, reader!.callOverrides(n, overrides), o, origin),
        },
        { gasCap: opts.jsonRpc.gasCap, traceTimeoutCapMs: opts.jsonRpc.traceTimeoutCapMs },
      ),
      createTraceMethods(
        {
          chainId: reader.chainId,
          latestNumber: () => reader!.latestNumber(),
          resolveBlock: (sel) => reader!.resolveBlock(sel),
          blockGasLimit: (n) => reader!.blockByNumber(n)?.header.gasLimit,
          traceTransaction: (h, o, origin) => traces!.traceTransaction(h, o, origin),
          traceBlock: (n, o, origin) => traces!.traceBlock(n, o, origin),
          traceCall: (req, n, overrides, o, origin) => traces!.traceCall(req, n, reader!.callOverrides(n, overrides), o, origin),
        },
        { gasCap: opts.jsonRpc.gasCap },
      ),
      createOtsMethods({
        latestNumber: () => reader!.latestNumber(),
        traceTransaction: (h, o, origin) => traces!.traceTransaction(h, o, origin),
        traceBlock: (n, o, origin) => traces!.traceBlock(n, o, origin),
        eth: ethCore,
      }),
    );
    const dispatcher = createDispatcher({
      table,
      enabledNamespaces: new Set(opts.jsonRpc.api),
      limits: { batchRequestLimit: opts.jsonRpc.batchRequestLimit, batchResponseMaxSize: opts.jsonRpc.batchResponseMaxSize },
      errors: evmErrors,
      onInternalError: (err, method) => log.error({ method, err: err instanceof Error ? err.stack : String(err) }, 'internal error'),
      recorder: observe.rpcRecorder({
        wsConnections: () => ws?.connections() ?? 0,
        subscriptions: () => subscriptions?.count() ?? 0,
        filters: () => filters?.size() ?? 0,
        callQueue: () => calls.queued(),
        traceQueue: () => traces?.queued() ?? 0,
      }),
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
      authenticate,
      getRoutes: nodePageRoutes({
        page: opts.jsonRpc.nodePage,
        health: () => observe.health(),
        config: () => ({ wsPort: ws?.port, cometUrl: endpoints.rpc, chainId: genesis.chainId, evmChainId: Number(genesis.evmChainId) }),
        rpcRequests: () => observe.rpcRequests(),
        store,
      }),
      cors: opts.jsonRpc.enableUnsafeCors ? ['*'] : undefined,
      log: log.child({ module: 'http' }),
    });
    endpoints.jsonRpc = `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
    log.info({ address: endpoints.jsonRpc }, 'JSON-RPC HTTP server listening');
    phaseDone('httpListening');
    if (opts.jsonRpc.nodePage) endpoints.page = `${endpoints.jsonRpc}/explorer`;
    const wsAddr = splitHostPort(opts.jsonRpc.wsAddress);
    ws = await startWsServer({
      host: wsAddr.host,
      port: wsAddr.port,
      dispatcher,
      limits: {
        maxMessageSize: opts.jsonRpc.wsMaxMessageSize,
        maxConnections: opts.jsonRpc.wsMaxConnections,
        maxQueueBytes: opts.jsonRpc.wsMaxQueueBytes,
      },
      origins: opts.jsonRpc.enableUnsafeCors ? ['*'] : opts.jsonRpc.wsOrigins,
      authenticate,
      log: log.child({ module: 'ws' }),
    });
    endpoints.ws = `ws://${wsAddr.host.includes(':') ? `[${wsAddr.host}]` : wsAddr.host}:${ws.port}`;
    log.info({ address: endpoints.ws }, 'JSON-RPC WebSocket server listening');
  }

  if (opts.abci.withCometbft) {
    consensusRpc = await startConsensusRpc({ opts, genesis, paths, store, reader, nativePool, chain, log });
    endpoints.rpc = consensusRpc.url;
    log.info({ address: endpoints.rpc }, 'CometBFT RPC server listening');
  } else {
    // under real CometBFT, its own RPC is Surface B (docs/abci.md); ferry's listener stays off
    log.info({ cometbftRpc: opts.abci.cometbftRpc }, 'Surface B is served by CometBFT; ferry\'s own CometBFT RPC listener is off');
  }
  await observe.startServers(log);
  Object.assign(endpoints, observe.endpoints);
  // a call worker that cannot start still fails the start, as before (only later: after the listeners)
  await calls.ready;

  return {
    endpoints,
    async close() {
      // --state FILE: the state as it is now, before the chain thread stops
      if (opts.stateFile !== undefined) dumpStateFile(opts.stateFile, reader!, log);
      await observe.close();
      await consensusRpc?.close();
      await ws?.close();
      await http?.close();
      keystore.close();
      subscriptions?.close();
      filters?.close();
      feed?.close();
      await traces?.close();
      await profiler?.close();
      await chain.close();
      await calls.close();
      store.close();
    },
  };
}

/** `--state FILE` at start: a missing file is a fresh start; a bad one stops the start with its reason. */
async function loadStateFile(file: string, reader: ChainReader, controls: CheatControls, log: Logger): Promise<void> {
  if (!existsSync(file)) {
    log.info({ file }, 'no state file yet: it is written at exit');
    return;
  }
  const size = statSync(file).size;
  if (size > MAX_STATE_BYTES) throw new Error(`--state ${file}: ${size} bytes, more than ${MAX_STATE_BYTES} (MAX_STATE_BYTES)`);
  try {
    const accounts = await loadState(reader, controls, readFileSync(file));
    log.info({ file, accounts }, 'loaded the state file (pending until the next block)');
  } catch (e) {
    throw new Error(`--state ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** `--state FILE` at a clean exit: Anvil's JSON, written beside and renamed over the file. */
function dumpStateFile(file: string, reader: ChainReader, log: Logger): void {
  try {
    const json = encodeState(reader);
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, json);
    renameSync(tmp, file);
    log.info({ file, bytes: json.length }, 'wrote the state file');
  } catch (e) {
    log.error({ file, err: e instanceof Error ? e.message : String(e) }, 'could not write the state file');
  }
}

interface ConsensusRpc {
  url: string;
  close(): Promise<void>;
}

interface ConsensusRpcDeps {
  opts: NodeOptions;
  genesis: Genesis;
  paths: HomePaths;
  store: Store;
  reader: ChainReader;
  nativePool: NativeMempool;
  chain: ChainClient;
  log: Logger;
}

/** Surface B (CometBFT RPC) on `rpc.laddr`: its backend over the block store, index, chain reader and chain thread. */
async function startConsensusRpc(d: ConsensusRpcDeps): Promise<ConsensusRpc> {
  const { opts, genesis, reader } = d;
  const consensus = new ConsensusReader(d.store, {
    genesisValidators: genesis.validators.map((v) => ({ address: v.address, pubKey: v.pubKey, votingPower: v.power })),
    initialHeight: genesis.initialHeight,
  });
  const validatorKey = readValidatorKey(readFileSync(d.paths.privValidatorKey, 'utf8'));
  const genesisJson = JSON.stringify(JSON.parse(readFileSync(d.paths.genesis, 'utf8')));
  const identity = {
    nodeId: nodeId(readNodeKey(readFileSync(d.paths.nodeKey, 'utf8'))),
    moniker: MONIKER,
    network: genesis.chainId,
    version: COMETBFT_VERSION,
    listenAddr: opts.rpc.laddr,
    rpcAddress: opts.rpc.laddr,
    appVersion: APP_VERSION,
    validator: { address: validatorKey.address, pubKey: validatorKey.pubKey },
  };
  const checkTx = async (tx: Uint8Array, submit: boolean) => {
    // decoded and its sender recovered here, off the chain thread
    const sender = reader.nativeSender(tx);
    return { ...(await d.chain.checkNative(tx, !submit, sender)), info: '' };
  };
  const node: NodeInfo = { identity, genesisJson, blockParams: () => ({ maxBytes: genesis.maxBytes, maxGas: genesis.maxGas }) };
  const app: AppQuery = {
    abciInfo: () => {
      const h = reader.latestNumber();
      return { data: 'ferry', version: VERSION, appVersion: APP_VERSION, lastBlockHeight: h, lastBlockAppHash: reader.blockByNumber(h)?.header.stateRoot ?? new Uint8Array() };
    },
    abciQuery: (req) => abciQuery(reader, req),
  };
  // the consensus reader is the block store and the tx index; the native mempool mirror is the pool
  const backend: ConsensusBackend = { blocks: consensus, txs: consensus, mempool: d.nativePool, checker: { checkTx }, app, node };
  const service = new CometService(
    backend,
    {
      unsafe: opts.rpc.unsafe,
      maxRequestBatchSize: opts.rpc.maxRequestBatchSize,
      maxSubscriptionClients: opts.rpc.maxSubscriptionClients,
      maxSubscriptionsPerClient: opts.rpc.maxSubscriptionsPerClient,
      subscriptionBufferSize: opts.rpc.experimentalSubscriptionBufferSize,
      websocketWriteBufferSize: opts.rpc.experimentalWebsocketWriteBufferSize,
      closeOnSlowClient: opts.rpc.experimentalCloseOnSlowClient,
      timeoutBroadcastTxCommitMs: opts.rpc.timeoutBroadcastTxCommitMs,
      timeoutCommitMs: opts.consensus.timeoutCommitMs,
    },
    d.log.child({ module: 'cometbft-rpc' }),
  );
  // the hub drops a listener that throws: keep publishing, log the bug
  const guarded = <T>(fn: (v: T) => void) => (v: T) => {
    try {
      fn(v);
    } catch (e) {
      d.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'cometbft rpc: publishing an event failed');
    }
  };
  const offBlocks = reader.events.blocks.on(guarded((h: bigint) => service.bus.onCommitted(h)));
  const offSteps = reader.events.consensus.on(guarded((e: { data?: unknown }) => service.bus.onRoundStep(e.data as RoundStepEvent)));
  // a dev revert: block events resume at the reused heights (docs/dev-mode.md)
  const offRewound = reader.events.rewound.on(guarded((e: { height: bigint }) => service.bus.onRewound(e.height)));
  const laddr = parseLaddr(opts.rpc.laddr)!;
  const server = await startCometServer({
    host: laddr.host,
    port: laddr.port,
    handler: service,
    maxBodyBytes: opts.rpc.maxBodyBytes,
    maxHeaderBytes: opts.rpc.maxHeaderBytes,
    websocketMaxQueueBytes: opts.rpc.websocketMaxQueueBytes,
    websocketMaxTotalQueueBytes: opts.rpc.websocketMaxTotalQueueBytes,
    maxOpenConnections: opts.rpc.maxOpenConnections,
    corsAllowedOrigins: opts.rpc.corsAllowedOrigins,
    log: d.log.child({ module: 'cometbft-rpc' }),
  });
  return {
    url: `http://${formatHostPort({ host: laddr.host, port: server.port })}`,
    async close() {
      offBlocks();
      offSteps();
      offRewound();
      service.close();
      await server.close();
    },
  };
}
