/**
 * JS tracers (geth's `tracer: "<JavaScript object expression>"`) run in QuickJS compiled to
 * WebAssembly, never in the node's own JavaScript context: the sandbox has no `process`,
 * `require`, file system or network — only the tracer API the prelude builds over a few host
 * functions. Each tracer gets a fresh WebAssembly instance with a memory limit and an interrupt
 * handler for its deadline; it is dropped whole when the trace ends, so whatever a hostile tracer
 * allocated goes with it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { bigIntToBytes, generateAddress, generateAddress2, setLengthLeft } from '@ethereumjs/util';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
} from 'quickjs-emscripten';
import { PRECOMPILE_COUNT } from '../fourbyte.js';
import { opName } from '../opcodes.js';
import { bytes32, hexOf } from '../structlog.js';
import type { SyncState } from '../syncstate.js';
import { TraceResultTooLarge, TraceError, TraceTimeout, type FrameEnd, type FrameStart, type Step, type Tracer, type TxEnd, type TxEnv } from '../types.js';
import { PRELUDE } from './prelude.js';

/** heap limit of one JS tracer */
export const JS_TRACER_MEMORY_LIMIT = 64 * 1024 * 1024;
/** the WebAssembly memory of one JS tracer instance (heap limit plus room for the engine itself) */
export const JS_TRACER_WASM_MEMORY = JS_TRACER_MEMORY_LIMIT + 32 * 1024 * 1024;
const WASM_INITIAL_MEMORY = 16 * 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** native stack limit of one JS tracer */
export const JS_TRACER_STACK_LIMIT = 1024 * 1024;
/** geth's padding limit for memory reads past the end (internal.GetMemoryCopyPadded) */
const MEMORY_PAD_LIMIT = 1024 * 1024;

const require = createRequire(import.meta.url);
let variant: typeof RELEASE_SYNC | undefined;

/** The QuickJS build, compiled once per thread; each tracer instantiates it afresh. */
function quickjsVariant(): typeof RELEASE_SYNC {
  if (!variant) {
    const WA = (globalThis as unknown as {
      WebAssembly: { Module: new (b: Uint8Array) => object; Memory: new (d: { initial: number; maximum: number }) => object };
    }).WebAssembly;
    const wasm = new WA.Module(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
    // QuickJS' own limit counts live objects; the WebAssembly memory under it is capped too, so
    // allocator fragmentation cannot grow an instance past JS_TRACER_WASM_MEMORY
    const pages = (bytes: number) => Math.ceil(bytes / WASM_PAGE);
    variant = newVariant(RELEASE_SYNC, {
      wasmModule: wasm as never,
      wasmMemory: async () => new WA.Memory({ initial: pages(WASM_INITIAL_MEMORY), maximum: pages(JS_TRACER_WASM_MEMORY) }) as never,
    });
  }
  return variant;
}

const ab = (b: Uint8Array): ArrayBuffer => {
  const out = new ArrayBuffer(b.length);
  new Uint8Array(out).set(b);
  return out;
};
const fromHex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.slice(2), 'hex'));

interface ErrorDump {
  name?: string;
  message?: string;
}

export class JsTracer implements Tracer {
  wantsSteps = false;
  private hasFrames = false;
  private err: string | undefined;
  private step: Step | undefined;
  private stepError: string | null = null;
  private frame: FrameStart | undefined;
  private frameEnd: FrameEnd | undefined;
  private env!: TxEnv;
  private readonly ctx: Record<string, unknown> = {};
  private fns!: Record<'step' | 'fault' | 'enter' | 'exit' | 'result', QuickJSHandle>;

  private constructor(
    private readonly vm: QuickJSContext,
    private readonly state: SyncState,
    private readonly deadline: number,
    private readonly maxResultSize: number,
  ) {}

  /** Compiles `code` (a JS object expression) and runs its setup(config). Throws TraceError. */
  static async create(code: string, config: unknown, state: SyncState, deadline: number, maxResultSize = 0): Promise<JsTracer> {
    const mod = await newQuickJSWASMModuleFromVariant(quickjsVariant());
    const rt = mod.newRuntime();
    rt.setMemoryLimit(JS_TRACER_MEMORY_LIMIT);
    rt.setMaxStackSize(JS_TRACER_STACK_LIMIT);
    rt.setInterruptHandler(() => Date.now() > deadline);
    const t = new JsTracer(rt.newContext(), state, deadline, maxResultSize);
    t.installHost();
    t.eval(PRELUDE, 'prelude');
    const obj = t.eval(`(${code})`, 'tracer');
    const install = t.vm.getProp(t.vm.global, '__install');
    const shape = t.call(install, 'setup', obj);
    if (typeof shape === 'string') throw new TraceError(shape);
    if (typeof shape !== 'number') throw new TraceError('tracer must be a JavaScript object expression');
    t.wantsSteps = (shape & 1) !== 0;
    t.hasFrames = (shape & 2) !== 0;
    const g = (n: string) => t.vm.getProp(t.vm.global, n);
    t.fns = { step: g('__step'), fault: g('__fault'), enter: g('__enter'), exit: g('__exit'), result: g('__result') };
    const cfg = t.vm.newString(config === undefined ? '{}' : JSON.stringify(config));
    t.call(g('__setup'), 'setup', cfg);
    if (t.err !== undefined) throw new TraceError(t.err);
    return t;
  }

