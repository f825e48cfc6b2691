/**
 * geth's native `flatCallTracer` (eth/tracers/native/call_flat.go): the callTracer's frame tree
 * flattened into OpenEthereum's trace list — one `{action, blockHash, blockNumber, error, result,
 * subtraces, traceAddress, transactionHash, transactionPosition, type}` per frame, depth first.
 * tracerConfig: `convertParityErrors` (geth error texts → Parity's), `includePrecompiles` (keep
 * CALL/STATICCALL frames into precompiles, which Parity leaves out).
 *
 * The same flattening serves the Parity `trace_*` methods (src/evmrpc/trace.ts), so it works on
 * the callTracer's JSON result rather than on the hooks: one frame tree, two renderings.
 */
import { CallTracer, configObject, flag, type Frame } from './calltracer.js';
import { hexOf } from './structlog.js';
import { TraceError, type EmittedLog, type FrameEnd, type FrameStart, type Tracer, type TxEnd, type TxEnv } from './types.js';

/** one frame of the callTracer's result (calltracer.ts orderFrame) */
export type CallFrameJson = Frame;

/** where the trace sits; hashes null for a call that is no transaction (geth's empty tracers.Context) */
export interface FlatContext {
  blockHash: string | null;
  blockNumber: number;
  transactionHash: string | null;
  transactionPosition: number;
}

export interface FlatCallTracerConfig {
  convertParityErrors: boolean;
  includePrecompiles: boolean;
}

export function parseFlatCallTracerConfig(raw: unknown): FlatCallTracerConfig {
  const cfg = configObject(raw);
  const struct = 'flatCallTracerConfig';
  return { convertParityErrors: flag(cfg, 'convertParityErrors', struct), includePrecompiles: flag(cfg, 'includePrecompiles', struct) };
}

/** geth call_flat.go parityErrorMapping / parityErrorMappingStartingWith */
const PARITY_ERRORS: Readonly<Record<string, string>> = {
  'contract creation code storage out of gas': 'Out of gas',
  'out of gas': 'Out of gas',
  'gas uint64 overflow': 'Out of gas',
  'max code size exceeded': 'Out of gas',
  'invalid jump destination': 'Bad jump destination',
  'execution reverted': 'Reverted',
  'return data out of bounds': 'Out of bounds',
  'stack limit reached 1024 (1023)': 'Out of stack',
  'precompiled failed': 'Built-in failed',
  'invalid input length': 'Built-in failed',
};
const PARITY_ERROR_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['out of gas:', 'Out of gas'],
  ['invalid opcode:', 'Bad instruction'],
  ['stack underflow', 'Stack underflow'],
];

export function parityError(gethError: string): string {
  const exact = PARITY_ERRORS[gethError];
  if (exact !== undefined) return exact;
  for (const [prefix, parity] of PARITY_ERROR_PREFIXES) if (gethError.startsWith(prefix)) return parity;
  return gethError;
}

const quantity = (n: bigint): string => '0x' + n.toString(16);

const CALL_TYPES = new Set(['CALL', 'STATICCALL', 'CALLCODE', 'DELEGATECALL']);

/**
 * Drops CALL/STATICCALL frames into precompiles below the top frame (geth flatCallTracer.OnExit),
 * and gives value-less sub-frames (STATICCALL) a zero value (geth flatCallTracer.OnEnter).
 */
export function pruneFrames(top: CallFrameJson, isPrecompile: (to: string) => boolean, includePrecompiles: boolean): CallFrameJson {
  const walk = (f: CallFrameJson, depth: number): CallFrameJson => {
    const out: CallFrameJson = { ...f };
    if (depth > 0 && out.value === undefined) out.value = '0x0';
    if (f.calls !== undefined) {
      const kept = includePrecompiles ? f.calls : f.calls.filter((c) => !((c.type === 'CALL' || c.type === 'STATICCALL') && c.to !== undefined && isPrecompile(c.to)));
      out.calls = kept.map((c) => walk(c, depth + 1));
    }
    return out;
  };
  return walk(top, 0);
}

