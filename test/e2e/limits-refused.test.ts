/**
 * Documented bounds and rules that had no test (issue 20): each bound is reached and the next request
 * past it is refused with its exact error, changing nothing (docs/limits.md: MAX_MINE_BLOCKS,
 * MAX_DEV_SNAPSHOTS, MAX_QUEUED_TRACES, WS_MAX_PENDING_REQUESTS); a call from a contract is refused
 * with geth's `sender not an eoa` text (docs/compatibility.md); a block's `mixHash` is its parent's
 * hash (docs/compatibility.md); evm_revert drops the pool txs whose nonce the rewound chain has
 * passed (docs/dev-mode.md, "Mempool").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet, getAddress } from 'ethers';
import WebSocket from 'ws';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { readGauge, rpcMetricsEndpoint, waitForGauge } from '../helpers/prometheus.js';
import { blockNumber, call, rpc, toHex, waitFor } from '../helpers/rpc.js';

/** the bounds as docs/limits.md lists them */
const MAX_MINE_BLOCKS = 10_000;
const MAX_DEV_SNAPSHOTS = 10_000;
const MAX_QUEUED_TRACES = 64;
const WS_MAX_PENDING_REQUESTS = 1_000;
/** Surface A's batch limit (geth's BatchRequestLimit default): snapshots are taken this many at a time */
const BATCH = 1_000;
/** JUMPDEST PUSH1 0 JUMP: a loop that runs until its gas or its deadline ends */
const LOOP_CODE = '0x5b600056';
const LOOP = '0x00000000000000000000000000000000000100ee';
/** gas of the trace that holds the trace worker: far more than the test needs (it is cancelled) */
const LONG_GAS = 1_000_000_000;

let node: FerryNode;
let metricsUrl: string;

/** POSTs a JSON-RPC batch; answers in request order */
async function batch(calls: { method: string; params: unknown[] }[]): Promise<{ id: number; result?: unknown; error?: { code: number; message: string } }[]> {
  const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: i, ...c }));
  const res = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answers = (await res.json()) as { id: number }[];
  return [...answers].sort((a, b) => a.id - b.id) as never;
}

/** A WebSocket JSON-RPC client whose requests are answered (or refused) as promises */
async function wsClient(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waiting = new Map<number, (answer: { result?: unknown; error?: { code: number; message: string } }) => void>();
  let nextId = 1;
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { id: number; result?: unknown; error?: { code: number; message: string } };
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
  });
  return {
    ws,
    send(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
      const id = nextId++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
  };
}

before(async () => {
  const metrics = await rpcMetricsEndpoint();
  metricsUrl = metrics.url;
  node = await startFerry({ args: ['--dev', '--json-rpc.gas-cap', String(LONG_GAS), ...metrics.args] });
});

after(async () => {
  if (node) assert.equal(await node.stop(), 0);
});

