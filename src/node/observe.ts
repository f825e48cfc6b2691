/**
 * Observability wiring: the metrics registries (src/metrics/), their scrape listeners, and the
 * readiness answer of the JSON-RPC HTTP listener.
 *
 * Where observations happen: the chain thread is a worker, and prom-client's registries live in one
 * thread (its AggregatorRegistry merges cluster processes, not worker threads). So every metric is a
 * prom-client object of THIS (the RPC) thread: the chain thread measures and sends its figures with
 * the messages it sends anyway — one `BlockStats` in each `committed` message, the CheckTx time and tx
 * size in each `checked` answer, the evicted and forward-dropped counts in `pool` — and they are observed here. No second registry
 * to merge, no extra message, and a scrape never waits on the chain thread.
 *
 * Listeners:
 * - `[instrumentation] prometheus = true`: CometBFT's metrics (+ Ferry's chain and process metrics) on
 *   `prometheus_listen_addr`, every path (as CometBFT's promhttp handler);
 * - `--metrics`: geth's rpc/ metrics (+ the same chain and process metrics) on
 *   `json-rpc.metrics-address` at `/debug/metrics/prometheus` (geth's exporter path, Evmos's server).
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import { readForkRecord, readForkTotals } from '../fork/lazystate.js';
import type { DomainErrorData, ErrorDetails } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import { ChainMetrics } from '../metrics/chain.js';
import { CometMetrics, type MempoolView } from '../metrics/comet.js';
import { RpcMetrics, type RpcGaugeSources } from '../metrics/rpc.js';
import { startMetricsServer, type MetricsServerHandle } from '../server/metrics.js';
import type { FromChain } from './protocol.js';

/** Whether a CheckTx refusal is the pool being full (CometBFT's mempool metrics count those apart). */
const refusedAsFull = (e: DomainErrorData | undefined): boolean =>
  e?.kind === 'txRejected' && (e.detail as ErrorDetails['txRejected']).reason === 'poolFull';

/** geth's metrics/exp path */
export const GETH_METRICS_PATH = '/debug/metrics/prometheus';
/** /health answers 503 when no block was committed for this many block intervals (timeout_commit) … */
export const HEALTH_STALL_BLOCKS = 10;
/** … and never sooner than this (milliseconds) */
export const HEALTH_MIN_STALL_MS = 10_000;

export interface HealthReport {
  status: 'ok' | 'unavailable';
  height: string;
  /** milliseconds since this thread last heard of a committed block (or since start) */
  lastBlockAgeMs: number;
  /** the age over which the node reports itself unavailable; null when blocks wait for txs */
  maxBlockAgeMs: number | null;
  chainThread: boolean;
}

function splitListenAddr(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  const host = addr.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(addr.slice(i + 1)) };
}

export class NodeObservability {
  readonly comet: CometMetrics | undefined;
  readonly chain: ChainMetrics | undefined;
  private rpc: RpcMetrics | undefined;
  private servers: MetricsServerHandle[] = [];
  private head = 0n;
  private lastBlockAt = Date.now();
  private chainUp = true;
  readonly endpoints: { cometMetrics?: string; rpcMetrics?: string } = {};

  constructor(
    private readonly opts: NodeOptions,
    genesis: Genesis,
    dbPath: string,
    mempool: MempoolView,
  ) {
    const i = opts.instrumentation;
    if (i.prometheus) this.comet = new CometMetrics({ namespace: i.namespace, chainId: genesis.chainId }, mempool);
    if (i.prometheus || opts.jsonRpc.enableMetrics) {
      const size = (p: string) => {
        try {
          return statSync(p).size;
        } catch {
          return 0;
        }
      };
      const dataDir = dirname(dbPath);
      const isFork = readForkRecord(dataDir) !== undefined;
      this.chain = new ChainMetrics({
        databaseBytes: () => size(dbPath) + size(dbPath + '-wal'),
        ...(isFork ? { fork: () => readForkTotals(dataDir) } : {}),
      });
    }
  }

