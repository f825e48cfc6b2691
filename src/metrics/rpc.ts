/**
 * The JSON-RPC side's metrics, as geth's `rpc` package registers them (rpc/metrics.go) and geth's
 * Prometheus exporter renders them (metrics/prometheus/collector.go: `/` becomes `_`, gauges stay
 * gauges, timers and histograms become summaries with quantiles 0.5 … 0.9999 of nanoseconds):
 *
 *   rpc/requests, rpc/success, rpc/failure         → rpc_requests, rpc_success, rpc_failure (gauges)
 *   rpc/duration/all (timer)                       → rpc_duration_all (summary)
 *   rpc/duration/<method>/<success|failure> (hist.) → rpc_duration_<method>_<success|failure> (summary,
 *                                                     created at the method's first call, as geth's
 *                                                     GetOrRegisterHistogramLazy)
 *
 * plus Ferry's own: a per-method latency histogram in seconds (children made once per method, so a
 * request costs no label lookup), and gauges read at scrape time.
 */
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

/** geth's collector.go percentiles */
export const GETH_QUANTILES = [0.5, 0.75, 0.95, 0.99, 0.999, 0.9999];
/** geth samples (metrics.NewBoundedHistogramSample / the timer's reservoir) over the recent past; */
const SUMMARY_WINDOW_SECONDS = 600;
const SUMMARY_AGE_BUCKETS = 5;
/** Ferry's per-method latency histogram, seconds */
export const RPC_LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const NS_PER_MS = 1e6;

/** geth's metric name → the Prometheus name its exporter writes */
export function gethName(name: string): string {
  return name.replaceAll('/', '_');
}

/** What one method's calls are recorded with (made once per method by the dispatcher). */
export interface MethodMetrics {
  /** `startMs`: performance.now() when the call began */
  done(ok: boolean, startMs: number): void;
}

/** Values read when Prometheus scrapes. */
export interface RpcGaugeSources {
  wsConnections(): number;
  subscriptions(): number;
  filters(): number;
  callQueue(): number;
  traceQueue(): number;
}

function summary(registry: Registry, name: string, help: string): Summary {
  return new Summary({
    name,
    help,
    percentiles: GETH_QUANTILES,
    maxAgeSeconds: SUMMARY_WINDOW_SECONDS,
    ageBuckets: SUMMARY_AGE_BUCKETS,
    registers: [registry],
  });
}

export class RpcMetrics {
  readonly registry = new Registry();
  private readonly requests: Gauge;
  private readonly success: Gauge;
  private readonly failure: Gauge;
  private readonly all: Summary;
  private readonly latency: Histogram<'method' | 'outcome'>;
  private readonly notFound: Counter;
  /** calls recorded (the value of rpc_requests, readable without collecting) */
  calls = 0;

  constructor(sources: RpcGaugeSources) {
    const r = [this.registry];
    this.requests = new Gauge({ name: gethName('rpc/requests'), help: 'rpc/requests: JSON-RPC method calls served', registers: r });
    this.success = new Gauge({ name: gethName('rpc/success'), help: 'rpc/success: calls answered with a result', registers: r });
    this.failure = new Gauge({ name: gethName('rpc/failure'), help: 'rpc/failure: calls answered with an error', registers: r });
    this.all = summary(this.registry, gethName('rpc/duration/all'), 'rpc/duration/all: serving time of every call, nanoseconds');
    this.latency = new Histogram({
      name: 'ferry_rpc_request_duration_seconds',
      help: 'Serving time of JSON-RPC calls by method and outcome (success or failure)',
      labelNames: ['method', 'outcome'],
      buckets: RPC_LATENCY_BUCKETS,
      registers: r,
    });
    this.notFound = new Counter({ name: 'ferry_rpc_method_not_found_total', help: 'Calls of a method that does not exist or is not enabled', registers: r });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({ name, help, registers: r, collect() { this.set(read()); } });
    gauge('ferry_rpc_ws_connections', 'Open JSON-RPC WebSocket connections', sources.wsConnections);
    gauge('ferry_rpc_subscriptions', 'Live eth_subscribe subscriptions, all connections', sources.subscriptions);
    gauge('ferry_rpc_filters', 'Installed polling filters (eth_newFilter and friends)', sources.filters);
    gauge('ferry_rpc_call_queue_depth', 'eth_call / eth_estimateGas jobs waiting on or running in the call workers', sources.callQueue);
    gauge('ferry_rpc_trace_queue_depth', 'debug_trace* jobs waiting for the trace worker', sources.traceQueue);
  }

  /** The recorder of one method: its histogram children made now, its geth summaries at first use. */
  method(name: string): MethodMetrics {
    const ok = this.latency.labels(name, 'success');
    const failed = this.latency.labels(name, 'failure');
    let okSummary: Summary | undefined;
    let failedSummary: Summary | undefined;
    const base = gethName(`rpc/duration/${name}`);
    return {
      done: (isOk, startMs) => {
        const ms = performance.now() - startMs;
        const ns = Math.round(ms * NS_PER_MS);
        this.calls++;
        this.requests.inc();
        this.all.observe(ns);
        if (isOk) {
          this.success.inc();
          ok.observe(ms / 1000);
          (okSummary ??= summary(this.registry, `${base}_success`, `rpc/duration/${name}/success: nanoseconds`)).observe(ns);
        } else {
          this.failure.inc();
          failed.observe(ms / 1000);
          (failedSummary ??= summary(this.registry, `${base}_failure`, `rpc/duration/${name}/failure: nanoseconds`)).observe(ns);
        }
      },
    };
  }

  methodNotFound(): void {
    this.notFound.inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