/** geth call_flat.go flatFromNested, with gencodec's field order */
export function flattenFrames(top: CallFrameJson, ctx: FlatContext, convertErrors: boolean, parity = false): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const visit = (f: CallFrameJson, traceAddress: number[]): void => {
    let type: string;
    let action: Record<string, unknown>;
    let result: Record<string, unknown> | undefined;
    if (f.type === 'CREATE' || f.type === 'CREATE2') {
      type = 'create';
      action = { creationMethod: f.type.toLowerCase(), from: f.from, gas: f.gas, init: f.input };
      if (f.value !== undefined) action.value = f.value;
      result = {};
      if (f.to !== undefined) result.address = f.to;
      result.code = f.output ?? '0x';
      result.gasUsed = f.gasUsed;
    } else if (f.type === 'SELFDESTRUCT') {
      type = 'suicide';
      action = { address: f.from };
      if (f.value !== undefined) action.balance = f.value;
      if (f.to !== undefined) action.refundAddress = f.to;
    } else if (CALL_TYPES.has(f.type)) {
      type = 'call';
      action = { callType: f.type.toLowerCase(), from: f.from, gas: f.gas, input: f.input };
      if (f.to !== undefined) action.to = f.to;
      if (f.value !== undefined) action.value = f.value;
      result = { gasUsed: f.gasUsed, output: f.output ?? '0x' };
    } else {
      throw new TraceError(`unrecognized call frame type: ${f.type}`);
    }
    // revert output carries the reason; other failures have no result
    if (f.error !== undefined && f.error !== 'execution reverted') result = undefined;
    const frame: Record<string, unknown> = { action, blockHash: ctx.blockHash, blockNumber: ctx.blockNumber };
    if (f.error !== undefined) frame.error = convertErrors ? parityError(f.error) : f.error;
    // OpenEthereum (as Anvil and Erigon answer) prints `result: null`; geth omits it
    if (result !== undefined) frame.result = result;
    else if (parity && f.error === undefined) frame.result = null;
    frame.subtraces = f.calls?.length ?? 0;
    frame.traceAddress = traceAddress;
    frame.transactionHash = ctx.transactionHash;
    frame.transactionPosition = ctx.transactionPosition;
    frame.type = type;
    out.push(frame);
    f.calls?.forEach((c, i) => visit(c, [...traceAddress, i]));
  };
  visit(top, []);
  return out;
}

export function flatContext(env: TxEnv | undefined): FlatContext {
  const p = env?.position;
  if (p === undefined) return { blockHash: null, blockNumber: 0, transactionHash: null, transactionPosition: 0 };
  return { blockHash: hexOf(p.blockHash), blockNumber: Number(env!.blockNumber), transactionHash: hexOf(p.txHash), transactionPosition: p.txIndex };
}

/**
 * `parity`: the Parity `trace_*` rendering (set by the node, never by a client's tracerConfig):
 * Parity error texts, precompile calls kept (as Anvil answers), and the top frame's `gas` and
 * `gasUsed` without the intrinsic gas and refund (the message's own gas, as OpenEthereum reports),
 * where geth's flatCallTracer shows the tx gas limit and the receipt's gasUsed.
 */
export class FlatCallTracer implements Tracer {
  readonly wantsSteps = false;
  private readonly inner = new CallTracer({ onlyTopCall: false, withLog: false });
  private env: TxEnv | undefined;
  private topGas = 0n;
  private topGasUsed = 0n;

  constructor(
    private readonly cfg: FlatCallTracerConfig,
    private readonly parity = false,
  ) {}

  onTxStart(env: TxEnv): void {
    this.env = env;
    this.inner.onTxStart(env);
  }
  onEnter(f: FrameStart): void {
    if (f.depth === 0) this.topGas = f.gas;
    this.inner.onEnter(f);
  }
  onExit(f: FrameEnd): void {
    if (f.depth === 0) this.topGasUsed = f.gasUsed;
    this.inner.onExit(f);
  }
  onLog(l: EmittedLog): void {
    this.inner.onLog(l);
  }
  onTxEnd(r: TxEnd): void {
    this.inner.onTxEnd(r);
  }

  result(): unknown {
    const tree = this.inner.result() as CallFrameJson;
    const env = this.env;
    const isPrecompile = (to: string): boolean => env?.isPrecompile(to) ?? false;
    const pruned = pruneFrames(tree, isPrecompile, this.parity || this.cfg.includePrecompiles);
    if (this.parity) {
      pruned.gas = quantity(this.topGas);
      pruned.gasUsed = quantity(this.topGasUsed);
    }
    return flattenFrames(pruned, flatContext(env), this.parity || this.cfg.convertParityErrors, this.parity);
  }
}
