/**
 * Composition root: attaches to the chain thread (worker; spawned and given its data by node/boot.ts
 * before this module loads), then starts the RPC side on this thread — the store reader, the call
 * workers, Surface A (node/ethrpc.ts) and Surface B (node/consensusrpc.ts) — and wires them. Closes
 * in reverse. Behaviour lives in the modules it wires (docs/architecture.md "Surface A's assembly").
 * A fork re-forked in place (anvil_reset naming another block or origin; node/refork.ts) gets a new
 * chain thread, store, call workers and services; the listeners stay (docs/fork-mode.md "Reset").
 */
import { callEngineText } from '../evm/revm.js';
import { loadCoinbase } from '../chain/app.js';
import { abciQuery } from '../chain/query.js';
import { ChainReader } from '../chain/reader.js';
import { devAccounts } from '../config/devaccounts.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { NativeMempool } from '../consensus/reader.js';
import { AccountSigner } from '../evmrpc/accounts.js';
import type { Refork } from '../evmrpc/devmethods.js';
import { KeyStore } from '../keystore/index.js';
import { unavailable } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import { phaseDone } from '../lib/startphases.js';
import { Store } from '../store/store.js';
import { boot as bootChain, type Boot } from './boot.js';
import { CallPool } from './callpool.js';
import { ChainClient } from './chainclient.js';
import { startConsensusRpc, type ConsensusRpc } from './consensusrpc.js';
import { startEthRpc, type EthRpc, type EthRpcDeps } from './ethrpc.js';
import { homePaths } from './home.js';
import { createMinerBackend } from './miner.js';
import { NodeObservability } from './observe.js';
import { identifyRefork, switchForkHome } from './refork.js';
import { dumpStateFile, loadStateFile } from './statefile.js';

export interface RunningNode {
  endpoints: { jsonRpc?: string; ws?: string; rpc?: string; cometMetrics?: string; rpcMetrics?: string; page?: string };
  close(): Promise<void>;
}

/** What lives on one chain: the chain thread's client, the store, the call workers, the reader, signer and miner. */
interface Core {
  genesis: Genesis;
  dbPath: string;
  chain: ChainClient;
  store: Store;
  calls: CallPool;
  reader: ChainReader;
  signer: AccountSigner;
  miner: ReturnType<typeof createMinerBackend>;
  close(): Promise<void>;
}

/** What outlives a re-fork: the observability, the native pool mirror, the keystore, the hooks of a dev revert. */
interface Shared {
  opts: NodeOptions;
  log: Logger;
  observe: NodeObservability;
  nativePool: NativeMempool;
  keystore: KeyStore;
  /** what else follows a dev revert besides the reader (Surface A's trace worker), set once it exists */
  onRewound: ((height: bigint) => void)[];
  roundStep(event: Parameters<ConsensusRpc['roundStep']>[0]): void;
}

async function startCore(s: Shared, genesis: Genesis, boot: Boot): Promise<Core> {
  const { opts, log, observe, nativePool } = s;
  const dbPath = boot.data.dbPath;
  let reader: ChainReader | undefined;
  let calls: CallPool | undefined;
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
        calls?.rewound(m.height);
        for (const f of s.onRewound) f(m.height);
        reader?.onRewound({ height: m.height, removedLogs: m.removedLogs, truncated: m.truncated });
      },
      onPool: (m) => {
        nativePool.apply(m);
        reader?.onPoolChange(m);
      },
      // straight to Surface B's event bus (node/consensusrpc.ts)
      onRoundStep: (event) => s.roundStep(event),
      query: (req) => (reader ? abciQuery(reader, req) : ChainClient.notReady()),
    },
    log,
  );
  observe.started(height);
  phaseDone('chainReady');

  const store = new Store(dbPath, { reader: true });
  // the call workers load while the rest starts; calls sent meanwhile wait in their queues
  calls = CallPool.start(
    opts.jsonRpc.callWorkers,
    dbPath,
    { chainId: genesis.evmChainId, hardfork: genesis.evm.hardfork, forkTimes: genesis.evm.forkTimes, gasCap: opts.jsonRpc.gasCap, evmTimeoutMs: opts.jsonRpc.evmTimeoutMs, callEngine: opts.jsonRpc.callEngine },
    log.child({ module: 'calls' }),
  );
  log.info({ engine: callEngineText(opts.jsonRpc.callEngine) }, 'eth_call engine');
  reader = await ChainReader.create(store, {
    chainId: genesis.evmChainId,
    hardfork: genesis.evm.hardfork,
    forkTimes: genesis.evm.forkTimes,
    gasCap: opts.jsonRpc.gasCap,
    logsCap: opts.jsonRpc.logsCap,
    simulator: calls,
    coinbase: loadCoinbase(store, genesis.evm.coinbase),
    submit: (raw, signed) => chain.submitEvm(raw, signed),
  });
  reader.onCommitted(store.latestHeight() ?? 0n);
  reader.cheats.receive(startCheats);
  // the dev preset: the dev accounts sign without a passphrase and are listed first by eth_accounts
  const signer = new AccountSigner(reader, s.keystore, opts.dev ? devAccounts() : [], { gasCap: opts.jsonRpc.gasCap, evmTimeoutMs: opts.jsonRpc.evmTimeoutMs });
  const miner = createMinerBackend({ chain, reader, home: opts.home, minimumGasPriceFromFlag: opts.minimumGasPriceFromFlag, log });
  const pool = calls;
  return {
    genesis,
    dbPath,
    chain,
    store,
    calls: pool,
    reader,
    signer,
    miner,
    async close() {
      await chain.close();
      await pool.close();
      store.close();
    },
  };
}

