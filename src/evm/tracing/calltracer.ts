/**
 * geth's native `callTracer` (eth/tracers/native/call.go): the tree of call frames
 * `{type, from, gas, gasUsed, to, input, output, error, revertReason, calls, logs, value}`.
 * tracerConfig: `onlyTopCall` (no sub-calls), `withLog` (logs per frame, with their position among
 * the frame's sub-calls; dropped from frames that failed).
 */
import { revertReason } from '../vmerrors.js';
import { hexOf } from './structlog.js';
import { TraceError, type EmittedLog, type FrameEnd, type FrameStart, type Tracer, type TxEnv, type TxEnd } from './types.js';
import { GethText } from '../../lib/gethtexts.js';

interface CallLog {
  address: string;
  topics: string[];
  data: string;
  index: string;
  position: string;
}

/** one frame of the answer (flatcall.ts and the ots namespace read it back) */
export interface Frame {
  type: string;
  from: string;
  gas: string;
  gasUsed: string;
  to?: string;
  input: string;
  output?: string;
  error?: string;
  revertReason?: string;
  calls?: Frame[];
  logs?: CallLog[];
  value?: string;
}

/** frame state that never reaches the JSON */
const reverted = new WeakSet<Frame>();

const quantity = (n: bigint): string => '0x' + n.toString(16);

export interface CallTracerConfig {
  onlyTopCall: boolean;
  withLog: boolean;
}

export function parseCallTracerConfig(raw: unknown): CallTracerConfig {
  const cfg = configObject(raw);
  return { onlyTopCall: flag(cfg, 'onlyTopCall', 'callTracerConfig'), withLog: flag(cfg, 'withLog', 'callTracerConfig') };
}

/** tracerConfig as an object ({} when absent); geth's json.Unmarshal texts on a wrong kind */
export function configObject(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new TraceError(`json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw === 'boolean' ? 'bool' : typeof raw} into Go value of type tracer config`);
  }
  return raw as Record<string, unknown>;
}

export function flag(cfg: Record<string, unknown>, name: string, struct: string): boolean {
  const v = cfg[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') {
    const kind = Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
    throw new TraceError(`json: cannot unmarshal ${kind} into Go struct field ${struct}.${name} of type bool`);
  }
  return v;
}

export class CallTracer implements Tracer {
  readonly wantsSteps = false;
  private readonly stack: Frame[] = [];
  private depth = 0;
  private gasLimit = 0n;

  constructor(private readonly cfg: CallTracerConfig) {}

  onTxStart(env: TxEnv): void {
    this.gasLimit = env.gasLimit;
  }

  onEnter(f: FrameStart): void {
    this.depth = f.depth;
    if (this.cfg.onlyTopCall && f.depth > 0) return;
    const frame: Frame = {
      type: f.type,
      from: hexOf(f.from),
      gas: quantity(f.depth === 0 ? this.gasLimit : f.gas),
      gasUsed: '0x0',
      to: hexOf(f.to),
      input: hexOf(f.input),
    };
    if (f.value !== undefined) frame.value = quantity(f.value);
    this.stack.push(frame);
  }

  onExit(f: FrameEnd): void {
    if (f.depth === 0) {
      if (this.stack.length === 1) this.finish(this.stack[0]!, f);
      return;
    }
    this.depth = f.depth - 1;
    if (this.cfg.onlyTopCall || this.stack.length <= 1) return;
    const frame = this.stack.pop()!;
    frame.gasUsed = quantity(f.gasUsed);
    this.finish(frame, f);
    const parent = this.stack[this.stack.length - 1]!;
    (parent.calls ??= []).push(frame);
  }

  private finish(frame: Frame, f: FrameEnd): void {
    if (f.error === undefined || !f.reverted) {
      // geth: `output,omitempty`
      if (f.output.length > 0) frame.output = hexOf(f.output);
      return;
    }
    frame.error = f.error;
    reverted.add(frame);
    if (frame.type === 'CREATE' || frame.type === 'CREATE2') delete frame.to;
    if (f.error !== GethText.executionReverted || f.output.length === 0) return;
    frame.output = hexOf(f.output);
    const reason = f.output.length >= 4 ? revertReason(f.output) : undefined;
    if (reason !== undefined) frame.revertReason = reason;
  }

  onLog(l: EmittedLog): void {
    if (!this.cfg.withLog) return;
    if (this.cfg.onlyTopCall && this.depth > 0) return;
    const frame = this.stack[this.stack.length - 1];
    if (!frame) return;
    (frame.logs ??= []).push({
      address: hexOf(l.address),
      topics: l.topics.map((t) => hexOf(t)),
      data: hexOf(l.data),
      index: quantity(BigInt(l.index)),
      position: quantity(BigInt(frame.calls?.length ?? 0)),
    });
  }

  onTxEnd(r: TxEnd): void {
    const top = this.stack[0];
    if (!top) return;
    top.gasUsed = quantity(r.gasUsed);
    if (this.cfg.withLog) clearFailedLogs(top, false);
  }

  result(): unknown {
    if (this.stack.length !== 1) throw new TraceError('incorrect number of top-level calls');
    return orderFrame(this.stack[0]!);
  }
}

function clearFailedLogs(f: Frame, parentFailed: boolean): void {
  const failed = parentFailed || (f.error !== undefined && reverted.has(f));
  if (failed) delete f.logs;
  for (const c of f.calls ?? []) clearFailedLogs(c, failed);
}

/** geth's field order (gencodec): from, gas, gasUsed, to, input, output, error, revertReason, calls, logs, value, type */
function orderFrame(f: Frame): Record<string, unknown> {
  const out: Record<string, unknown> = { from: f.from, gas: f.gas, gasUsed: f.gasUsed };
  if (f.to !== undefined) out.to = f.to;
  out.input = f.input;
  if (f.output !== undefined) out.output = f.output;
  if (f.error !== undefined) out.error = f.error;
  if (f.revertReason !== undefined) out.revertReason = f.revertReason;
  if (f.calls !== undefined) out.calls = f.calls.map(orderFrame);
  if (f.logs !== undefined) out.logs = f.logs;
  if (f.value !== undefined) out.value = f.value;
  out.type = f.type;
  return out;
}
