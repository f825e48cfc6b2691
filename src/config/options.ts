import { availableParallelism } from 'node:os';
/**
 * Every option of the node, with its default. Names follow Evmos app.toml `[json-rpc]` and CometBFT
 * config.toml keys. Precedence: flag > file > default (see load.ts).
 */

export const NAMESPACES = ['eth', 'web3', 'net', 'debug', 'trace', 'ots', 'erigon', 'miner', 'txpool', 'personal', 'evm', 'anvil', 'hardhat'] as const;
export type Namespace = (typeof NAMESPACES)[number];

/** engines of plain eth_calls (json-rpc.call-engine; evm/revm.ts) */
export const CALL_ENGINES = ['ethereumjs', 'revm'] as const;
export type CallEngine = (typeof CALL_ENGINES)[number];

export interface JsonRpcOptions {
  enable: boolean;
  /** host:port */
  address: string;
  /** host:port */
  wsAddress: string;
  api: Namespace[];
  gasCap: bigint;
  /** milliseconds */
  evmTimeoutMs: number;
  /** the engine of plain eth_calls (evm/revm.ts): revm when its addon was built, else ethereumjs */
  callEngine: CallEngine;
  /** worker threads for eth_call / eth_estimateGas */
  callWorkers: number;
  filterCap: number;
  feeHistoryCap: number;
  logsCap: number;
  blockRangeCap: number;
  httpTimeoutMs: number;
  httpIdleTimeoutMs: number;
  allowUnprotectedTxs: boolean;
  /** personal_* and miner_* need a JWT bearer token (config/jwt.hex); false only on loopback listeners */
  privateApiAuth: boolean;
  /** 0 = unlimited */
  maxOpenConnections: number;
  batchRequestLimit: number;
  batchResponseMaxSize: number;
  httpBodyLimit: number;
  /** browser origins allowed to open a WebSocket (`*` = any; see server/ws.ts) */
  wsOrigins: string[];
  /** milliseconds a polling filter lives without a poll (0 = forever) */
  filterTimeoutMs: number;
  /** max bytes of one WebSocket message */
  wsMaxMessageSize: number;
  /** max open WebSocket connections (0 = unlimited) */
  wsMaxConnections: number;
  /** max eth_subscribe subscriptions of one WebSocket connection */
  wsMaxSubscriptions: number;
  /** max bytes waiting to be sent on one WebSocket connection; a client over it is disconnected */
  wsMaxQueueBytes: number;
  /** milliseconds: the longest `timeout` a debug_trace* call may ask for (longer is lowered to this) */
  traceTimeoutCapMs: number;
  /** max characters (bytes of ASCII JSON) of one debug_trace* result; a bigger one is an error (0 = unlimited) */
  traceResultMaxSize: number;
  /** debug profiling methods (debug_startCPUProfile, debug_writeMemProfile, ...) are served */
  enableProfiling: boolean;
  /** host:port of the geth-style metrics server (/debug/metrics/prometheus); served only with `enableMetrics` */
  metricsAddress: string;
  /** the `--metrics` start flag (Evmos): serve the JSON-RPC metrics on `metricsAddress` */
  enableMetrics: boolean;
  /** serve the node page at GET /explorer on the JSON-RPC HTTP listener */
  nodePage: boolean;
  /** CORS for any origin on the HTTP listener and any Origin on the WebSocket one (Ethermint's name) */
  enableUnsafeCors: boolean;
  /** put before web3_clientVersion with a "/" (empty: none); docs/dev-mode.md */
  clientVersionPrefix: string;
}

/** CometBFT v0.38 config.toml `[instrumentation]` */
export interface InstrumentationOptions {
  /** serve the consensus engine's Prometheus metrics */
  prometheus: boolean;
  /** `host:port` or `:port` (all interfaces) */
  prometheusListenAddr: string;
  /** metric name prefix */
  namespace: string;
}

export interface ConsensusOptions {
  /** milliseconds between blocks */
  timeoutCommitMs: number;
  /** dev option: make a block as soon as a transaction arrives */
  createEmptyBlocks: boolean;
  blockOnTx: boolean;
}

export interface RpcOptions {
  /** tcp://host:port */
  laddr: string;
  /** CORS allowed origins; empty = CORS off, `*` = any */
  corsAllowedOrigins: string[];
  /** serve the unsafe routes (dial_seeds, dial_peers, unsafe_flush_mempool) */
  unsafe: boolean;
  /** 0 = unlimited */
  maxOpenConnections: number;
  /** distinct remote addresses with subscriptions */
  maxSubscriptionClients: number;
  maxSubscriptionsPerClient: number;
  /** events buffered per subscription */
  experimentalSubscriptionBufferSize: number;
  /** responses buffered per WebSocket connection */
  experimentalWebsocketWriteBufferSize: number;
  /** close a slow WebSocket client instead of dropping its events */
  experimentalCloseOnSlowClient: boolean;
  /** milliseconds broadcast_tx_commit waits for the block */
  timeoutBroadcastTxCommitMs: number;
  /** 0 = unlimited */
  maxRequestBatchSize: number;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  /** max unsent bytes one WebSocket client may hold; a client over it is disconnected */
  websocketMaxQueueBytes: number;
  /** max unsent bytes all WebSocket clients together may hold; a client behind when it is reached is disconnected */
  websocketMaxTotalQueueBytes: number;
}

