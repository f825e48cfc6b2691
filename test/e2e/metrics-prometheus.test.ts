/**
 * Prometheus metrics of the real ferry process while ethers sends real transfers: both listeners
 * (CometBFT's on [instrumentation] prometheus_listen_addr, geth's rpc/ names on --metrics at
 * /debug/metrics/prometheus), every name, type, label set and bucket layout checked against lists
 * taken from the upstream sources, and the values checked to move as the traffic says.
 *
 * Blocks are made only for transactions (`create_empty_blocks = false`, `block_on_tx`), so heights
 * and counters stand still between the steps of a test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JsonRpcProvider, Transaction } from 'ethers';
import WebSocket from 'ws';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { freePort, startFerry, type FerryNode } from '../helpers/node.js';
import { crossCheck, labelSets, parsePrometheus, valueOf, type Family } from '../helpers/prometheus.js';
import { call, rpc } from '../helpers/rpc.js';

type Kind = Family['type'];
interface Expected {
  type: Kind;
  /** extra label names besides chain_id, sorted */
  labels?: string[];
  buckets?: number[];
}

/** Go's prometheus.ExponentialBucketsRange(0.1, 100, 8): 0.1 · (1000^(1/7))^i, compared to 1e-9 */
const EXP_RANGE_01_100_8 = [0.1, 0.26826957952797, 0.71968567300115, 1.93069772888325, 5.17947467923121, 13.89495494373137, 37.2759372031494, 100];
/** prometheus.DefBuckets */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * CometBFT v0.38.x (github.com/cometbft/cometbft, tag v0.38.25), the generated metrics.gen.go files:
 * consensus/metrics.gen.go, mempool/metrics.gen.go, state/metrics.gen.go, proxy/metrics.gen.go,
 * blocksync/metrics.gen.go, statesync/metrics.gen.go, p2p/metrics.gen.go — name (namespace "cometbft"
 * + subsystem + name), type, labels (every one also carries `chain_id`, node/setup.go
 * DefaultMetricsProvider), buckets.
 */
const COMETBFT: Record<string, Expected> = {
  cometbft_consensus_height: { type: 'gauge' },
  cometbft_consensus_validator_last_signed_height: { type: 'gauge', labels: ['validator_address'] },
  cometbft_consensus_rounds: { type: 'gauge' },
  cometbft_consensus_round_duration_seconds: { type: 'histogram', buckets: EXP_RANGE_01_100_8 },
  cometbft_consensus_validators: { type: 'gauge' },
  cometbft_consensus_validators_power: { type: 'gauge' },
  cometbft_consensus_validator_power: { type: 'gauge', labels: ['validator_address'] },
  cometbft_consensus_validator_missed_blocks: { type: 'gauge', labels: ['validator_address'] },
  cometbft_consensus_missing_validators: { type: 'gauge' },
  cometbft_consensus_missing_validators_power: { type: 'gauge' },
  cometbft_consensus_byzantine_validators: { type: 'gauge' },
  cometbft_consensus_byzantine_validators_power: { type: 'gauge' },
  cometbft_consensus_block_interval_seconds: { type: 'histogram', buckets: DEF_BUCKETS },
  cometbft_consensus_num_txs: { type: 'gauge' },
  cometbft_consensus_block_size_bytes: { type: 'gauge' },
  cometbft_consensus_chain_size_bytes: { type: 'counter' },
  cometbft_consensus_total_txs: { type: 'gauge' },
  cometbft_consensus_latest_block_height: { type: 'gauge' },
  cometbft_consensus_step_duration_seconds: { type: 'histogram', labels: ['step'], buckets: EXP_RANGE_01_100_8 },
  cometbft_consensus_proposal_create_count: { type: 'counter' },
  cometbft_consensus_round_voting_power_percent: { type: 'gauge', labels: ['vote_type'] },
  cometbft_mempool_size: { type: 'gauge' },
  cometbft_mempool_size_bytes: { type: 'gauge' },
  // ExponentialBuckets(1, 3, 7)
  cometbft_mempool_tx_size_bytes: { type: 'histogram', buckets: [1, 3, 9, 27, 81, 243, 729] },
  cometbft_mempool_failed_txs: { type: 'counter' },
  cometbft_mempool_rejected_txs: { type: 'counter' },
  cometbft_mempool_evicted_txs: { type: 'counter' },
  // LinearBuckets(1, 10, 10)
  cometbft_state_block_processing_time: { type: 'histogram', buckets: [1, 11, 21, 31, 41, 51, 61, 71, 81, 91] },
  cometbft_state_consensus_param_updates: { type: 'counter' },
  cometbft_state_validator_set_updates: { type: 'counter' },
  cometbft_abci_connection_method_timing_seconds: {
    type: 'histogram',
    labels: ['method', 'type'],
    buckets: [0.0001, 0.0004, 0.002, 0.009, 0.02, 0.1, 0.65, 2, 6, 25],
  },
  cometbft_blocksync_syncing: { type: 'gauge' },
  cometbft_statesync_syncing: { type: 'gauge' },
  cometbft_p2p_peers: { type: 'gauge' },
};

