/**
 * Composition root: attaches to the chain thread (worker; spawned and given its data by node/boot.ts
 * before this module loads), then starts the RPC side on this thread — the store reader, the call
 * workers, Surface A (node/ethrpc.ts) and Surface B (node/consensusrpc.ts) — and wires them. Closes
 * in reverse. Behaviour lives in the modules it wires (docs/architecture.md "Surface A's assembly").
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
import { KeyStore } from '../keystore/index.js';
import type { Logger } from '../lib/log.js';
import { phaseDone } from '../lib/startphases.js';
import { Store } from '../store/store.js';
import type { Boot } from './boot.js';
import { CallPool } from './callpool.js';
import { ChainClient } from './chainclient.js';
import { startConsensusRpc, type ConsensusRpc } from './consensusrpc.js';
import { startEthRpc, type EthRpc } from './ethrpc.js';
import { homePaths } from './home.js';
import { createMinerBackend } from './miner.js';
import { NodeObservability } from './observe.js';
import { dumpStateFile, loadStateFile } from './statefile.js';

export interface RunningNode {
  endpoints: { jsonRpc?: string; ws?: string; rpc?: string; cometMetrics?: string; rpcMetrics?: string; page?: string };
  close(): Promise<void>;
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
      // straight to Surface B's event bus (node/consensusrpc.ts)
      onRoundStep: (event) => consensusRpc?.roundStep(event),
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
  /** the reader, now that it exists (`reader` stays optional for the chain thread's callbacks above) */
  const chainReader = reader;
  // the dev preset: the dev accounts sign without a passphrase and are listed first by eth_accounts
  const signer = new AccountSigner(reader, keystore, opts.dev ? devAccounts() : [], { gasCap: opts.jsonRpc.gasCap, evmTimeoutMs: opts.jsonRpc.evmTimeoutMs });
  const miner = createMinerBackend({ chain, reader, home: opts.home, minimumGasPriceFromFlag: opts.minimumGasPriceFromFlag, log });
  if (opts.stateFile !== undefined) await loadStateFile(opts.stateFile, { reader, chain }, log);
  onRewound.push((h) => calls.rewound(h));

  const endpoints: RunningNode['endpoints'] = {};
  let ethRpc: EthRpc | undefined;
  if (opts.jsonRpc.enable) {
    ethRpc = await startEthRpc({
      opts,
      genesis,
      dbPath,
      store,
      reader,
      calls,
      signer,
      miner,
      chain,
      observe,
      authenticate,
      cometUrl: () => endpoints.rpc,
      log,
    });
    onRewound.push(() => ethRpc?.rewound());
    Object.assign(endpoints, ethRpc.endpoints);
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
      if (opts.stateFile !== undefined) dumpStateFile(opts.stateFile, chainReader, log);
      await observe.close();
      await consensusRpc?.close();
      await ethRpc?.close();
      keystore.close();
      await chain.close();
      await calls.close();
      store.close();
    },
  };
}