  /** The recorder the JSON-RPC dispatcher is made with (undefined without `--metrics`). */
  rpcRecorder(sources: RpcGaugeSources): RpcMetrics | undefined {
    if (!this.opts.jsonRpc.enableMetrics) return undefined;
    this.rpc ??= new RpcMetrics(sources);
    return this.rpc;
  }

  started(height: bigint): void {
    this.head = height;
    this.lastBlockAt = Date.now();
    this.comet?.start(height);
  }

  /** A message of the chain thread (called for every one; cheap when metrics are off). */
  onChainMessage(m: FromChain): void {
    switch (m.type) {
      case 'committed':
        this.head = m.height;
        this.lastBlockAt = Date.now();
        if (m.stats !== undefined) {
          this.comet?.onBlock(m.stats);
          this.chain?.onBlock(m.stats);
        }
        break;
      case 'pool':
        if (m.evicted) this.comet?.onEvicted(m.evicted);
        if (m.forwardDropped) this.chain?.onForwardDropped(m.forwardDropped);
        break;
      case 'rewound':
        // a dev revert: /health reports the new head
        this.head = m.height;
        break;
      case 'checked':
        if (m.txBytes !== undefined) this.comet?.onCheckTx(m.hash !== undefined, refusedAsFull(m.refused), m.txBytes, m.checkSeconds);
        break;
      case 'fatal':
      case 'stopped':
        this.chainUp = false;
        break;
    }
  }

  /** JSON-RPC calls served since start (null without `--metrics`) */
  rpcRequests(): number | null {
    return this.rpc?.calls ?? null;
  }

  /** Readiness for load balancers: the chain thread runs and the head moved recently. */
  health(): HealthReport {
    const c = this.opts.consensus;
    const waitsForTxs = !c.createEmptyBlocks;
    const maxAge = waitsForTxs ? null : Math.max(HEALTH_MIN_STALL_MS, HEALTH_STALL_BLOCKS * c.timeoutCommitMs);
    const age = Date.now() - this.lastBlockAt;
    const ok = this.chainUp && (maxAge === null || age <= maxAge);
    return { status: ok ? 'ok' : 'unavailable', height: this.head.toString(), lastBlockAgeMs: age, maxBlockAgeMs: maxAge, chainThread: this.chainUp };
  }

  /** Starts the scrape listeners that are configured. */
  async startServers(log: Logger): Promise<void> {
    const chain = this.chain!;
    if (this.comet) {
      const comet = this.comet;
      const { host, port } = splitListenAddr(this.opts.instrumentation.prometheusListenAddr);
      const s = await startMetricsServer({
        host,
        port,
        paths: [],
        collect: async () => (await comet.text()) + (await chain.text()),
        log: log.child({ module: 'metrics' }),
      });
      this.servers.push(s);
      this.endpoints.cometMetrics = `http://${host.includes(':') ? `[${host}]` : host}:${s.port}/metrics`;
      log.info({ address: this.endpoints.cometMetrics }, 'Prometheus metrics (CometBFT) listening');
    }
    if (this.opts.jsonRpc.enableMetrics) {
      const { host, port } = splitListenAddr(this.opts.jsonRpc.metricsAddress);
      const rpc = this.rpc;
      const s = await startMetricsServer({
        host,
        port,
        paths: [GETH_METRICS_PATH],
        collect: async () => (rpc === undefined ? '' : await rpc.text()) + (await chain.text()),
        log: log.child({ module: 'metrics' }),
      });
      this.servers.push(s);
      this.endpoints.rpcMetrics = `http://${host.includes(':') ? `[${host}]` : host}:${s.port}${GETH_METRICS_PATH}`;
      log.info({ address: this.endpoints.rpcMetrics }, 'Prometheus metrics (JSON-RPC) listening');
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
    this.servers = [];
  }
}
