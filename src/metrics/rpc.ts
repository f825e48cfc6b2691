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
import { Counter, Gauge, Registry } from 'prom-client';

/** geth's collector.go percentiles */
export const GETH_QUANTILES = [0.5, 0.75, 0.95, 0.99, 0.999, 0.9999];
/** geth's reservoir size (metrics.NewBoundedHistogramSample / the timer's sample): quantiles of the last calls */
export const SAMPLE_SIZE = 1028;
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

/**
 * A summary as geth keeps its timers and histograms: a bounded sample of the last SAMPLE_SIZE values
 * (observing is an array write, so the request path stays cheap), quantiles computed at scrape time
 * with geth's `SamplePercentiles` interpolation, plus the count and sum of every value observed.
 * Registered in a prom-client Registry as a custom metric of type summary.
 */
export class SampleSummary {
  readonly type = 'summary';
  readonly aggregator = 'sum';
  private readonly values = new Float64Array(SAMPLE_SIZE);
  private next = 0;
  private count = 0;
  private sum = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(v: number): void {
    this.values[this.next] = v;
    this.next = this.next + 1 === SAMPLE_SIZE ? 0 : this.next + 1;
    this.count++;
    this.sum += v;
  }

  /** geth metrics/sample.go SamplePercentiles over the sorted sample */
  quantiles(): number[] {
    const n = Math.min(this.count, SAMPLE_SIZE);
    const sorted = this.values.slice(0, n).sort();
    return GETH_QUANTILES.map((p) => {
      if (n === 0) return 0;
      const pos = p * (n + 1);
      if (pos < 1) return sorted[0]!;
      if (pos >= n) return sorted[n - 1]!;
      const lower = sorted[Math.floor(pos) - 1]!;
      const upper = sorted[Math.floor(pos)]!;
      return lower + (pos - Math.floor(pos)) * (upper - lower);
    });
  }

  async get(): Promise<{ name: string; help: string; type: 'summary'; aggregator: 'sum'; values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }> }> {
    const q = this.quantiles();
    return {
      name: this.name,
      help: this.help,
      type: 'summary',
      aggregator: 'sum',
      values: [
        ...GETH_QUANTILES.map((p, i) => ({ labels: { quantile: p }, value: q[i]! })),
        { metricName: `${this.name}_sum`, labels: {}, value: this.sum },
        { metricName: `${this.name}_count`, labels: {}, value: this.count },
      ],
    };
  }

  reset(): void {
    this.next = 0;
    this.count = 0;
    this.sum = 0;
  }
}

/** One labelled series of a LabelledHistogram: its bucket counts, sum and count, updated in place. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    if (i < b.length) this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

/**
 * A histogram whose series are made once (one per method and outcome) and observed without building
 * or hashing a label string per call (prom-client's `labels()` child hashes its labels at every
 * observe). Rendered by prom-client's registry as a custom metric of type histogram.
 */
export class LabelledHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  series(labels: Record<string, string>): HistogramSeries {
    const s = new HistogramSeries(labels, this.bounds);
    this.all.push(s);
    return s;
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> }> {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.all) {
      if (s.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }

  reset(): void {
    for (const s of this.all) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

export class RpcMetrics {
  readonly registry = new Registry();
  private readonly all: SampleSummary;
  private readonly latency: LabelledHistogram;
  private readonly notFound: Counter;
  /** geth's rpc/requests, rpc/success, rpc/failure: plain numbers, read at scrape time */
  calls = 0;
  private succeeded = 0;
  private failed = 0;

  constructor(sources: RpcGaugeSources) {
    const r = [this.registry];
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({ name, help, registers: r, collect() { this.set(read()); } });
    gauge(gethName('rpc/requests'), 'rpc/requests: JSON-RPC method calls served', () => this.calls);
    gauge(gethName('rpc/success'), 'rpc/success: calls answered with a result', () => this.succeeded);
    gauge(gethName('rpc/failure'), 'rpc/failure: calls answered with an error', () => this.failed);
    this.all = new SampleSummary(gethName('rpc/duration/all'), 'rpc/duration/all: serving time of every call, nanoseconds', this.registry);
    this.latency = new LabelledHistogram(
      'ferry_rpc_request_duration_seconds',
      'Serving time of JSON-RPC calls by method and outcome (success or failure)',
      RPC_LATENCY_BUCKETS,
      this.registry,
    );
    this.notFound = new Counter({ name: 'ferry_rpc_method_not_found_total', help: 'Calls of a method that does not exist or is not enabled', registers: r });
    gauge('ferry_rpc_ws_connections', 'Open JSON-RPC WebSocket connections', sources.wsConnections);
    gauge('ferry_rpc_subscriptions', 'Live eth_subscribe subscriptions, all connections', sources.subscriptions);
    gauge('ferry_rpc_filters', 'Installed polling filters (eth_newFilter and friends)', sources.filters);
    gauge('ferry_rpc_call_queue_depth', 'eth_call / eth_estimateGas jobs waiting on or running in the call workers', sources.callQueue);
    gauge('ferry_rpc_trace_queue_depth', 'debug_trace* jobs waiting for the trace worker', sources.traceQueue);
  }

  /** The recorder of one method: its histogram series made now, its geth summaries at first use. */
  method(name: string): MethodMetrics {
    const ok = this.latency.series({ method: name, outcome: 'success' });
    const failed = this.latency.series({ method: name, outcome: 'failure' });
    let okSummary: SampleSummary | undefined;
    let failedSummary: SampleSummary | undefined;
    const base = gethName(`rpc/duration/${name}`);
    return {
      done: (isOk, startMs) => {
        const ms = performance.now() - startMs;
        const ns = Math.round(ms * NS_PER_MS);
        this.calls++;
        this.all.observe(ns);
        if (isOk) {
          this.succeeded++;
          ok.observe(ms / 1000);
          (okSummary ??= new SampleSummary(`${base}_success`, `rpc/duration/${name}/success: nanoseconds`, this.registry)).observe(ns);
        } else {
          this.failed++;
          failed.observe(ms / 1000);
          (failedSummary ??= new SampleSummary(`${base}_failure`, `rpc/duration/${name}/failure: nanoseconds`, this.registry)).observe(ns);
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
