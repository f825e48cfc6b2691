/**
 * Tracing under abuse (issue 10, item 7), on a real ferry process:
 * - a trace whose client went away is stopped, and the single trace worker is free for the next one;
 * - a trace (running or waiting) that would outlast http-timeout is answered with a JSON-RPC error
 *   before the HTTP server cuts the connection;
 * - a result over json-rpc.trace-result-max-size is an error naming the limit, for JS and native tracers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';

/** JUMPDEST PUSH1 0 JUMP: an endless loop (until the gas cap, millions of steps) */
const LOOP_CODE = '0x5b600056';
const LOOP = '0x00000000000000000000000000000000000100ee';
const IDENTITY = '0x0000000000000000000000000000000000000004';
/**
 * A JS tracer with a costly step function: every opcode goes through the sandbox and a thousand
 * additions, so tracing the loop takes far longer than any timeout here (billions of operations).
 */
const STEP_TRACER = '{n: 0, step: function () { for (var i = 0; i < 1000; i++) this.n++ }, fault: function () {}, result: function () { return this.n }}';
const HTTP_TIMEOUT = '6s';
const RESULT_LIMIT = 100_000;

let node: FerryNode;

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}

/** one JSON-RPC request over HTTP; throws when the connection fails instead of answering */
async function post(method: string, params: unknown[]): Promise<RpcAnswer> {
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as RpcAnswer;
}

const loopTrace = (timeout: string) => [
  { to: LOOP },
  'latest',
  { tracer: STEP_TRACER, timeout, stateOverrides: { [LOOP]: { code: LOOP_CODE } } },
];

describe('tracing: abandoned, slow and huge traces', { timeout: 240_000 }, () => {
  before(async () => {
    node = await startFerry({
      args: [
        '--json-rpc.api', 'eth,net,web3,debug',
        '--json-rpc.http-timeout', HTTP_TIMEOUT,
        '--json-rpc.trace-result-max-size', String(RESULT_LIMIT),
      ],
    });
  });
  after(async () => {
    await node?.stop();
  });

  it('a trace whose client went away stops, and the next trace gets the worker', async () => {
    const ws = new WebSocket(node.wsUrl);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const answers = new Map<number, unknown>();
    const chainId = new Promise<unknown>((resolve) =>
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { id: number; result?: unknown; error?: unknown };
        answers.set(m.id, m);
        if (m.id === 2) resolve(m.result);
      }),
    );
    // a trace that would run for a minute (WebSocket: no http-timeout), then a barrier: messages of
    // one connection are dispatched in order, so once eth_chainId is answered the trace is submitted
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'debug_traceCall', params: loopTrace('1m') }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] }));
    assert.equal(await chainId, '0x' + EVM_CHAIN_ID.toString(16));
    assert.equal(answers.has(1), false, 'the long trace is still running');
    const closed = new Promise<void>((r) => ws.once('close', () => r()));
    ws.close();
    await closed;

    // the only trace worker must be free: a trivial trace is answered (before the fix it waited
    // behind the abandoned minute-long trace, and http-timeout cut the connection)
    const r = await post('debug_traceCall', [{ to: IDENTITY, data: '0xdeadbeef' }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal((r.result as { output: string }).output, '0xdeadbeef');
  });

  it('traces that would outlast http-timeout, running or waiting, are answered with JSON errors', async () => {
    // both ask for a minute (under trace-timeout-cap); the first runs, the second waits behind it
    const [running, waiting] = await Promise.all([post('debug_traceCall', loopTrace('1m')), post('debug_traceCall', loopTrace('1m'))]);
    for (const r of [running, waiting]) {
      assert.equal(r.result, undefined);
      assert.deepEqual(r.error, { code: -32000, message: 'execution timeout' });
    }
    // and the worker is free again
    const ok = await post('debug_traceCall', [{ to: IDENTITY, data: '0x01' }, 'latest', { tracer: 'callTracer' }]);
    assert.equal((ok.result as { output: string }).output, '0x01');
  });

  it('a JS tracer result over trace-result-max-size is an error naming the limit', async () => {
    const big = `{fault: function () {}, result: function () { var s = "x"; while (s.length < ${RESULT_LIMIT * 2}) s += s; return s; }}`;
    const r = await post('debug_traceCall', [{ to: IDENTITY, data: '0x01' }, 'latest', { tracer: big }]);
    assert.equal(r.result, undefined);
    assert.equal(r.error?.code, -32003);
    assert.match(r.error!.message, new RegExp(`^trace result too large: \\d+ bytes, over the limit of ${RESULT_LIMIT} \\(json-rpc\\.trace-result-max-size\\)$`));
    // just under the limit is answered
    const fits = `{fault: function () {}, result: function () { var s = ""; for (var i = 0; i < ${RESULT_LIMIT - 10}; i++) s += "y"; return s; }}`;
    const ok = await post('debug_traceCall', [{ to: IDENTITY, data: '0x01' }, 'latest', { tracer: fits }]);
    assert.equal(ok.error, undefined);
    assert.equal((ok.result as string).length, RESULT_LIMIT - 10);
  });

  it('a struct log over the limit is the same error; with `limit` it fits', async () => {
    const call = { to: LOOP, gas: '0x30d40' };
    const overrides = { [LOOP]: { code: LOOP_CODE } };
    const r = await post('debug_traceCall', [call, 'latest', { stateOverrides: overrides }]);
    assert.equal(r.error?.code, -32003);
    assert.match(r.error!.message, /^trace result too large: \d+ bytes, over the limit of 100000/);
    const ok = await post('debug_traceCall', [call, 'latest', { stateOverrides: overrides, limit: 100 }]);
    assert.equal(ok.error, undefined);
    assert.equal((ok.result as { structLogs: unknown[] }).structLogs.length, 100);
  });
});
