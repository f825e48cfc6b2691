/**
 * eth_call scheduling (issue 10, item 6): a few calls that loop until their deadline must not starve
 * everybody else's. With one call worker and 16 endless loops in flight (injected by state override,
 * evm-timeout far away), a plain eth_call from another connection is answered, correctly, before any
 * of the loops ends — the order of completion, not a measured time, is what is checked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JsonRpcProvider } from 'ethers';
import WebSocket from 'ws';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { readGauge, rpcMetricsEndpoint, waitForGauge } from '../helpers/prometheus.js';

/**
 * JUMPDEST PUSH1 0 JUMP: loops until the gas or the deadline runs out. The gas is 1e9 (the cap raised
 * to it): tens of millions of jumps each, so a loop nobody cancels outlasts every wait below.
 */
const LOOP_CODE = '0x5b600056';
const LOOP = '0x00000000000000000000000000000000000100ee';
/** the identity precompile: answers its input */
const IDENTITY = '0x0000000000000000000000000000000000000004';
const LOOPS = 16;
const LOOP_GAS = 1_000_000_000;

let node: FerryNode;
/** Surface A's Prometheus endpoint: the call queue depth and the WebSocket connections */
let metricsUrl: string;

interface Pending {
  settled: boolean;
  promise: Promise<unknown>;
}

/** A WebSocket JSON-RPC client that keeps every request's promise (answers may come in any order). */
async function wsClient(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let nextId = 1;
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { id: number; result?: unknown; error?: { message: string } };
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(msg.error.message));
    else w.resolve(msg.result);
  });
  ws.on('close', () => {
    for (const w of waiting.values()) w.reject(new Error('closed'));
    waiting.clear();
  });
  return {
    ws,
    send(method: string, params: unknown[]): Pending {
      const id = nextId++;
      const p: Pending = { settled: false, promise: undefined as never };
      p.promise = new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
      p.promise.then(
        () => (p.settled = true),
        () => (p.settled = true),
      );
      return p;
    },
  };
}

describe('eth_call scheduling under endless loops', { timeout: 240_000 }, () => {
  before(async () => {
    // one call worker (the default), and a deadline far beyond the test: only the gas ends a loop
    const metrics = await rpcMetricsEndpoint();
    metricsUrl = metrics.url;
    node = await startFerry({ args: ['--json-rpc.call-workers', '1', '--json-rpc.evm-timeout', '10m', '--json-rpc.gas-cap', String(LOOP_GAS), ...metrics.args] });
  });
  after(async () => {
    await node?.stop();
  });

  it('a plain eth_call from another connection is answered before any of 16 loops in flight', async () => {
    const looper = await wsClient(node.wsUrl);
    const provider = new JsonRpcProvider(node.url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
    try {
      const loops: Pending[] = [];
      for (let i = 0; i < LOOPS; i++) {
        loops.push(looper.send('eth_call', [{ to: LOOP, data: '0x' + i.toString(16).padStart(2, '0'), gas: '0x' + LOOP_GAS.toString(16) }, 'latest', { [LOOP]: { code: LOOP_CODE } }]));
      }
      // the connection's messages are dispatched in order: once this is answered, the 16 calls
      // above have been handed to the call worker
      assert.equal(await looper.send('eth_chainId', []).promise, '0x' + EVM_CHAIN_ID.toString(16));
      assert.equal(loops.filter((l) => l.settled).length, 0, 'no loop ended before the plain call was sent');
      assert.equal(await readGauge(metricsUrl, 'ferry_rpc_call_queue_depth'), LOOPS, 'the 16 loops wait for the call worker');

      const plain = provider.send('eth_call', [{ to: IDENTITY, data: '0xdeadbeef' }, 'latest']);
      // whichever comes first: the plain answer, or the end of some loop (a failure)
      const first = await Promise.race([
        plain.then((r: string) => ({ plain: r })),
        ...loops.map((l, i) => l.promise.then(
          (r) => ({ loop: i, outcome: String(r) }),
          (e: Error) => ({ loop: i, outcome: e.message }),
        )),
      ]);
      assert.deepEqual(first, { plain: '0xdeadbeef' }, 'the plain call must not wait behind the loops');
      assert.equal(loops.filter((l) => l.settled).length, 0, 'every loop is still running');
    } finally {
      provider.destroy();
      // the loops die with their connection (the worker cancels them)
      looper.ws.close();
    }
    // seen in the gauges (docs/observability.md): no job left for the worker, no connection left open
    await waitForGauge(metricsUrl, 'ferry_rpc_ws_connections', 0);
    await waitForGauge(metricsUrl, 'ferry_rpc_call_queue_depth', 0);
  });

  it('the node still answers calls after the looping client went away', async () => {
    const provider = new JsonRpcProvider(node.url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
    try {
      assert.equal(await provider.send('eth_call', [{ to: IDENTITY, data: '0x0102' }, 'latest']), '0x0102');
    } finally {
      provider.destroy();
    }
  });
});