describe('documented bounds: the request past each is refused, exactly, and changes nothing', { timeout: 600_000 }, () => {
  it(`anvil_mine / hardhat_mine / evm_mine: more than ${MAX_MINE_BLOCKS} blocks in one call (MAX_MINE_BLOCKS)`, async () => {
    const head = await blockNumber(node.url);
    for (const [method, params] of [['anvil_mine', [toHex(MAX_MINE_BLOCKS + 1)]], ['hardhat_mine', [toHex(MAX_MINE_BLOCKS + 1)]], ['evm_mine', [{ blocks: MAX_MINE_BLOCKS + 1 }]]] as const) {
      const r = await rpc(node.url, method, [...params]);
      assert.deepEqual(r.error, { code: -32602, message: `cannot mine more than ${MAX_MINE_BLOCKS} blocks in one call (asked ${MAX_MINE_BLOCKS + 1})` }, method);
    }
    assert.equal(await blockNumber(node.url), head, 'no block made');
    // the bound itself is allowed: two blocks stand for it here (mining 10000 would write 10000 blocks)
    assert.equal(await call(node.url, 'anvil_mine', ['0x2']), null);
    assert.equal(await blockNumber(node.url), head + 2);
  });

  it(`evm_snapshot: ${MAX_DEV_SNAPSHOTS} held at once, one more refused until a revert frees them (MAX_DEV_SNAPSHOTS)`, async () => {
    const first = await call<string>(node.url, 'evm_snapshot');
    let held = 1;
    while (held < MAX_DEV_SNAPSHOTS) {
      const n = Math.min(BATCH, MAX_DEV_SNAPSHOTS - held);
      const answers = await batch(Array.from({ length: n }, () => ({ method: 'evm_snapshot', params: [] })));
      assert.ok(answers.every((a) => typeof a.result === 'string'), JSON.stringify(answers.find((a) => a.error)));
      held += n;
    }
    const refused = { code: -32000, message: `too many snapshots (at most ${MAX_DEV_SNAPSHOTS}): revert to an earlier one or call anvil_reset` };
    assert.deepEqual((await rpc(node.url, 'evm_snapshot')).error, refused);
    assert.deepEqual((await rpc(node.url, 'anvil_snapshot')).error, refused, 'Anvil\'s name counts the same snapshots');
    // reverting to the first removes it and every later one: snapshots can be taken again
    assert.equal(await call(node.url, 'evm_revert', [first]), true);
    assert.match(await call<string>(node.url, 'evm_snapshot'), /^0x[0-9a-f]+$/);
  });

  it(`debug_trace*: ${MAX_QUEUED_TRACES} waiting for the trace worker, one more refused (MAX_QUEUED_TRACES)`, async () => {
    // two connections: one WebSocket has at most MAX_IN_FLIGHT (64) requests running at once (docs/limits.md)
    const client = await wsClient(node.wsUrl);
    const more = await wsClient(node.wsUrl);
    try {
      const loop = { to: LOOP, gas: toHex(LONG_GAS) };
      void client.send('debug_traceCall', [loop, 'latest', { tracer: 'callTracer', timeout: '10m', stateOverrides: { [LOOP]: { code: LOOP_CODE } } }]);
      // a short trace behind it: once it waits, the long one holds the worker
      const short = (c: typeof client) => c.send('debug_traceCall', [{ to: devAddress(1) }, 'latest', { tracer: 'callTracer' }]);
      void short(client);
      await waitForGauge(metricsUrl, 'ferry_rpc_trace_queue_depth', 1);
      for (let i = 1; i < MAX_QUEUED_TRACES; i++) void short(more);
      await waitForGauge(metricsUrl, 'ferry_rpc_trace_queue_depth', MAX_QUEUED_TRACES);
      const refused = await rpc(node.url, 'debug_traceCall', [{ to: devAddress(1) }, 'latest', { tracer: 'callTracer' }]);
      assert.deepEqual(refused.error, { code: -32000, message: `too many trace requests waiting (max ${MAX_QUEUED_TRACES})` });
      assert.equal(await readGauge(metricsUrl, 'ferry_rpc_trace_queue_depth'), MAX_QUEUED_TRACES, 'the refused one did not queue');
    } finally {
      // the client goes: its traces are abandoned, the long one stopped (docs/debug-tracing.md)
      client.ws.close();
      more.ws.close();
    }
    await waitForGauge(metricsUrl, 'ferry_rpc_trace_queue_depth', 0);
    // the worker is free again
    const after = await rpc(node.url, 'debug_traceCall', [{ to: devAddress(1) }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(after.error, undefined, JSON.stringify(after.error));
  });

  it(`Surface B: a WebSocket with more than ${WS_MAX_PENDING_REQUESTS} requests waiting is closed (WS_MAX_PENDING_REQUESTS)`, async () => {
    const ws = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    // requests run one at a time; sent in one burst, more than the bound wait at once
    const sent = WS_MAX_PENDING_REQUESTS * 3;
    let answers = 0;
    // settles when the server closes the connection, or when it answered everything (a failure)
    const end = new Promise<string>((resolve) => {
      ws.on('message', () => {
        if (++answers === sent) resolve('every request answered');
      });
      ws.once('close', () => resolve('closed'));
    });
    for (let i = 0; i < sent; i++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'status', params: {} }));
    assert.equal(await end, 'closed');
    assert.ok(answers < sent, `closed before every request was answered (${answers} of ${sent})`);
    ws.close();
    // another client is served as usual
    const status = (await (await fetch(`${node.cometUrl}/status`)).json()) as { result: { sync_info: { latest_block_height: string } } };
    assert.match(status.result.sync_info.latest_block_height, /^\d+$/);
  });
});

