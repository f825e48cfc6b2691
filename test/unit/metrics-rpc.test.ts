/**
 * The geth-style pieces of src/metrics/rpc.ts: the bounded-sample summary (geth's 1028 values and
 * SamplePercentiles interpolation, metrics/sample.go) and the once-made histogram series, rendered
 * through prom-client's registry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { LabelledHistogram, RpcMetrics, SAMPLE_SIZE, SampleSummary, gethName } from '../../src/metrics/rpc.js';
import { exponentialBuckets, exponentialBucketsRange, linearBuckets } from '../../src/metrics/comet.js';

describe('geth-style rpc metrics', () => {
  it('geth names: slashes become underscores', () => {
    assert.equal(gethName('rpc/duration/eth_call/success'), 'rpc_duration_eth_call_success');
  });

  it('SampleSummary interpolates as geth SamplePercentiles and keeps only the last 1028 values', async () => {
    const r = new Registry();
    const s = new SampleSummary('x', 'help', r);
    for (let v = 1; v <= 100; v++) s.observe(v);
    // pos = p·(n+1): 0.5 → 50.5 → between the 50th and 51st values
    const q = s.quantiles();
    [50.5, 75.75, 95.95].forEach((want, i) => assert.ok(Math.abs(q[i]! - want) < 1e-9, `quantile ${i}: ${q[i]} want ${want}`));
    assert.equal(s.quantiles()[5], 100);
    for (let i = 0; i < SAMPLE_SIZE; i++) s.observe(1_000_000);
    assert.deepEqual(s.quantiles(), new Array(6).fill(1_000_000), 'the first 100 values left the sample');
    const text = await r.metrics();
    assert.match(text, /# TYPE x summary\n/);
    assert.match(text, /\nx\{quantile="0\.9999"\} 1000000\n/);
    assert.match(text, /\nx_count 1128\n/);
    assert.match(text, new RegExp(`\\nx_sum ${5050 + SAMPLE_SIZE * 1_000_000}\\n`));
  });

  it('LabelledHistogram renders cumulative buckets per series, skipping series never observed', async () => {
    const r = new Registry();
    const h = new LabelledHistogram('h', 'help', [1, 2], r);
    const a = h.series({ method: 'a' });
    h.series({ method: 'never' });
    a.observe(0.5);
    a.observe(1.5);
    a.observe(5);
    const text = await r.metrics();
    assert.match(text, /h_bucket\{le="1",method="a"\} 1\nh_bucket\{le="2",method="a"\} 2\nh_bucket\{le="\+Inf",method="a"\} 3\nh_sum\{method="a"\} 7\nh_count\{method="a"\} 3/);
    assert.doesNotMatch(text, /never/);
  });

  it('a recorder counts requests, successes and failures', async () => {
    const zero = () => 0;
    const m = new RpcMetrics({ wsConnections: zero, subscriptions: zero, filters: zero, callQueue: zero, traceQueue: zero });
    const rec = m.method('eth_chainId');
    rec.done(true, performance.now());
    rec.done(false, performance.now());
    rec.done(true, performance.now());
    const text = await m.text();
    assert.match(text, /\nrpc_requests 3\n/);
    assert.match(text, /\nrpc_success 2\n/);
    assert.match(text, /\nrpc_failure 1\n/);
    assert.match(text, /\nrpc_duration_eth_chainId_success_count 2\n/);
    assert.match(text, /\nrpc_duration_eth_chainId_failure_count 1\n/);
  });

  it('Go bucket helpers', () => {
    assert.deepEqual(exponentialBuckets(1, 3, 7), [1, 3, 9, 27, 81, 243, 729]);
    assert.deepEqual(linearBuckets(1, 10, 10), [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]);
    const r = exponentialBucketsRange(0.1, 100, 8);
    assert.equal(r.length, 8);
    assert.ok(Math.abs(r[7]! - 100) < 1e-9 && Math.abs(r[1]! / r[0]! - Math.pow(1000, 1 / 7)) < 1e-12);
  });
});