/** `boot`: the first step (node/boot.ts), taken by the caller before it loads this module (cold start). */
export async function runNode(opts: NodeOptions, genesis: Genesis, log: Logger, boot: Boot): Promise<RunningNode> {
  const paths = homePaths(opts.home);
  const { authenticate } = boot;
  // Surface B: the native mempool mirror (fed by the chain thread's pool changes)
  const nativePool = new NativeMempool();
  let consensusRpc: ConsensusRpc | undefined;
  const shared: Shared = {
    opts,
    log,
    observe: new NodeObservability(opts, genesis, boot.data.dbPath, nativePool),
    nativePool,
    keystore: new KeyStore(paths.keystoreDir, { log: log.child({ module: 'keystore' }) }),
    onRewound: [],
    roundStep: (event) => consensusRpc?.roundStep(event),
  };
  const { observe, keystore } = shared;
  let core = await startCore(shared, genesis, boot);
  if (opts.stateFile !== undefined) await loadStateFile(opts.stateFile, { reader: core.reader, chain: core.chain }, log);

  const endpoints: RunningNode['endpoints'] = {};
  let ethRpc: EthRpc | undefined;
  /** one re-fork at a time; a reset arriving meanwhile is refused */
  let reforking = false;
  const refork: Refork = async (target) => {
    const record = core.store.fork?.record;
    if (record === undefined) return false;
    if (reforking) throw unavailable('a re-fork is already running; this reset changed nothing');
    reforking = true;
    try {
      const next = await identifyRefork(record, target);
      if (next === undefined) return false;
      log.info({ origin: next.url, block: next.blockNumber.toString(), chainId: next.chainId.toString() }, 're-forking in place');
      ethRpc?.pause();
      consensusRpc?.pause();
      await ethRpc?.detach();
      consensusRpc?.detach();
      await core.close();
      nativePool.clear();
      const newGenesis = switchForkHome(opts.home, next, core.genesis);
      core = await startCore(shared, newGenesis, bootChain(opts, newGenesis));
      // the engine's first block (the new fork block + 1) goes, as a plain reset on a fork: the head is the
      // fork block, as Anvil's after a reset with `forking` (docs/fork-mode.md "Reset")
      await core.chain.dev({ op: 'reset' });
      ethRpc?.attach(ethDeps(core));
      consensusRpc?.attach(cometDeps(core));
      await core.calls.ready;
      return true;
    } finally {
      reforking = false;
    }
  };
  const ethDeps = (c: Core): EthRpcDeps => ({
    opts,
    genesis: c.genesis,
    dbPath: c.dbPath,
    store: c.store,
    reader: c.reader,
    calls: c.calls,
    signer: c.signer,
    miner: c.miner,
    chain: c.chain,
    observe,
    authenticate,
    cometUrl: () => endpoints.rpc,
    ...(c.store.fork !== undefined ? { refork } : {}),
    log,
  });
  const cometDeps = (c: Core) => ({ opts, genesis: c.genesis, paths, store: c.store, reader: c.reader, nativePool, chain: c.chain, log });
  if (opts.jsonRpc.enable) {
    ethRpc = await startEthRpc(ethDeps(core));
    shared.onRewound.push(() => ethRpc?.rewound());
    Object.assign(endpoints, ethRpc.endpoints);
  }
  if (opts.abci.withCometbft) {
    consensusRpc = await startConsensusRpc(cometDeps(core));
    endpoints.rpc = consensusRpc.url;
    log.info({ address: endpoints.rpc }, 'CometBFT RPC server listening');
  } else {
    // under real CometBFT, its own RPC is Surface B (docs/abci.md); ferry's listener stays off
    log.info({ cometbftRpc: opts.abci.cometbftRpc }, 'Surface B is served by CometBFT; ferry\'s own CometBFT RPC listener is off');
  }
  await observe.startServers(log);
  Object.assign(endpoints, observe.endpoints);
  // a call worker that cannot start still fails the start, as before (only later: after the listeners)
  await core.calls.ready;

  return {
    endpoints,
    async close() {
      // --state FILE: the state as it is now, before the chain thread stops
      if (opts.stateFile !== undefined) dumpStateFile(opts.stateFile, core.reader, log);
      await observe.close();
      await consensusRpc?.close();
      await ethRpc?.close();
      keystore.close();
      await core.close();
    },
  };
}