describe('documented rules without a test until now', () => {
  it('a call from a contract address: geth\'s `sender not an eoa` text (docs/compatibility.md)', async () => {
    const contract = '0x00000000000000000000000000000000000c0de1';
    assert.equal(await call(node.url, 'anvil_setCode', [contract, '0x600160005260206000f3']), null);
    await call(node.url, 'evm_mine');
    const r = await rpc(node.url, 'eth_call', [{ from: contract, to: devAddress(1) }, 'latest']);
    assert.deepEqual(r.error, { code: -32000, message: `sender not an eoa: address ${getAddress(contract)}, len(code): 10` });
  });

  it('mixHash is the parent block\'s hash (docs/compatibility.md)', async () => {
    await call(node.url, 'anvil_mine', ['0x2']);
    const head = await blockNumber(node.url);
    for (let n = 1; n <= head; n += Math.max(1, Math.floor(head / 5))) {
      const block = await call<{ mixHash: string; parentHash: string }>(node.url, 'eth_getBlockByNumber', [toHex(n), false]);
      const parent = await call<{ hash: string }>(node.url, 'eth_getBlockByNumber', [toHex(n - 1), false]);
      assert.equal(block.mixHash, parent.hash, `block ${n}`);
      assert.equal(block.parentHash, parent.hash);
    }
  });

  it('evm_revert drops the pool txs below the sender\'s nonce as of the snapshot (docs/dev-mode.md, Mempool)', async () => {
    const key = devKeys()[7]!;
    const sender = new Wallet(key).address;
    const other = new Wallet(devKeys()[8]!);
    // the sender's nonce is 5 in the snapshot's block, 0 in a later one (cheats applied by mining)
    assert.equal(await call(node.url, 'anvil_setNonce', [sender, '0x5']), null);
    await call(node.url, 'evm_mine');
    const snap = await call<string>(node.url, 'evm_snapshot');
    assert.equal(await call(node.url, 'anvil_setNonce', [sender, '0x0']), null);
    await call(node.url, 'evm_mine');
    await call(node.url, 'evm_setAutomine', [false]);
    try {
      const gasPrice = 2n * BigInt(await call<string>(node.url, 'eth_gasPrice'));
      const tx = (w: Wallet, nonce: number) => w.signTransaction({ to: devAddress(2), value: 1n, nonce, gasLimit: 21_000n, gasPrice, chainId: EVM_CHAIN_ID });
      const otherNonce = Number(await call<string>(node.url, 'eth_getTransactionCount', [other.address, 'latest']));
      const stale = await call<string>(node.url, 'eth_sendRawTransaction', [await tx(new Wallet(key), 0)]);
      const kept = await call<string>(node.url, 'eth_sendRawTransaction', [await tx(other, otherNonce)]);
      assert.deepEqual(await call(node.url, 'txpool_status'), { pending: '0x2', queued: '0x0' });

      assert.equal(await call(node.url, 'evm_revert', [snap]), true);
      assert.equal(await call(node.url, 'eth_getTransactionCount', [sender, 'latest']), '0x5');
      // nonce 0 is below 5: dropped; the other sender's tx is still valid and stays
      assert.equal(await call(node.url, 'eth_getTransactionByHash', [stale]), null);
      assert.equal((await call<{ hash: string }>(node.url, 'eth_getTransactionByHash', [kept])).hash, kept);
      assert.deepEqual(await call(node.url, 'txpool_status'), { pending: '0x1', queued: '0x0' });
      await call(node.url, 'evm_mine');
      await waitFor('the kept tx mined', () => call(node.url, 'eth_getTransactionReceipt', [kept]));
    } finally {
      await call(node.url, 'evm_setAutomine', [true]);
    }
  });
});
