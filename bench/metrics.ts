/**
 * `npm run bench -- --suites metrics` (or `node dist/bench/metrics.js`): what the JSON-RPC metrics
 * cost on the request path, measured where nothing else moves the figure — the real dispatcher
 * (src/jsonrpc/core.ts) with and without the real recorder (src/metrics/rpc.ts), on Surface A's real
 * method table shape (eth_blockNumber answered from memory, the cheapest call there is, so the ratio is
 * the worst case), single calls and batches of 100, in interleaved rounds (off, on, off, on, …) whose
 * medians are compared. The end-to-end `ferry` vs `ferry-metrics` rows of the rpc suite measure the
 * same thing through HTTP, but on a shared machine their noise is larger than the effect.
 *
 *   node dist/bench/metrics.js [--rounds N] [--calls N]
 */
import { parseArgs } from 'node:util';
import { createDispatcher, type Dispatcher } from '../src/jsonrpc/core.js';
import { evmErrors } from '../src/evmrpc/errors.js';
import type { MethodTable } from '../src/jsonrpc/types.js';
import { RpcMetrics } from '../src/metrics/rpc.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, calls: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 15);
const CALLS = Number(values.calls ?? 20_000);
const BATCH = 100;

/** 60 methods, like the enabled part of Surface A's table; each answers from memory */
function table(): MethodTable {
  const t: Record<string, MethodTable[string]> = {};
  for (let i = 0; i < 60; i++) t[`eth_method${i}`] = { params: [], handler: () => '0x1' };
  t.eth_blockNumber = { params: [], handler: () => '0x2a' };
  return t;
}

function dispatcher(withMetrics: boolean): Dispatcher {
  const zero = () => 0;
  return createDispatcher({
    table: table(),
    enabledNamespaces: null,
    limits: { batchRequestLimit: 1000, batchResponseMaxSize: 25_000_000 },
    errors: evmErrors,
    onInternalError: () => undefined,
    recorder: withMetrics ? new RpcMetrics({ wsConnections: zero, subscriptions: zero, filters: zero, callQueue: zero, traceQueue: zero }) : undefined,
  });
}

async function timeCalls(d: Dispatcher, body: string, n: number): Promise<number> {
  const ctx = { transport: 'http' as const, authenticated: false };
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await d.handle(body, ctx);
  return Number(process.hrtime.bigint() - start) / n;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function compare(label: string, body: string, calls: number): Promise<string> {
  const off = dispatcher(false);
  const on = dispatcher(true);
  // warm-up: JIT both paths
  await timeCalls(off, body, calls);
  await timeCalls(on, body, calls);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await timeCalls(off, body, calls));
    b.push(await timeCalls(on, body, calls));
  }
  const mOff = median(a);
  const mOn = median(b);
  return `| ${label} | ${(mOff / 1000).toFixed(2)} | ${(mOn / 1000).toFixed(2)} | ${((mOn - mOff) / 1000).toFixed(2)} | ${(mOn / mOff).toFixed(3)}× |`;
}

async function main(): Promise<void> {
  const single = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
  const batch = JSON.stringify(Array.from({ length: BATCH }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber' })));
  const rows = [
    await compare('eth_blockNumber, one call', single, CALLS),
    await compare(`batch of ${BATCH} eth_blockNumber`, batch, Math.max(1, Math.floor(CALLS / BATCH))),
  ];
  console.log(
    [
      `Metrics cost in the JSON-RPC dispatcher (median of ${ROUNDS} interleaved rounds; µs per request, in process, no HTTP):`,
      '',
      '| request | metrics off µs | metrics on µs | added µs | on ÷ off |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      'A request served over HTTP costs far more than the dispatcher alone (see the rpc suite\'s req/s),',
      'so the share of the added time in a served request is smaller than the dispatcher ratio above.',
    ].join('\n'),
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
