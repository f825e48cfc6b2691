/**
 * Surface B's start-up (the CometBFT RPC on `rpc.laddr`; docs/architecture.md "Surface B"): its
 * backend over the block store and tx index (consensus/reader.ts), the native mempool mirror, the
 * chain reader (ABCI info and queries, CheckTx senders) and the chain thread (CheckTx), then its
 * service and listener. Committed blocks and dev rewinds reach its event bus from the chain reader's
 * hub (after the reader has moved its head); the engine's round steps go straight to the bus
 * (`roundStep`), from the chain client's callback.
 */
import { readFileSync } from 'node:fs';
import { APP_VERSION } from '../chain/app.js';
import { abciQuery } from '../chain/query.js';
import type { ChainReader } from '../chain/reader.js';
import type { AppQuery, ConsensusBackend, NodeInfo, TxChecker } from '../cometrpc/backend.js';
import { COMETBFT_VERSION, MONIKER } from '../cometrpc/format.js';
import { CometService } from '../cometrpc/service.js';
import { formatHostPort, parseLaddr } from '../config/address.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { VERSION } from '../config/version.js';
import { nodeId, readNodeKey, readValidatorKey } from '../consensus/cometbft/index.js';
import { ConsensusReader, type NativeMempool } from '../consensus/reader.js';
import type { Logger } from '../lib/log.js';
import { startCometServer } from '../server/comet.js';
import type { Store } from '../store/store.js';
import type { RoundStepEvent } from '../types/cometbft.js';
import type { ChainClient } from './chainclient.js';
import type { HomePaths } from './home.js';
import { SwitchCometHandler } from './switch.js';

export interface ConsensusRpc {
  url: string;
  /** a round step of the engine (ChainListener.onRoundStep): published on the bus at once */
  roundStep(e: RoundStepEvent): void;
  /** a re-fork begins: requests wait, WebSocket clients are closed (node/switch.ts) */
  pause(): void;
  /** the old chain's service stops; the listener stays */
  detach(): void;
  /** the new chain's service starts and the waiting requests go to it */
  attach(next: ConsensusRpcDeps): void;
  close(): Promise<void>;
}

export interface ConsensusRpcDeps {
  opts: NodeOptions;
  genesis: Genesis;
  paths: HomePaths;
  store: Store;
  reader: ChainReader;
  nativePool: NativeMempool;
  chain: Pick<ChainClient, 'checkNative' | 'wantRoundSteps'>;
  log: Logger;
}

/** status and net_info: this node's identity, from the home's keys and genesis. */
function nodeInfo({ opts, genesis, paths }: ConsensusRpcDeps): NodeInfo {
  const validatorKey = readValidatorKey(readFileSync(paths.privValidatorKey, 'utf8'));
  const identity = {
    nodeId: nodeId(readNodeKey(readFileSync(paths.nodeKey, 'utf8'))),
    moniker: MONIKER,
    network: genesis.chainId,
    version: COMETBFT_VERSION,
    listenAddr: opts.rpc.laddr,
    rpcAddress: opts.rpc.laddr,
    appVersion: APP_VERSION,
    validator: { address: validatorKey.address, pubKey: validatorKey.pubKey },
  };
  const genesisJson = JSON.stringify(JSON.parse(readFileSync(paths.genesis, 'utf8')));
  return { identity, genesisJson, blockParams: () => ({ maxBytes: genesis.maxBytes, maxGas: genesis.maxGas }) };
}

/** abci_info and abci_query, from the committed state the chain reader sees. */
function appQuery(reader: ChainReader): AppQuery {
  return {
    abciInfo: () => {
      const h = reader.latestNumber();
      return { data: 'ferry', version: VERSION, appVersion: APP_VERSION, lastBlockHeight: h, lastBlockAppHash: reader.blockByNumber(h)?.header.stateRoot ?? new Uint8Array() };
    },
    abciQuery: (req) => abciQuery(reader, req),
  };
}

/** broadcast_tx_* and check_tx: the tx is decoded and its sender recovered here, off the chain thread. */
function txChecker(reader: ChainReader, chain: ConsensusRpcDeps['chain']): TxChecker {
  return {
    checkTx: async (tx, submit) => ({ ...(await chain.checkNative(tx, !submit, reader.nativeSender(tx))), info: '' }),
  };
}

/** Surface B's service over one chain, its events wired from the chain reader (a re-fork makes a new one). */
function startCometService(d: ConsensusRpcDeps): { service: CometService; guarded: <T>(fn: (v: T) => void) => (v: T) => void; close(): void } {
  const { opts, genesis, reader } = d;
  const consensus = new ConsensusReader(d.store, {
    genesisValidators: genesis.validators.map((v) => ({ address: v.address, pubKey: v.pubKey, votingPower: v.power })),
    initialHeight: genesis.initialHeight,
  });
  // the consensus reader is the block store and the tx index; the native mempool mirror is the pool
  const backend: ConsensusBackend = { blocks: consensus, txs: consensus, mempool: d.nativePool, checker: txChecker(reader, d.chain), app: appQuery(reader), node: nodeInfo(d) };
  const log = d.log.child({ module: 'cometbft-rpc' });
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
    log,
  );
  // the engine makes the round steps' events only while a subscription could want them
  service.bus.onStepsWanted = (wanted) => d.chain.wantRoundSteps(wanted);
  // a publishing bug is logged and the next event still published
  const guarded =
    <T>(fn: (v: T) => void) =>
    (v: T) => {
      try {
        fn(v);
      } catch (e) {
        log.error({ err: e instanceof Error ? e.stack : String(e) }, 'cometbft rpc: publishing an event failed');
      }
    };
  const offBlocks = reader.events.blocks.on(guarded((h: bigint) => service.bus.onCommitted(h)));
  // a dev revert: block events resume at the reused heights (docs/dev-mode.md)
  const offRewound = reader.events.rewound.on(guarded((e: { height: bigint }) => service.bus.onRewound(e.height)));
  return {
    service,
    guarded,
    close() {
      offBlocks();
      offRewound();
      service.close();
    },
  };
}

export async function startConsensusRpc(d: ConsensusRpcDeps): Promise<ConsensusRpc> {
  const { opts } = d;
  let current = startCometService(d);
  // the listener stays up across a re-fork: it hands requests to the current chain's service (node/switch.ts)
  const handler = new SwitchCometHandler(current.service);
  const laddr = parseLaddr(opts.rpc.laddr)!;
  const server = await startCometServer({
    host: laddr.host,
    port: laddr.port,
    handler,
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
    roundStep: (e: RoundStepEvent) => current.guarded((ev: RoundStepEvent) => current.service.bus.onRoundStep(ev))(e),
    pause: () => handler.pause(),
    detach: () => current.close(),
    attach(next) {
      current = startCometService(next);
      handler.resume(current.service);
    },
    async close() {
      current.close();
      await server.close();
    },
  };
}
