/**
 * The debug namespace end to end on a real ferry process, driven with ethers: JS tracers (geth's
 * documented examples and the bundled legacy tracers, checked against the native tracers and the
 * struct logger), the JS API surface (ctx, db, enter/exit, setup), hostile tracers (endless loops,
 * unbounded allocation, throws, reaching for process/require/fs/network) answered with errors
 * while the node keeps serving, block tracing and debug_traceCall with state overrides.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Interface, JsonRpcProvider } from 'ethers';
import { devAddress } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { resultErrors } from '../helpers/schema.js';
import { contracts, runFixture, type FixtureRun } from './debug-fixtures.js';

let node: FerryNode;
let provider: JsonRpcProvider;
let fx: FixtureRun;

const trace = (hash: string, cfg: object = {}) => provider.send('debug_traceTransaction', [hash, cfg]);

/** resident memory of the ferry process, bytes */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

describe('debug namespace', { timeout: 240_000 }, () => {
  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.api', 'eth,net,web3,debug'] });
    fx = await runFixture(node.url);
    provider = new JsonRpcProvider(node.url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
  });
  after(async () => {
    provider?.destroy();
    await node?.stop();
  });

  describe('JS tracers (geth documented examples and bundled tracers)', () => {
    it('opcode counter: opcountTracer counts every struct log step', async () => {
      const logs = await trace(fx.txs.nested);
      assert.ok(logs.structLogs.length > 100);
      assert.equal(await trace(fx.txs.nested, { tracer: 'opcountTracer' }), logs.structLogs.length);
      const inline = '{n: 0, step: function (log, db) { this.n++ }, fault: function (log, db) {}, result: function (ctx, db) { return this.n }}';
      assert.equal(await trace(fx.txs.nested, { tracer: inline }), logs.structLogs.length);
    });

    it('unigramTracer is the histogram of struct log opcodes', async () => {
      const logs = await trace(fx.txs.erc20);
      const hist: Record<string, number> = {};
      for (const e of logs.structLogs) hist[e.op] = (hist[e.op] ?? 0) + 1;
      assert.deepEqual(await trace(fx.txs.erc20, { tracer: 'unigramTracer' }), hist);
      const bigrams = await trace(fx.txs.erc20, { tracer: 'bigramTracer' });
      assert.equal(Object.values(bigrams as Record<string, number>).reduce((a, b) => a + b, 0), logs.structLogs.length - 1);
    });

    it('storage-access collector (geth docs) sees the SLOAD/SSTOREs of the struct log', async () => {
      const tracer = `{
        retVal: [],
        step: function (log, db) {
          if (log.op.toNumber() == 0x54) this.retVal.push(log.getPC() + ': SLOAD ' + log.stack.peek(0).toString(16));
          if (log.op.toNumber() == 0x55) this.retVal.push(log.getPC() + ': SSTORE ' + log.stack.peek(0).toString(16) + ' <- ' + log.stack.peek(1).toString(16));
        },
        fault: function (log, db) { this.retVal.push('FAULT: ' + log.getError()); },
        result: function (ctx, db) { return this.retVal; }
      }`;
      const logs = await trace(fx.txs.erc20);
      const expected = logs.structLogs
        .filter((e: any) => e.op === 'SLOAD' || e.op === 'SSTORE')
        .map((e: any) => {
          const s = e.stack;
          const h = (x: string) => BigInt(x).toString(16);
          return e.op === 'SLOAD' ? `${e.pc}: SLOAD ${h(s[s.length - 1])}` : `${e.pc}: SSTORE ${h(s[s.length - 1])} <- ${h(s[s.length - 2])}`;
        });
      assert.ok(expected.length >= 4);
      assert.deepEqual(await trace(fx.txs.erc20, { tracer }), expected);
    });

    it('callTracerLegacy and the native callTracer agree on the call tree', async () => {
      const legacy = await trace(fx.txs.nested, { tracer: 'callTracerLegacy' });
      const native = await trace(fx.txs.nested, { tracer: 'callTracer' });
      for (const k of ['type', 'from', 'to', 'value', 'gas', 'gasUsed', 'input', 'output']) assert.equal(legacy[k], native[k], k);
      assert.equal(legacy.calls.length, native.calls.length);
      legacy.calls.forEach((c: any, i: number) => {
        const n = native.calls[i];
        for (const k of ['type', 'from', 'to', 'input', 'gas', 'gasUsed']) assert.equal(c[k], n[k], `calls[${i}].${k}`);
        assert.equal(c.error, n.error, `calls[${i}].error`);
      });
      assert.equal(native.calls[1].revertReason, 'callee says no');
    });

    it('4byteTracerLegacy and the native 4byteTracer agree', async () => {
      const native = await trace(fx.txs.nested, { tracer: '4byteTracer' });
      assert.deepEqual(await trace(fx.txs.nested, { tracer: '4byteTracerLegacy' }), native);
      assert.equal(Object.keys(native).length, 3);
    });

    it('prestateTracerLegacy reports the touched accounts and slots', async () => {
      const pre = await trace(fx.txs.erc20, { tracer: 'prestateTracerLegacy' });
      const token = fx.deployed.token.toLowerCase();
      assert.ok(pre[token].code.length > 2);
      assert.ok(Object.keys(pre[token].storage).length >= 2);
      assert.ok(pre[devAddress(0).toLowerCase()] !== undefined);
      const native = await trace(fx.txs.erc20, { tracer: 'prestateTracer' });
      assert.deepEqual(Object.keys(pre[token].storage).sort(), Object.keys(native[token].storage).sort());
    });

    it('evmdisTracer, trigramTracer and noopTracerLegacy run', async () => {
      const logs = await trace(fx.txs.revert);
      const top = logs.structLogs.filter((e: any) => e.depth === 1);
      // evmdis: one entry per top-level step, PUSHn with len n+1, JUMPDEST with its pc
      const ops = await trace(fx.txs.revert, { tracer: 'evmdisTracer' });
      assert.equal(ops.length, top.length);
      top.forEach((e: any, i: number) => {
        const push = /^PUSH(\d+)$/.exec(e.op);
        assert.equal(ops[i].len, push ? Number(push[1]) + 1 : undefined, `len of step ${i} (${e.op})`);
        if (e.op === 'JUMPDEST') assert.equal(ops[i].pc, e.pc);
      });
      // trigrams of consecutive ops at one depth, the window restarting when the depth changes
      const trigrams: Record<string, number> = {};
      let window = ['', ''];
      let depth = 0;
      for (const e of logs.structLogs) {
        if (e.depth !== depth) {
          window = ['', ''];
          depth = e.depth;
          continue;
        }
        const key = `${window[0]}-${window[1]}-${e.op}`;
        trigrams[key] = (trigrams[key] ?? 0) + 1;
        window = [window[1]!, e.op];
      }
      assert.deepEqual(await trace(fx.txs.revert, { tracer: 'trigramTracer' }), trigrams);
      assert.deepEqual(await trace(fx.txs.revert, { tracer: 'noopTracerLegacy' }), {});
    });

    it('enter/exit see the sub-calls the native callTracer sees', async () => {
      const tracer = `{
        seen: [],
        enter: function (f) { this.seen.push(f.getType() + ' ' + toHex(f.getFrom()) + ' ' + toHex(f.getTo()) + ' ' + toHex(f.getInput()) + ' ' + f.getGas() + ' ' + (f.getValue() === undefined ? '-' : f.getValue().toString(16))); },
        exit: function (r) { this.seen.push('exit ' + r.getGasUsed() + ' ' + toHex(r.getOutput()) + ' ' + r.getError()); },
        fault: function (log, db) {},
        result: function (ctx, db) { return this.seen; }
      }`;
      const seen = await trace(fx.txs.nested, { tracer });
      const native = await trace(fx.txs.nested, { tracer: 'callTracer' });
      const expected: string[] = [];
      for (const c of native.calls) {
        const value = c.value === undefined ? '-' : BigInt(c.value).toString(16);
        expected.push(`${c.type} ${c.from} ${c.to} ${c.input} ${Number(BigInt(c.gas))} ${value}`);
        expected.push(`exit ${Number(BigInt(c.gasUsed))} ${c.output ?? '0x'} ${c.error}`);
      }
      assert.deepEqual(seen, expected);
    });

    it('ctx and db carry the transaction and its state', async () => {
      const tracer = `{
        code: null, slot: null,
        step: function (log, db) {
          if (this.code === null) this.code = toHex(db.getCode(log.contract.getAddress()));
          if (log.op.toString() === 'SLOAD' && this.slot === null) {
            this.slot = toHex(db.getState(log.contract.getAddress(), toWord(log.stack.peek(0).toString(16))));
          }
        },
        fault: function (log, db) {},
        result: function (ctx, db) {
          return {
            type: ctx.type, from: toHex(ctx.from), to: toHex(ctx.to), input: toHex(ctx.input), gas: ctx.gas,
            gasUsed: ctx.gasUsed, value: ctx.value.toString(10), block: ctx.block, txHash: toHex(ctx.txHash),
            txIndex: ctx.txIndex, blockHash: toHex(ctx.blockHash), output: toHex(ctx.output),
            nonce: db.getNonce(ctx.from), exists: db.exists(ctx.to), missing: db.exists(toAddress('0x1234')),
            balanceIsBig: db.getBalance(ctx.from).greater(0), code: this.code, slot: this.slot,
            precompiled: isPrecompiled(toAddress('0x04')), notPrecompiled: isPrecompiled(ctx.to),
            created: toHex(toContract(ctx.from, 0)), sliced: toHex(slice(ctx.input, 0, 4))
          };
        }
      }`;
      const r = await trace(fx.txs.erc20, { tracer });
      const tx = await call(node.url, 'eth_getTransactionByHash', [fx.txs.erc20]);
      const receipt = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.erc20]);
      assert.equal(r.type, 'CALL');
      assert.equal(r.from, tx.from.toLowerCase());
      assert.equal(r.to, tx.to.toLowerCase());
      assert.equal(r.input, tx.input);
      assert.equal(r.gas, Number(BigInt(tx.gas)));
      assert.equal(r.gasUsed, Number(BigInt(receipt.gasUsed)));
      assert.equal(r.value, '0');
      assert.equal(r.block, Number(BigInt(receipt.blockNumber)));
      assert.equal(r.txHash, fx.txs.erc20);
      assert.equal(r.txIndex, Number(BigInt(receipt.transactionIndex)));
      assert.equal(r.blockHash, receipt.blockHash);
      assert.equal(r.output, '0x' + '0'.repeat(63) + '1');
      assert.equal(r.nonce, Number(BigInt(tx.nonce)) + 1, 'the nonce as the tx runs (already raised)');
      assert.equal(r.exists, true);
      assert.equal(r.missing, false);
      assert.equal(r.balanceIsBig, true);
      assert.equal(r.code, await call(node.url, 'eth_getCode', [fx.deployed.token, receipt.blockNumber]));
      assert.match(r.slot, /^0x[0-9a-f]{64}$/);
      assert.equal(r.precompiled, true);
      assert.equal(r.notPrecompiled, false);
      assert.equal(r.created, '0x5fbdb2315678afecb367f032d93f642f64180aa3', 'CREATE address of dev account 0, nonce 0');
      assert.equal(r.sliced, '0xa9059cbb');
    });

    it('setup(config) gets tracerConfig as a JSON string', async () => {
      const tracer = '{setup: function (cfg) { this.cfg = JSON.parse(cfg); }, fault: function () {}, result: function () { return this.cfg; }}';
      assert.deepEqual(await trace(fx.txs.transfer, { tracer, tracerConfig: { answer: 42, list: [1, 2] } }), { answer: 42, list: [1, 2] });
      assert.deepEqual(await trace(fx.txs.transfer, { tracer }), {});
    });

    it('stack and memory out of bounds are tracer errors, as in geth', async () => {
      const r = await rpc(node.url, 'debug_traceTransaction', [fx.txs.erc20, { tracer: '{step: function (log) { log.stack.peek(5000) }, fault: function () {}, result: function () { return 1 }}' }]);
      assert.equal(r.error?.code, -32000);
      assert.match(r.error!.message, /tracer accessed out of bound stack: size \d+, index 5000 +in server-side tracer function 'step'/);
    });
  });

  describe('hostile JS tracers get errors and the node keeps serving', () => {
    const hostile = async (tracer: string, timeout = '2s') => {
      const r = await rpc(node.url, 'debug_traceTransaction', [fx.txs.nested, { tracer, timeout }]);
      assert.equal(r.result, undefined);
      assert.equal(r.error?.code, -32000);
      // the node still answers other clients
      assert.match(await call(node.url, 'eth_blockNumber'), /^0x[0-9a-f]+$/);
      return { message: r.error!.message };
    };

    it('an endless loop in step is stopped at the timeout', async () => {
      let traceAnswered = false;
      const pending = hostile('{step: function () { for (;;) {} }, fault: function () {}, result: function () { return 1 }}', '5s');
      void pending.then(() => (traceAnswered = true), () => (traceAnswered = true));
      // other clients are served while the trace runs (it is on its own thread): the answer to
      // eth_blockNumber comes before the trace's, which waits for its 5 s deadline
      await call(node.url, 'eth_blockNumber');
      assert.equal(traceAnswered, false, 'eth_blockNumber answered while the trace was still running');
      const { message } = await pending;
      assert.equal(message, 'execution timeout');
    });

    it('endless loops in setup and result are stopped too', async () => {
      assert.equal((await hostile('{setup: function () { while (true) {} }, fault: function () {}, result: function () { return 1 }}', '500ms')).message, 'execution timeout');
      assert.equal((await hostile('{fault: function () {}, result: function () { while (true) {} }}', '500ms')).message, 'execution timeout');
    });

    it('unbounded allocation hits the memory limit, and memory comes back', async () => {
      const tracer = '{a: [], step: function () { for (;;) this.a.push(new Array(100000).fill(7)); }, fault: function () {}, result: function () { return 1 }}';
      const before = rss(node.proc.pid!);
      for (let i = 0; i < 4; i++) {
        const { message } = await hostile(tracer, '20s');
        assert.match(message, /out of memory/);
      }
      await trace(fx.txs.transfer, { tracer: 'opcountTracer' });
      const grown = rss(node.proc.pid!) - before;
      assert.ok(grown < 256 * 1024 * 1024, `rss grew by ${Math.round(grown / 1048576)} MiB over 4 runs at a 64 MiB limit`);
    });

    it('a throw is reported with the function it came from', async () => {
      const { message } = await hostile('{step: function () { throw new Error("boom") }, fault: function () {}, result: function () { return 1 }}');
      assert.equal(message, "Error: boom    in server-side tracer function 'step'");
    });

    it('process, require, fs, network and the host bridge are out of reach', async () => {
      const probe = `{fault: function () {}, result: function () {
        return [typeof process, typeof require, typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof __host, typeof std, typeof os, typeof setTimeout].join(',');
      }}`;
      assert.equal(await trace(fx.txs.transfer, { tracer: probe }), 'undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined');
      assert.match((await hostile('{fault: function () {}, result: function () { return require("fs").readFileSync("/etc/passwd") }}')).message, /ReferenceError: '?require'? is not defined/);
      assert.match((await hostile('{fault: function () {}, result: function () { return process.exit(1) }}')).message, /ReferenceError: '?process'? is not defined/);
      const escape = '{fault: function () {}, result: function () { return [typeof Function("return this")().process, typeof this.constructor.constructor("return typeof process")()].join(","); }}';
      assert.equal(await trace(fx.txs.transfer, { tracer: escape }), 'undefined,string');
      assert.equal(await trace(fx.txs.transfer, { tracer: '{fault: function () {}, result: function () { return this.constructor.constructor("return typeof process")(); }}' }), 'undefined');
    });

    it('traces still work after all of it', async () => {
      assert.equal(await trace(fx.txs.nested, { tracer: 'opcountTracer' }), (await trace(fx.txs.nested)).structLogs.length);
    });
  });

  describe('blocks and calls', () => {
    it('debug_traceBlockByNumber and debug_traceBlockByHash give {txHash, result} per tx', async () => {
      const receipt = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.nested]);
      const block = await call(node.url, 'eth_getBlockByHash', [receipt.blockHash, false]);
      const byNumber = await provider.send('debug_traceBlockByNumber', [block.number, { tracer: 'callTracer' }]);
      const byHash = await provider.send('debug_traceBlockByHash', [block.hash, { tracer: 'callTracer' }]);
      assert.deepEqual(byNumber, byHash);
      assert.deepEqual(byNumber.map((e: any) => e.txHash), block.transactions);
      const i = block.transactions.indexOf(fx.txs.nested);
      assert.deepEqual(byNumber[i].result, await trace(fx.txs.nested, { tracer: 'callTracer' }));
      const structs = await provider.send('debug_traceBlockByNumber', [block.number]);
      assert.deepEqual(structs[i].result, await trace(fx.txs.nested));
    });

    it('struct logger block traces conform to the execution-apis schemas', async () => {
      for (const s of ['erc20', 'nested', 'revert', 'create'] as const) {
        const receipt = await call(node.url, 'eth_getTransactionReceipt', [fx.txs[s]]);
        for (const cfg of [{}, { enableMemory: true, enableReturnData: true }, { disableStack: true, disableStorage: true }]) {
          const byNumber = await call(node.url, 'debug_traceBlockByNumber', [receipt.blockNumber, cfg]);
          assert.equal(resultErrors('debug_traceBlockByNumber', byNumber), undefined, `${s} ${JSON.stringify(cfg)}`);
          const byHash = await call(node.url, 'debug_traceBlockByHash', [receipt.blockHash, cfg]);
          assert.equal(resultErrors('debug_traceBlockByHash', byHash), undefined);
        }
      }
    });

    it('a tracer error in a block trace is that entry\'s error', async () => {
      const receipt = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.nested]);
      const entries = await provider.send('debug_traceBlockByNumber', [receipt.blockNumber, { tracer: '{step: function () { throw "x" }, fault: function () {}, result: function () { return 1 }}' }]);
      assert.ok(entries.length >= 1);
      for (const e of entries) {
        assert.match(e.txHash, /^0x[0-9a-f]{64}$/);
        assert.equal(e.result, undefined);
        assert.match(e.error, /in server-side tracer function 'step'/);
      }
    });

    it('debug_traceCall runs a call on a block state, with state overrides', async () => {
      const callee = fx.deployed.callee;
      const data = new Interface(contracts().callee.abi).encodeFunctionData('fail', [5n]);
      const out = await provider.send('debug_traceCall', [{ from: devAddress(3), to: callee, data }, 'latest', { tracer: 'callTracer' }]);
      assert.equal(out.error, 'execution reverted');
      assert.equal(out.revertReason, 'callee says no');
      // override the callee's code with one that returns 1
      const overridden = await provider.send('debug_traceCall', [
        { from: devAddress(3), to: callee, data },
        'latest',
        { tracer: 'callTracer', stateOverrides: { [callee]: { code: '0x600160005260206000f3' } } },
      ]);
      assert.equal(overridden.error, undefined);
      assert.equal(overridden.output, '0x' + '0'.repeat(63) + '1');
      const rich = '0x00000000000000000000000000000000000000aa';
      const pre = await provider.send('debug_traceCall', [
        { from: rich, to: devAddress(4), value: '0x5' },
        'latest',
        { tracer: 'prestateTracer', stateOverrides: { [rich]: { balance: '0xde0b6b3a7640000' } } },
      ]);
      assert.equal(pre[rich].balance, '0xde0b6b3a7640000');
    });

    it('a CALL that fails before entering the callee still has its frame, as in geth', async () => {
      // MSTORE 0xdeadbeef; CALL(gas 10000, target, value 1, input mem[28..32]) from a contract with no balance; STOP
      const target = '0x00000000000000000000000000000000000000bb';
      const code = '0x63deadbeef600052' + '600060006004601c6001' + '73' + target.slice(2) + '612710f100';
      const poor = '0x00000000000000000000000000000000000000cc';
      const out = await provider.send('debug_traceCall', [
        { from: devAddress(3), to: poor, gas: '0x30000' },
        'latest',
        { tracer: 'callTracer', stateOverrides: { [poor]: { code, balance: '0x0' } } },
      ]);
      assert.equal(out.error, undefined, 'the caller goes on (CALL pushed 0)');
      assert.deepEqual(out.calls, [
        {
          from: poor,
          gas: '0x' + (10_000 + 2_300).toString(16), // the gas argument plus the value stipend
          gasUsed: '0x0',
          to: target,
          input: '0xdeadbeef',
          error: 'insufficient balance for transfer',
          value: '0x1',
          type: 'CALL',
        },
      ]);
      // with the balance the same call enters, and nothing is synthesized
      const rich = await provider.send('debug_traceCall', [
        { from: devAddress(3), to: poor, gas: '0x30000' },
        'latest',
        { tracer: 'callTracer', stateOverrides: { [poor]: { code, balance: '0x1' } } },
      ]);
      assert.equal(rich.calls.length, 1);
      assert.equal(rich.calls[0].error, undefined);
      assert.equal(rich.calls[0].gas, out.calls[0].gas);
    });

    it('struct logger options: disableStack, disableStorage, limit', async () => {
      const full = await trace(fx.txs.erc20);
      const bare = await trace(fx.txs.erc20, { disableStack: true, disableStorage: true, limit: 10 });
      assert.equal(bare.structLogs.length, 10);
      for (const e of bare.structLogs) {
        assert.equal(e.stack, undefined);
        assert.equal(e.storage, undefined);
      }
      assert.ok(full.structLogs.some((e: any) => e.storage !== undefined));
      assert.equal(bare.gas, full.gas);
    });
  });
});