  private eval(code: string, what: string): QuickJSHandle {
    const r = this.vm.evalCode(code, `${what}.js`);
    if (r.error) throw new TraceError(this.describe(r.error));
    return r.value;
  }

  private describe(h: QuickJSHandle): string {
    if (Date.now() > this.deadline) throw new TraceTimeout();
    const d = this.vm.dump(h) as ErrorDump | string | null;
    if (d === null || d === undefined) return 'out of memory';
    if (typeof d !== 'object') return String(d);
    return d.name ? `${d.name}: ${d.message ?? ''}` : String(d.message ?? d);
  }

  /** Calls a sandbox function; a throw becomes this tracer's error (geth: onError). */
  private call(fn: QuickJSHandle, name: string, ...args: QuickJSHandle[]): unknown {
    if (this.err !== undefined) return undefined;
    const r = this.vm.callFunction(fn, this.vm.undefined, ...args);
    if (r.error) {
      this.err = `${this.describe(r.error)}    in server-side tracer function '${name}'`;
      return undefined;
    }
    const v = this.vm.dump(r.value);
    return v;
  }

  private installHost(): void {
    const vm = this.vm;
    const host = vm.newObject();
    const def = (name: string, fn: (...a: QuickJSHandle[]) => QuickJSHandle) => vm.setProp(host, name, vm.newFunction(name, fn));
    const num = (n: number | bigint) => vm.newNumber(Number(n));
    const str = (s: string) => vm.newString(s);
    const bytes = (b: Uint8Array) => vm.newArrayBuffer(ab(b));
    const s = () => {
      if (!this.step) throw new Error('no step in progress');
      return this.step;
    };
    const addr = (h: QuickJSHandle) => setLengthLeft(fromHex(vm.getString(h)), 20);
    def('op', () => num(s().op));
    def('opName', () => str(opName(s().op)));
    def('pc', () => num(s().pc));
    def('gas', () => num(s().gas));
    def('cost', () => num(s().cost));
    def('depth', () => num(s().depth));
    def('refund', () => num(s().refund));
    def('error', () => (this.stepError === null ? vm.null : str(this.stepError)));
    def('stackLength', () => num(s().stackLength));
    def('peek', (i) => {
      const st = s();
      const idx = vm.getNumber(i);
      if (!(idx >= 0 && idx < st.stackLength)) throw new Error(`tracer accessed out of bound stack: size ${st.stackLength}, index ${idx}`);
      return str('0x' + st.stack[st.stackLength - 1 - idx]!.toString(16));
    });
    def('memoryLength', () => num(s().memorySize));
    def('memory', (a, b) => {
      const st = s();
      const begin = vm.getNumber(a);
      const end = vm.getNumber(b);
      if (end === begin) return bytes(new Uint8Array());
      if (!(end > begin && begin >= 0)) throw new Error(`tracer accessed out of bound memory: offset ${begin}, end ${end}`);
      if (end - st.memorySize > MEMORY_PAD_LIMIT) throw new Error(`reached limit for padding memory slice: ${end - st.memorySize}`);
      const out = new Uint8Array(end - begin);
      if (begin < st.memorySize) out.set(st.memory.subarray(begin, Math.min(end, st.memorySize)));
      return bytes(out);
    });
    def('memoryWord', (a) => {
      const st = s();
      const at = vm.getNumber(a);
      if (!(at >= 0 && at + 32 <= st.memorySize)) {
        throw new Error(`tracer accessed out of bound memory: available ${st.memorySize}, offset ${at}, size 32`);
      }
      return str(hexOf(st.memory, at, at + 32));
    });
    def('address', () => bytes(s().address));
    def('caller', () => bytes(s().caller));
    def('callValue', () => str('0x' + s().callValue.toString(16)));
    def('callData', () => bytes(s().callData));
    def('balance', (a) => str('0x' + (this.state.account(addr(a))?.balance ?? 0n).toString(16)));
    def('nonce', (a) => num(this.state.account(addr(a))?.nonce ?? 0n));
    def('code', (a) => bytes(this.state.code(addr(a))));
    def('state', (a, k) => bytes(this.state.storage(addr(a), setLengthLeft(fromHex(vm.getString(k)).slice(-32), 32))));
    def('exists', (a) => (this.state.account(addr(a)) !== undefined ? vm.true : vm.false));
    def('toContract', (from, nonce) => bytes(generateAddress(addr(from), bigIntToBytes(BigInt(vm.getNumber(nonce))))));
    def('toContract2', (from, salt, code) => {
      const saltHex = vm.getString(salt).replace(/^0x/i, '');
      const saltBytes = bytes32(BigInt('0x' + (saltHex === '' ? '0' : saltHex)) & ((1n << 256n) - 1n));
      return bytes(generateAddress2(addr(from), saltBytes, fromHex(vm.getString(code))));
    });
    const f = () => {
      if (!this.frame) throw new Error('no call frame in progress');
      return this.frame;
    };
    def('frameType', () => str(f().type));
    def('frameFrom', () => bytes(f().from));
    def('frameTo', () => bytes(f().to));
    def('frameInput', () => bytes(f().input));
    def('frameGas', () => num(f().gas));
    def('frameValue', () => (f().value === undefined ? vm.null : str('0x' + f().value!.toString(16))));
    const e = () => {
      if (!this.frameEnd) throw new Error('no call frame result');
      return this.frameEnd;
    };
    def('resultGasUsed', () => num(e().gasUsed));
    def('resultOutput', () => bytes(e().output));
    def('resultError', () => (e().error === undefined ? vm.null : str(e().error!)));
    vm.setProp(host, 'precompiles', vm.newNumber(PRECOMPILE_COUNT));
    vm.setProp(vm.global, '__host', host);
  }

