/**
 * The explorer views (docs/compatibility.md "trace" and docs/debug-tracing.md "flatCallTracer"):
 * ferry against the peer dev node Anvil (pinned devDependency) on the fixed transactions of
 * debug-fixtures.ts — transfer, ERC-20, creation by a contract, reverted inner call, precompiles,
 * selfdestruct — compared field by field.
 *
 * Anvil 1.7.1 does not serve `flatCallTracer` (it answers `{}`), so geth's tracer is compared with
 * Anvil's `trace_transaction`, which has the same OpenEthereum shape. Normalized, each for a reason:
 * - chain-specific: blockHash, blockNumber, transactionHash;
 * - geth semantics in flatCallTracer: the top frame's `gas` is the tx gas limit and its `gasUsed`
 *   the receipt's (checked), where Parity shows the message's own gas; geth omits a suicide's
 *   `result`, Parity prints `null`.
 * (The normalizers live in explorers-norm.ts, shared with setcode-anvil.test.ts's 7702 case.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { call } from '../helpers/rpc.js';
import { devWallet } from '../helpers/accounts.js';
import type { FixtureRun } from './debug-fixtures.js';
import { flatCallVsParity, tracePlaceless as placeless, type Trace } from './explorers-norm.js';
import { eachScenario, usePair } from './explorers-pair.js';


const each = eachScenario;

describe('explorer views: ferry vs Anvil on the same transactions', { timeout: 240_000 }, () => {
  const p = usePair('eth,net,web3,debug,trace');

  each('flatCallTracer (Parity errors, precompiles) vs Anvil trace_transaction', async (s) => {
    const [f, a] = await flatCallVsParity(p.ferry.url, p.onFerry.txs[s], p.anvil.url, p.onAnvil.txs[s]);
    assert.deepEqual(f, a);
  });

  it('flatCallTracer drops precompile calls and keeps geth error texts by default', async () => {
    const f: Trace[] = await call(p.ferry.url, 'debug_traceTransaction', [p.onFerry.txs.precompile, { tracer: 'flatCallTracer' }]);
    assert.equal(f.length, 1);
    assert.equal(f[0]!.subtraces, 0);
    const nested: Trace[] = await call(p.ferry.url, 'debug_traceTransaction', [p.onFerry.txs.nested, { tracer: 'flatCallTracer' }]);
    assert.ok(nested.some((t) => t.error === 'execution reverted'));
  });

  each('trace_transaction', async (s) => {
    const f = placeless(await call(p.ferry.url, 'trace_transaction', [p.onFerry.txs[s]]));
    const a = placeless(await call(p.anvil.url, 'trace_transaction', [p.onAnvil.txs[s]]));
    assert.deepEqual(f, a);
  });

  it('trace_block', async () => {
    for (const s of ['nested', 'createDestroy'] as const) {
      const fr = await call(p.ferry.url, 'eth_getTransactionReceipt', [p.onFerry.txs[s]]);
      const ar = await call(p.anvil.url, 'eth_getTransactionReceipt', [p.onAnvil.txs[s]]);
      const f = placeless(await call(p.ferry.url, 'trace_block', [fr.blockNumber]));
      const a = placeless(await call(p.anvil.url, 'trace_block', [ar.blockNumber]));
      assert.deepEqual(f, a, s);
    }
  });

  it('trace_get finds a trace by its trace address (Anvil has no trace_get)', async () => {
    const list: Trace[] = await call(p.ferry.url, 'trace_transaction', [p.onFerry.txs.createDestroy]);
    for (const t of list) {
      const idx = t.traceAddress.map((i: number) => '0x' + i.toString(16));
      assert.deepEqual(await call(p.ferry.url, 'trace_get', [p.onFerry.txs.createDestroy, idx]), t, JSON.stringify(idx));
    }
    assert.equal(await call(p.ferry.url, 'trace_get', [p.onFerry.txs.createDestroy, ['0x9']]), null);
  });

  it('trace_filter by address, with after/count', async () => {
    const filter = async (url: string, deployed: FixtureRun['deployed'], extra: object) =>
      call(url, 'trace_filter', [{ fromBlock: '0x1', toBlock: await call(url, 'eth_blockNumber'), toAddress: [deployed.callee, deployed.caller.toLowerCase()], ...extra }]);
    const f = placeless(await filter(p.ferry.url, p.onFerry.deployed, {}));
    const a = placeless(await filter(p.anvil.url, p.onAnvil.deployed, {}));
    assert.ok(f.length >= 4, `${f.length} traces`);
    assert.deepEqual(f, a);
    // both lists: a trace from one or to the other (Anvil's and reth's default mode, union)
    const both = async (url: string, run: FixtureRun) =>
      placeless(await call(url, 'trace_filter', [{ fromBlock: '0x1', toBlock: await call(url, 'eth_blockNumber'), fromAddress: [run.deployed.caller], toAddress: [run.deployed.token] }]));
    const fBoth = await both(p.ferry.url, p.onFerry);
    assert.ok(fBoth.some((t) => t.action.from === p.onFerry.deployed.caller.toLowerCase()) && fBoth.some((t) => t.action.to === p.onFerry.deployed.token.toLowerCase()));
    assert.deepEqual(fBoth, await both(p.anvil.url, p.onAnvil));
    const fPage = placeless(await filter(p.ferry.url, p.onFerry.deployed, { after: 1, count: 2 }));
    assert.deepEqual(fPage, f.slice(1, 3));
  });

  it('trace_filter refuses a count over its limit and a malformed filter', async () => {
    await assert.rejects(call(p.ferry.url, 'trace_filter', [{ fromBlock: '0x1', count: 1_000_000 }]), /over the limit/);
    await assert.rejects(call(p.ferry.url, 'trace_filter', [{ fromBlock: '0x1', toAddres: [] }]), /unknown trace filter field/);
  });

  it('trace_replayTransaction: trace and stateDiff', async () => {
    const r = await call(p.ferry.url, 'trace_replayTransaction', [p.onFerry.txs.transfer, ['trace', 'stateDiff']]);
    const listed = placeless(await call(p.ferry.url, 'trace_transaction', [p.onFerry.txs.transfer])).map(({ transactionPosition, ...t }) => t);
    assert.deepEqual(r.trace, listed);
    assert.equal(r.output, '0x');
    assert.equal(r.vmTrace, null);
    const to = (await call(p.ferry.url, 'eth_getTransactionByHash', [p.onFerry.txs.transfer])).to.toLowerCase();
    const diff = r.stateDiff[to].balance['*'];
    assert.equal(BigInt(diff.to) - BigInt(diff.from), 10n ** 18n);
    await assert.rejects(call(p.ferry.url, 'trace_replayTransaction', [p.onFerry.txs.transfer, ['vmTrace']]), /vmTrace is not supported/);
  });

  it('trace_replayBlockTransactions: one entry per tx, with its hash', async () => {
    const r = await call(p.ferry.url, 'eth_getTransactionReceipt', [p.onFerry.txs.nested]);
    const replay = await call(p.ferry.url, 'trace_replayBlockTransactions', [r.blockNumber, ['trace']]);
    assert.equal(replay.length, 1);
    assert.equal(replay[0].transactionHash, p.onFerry.txs.nested);
    assert.equal(replay[0].stateDiff, null);
    const listed = placeless(await call(p.ferry.url, 'trace_transaction', [p.onFerry.txs.nested])).map(({ transactionPosition, ...t }) => t);
    assert.deepEqual(replay[0].trace, listed);
  });

  it('trace_call answers the call trace on a block', async () => {
    const tx = await call(p.ferry.url, 'eth_getTransactionByHash', [p.onFerry.txs.nested]);
    const r = await call(p.ferry.url, 'trace_call', [{ from: tx.from, to: tx.to, data: tx.input, gas: tx.gas }, ['trace'], 'latest']);
    assert.equal(r.trace.length, 3);
    assert.equal(r.trace[2].error, 'Reverted');
    assert.equal(r.output, '0x' + '2a'.padStart(64, '0'));
    assert.equal(r.stateDiff, null);
  });

  // Anvil 1.7.1 serves neither trace_callMany, trace_rawTransaction nor trace_call (-32601): the first
  // call of the bundle is compared with ferry's trace_call of it, and the raw tx with its call
  it('trace_callMany: each call sees the state the calls before it left', async () => {
    // a fresh address is paid by the first call and spends from that payment in the second
    const payer = devWallet(2).address.toLowerCase();
    const fresh = '0x' + '5a'.repeat(20);
    const bundle = [
      [{ from: payer, to: fresh, value: '0xde0b6b3a7640000' }, ['trace']],
      [{ from: fresh, to: payer, value: '0x6f05b59d3b20000' }, ['trace', 'stateDiff']],
    ];
    const f = await call(p.ferry.url, 'trace_callMany', [bundle, 'latest']);
    const a = await call(p.ferry.url, 'trace_call', [...bundle[0]!, 'latest']);
    assert.equal(f.length, 2);
    assert.deepEqual(f[0].trace, a.trace);
    assert.equal(f[1].trace[0].action.from, fresh);
    assert.equal(f[1].trace[0].action.value, '0x6f05b59d3b20000');
    const bal = f[1].stateDiff[fresh].balance['*'];
    assert.deepEqual([BigInt(bal.from), BigInt(bal.to)], [10n ** 18n, 5n * 10n ** 17n]);
    await assert.rejects(call(p.ferry.url, 'trace_callMany', [[[{ to: fresh }]], 'latest']), /\[call, traceTypes\] pair/);
  });

  it('trace_rawTransaction: a signed tx traced as a call from its signer', async () => {
    const w = devWallet(3);
    const u = p.ferry.url;
    const chainId = BigInt(await call(u, 'eth_chainId', []));
    const nonce = Number(BigInt(await call(u, 'eth_getTransactionCount', [w.address, 'latest'])));
    const gasPrice = BigInt(await call(u, 'eth_gasPrice', [])) * 2n;
    const tx = await call(u, 'eth_getTransactionByHash', [p.onFerry.txs.nested]);
    const raw = await w.signTransaction({ chainId, nonce, gasPrice, gasLimit: 200_000n, to: tx.to, data: tx.input, type: 0 });
    const f = await call(u, 'trace_rawTransaction', [raw, ['trace']]);
    const asCall = { from: w.address, to: tx.to, data: tx.input, gas: '0x30d40', gasPrice: '0x' + gasPrice.toString(16) };
    const a = await call(p.ferry.url, 'trace_call', [asCall, ['trace'], 'latest']);
    assert.equal(f.trace.length, 3);
    assert.equal(f.trace[2].error, 'Reverted');
    assert.equal(f.trace[0].action.from, devWallet(3).address.toLowerCase());
    assert.deepEqual(f, a);
    await assert.rejects(call(p.ferry.url, 'trace_rawTransaction', ['0x02', ['trace']]), /too short/);
  });

  it('muxTracer: each named tracer answers as it does alone', async () => {
    const h = p.onFerry.txs.nested;
    const mux = await call(p.ferry.url, 'debug_traceTransaction', [h, { tracer: 'muxTracer', tracerConfig: { flatCallTracer: {}, callTracer: { withLog: true }, '4byteTracer': {} } }]);
    assert.deepEqual(Object.keys(mux), ['4byteTracer', 'callTracer', 'flatCallTracer']);
    assert.deepEqual(mux.callTracer, await call(p.ferry.url, 'debug_traceTransaction', [h, { tracer: 'callTracer', tracerConfig: { withLog: true } }]));
    assert.deepEqual(mux.flatCallTracer, await call(p.ferry.url, 'debug_traceTransaction', [h, { tracer: 'flatCallTracer' }]));
    assert.deepEqual(mux['4byteTracer'], await call(p.ferry.url, 'debug_traceTransaction', [h, { tracer: '4byteTracer' }]));
    await assert.rejects(call(p.ferry.url, 'debug_traceTransaction', [h, { tracer: 'muxTracer', tracerConfig: [] }]), /cannot unmarshal array/);
  });
});
