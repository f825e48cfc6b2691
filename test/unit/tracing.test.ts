/**
 * Tracing pieces in-process: the struct logger's entry format, the synchronous trie walk of the JS
 * tracers' db (against ethereumjs' own trie), the QuickJS sandbox (geth's helpers, bigInt,
 * timeouts, memory limit, isolation), opcode names, and the debug namespace's trace config decoding.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsTracer, JS_TRACER_MEMORY_LIMIT } from '../../src/evm/tracing/js/host.js';
import { LEGACY_TRACERS } from '../../src/evm/tracing/js/legacy.js';
import { opName } from '../../src/evm/tracing/opcodes.js';
import { StructLogger } from '../../src/evm/tracing/structlog.js';
import type { SyncState } from '../../src/evm/tracing/syncstate.js';
import { TraceError, TraceTimeout, type Step } from '../../src/evm/tracing/types.js';
import { createDebugMethods, type DebugModules } from '../../src/evmrpc/debug.js';
import { DomainError } from '../../src/lib/errors.js';

const ZERO20 = new Uint8Array(20);

function step(over: Partial<Step> = {}): Step {
  return {
    pc: 0,
    op: 0x01,
    gas: 100n,
    cost: 3n,
    depth: 1,
    refund: 0n,
    stack: [5n, 0x60n],
    stackLength: 2,
    memory: new Uint8Array(64),
    memorySize: 0,
    address: ZERO20,
    caller: ZERO20,
    callValue: 0n,
    callData: new Uint8Array(),
    returnData: new Uint8Array(),
    state: undefined as never,
    ...over,
  };
}

describe('struct logger entries', () => {
  it('writes geth legacy JSON: op names, numbers, minimal hex stack, memory words', () => {
    const l = new StructLogger({ disableStack: false, disableStorage: true, enableMemory: true, enableReturnData: true, limit: 0 });
    const mem = new Uint8Array(64);
    mem[31] = 0x80;
    l.onStep(step({ pc: 7, op: 0x52, gas: 1000n, cost: 6n, memory: mem, memorySize: 64, refund: 4800n, returnData: Uint8Array.of(1, 2) }));
    l.onStep(step({ op: 0x0c, stackLength: 0 }));
    l.onStepError(1, 'out of gas');
    l.onExit({ depth: 0, output: Uint8Array.of(0xab), gasUsed: 1n, error: undefined, reverted: false });
    l.onTxEnd({ gasUsed: 21_064n });
    assert.deepEqual(l.result(), {
      gas: 21064,
      failed: false,
      returnValue: '0xab',
      structLogs: [
        {
          pc: 7,
          op: 'MSTORE',
          gas: 1000,
          gasCost: 6,
          depth: 1,
          stack: ['0x5', '0x60'],
          returnData: '0x0102',
          memory: ['0x' + '0'.repeat(62) + '80', '0x' + '0'.repeat(64)],
          refund: 4800,
        },
        { pc: 0, op: 'opcode 0xc not defined', gas: 100, gasCost: 3, depth: 1, stack: [], error: 'out of gas' },
      ],
    });
  });

  it('limit counts entries; a failed tx returns only revert data', () => {
    const l = new StructLogger({ disableStack: true, disableStorage: true, enableMemory: false, enableReturnData: false, limit: 2 });
    for (let i = 0; i < 5; i++) l.onStep(step({ pc: i }));
    l.onExit({ depth: 0, output: Uint8Array.of(9), gasUsed: 1n, error: 'invalid opcode', reverted: true });
    const r = l.result() as { structLogs: unknown[]; returnValue: string; failed: boolean };
    assert.equal(r.structLogs.length, 2);
    assert.deepEqual(r.structLogs[0], { pc: 0, op: 'ADD', gas: 100, gasCost: 3, depth: 1 });
    assert.equal(r.failed, true);
    assert.equal(r.returnValue, '0x');
  });

  it('names opcodes like geth', () => {
    assert.equal(opName(0x20), 'KECCAK256');
    assert.equal(opName(0x44), 'DIFFICULTY');
    assert.equal(opName(0x5f), 'PUSH0');
    assert.equal(opName(0x7f), 'PUSH32');
    assert.equal(opName(0x9f), 'SWAP16');
    assert.equal(opName(0xfe), 'INVALID');
    assert.equal(opName(0xef), 'opcode 0xef not defined');
  });
});

describe('QuickJS sandbox', () => {
  const noState = {
    account: () => undefined,
    code: () => new Uint8Array(),
    storage: () => new Uint8Array(32),
  } as unknown as SyncState;
  const make = (code: string, deadline = Date.now() + 5000, config?: unknown) => JsTracer.create(code, config, noState, deadline);
  const env = {
    from: Uint8Array.from(Buffer.from('f39fd6e51aad88f6f4ce6ab8827279cfffb92266', 'hex')),
    to: new Uint8Array(20).fill(0x11),
    isCreate: false,
    gasLimit: 50_000n,
    value: 5n,
    input: Uint8Array.of(0xa9, 0x05, 0x9c, 0xbb, 1),
    gasPrice: 7n,
    coinbase: ZERO20,
    blockNumber: 12n,
    position: undefined,
    firstLogIndex: 0,
    state: undefined as never,
    isPrecompile: () => false,
    delegations: false,
    authorities: [],
  };

  async function runResult(code: string, config?: unknown): Promise<unknown> {
    const t = await make(code, Date.now() + 5000, config);
    t.onTxStart(env);
    t.onEnter({ depth: 0, type: 'CALL', from: env.from, to: env.to, input: env.input, gas: 50_000n, value: 5n });
    if (t.wantsSteps) t.onStep(step({ op: 0x60, stack: [1n, 2n ** 200n], stackLength: 2 }));
    t.onExit({ depth: 0, output: Uint8Array.of(1), gasUsed: 100n, error: undefined, reverted: false });
    t.onTxEnd({ gasUsed: 21_100n });
    return t.result();
  }

  it('gives geth helpers and a big-integer compatible bigInt', async () => {
    const r = await runResult(`{
      s: null,
      step: function (log) { this.s = [log.op.toString(), log.op.isPush(), log.stack.length(), log.stack.peek(0).toString(16), log.stack.peek(1).toString(), log.getDepth()]; },
      fault: function () {},
      result: function (ctx) {
        return {
          s: this.s, type: ctx.type, from: toHex(ctx.from), value: ctx.value.add(1).toString(), gasPrice: ctx.gasPrice.multiply(ctx.gasUsed).toString(16),
          word: toHex(toWord('0x01')), addr: toHex(toAddress('0x' + 'ab'.repeat(25))), c2: toHex(toContract2('0x' + '00'.repeat(20), '0x00', '0x00')),
          big: bigInt('ff', 16).shiftLeft(8).toString(16), cmp: bigInt(5).compare(7), eq: bigInt(3).equals(3), n: bigInt(12) * 2, s4: toHex(slice(ctx.input, 0, 4))
        };
      }
    }`);
    assert.deepEqual(r, {
      s: ['PUSH1', true, 2, (2n ** 200n).toString(16), '1', 1],
      type: 'CALL',
      from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
      value: '6',
      gasPrice: (7n * 21_100n).toString(16),
      word: '0x' + '0'.repeat(63) + '1',
      addr: '0x' + 'ab'.repeat(20),
      // EIP-1014's first example: deployer 0x00…00, salt 0, init code 0x00
      c2: '0x4d1a2e2bb4f88f0250f26ffff098b0b30b26bf38',
      big: 'ff00',
      cmp: -1,
      eq: true,
      n: 24,
      s4: '0xa9059cbb',
    });
  });

  it('passes tracerConfig to setup as a JSON string', async () => {
    assert.deepEqual(await runResult('{setup: function (c) { this.c = c }, fault: function () {}, result: function () { return this.c }}', { a: 1 }), '{"a":1}');
  });

  it('checks the tracer object like geth', async () => {
    await assert.rejects(make('{fault: function () {}}'), (e: unknown) => e instanceof TraceError && e.message === 'trace object must expose a function result()');
    await assert.rejects(make('{result: function () {}}'), /must expose a function fault\(\)/);
    await assert.rejects(make('{result: function () {}, fault: function () {}, enter: function () {}}'), /both or none of enter\(\) and exit\(\)/);
    await assert.rejects(make('{result: '), /SyntaxError/);
  });

  it('stops endless loops at the deadline', async () => {
    await assert.rejects(make('{setup: function () { for (;;) {} }, fault: function () {}, result: function () {}}', Date.now() + 300), TraceTimeout);
    const t = await make('{step: function () { for (;;) {} }, fault: function () {}, result: function () {}}', Date.now() + 300);
    t.onTxStart(env);
    assert.throws(() => t.onStep(step()), TraceTimeout);
  });

  it('stops unbounded allocation at the memory limit', async () => {
    assert.ok(JS_TRACER_MEMORY_LIMIT <= 128 * 1024 * 1024);
    const t = await make('{a: [], step: function () { for (;;) this.a.push(new Array(100000).fill(1)) }, fault: function () {}, result: function () { return 1 }}');
    t.onTxStart(env);
    t.onStep(step());
    assert.throws(() => t.result(), (e: unknown) => e instanceof TraceError && /out of memory/.test(e.message) && /'step'/.test(e.message));
  });

  it('has nothing of the host: no process, require, timers, network or bridge', async () => {
    const r = await runResult(`{fault: function () {}, result: function () {
      return [typeof process, typeof require, typeof module, typeof fetch, typeof setTimeout, typeof __host, typeof std, typeof os, typeof WebAssembly].join(' ');
    }}`);
    assert.equal(r, 'undefined undefined undefined undefined undefined undefined undefined undefined undefined');
  });

  it('runs every bundled legacy tracer on one call with one PUSH1 step', async () => {
    const results: Record<string, any> = {};
    // prestateTracerLegacy reads the state of the step's contract, which this fake step lacks: it is
    // checked against the native prestateTracer end to end (test/e2e/debug.test.ts)
    for (const [name, code] of Object.entries(LEGACY_TRACERS)) if (name !== 'prestateTracerLegacy') results[name] = await runResult(code);
    assert.equal(results.opcountTracer, 1);
    assert.deepEqual(results.noopTracerLegacy, {});
    assert.deepEqual(results.unigramTracer, { PUSH1: 1 });
    assert.deepEqual(results.bigramTracer, {}, 'one step makes no bigram');
    assert.deepEqual(results.trigramTracer, {}, 'one step makes no trigram');
    // selector a9059cbb with 1 byte of arguments after it
    assert.deepEqual(results['4byteTracerLegacy'], { '0xa9059cbb-1': 1 });
    assert.equal(results.callTracerLegacy.type, 'CALL');
    assert.equal(results.callTracerLegacy.from, '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    assert.equal(results.callTracerLegacy.to, '0x' + '11'.repeat(20));
    assert.equal(results.callTracerLegacy.input, '0xa9059cbb01');
    assert.equal(results.evmdisTracer.length, 1);
    assert.equal(results.evmdisTracer[0].op, 0x60);
    assert.equal(results.evmdisTracer[0].len, 2);
    assert.ok((await make(LEGACY_TRACERS.prestateTracerLegacy!)) instanceof JsTracer);
    assert.deepEqual(Object.keys(results).length, Object.keys(LEGACY_TRACERS).length - 1);
  });
});

describe('debug namespace trace config', () => {
  const seen: { timeoutMs: number; tracer?: string; limit: number }[] = [];
  const modules: DebugModules = {
    reader: { chainId: 9000n, resolveBlock: () => 1n, blockByNumber: () => ({ header: { gasLimit: 30_000_000n } }) as never },
    runs: {
      traceTransaction: async (_h, o) => (seen.push(o), null),
      traceBlock: async () => [],
      traceCall: async (req, _n, _o, o) => (seen.push(o), req.gas),
    },
  };
  const table = createDebugMethods(modules, { gasCap: 25_000_000n, traceTimeoutCapMs: 60_000 });
  const call = (method: string, params: unknown[]) => {
    const spec = table[method]!;
    const args = spec.params.map((c, i) => c.decode(params[i] as never, i));
    return spec.handler(args, { transport: 'http', authenticated: false });
  };
  const hash = '0x' + '11'.repeat(32);

  it('defaults to 5s, parses Go durations and caps them', async () => {
    seen.length = 0;
    await call('debug_traceTransaction', [hash]);
    await call('debug_traceTransaction', [hash, { timeout: '1m30s', tracer: 'callTracer', limit: 3 }]);
    await call('debug_traceTransaction', [hash, { timeout: '250ms' }]);
    assert.deepEqual(
      seen.map((o) => [o.timeoutMs, o.tracer, o.limit]),
      [
        [5000, undefined, 0],
        [60_000, 'callTracer', 3],
        [250, undefined, 0],
      ],
    );
  });

  it('rejects bad configs with geth texts', async () => {
    await assert.rejects(async () => call('debug_traceTransaction', [hash, { timeout: 'soon' }]), (e: unknown) => e instanceof DomainError && e.message === 'time: invalid duration "soon"');
    assert.throws(() => call('debug_traceTransaction', [hash, { limit: -2 }]), /output limit cannot be negative, got -2/);
    assert.throws(() => call('debug_traceTransaction', [hash, { disableStack: 'yes' }]), /Go struct field TraceConfig.disableStack of type bool/);
  });

  it('debug_traceCall caps gas like eth_call', async () => {
    assert.equal(await call('debug_traceCall', [{ to: '0x' + '22'.repeat(20) }, 'latest']), 25_000_000n);
    assert.equal(await call('debug_traceCall', [{ to: '0x' + '22'.repeat(20), gas: '0x5208' }, 'latest']), 21_000n);
  });
});