/**
 * geth (github.com/ethereum/go-ethereum) rpc/metrics.go registers rpc/requests, rpc/success,
 * rpc/failure (gauges), rpc/duration/all (timer) and rpc/duration/<method>/<success|failure>
 * (histograms); metrics/prometheus/collector.go writes them with `/` → `_`, timers and histograms as
 * summaries with quantiles 0.5, 0.75, 0.95, 0.99, 0.999, 0.9999.
 */
const GETH: Record<string, Expected> = {
  rpc_requests: { type: 'gauge' },
  rpc_success: { type: 'gauge' },
  rpc_failure: { type: 'gauge' },
  rpc_duration_all: { type: 'summary' },
};
const GETH_QUANTILES = ['0.5', '0.75', '0.95', '0.99', '0.999', '0.9999'];

/** Ferry's own (docs/observability.md) */
const FERRY_RPC = ['ferry_rpc_request_duration_seconds', 'ferry_rpc_ws_connections', 'ferry_rpc_subscriptions', 'ferry_rpc_filters', 'ferry_rpc_call_queue_depth', 'ferry_rpc_trace_queue_depth'];
const FERRY_CHAIN = [
  'ferry_chain_head_gas_used',
  'ferry_chain_head_base_fee_wei',
  'ferry_chain_block_execution_seconds',
  'ferry_chain_block_commit_seconds',
  'ferry_chain_database_size_bytes',
  'ferry_chain_trie_cache_hit_ratio',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
];

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = parsePrometheus(text);
  crossCheck(text, families);
  return families;
}

const num = (v: number | undefined, what: string): number => {
  assert.notEqual(v, undefined, `${what} is missing`);
  return v!;
};