export interface MempoolOptions {
  /** max txs in the pool (pending + queued) */
  size: number;
  /** max bytes of one tx */
  maxTxBytes: number;
  /** replacement needs this percentage bump of fee cap and tip */
  priceBumpPercent: number;
  /** max queued (nonce-gapped) txs per account */
  accountQueue: number;
}

/** How the application is driven: ferry's embedded engine, or real CometBFT over ABCI (evmosd's start flags). */
export interface AbciOptions {
  /** true: ferry's embedded consensus engine; false: wait for an external CometBFT on `address` */
  withCometbft: boolean;
  /** ABCI listen address, `tcp://host:port` or `unix:///path` */
  address: string;
  /** `socket` (gRPC is not served) */
  transport: string;
  /** the local CometBFT node's RPC, where eth_sendRawTransaction submits (`broadcast_tx_sync`) */
  cometbftRpc: string;
}

/**
 * app.toml's pruning keys (Cosmos SDK store/pruning/types/options.go, server/config/config.go):
 * state versions older than `keepRecent` are removed every `interval` blocks; block history below
 * `minRetainBlocks` from the head is removed and returned to CometBFT as Commit's retain_height
 * (docs/abci.md "Pruning").
 */
export interface PruningOptions {
  strategy: PruningStrategy;
  /** heights of state kept below the head (custom; default/everything/nothing set their own) */
  keepRecent: number;
  /** prune every this many blocks (0: never) */
  interval: number;
  /** blocks of history kept below the head (0: all) */
  minRetainBlocks: number;
}

export const PRUNING_STRATEGIES = ['default', 'nothing', 'everything', 'custom'] as const;
export type PruningStrategy = (typeof PRUNING_STRATEGIES)[number];

/** Cosmos SDK's presets: default keeps 362880 recent heights, everything 2, both pruned every 10 blocks. */
export const DEFAULT_PRUNING_KEEP_RECENT = 362_880;
export const EVERYTHING_PRUNING_KEEP_RECENT = 2;
export const DEFAULT_PRUNING_INTERVAL = 10;
/** custom pruning: the smallest interval and keep-recent Cosmos SDK accepts (ErrPruningIntervalTooSmall, ErrPruningKeepRecentTooSmall) */
export const MIN_PRUNING_INTERVAL = 10;
export const MIN_PRUNING_KEEP_RECENT = 2;

export const DEFAULT_PRUNING: PruningOptions = { strategy: 'default', keepRecent: 0, interval: 0, minRetainBlocks: 0 };

/** What a strategy keeps and how often it prunes (custom: the configured keys). */
export function pruningPlan(p: PruningOptions): { keepRecent: number; interval: number } {
  switch (p.strategy) {
    case 'nothing':
      return { keepRecent: 0, interval: 0 };
    case 'default':
      return { keepRecent: DEFAULT_PRUNING_KEEP_RECENT, interval: DEFAULT_PRUNING_INTERVAL };
    case 'everything':
      return { keepRecent: EVERYTHING_PRUNING_KEEP_RECENT, interval: DEFAULT_PRUNING_INTERVAL };
    case 'custom':
      return { keepRecent: p.keepRecent, interval: p.interval };
  }
}

/** app.toml's `[state-sync]` keys (Cosmos SDK server/config/config.go StateSyncConfig; docs/abci.md "State sync"). */
export interface StateSyncOptions {
  /** take a snapshot every this many blocks (0: never) */
  snapshotInterval: number;
  /** snapshots kept (0: all) */
  snapshotKeepRecent: number;
}

/** Cosmos SDK's defaults: no snapshots, the two most recent kept. */
export const DEFAULT_STATE_SYNC: StateSyncOptions = { snapshotInterval: 0, snapshotKeepRecent: 2 };

export interface NodeOptions {
  home: string;
  pruning: PruningOptions;
  stateSync: StateSyncOptions;
  /** wei per gas; txs below are rejected by CheckTx */
  minimumGasPrice: bigint;
  /**
   * engine of a block's txs: revm runs contract txs of types 0–2 through the native addon (ethereumjs the
   * rest, and everything when the addon is not built: evm/revmtx.ts); ethereumjs runs them all. Both give
   * the same state, receipts and traces (test/e2e/block-engines.test.ts).
   */
  blockEngine: CallEngine;
  /** true when --minimum-gas-prices was given on the command line (miner_setGasPrice then has no effect) */
  minimumGasPriceFromFlag: boolean;
  logLevel: string;
  jsonRpc: JsonRpcOptions;
  rpc: RpcOptions;
  consensus: ConsensusOptions;
  mempool: MempoolOptions;
  abci: AbciOptions;
  instrumentation: InstrumentationOptions;
  /** the dev preset (`ferry dev`, `ferry start --dev`): the dev accounts are unlocked, blocks on demand (docs/dev-mode.md) */
  dev: boolean;
  /** `--state FILE`: the dev state file, loaded at start if it exists and written at a clean exit (docs/dev-mode.md) */
  stateFile?: string;
}

