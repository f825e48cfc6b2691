/**
 * Ferry's own chain and process metrics (no upstream name to follow): EVM gas and base fee of the
 * head, block execution and store commit times, database size, the chain thread's trie node cache,
 * and prom-client's default process metrics (resident memory, CPU, heap, event-loop lag, GC).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BlockStats } from './comet.js';

/** block execution and commit times, seconds */
export const BLOCK_TIME_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** nodejs_eventloop_lag_* sampling resolution, milliseconds */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 10;

export interface ChainGaugeSources {
  /** bytes of the database files (main file and write-ahead log) */
  databaseBytes(): number;
  /** a fork home's origin totals (docs/fork-mode.md "Metrics"); undefined: not a fork */
  fork?(): { requests: number; retries: number; errors: number; cacheBytes: number } | undefined;
}

export class ChainMetrics {
  readonly registry = new Registry();
  private readonly gasUsed: Gauge;
  private readonly gasLimit: Gauge;
  private readonly baseFee: Gauge;
  private readonly gasTotal: Counter;
  private readonly execution: Histogram;
  private readonly commit: Histogram;
  private readonly cacheHits: Counter;
  private readonly cacheMisses: Counter;
  private readonly cacheRatio: Gauge;
  private readonly forwardDropped: Counter;
  private lastHits = 0;
  private lastMisses = 0;

  constructor(sources: ChainGaugeSources) {
    const r = [this.registry];
    this.gasUsed = new Gauge({ name: 'ferry_chain_head_gas_used', help: 'Gas used by the latest block', registers: r });
    this.gasLimit = new Gauge({ name: 'ferry_chain_head_gas_limit', help: 'Gas limit of the latest block', registers: r });
    this.baseFee = new Gauge({ name: 'ferry_chain_head_base_fee_wei', help: 'Base fee per gas of the latest block, wei', registers: r });
    this.gasTotal = new Counter({ name: 'ferry_chain_gas_used_total', help: 'Gas used by the blocks committed since start', registers: r });
    this.execution = new Histogram({ name: 'ferry_chain_block_execution_seconds', help: 'Time to execute a block (FinalizeBlock: every tx in the EVM, receipts, roots)', buckets: BLOCK_TIME_BUCKETS, registers: r });
    this.commit = new Histogram({ name: 'ferry_chain_block_commit_seconds', help: 'Time to write a block to the store (one SQLite transaction)', buckets: BLOCK_TIME_BUCKETS, registers: r });
    this.cacheHits = new Counter({ name: 'ferry_chain_trie_cache_hits_total', help: 'State trie node reads served by the chain thread\'s node cache', registers: r });
    this.cacheMisses = new Counter({ name: 'ferry_chain_trie_cache_misses_total', help: 'State trie node reads that went to the database', registers: r });
    this.cacheRatio = new Gauge({ name: 'ferry_chain_trie_cache_hit_ratio', help: 'Hits / (hits + misses) of the trie node cache since start', registers: r });
    this.forwardDropped = new Counter({ name: 'ferry_chain_forward_dropped_total', help: 'Txs admitted by eth_sendRawTransaction under CometBFT that CometBFT refused or never answered, dropped from the pool', registers: r });
    new Gauge({ name: 'ferry_chain_database_size_bytes', help: 'Size of data/ferry.db and its write-ahead log', registers: r, collect() { this.set(sources.databaseBytes()); } });
    if (sources.fork !== undefined) {
      const fork = sources.fork;
      const gauge = (name: string, help: string, pick: (t: NonNullable<ReturnType<typeof fork>>) => number) =>
        new Gauge({ name, help, registers: r, collect() { const t = fork(); if (t) this.set(pick(t)); } });
      gauge('ferry_fork_origin_requests', 'HTTP requests a fork home sent its origin, retries included (every thread, since the home was made)', (t) => t.requests);
      gauge('ferry_fork_origin_retries', 'Origin requests retried after a 429, 5xx, timeout or refused connection', (t) => t.retries);
      gauge('ferry_fork_origin_errors', 'Origin requests that failed for good (a clear error to the caller)', (t) => t.errors);
      gauge('ferry_fork_cache_bytes', 'Size of data/fork-cache.db: state fetched from the origin', (t) => t.cacheBytes);
    }
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  }

  /** `n` txs of the forward queue CometBFT did not take (src/abci/forwarder.ts) */
  onForwardDropped(n: number): void {
    this.forwardDropped.inc(n);
  }

  onBlock(b: BlockStats): void {
    this.gasUsed.set(Number(b.gasUsed));
    this.gasLimit.set(Number(b.gasLimit));
    this.baseFee.set(Number(b.baseFee));
    this.gasTotal.inc(Number(b.gasUsed));
    this.execution.observe(b.finalizeSeconds);
    this.commit.observe(b.commitSeconds);
    // totals since the chain thread started: count only what is new
    if (b.trieCacheHits >= this.lastHits && b.trieCacheMisses >= this.lastMisses) {
      this.cacheHits.inc(b.trieCacheHits - this.lastHits);
      this.cacheMisses.inc(b.trieCacheMisses - this.lastMisses);
    }
    this.lastHits = b.trieCacheHits;
    this.lastMisses = b.trieCacheMisses;
    const reads = b.trieCacheHits + b.trieCacheMisses;
    if (reads > 0) this.cacheRatio.set(b.trieCacheHits / reads);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