describe('Prometheus metrics (CometBFT and geth names) under real traffic', () => {
  let node: FerryNode;
  let cometUrl: string;
  let gethUrl: string;
  let provider: JsonRpcProvider;
  const CHAIN_ID = 'ferry_9000-1';

  before(async () => {
    const [cometPort, gethPort] = [await freePort(), await freePort()];
    node = await startFerry({
      args: [
        '--consensus.create_empty_blocks', 'false',
        '--consensus.block_on_tx', 'true',
        '--instrumentation.prometheus',
        '--instrumentation.prometheus_listen_addr', `127.0.0.1:${cometPort}`,
        '--json-rpc.metrics-address', `127.0.0.1:${gethPort}`,
        '--metrics',
      ],
    });
    cometUrl = `http://127.0.0.1:${cometPort}/metrics`;
    gethUrl = `http://127.0.0.1:${gethPort}/debug/metrics/prometheus`;
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  });

  after(async () => {
    provider?.destroy();
    await node?.stop();
  });

  it('names, types, labels and buckets are CometBFT v0.38\'s, every series labelled chain_id', async () => {
    const m = await scrape(cometUrl);
    for (const [name, want] of Object.entries(COMETBFT)) {
      const f = m.get(name);
      assert.ok(f, `${name} missing`);
      assert.equal(f.type, want.type, name);
      for (const set of labelSets(f)) assert.equal(set, ['chain_id', ...(want.labels ?? [])].sort().join(','), name);
      for (const s of f.samples) assert.equal(s.labels.chain_id, CHAIN_ID, name);
      if (want.buckets) {
        const les = [...new Set(f.samples.filter((s) => s.name === `${name}_bucket`).map((s) => s.labels.le!))];
        if (f.samples.length === 0) continue;
        assert.equal(les.at(-1), '+Inf', `${name}: last bucket`);
        assert.equal(les.length, want.buckets.length + 1, `${name}: bucket count`);
        want.buckets.forEach((b, i) => assert.ok(Math.abs(Number(les[i]) - b) <= b * 1e-9, `${name}: bucket ${i} is ${les[i]}, want ${b}`));
      }
    }
    // nothing under the CometBFT namespace that CometBFT does not have
    for (const name of m.keys()) if (name.startsWith('cometbft_')) assert.ok(name in COMETBFT, `${name} is not a CometBFT v0.38 metric`);
    for (const name of FERRY_CHAIN) assert.ok(m.has(name), `${name} missing`);
  });

  it('the namespace and the chain_id label follow [instrumentation] namespace and the genesis', async () => {
    const port = await freePort();
    const other = await startFerry({
      args: ['--instrumentation.prometheus', '--instrumentation.prometheus_listen_addr', `127.0.0.1:${port}`, '--instrumentation.namespace', 'chain7'],
    });
    try {
      const m = await scrape(`http://127.0.0.1:${port}/`);
      assert.ok(m.has('chain7_consensus_height'));
      assert.ok(![...m.keys()].some((n) => n.startsWith('cometbft_')));
      assert.equal(m.get('chain7_mempool_size')!.samples[0]!.labels.chain_id, CHAIN_ID);
    } finally {
      await other.stop();
    }
  });

  it('heights, tx counters, mempool and ABCI timings follow the ethers transfers', async () => {
    const before = await scrape(cometUrl);
    const total0 = num(valueOf(before, 'cometbft_consensus_total_txs'), 'total_txs');
    const sizes0 = num(valueOf(before, 'cometbft_mempool_tx_size_bytes', {}, 'cometbft_mempool_tx_size_bytes_count'), 'tx_size count');
    const failed0 = num(valueOf(before, 'cometbft_mempool_failed_txs'), 'failed_txs');
    const checks0 = valueOf(before, 'cometbft_abci_connection_method_timing_seconds', { method: 'check_tx', type: 'sync' }, 'cometbft_abci_connection_method_timing_seconds_count') ?? 0;
    const finalize0 = num(valueOf(before, 'cometbft_abci_connection_method_timing_seconds', { method: 'finalize_block' }, 'cometbft_abci_connection_method_timing_seconds_count'), 'finalize count');

    const wallet = devWallet(1, provider);
    const SENT = 3;
    const raws: string[] = [];
    for (let i = 0; i < SENT; i++) {
      const tx = await wallet.sendTransaction({ to: devAddress(2), value: 1000n + BigInt(i) });
      raws.push(Transaction.from(tx).serialized);
      await tx.wait();
    }
    // one refused by CheckTx: the same signed tx again (nonce too low now)
    const again = await rpc(node.url, 'eth_sendRawTransaction', [raws[0]]);
    assert.ok(again.error, 'a replayed tx is refused');

    const height = BigInt(await call<string>(node.url, 'eth_blockNumber'));
    const m = await scrape(cometUrl);
    assert.equal(valueOf(m, 'cometbft_consensus_latest_block_height'), Number(height));
    // CometBFT's consensus_height is the height the state machine works on: the next one (updateHeight)
    assert.equal(valueOf(m, 'cometbft_consensus_height'), Number(height) + 1);
    assert.equal(valueOf(m, 'cometbft_consensus_validator_last_signed_height', {}), Number(height));
    assert.equal(num(valueOf(m, 'cometbft_consensus_total_txs'), 'total_txs') - total0, SENT);
    assert.equal(valueOf(m, 'cometbft_consensus_num_txs'), 1);
    const sizeCount = num(valueOf(m, 'cometbft_mempool_tx_size_bytes', {}, 'cometbft_mempool_tx_size_bytes_count'), 'tx_size count');
    assert.equal(sizeCount - sizes0, SENT);
    const sizeSum = num(valueOf(m, 'cometbft_mempool_tx_size_bytes', {}, 'cometbft_mempool_tx_size_bytes_sum'), 'tx_size sum');
    const sizeSum0 = num(valueOf(before, 'cometbft_mempool_tx_size_bytes', {}, 'cometbft_mempool_tx_size_bytes_sum'), 'tx_size sum');
    assert.equal(sizeSum - sizeSum0, raws.reduce((n, r) => n + (r.length - 2) / 2, 0), 'tx_size_bytes sums the raw tx sizes');
    assert.equal(num(valueOf(m, 'cometbft_mempool_failed_txs'), 'failed') - failed0, 1);
    assert.equal(valueOf(m, 'cometbft_mempool_size'), 0);
    const checks = num(valueOf(m, 'cometbft_abci_connection_method_timing_seconds', { method: 'check_tx', type: 'sync' }, 'cometbft_abci_connection_method_timing_seconds_count'), 'check_tx count');
    assert.equal(checks - checks0, SENT + 1);
    const finalize = num(valueOf(m, 'cometbft_abci_connection_method_timing_seconds', { method: 'finalize_block' }, 'cometbft_abci_connection_method_timing_seconds_count'), 'finalize count');
    assert.equal(finalize - finalize0, SENT, 'one FinalizeBlock per block, one block per tx');
    assert.equal(valueOf(m, 'cometbft_state_block_processing_time', {}, 'cometbft_state_block_processing_time_count'), finalize);
    assert.equal(valueOf(m, 'cometbft_consensus_validators'), 1);

    // the chain side: the head's gas and base fee as eth_getBlockByNumber reports them
    const head = await call<{ gasUsed: string; baseFeePerGas: string }>(node.url, 'eth_getBlockByNumber', ['latest', false]);
    assert.equal(valueOf(m, 'ferry_chain_head_gas_used'), Number(BigInt(head.gasUsed)));
    assert.equal(valueOf(m, 'ferry_chain_head_base_fee_wei'), Number(BigInt(head.baseFeePerGas)));
    assert.ok(num(valueOf(m, 'ferry_chain_database_size_bytes'), 'db size') > 0);
    assert.ok(num(valueOf(m, 'process_resident_memory_bytes'), 'rss') > 0);
  });

  it('geth rpc/ metrics count every call, successes and failures, and the latency histograms agree', async () => {
    const before = await scrape(gethUrl);
    const requests0 = valueOf(before, 'rpc_requests') ?? 0;
    const chainId0 = valueOf(before, 'rpc_duration_eth_chainId_success', {}, 'rpc_duration_eth_chainId_success_count') ?? 0;
    const CALLS = 7;
    const FAILS = 2;
    for (let i = 0; i < CALLS; i++) await call(node.url, 'eth_chainId');
    for (let i = 0; i < FAILS; i++) assert.ok((await rpc(node.url, 'eth_getBalance', ['0x1'])).error);
    // a batch counts each call
    const batch = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' }))),
    });
    assert.equal(((await batch.json()) as unknown[]).length, 3);
    // an unknown method is not a call of any method (geth counts none)
    assert.ok((await rpc(node.url, 'eth_noSuchMethod')).error);

    const m = await scrape(gethUrl);
    for (const [name, want] of Object.entries(GETH)) {
      const f = m.get(name);
      assert.ok(f, `${name} missing`);
      assert.equal(f.type, want.type, name);
      assert.deepEqual([...labelSets(f)], [''], `${name} has no labels`);
    }
    assert.deepEqual(m.get('rpc_duration_all')!.samples.filter((s) => s.labels.quantile !== undefined).map((s) => s.labels.quantile), GETH_QUANTILES);
    for (const name of m.keys()) {
      if (name.startsWith('rpc_') && !(name in GETH)) assert.match(name, /^rpc_duration_[a-z]+_[A-Za-z0-9]+_(success|failure)$/, `${name} is not a geth rpc/ name`);
    }
    for (const name of FERRY_RPC.concat(FERRY_CHAIN)) assert.ok(m.has(name), `${name} missing`);

    const requests = num(valueOf(m, 'rpc_requests'), 'rpc_requests');
    assert.equal(requests - requests0, CALLS + FAILS + 3);
    assert.equal(requests, num(valueOf(m, 'rpc_success'), 'success') + num(valueOf(m, 'rpc_failure'), 'failure'));
    assert.equal(valueOf(m, 'rpc_duration_all', {}, 'rpc_duration_all_count'), requests);
    assert.equal(num(valueOf(m, 'rpc_duration_eth_chainId_success', {}, 'rpc_duration_eth_chainId_success_count'), 'chainId count') - chainId0, CALLS + 3);
    assert.ok(num(valueOf(m, 'rpc_duration_eth_getBalance_failure', {}, 'rpc_duration_eth_getBalance_failure_count'), 'getBalance failures') >= FAILS);
    // the histogram counts every call the gauges count
    const hist = m.get('ferry_rpc_request_duration_seconds')!;
    const histCount = hist.samples.filter((s) => s.name.endsWith('_count')).reduce((n, s) => n + s.value, 0);
    assert.equal(histCount, requests);
    assert.equal(valueOf(m, 'ferry_rpc_request_duration_seconds', { method: 'eth_getBalance', outcome: 'failure' }, 'ferry_rpc_request_duration_seconds_count'), valueOf(m, 'rpc_duration_eth_getBalance_failure', {}, 'rpc_duration_eth_getBalance_failure_count'));
    assert.ok(num(valueOf(m, 'ferry_rpc_method_not_found_total'), 'not found') >= 1);
  });

  it('WebSocket connections, subscriptions and filters are gauged', async () => {
    const ws = new WebSocket(node.wsUrl);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      const reply = new Promise<{ result: string }>((resolve) => ws.once('message', (d) => resolve(JSON.parse(String(d)))));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      assert.match((await reply).result, /^0x/);
      const filter = await call<string>(node.url, 'eth_newBlockFilter');
      const m = await scrape(gethUrl);
      assert.equal(valueOf(m, 'ferry_rpc_ws_connections'), 1);
      assert.equal(valueOf(m, 'ferry_rpc_subscriptions'), 1);
      assert.equal(valueOf(m, 'ferry_rpc_filters'), 1);
      assert.equal(valueOf(m, 'ferry_rpc_call_queue_depth'), 0);
      await call(node.url, 'eth_uninstallFilter', [filter]);
      assert.equal(valueOf(await scrape(gethUrl), 'ferry_rpc_filters'), 0);
    } finally {
      ws.close();
    }
  });

  it('the metrics listeners answer only GET, and the geth one only on its path', async () => {
    assert.equal((await fetch(gethUrl.replace('/debug/metrics/prometheus', '/metrics'))).status, 404);
    assert.equal((await fetch(cometUrl, { method: 'POST', body: '' })).status, 405);
  });
});

describe('metrics are off by default', () => {
  it('no metrics listener without [instrumentation] prometheus or --metrics', async () => {
    const port = await freePort();
    const node = await startFerry({ args: ['--instrumentation.prometheus_listen_addr', `127.0.0.1:${port}`, '--json-rpc.metrics-address', `127.0.0.1:${port}`] });
    try {
      await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`));
    } finally {
      await node.stop();
    }
  });
});