  onTxStart(env: TxEnv): void {
    this.env = env;
    const c = this.ctx;
    c.block = Number(env.blockNumber);
    c.gas = Number(env.gasLimit);
    c.gasPrice = '0x' + env.gasPrice.toString(16);
    c.coinbase = hexOf(env.coinbase);
    if (env.position) {
      c.blockHash = hexOf(env.position.blockHash);
      c.txHash = hexOf(env.position.txHash);
      c.txIndex = env.position.txIndex;
    }
  }

  onEnter(fs: FrameStart): void {
    if (fs.depth === 0) {
      const c = this.ctx;
      c.type = fs.type === 'CREATE' ? 'CREATE' : 'CALL';
      c.from = hexOf(fs.from);
      c.to = hexOf(fs.to);
      c.input = hexOf(fs.input);
      c.value = '0x' + (fs.value ?? 0n).toString(16);
      return;
    }
    if (!this.hasFrames) return;
    this.frame = fs;
    this.call(this.fns.enter, 'enter');
  }

  onExit(fe: FrameEnd): void {
    if (fe.depth === 0) {
      if (fe.error !== undefined) this.ctx.error = fe.error;
      this.ctx.output = hexOf(fe.output);
      return;
    }
    if (!this.hasFrames) return;
    this.frameEnd = fe;
    this.call(this.fns.exit, 'exit');
  }

  onStep(st: Step): void {
    this.step = st;
    this.stepError = null;
    this.call(this.fns.step, 'step');
    this.checkTimeout();
  }

  onStepError(_depth: number, error: string): void {
    this.fault(error);
  }

  onFault(st: Step, error: string): void {
    this.step = st;
    this.fault(error);
  }

  private fault(error: string): void {
    if (!this.step) return;
    this.stepError = error;
    this.call(this.fns.fault, 'fault');
    this.checkTimeout();
  }

  private checkTimeout(): void {
    if (this.err !== undefined && Date.now() > this.deadline) throw new TraceTimeout();
  }

  onTxEnd(r: TxEnd): void {
    this.ctx.gasUsed = Number(r.gasUsed);
  }

  result(): unknown {
    if (this.err !== undefined) throw new TraceError(this.err);
    const ctx = this.vm.newString(JSON.stringify(this.ctx));
    const parse = this.eval('(function (s) { return JSON.parse(s); })', 'ctx');
    const obj = this.vm.callFunction(parse, this.vm.undefined, ctx);
    if (obj.error) throw new TraceError(this.describe(obj.error));
    const out = this.call(this.fns.result, 'result', obj.value);
    if (this.err !== undefined) throw new TraceError(this.err);
    const text = out as string;
    if (this.maxResultSize > 0 && text.length > this.maxResultSize) throw new TraceResultTooLarge(text.length, this.maxResultSize);
    return JSON.parse(text);
  }

  /** The sandbox is dropped whole (its WebAssembly memory with it); nothing is disposed one by one. */
  dispose(): void {
    this.fns = undefined as never;
  }
}