/** eth_call workers: the machine's spare cores, at least 1, at most 4 */
export const DEFAULT_CALL_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));

export const DEFAULT_JSON_RPC: JsonRpcOptions = {
  enable: true,
  address: '127.0.0.1:8545',
  wsAddress: '0.0.0.0:8546',
  api: ['eth', 'net', 'web3'],
  gasCap: 25_000_000n,
  evmTimeoutMs: 5_000,
  // revm when its addon is built (npm run build:native); without it every call runs on ethereumjs,
  // which the start-up log says (docs/benchmarks.md "eth_call on revm")
  callEngine: 'revm',
  callWorkers: DEFAULT_CALL_WORKERS,
  filterCap: 200,
  feeHistoryCap: 100,
  logsCap: 10_000,
  blockRangeCap: 10_000,
  httpTimeoutMs: 30_000,
  httpIdleTimeoutMs: 120_000,
  allowUnprotectedTxs: false,
  privateApiAuth: true,
  maxOpenConnections: 0,
  batchRequestLimit: 1000,
  batchResponseMaxSize: 25_000_000,
  httpBodyLimit: 5 * 1024 * 1024,
  wsOrigins: ['127.0.0.1', 'localhost'],
  filterTimeoutMs: 5 * 60_000,
  wsMaxMessageSize: 5 * 1024 * 1024,
  wsMaxConnections: 2_000,
  wsMaxSubscriptions: 1_000,
  wsMaxQueueBytes: 8 * 1024 * 1024,
  traceTimeoutCapMs: 60_000,
  traceResultMaxSize: 25_000_000,
  enableProfiling: false,
  metricsAddress: '127.0.0.1:6065',
  enableMetrics: false,
  nodePage: true,
  enableUnsafeCors: false,
  clientVersionPrefix: '',
};

/** CometBFT v0.38 `DefaultInstrumentationConfig` values. */
export const DEFAULT_INSTRUMENTATION: InstrumentationOptions = {
  prometheus: false,
  prometheusListenAddr: ':26660',
  namespace: 'cometbft',
};

export const DEFAULT_CONSENSUS: ConsensusOptions = {
  timeoutCommitMs: 1_000,
  createEmptyBlocks: true,
  blockOnTx: false,
};

/** CometBFT v0.38 `DefaultRPCConfig` values. */
export const DEFAULT_RPC: RpcOptions = {
  laddr: 'tcp://127.0.0.1:26657',
  corsAllowedOrigins: [],
  unsafe: false,
  maxOpenConnections: 900,
  maxSubscriptionClients: 100,
  maxSubscriptionsPerClient: 5,
  experimentalSubscriptionBufferSize: 200,
  experimentalWebsocketWriteBufferSize: 200,
  experimentalCloseOnSlowClient: false,
  timeoutBroadcastTxCommitMs: 10_000,
  maxRequestBatchSize: 10,
  maxBodyBytes: 1_000_000,
  maxHeaderBytes: 1024 * 1024,
  // not CometBFT keys (it bounds its WebSocket writes by message count only): Surface A's default per client
  websocketMaxQueueBytes: DEFAULT_JSON_RPC.wsMaxQueueBytes,
  websocketMaxTotalQueueBytes: 64 * 1024 * 1024,
};

export const DEFAULT_MEMPOOL: MempoolOptions = {
  size: 10_000,
  maxTxBytes: 128 * 1024,
  priceBumpPercent: 10,
  accountQueue: 64,
};

export const ABCI_TRANSPORTS = ['socket', 'grpc'] as const;

export const DEFAULT_ABCI: AbciOptions = {
  withCometbft: true,
  address: 'tcp://127.0.0.1:26658',
  transport: 'socket',
  cometbftRpc: 'tcp://127.0.0.1:26657',
};

export const DEFAULT_HOME_DIRNAME = '.ferry';

/** The EVM denom of `minimum-gas-prices`: 1 aferry = 1 wei. */
export const EVM_DENOM = 'aferry';
export const DEFAULT_MINIMUM_GAS_PRICE = 0n;
/**
 * The largest `minimum-gas-prices` (app.toml, flag, miner_setGasPrice): the highest price at which the
 * cheapest transaction (a 21,000-gas transfer) still has an upfront cost (gas × price) that fits in
 * 256 bits, so a tx priced at or above it can exist and be paid for. Above it every tx is refused.
 */
export const MAX_MINIMUM_GAS_PRICE = (2n ** 256n - 1n) / 21_000n;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';
