/**
 * geth's native `muxTracer` (eth/tracers/native/mux.go): runs several tracers over one
 * transaction. tracerConfig maps a tracer name to its config; the result maps each name to its
 * tracer's result (keys sorted, as Go marshals a map). Any named tracer may be used (native,
 * bundled JS, JS code), but not the struct logger, which has no name in geth's directory.
 */
import { TraceError, type EmittedLog, type FrameEnd, type FrameStart, type Step, type Tracer, type TxEnd, type TxEnv } from './types.js';

/** tracerConfig as name → config; geth's json.Unmarshal text on a wrong kind */
export function parseMuxConfig(raw: unknown): [string, unknown][] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    const kind = Array.isArray(raw) ? 'array' : typeof raw === 'boolean' ? 'bool' : typeof raw;
    throw new TraceError(`json: cannot unmarshal ${kind} into Go value of type map[string]json.RawMessage`);
  }
  return Object.entries(raw as Record<string, unknown>);
}

export class MuxTracer implements Tracer {
  readonly wantsSteps: boolean;

  /** `children` in the order given; results are keyed by `names` */
  constructor(
    private readonly names: string[],
    private readonly children: Tracer[],
  ) {
    this.wantsSteps = children.some((c) => c.wantsSteps);
  }

  async onTxStart(env: TxEnv): Promise<void> {
    for (const c of this.children) await c.onTxStart?.(env);
  }
  async onEnter(f: FrameStart): Promise<void> {
    for (const c of this.children) await c.onEnter?.(f);
  }
  async onExit(f: FrameEnd): Promise<void> {
    for (const c of this.children) await c.onExit?.(f);
  }
  async onStep(s: Step): Promise<void> {
    for (const c of this.children) if (c.wantsSteps) await c.onStep?.(s);
  }
  async onStepError(depth: number, error: string): Promise<void> {
    for (const c of this.children) if (c.wantsSteps) await c.onStepError?.(depth, error);
  }
  async onFault(s: Step, error: string): Promise<void> {
    for (const c of this.children) if (c.wantsSteps) await c.onFault?.(s, error);
  }
  onLog(l: EmittedLog): void {
    for (const c of this.children) c.onLog?.(l);
  }
  async onTxEnd(r: TxEnd): Promise<void> {
    for (const c of this.children) await c.onTxEnd?.(r);
  }

  async result(): Promise<unknown> {
    const out: Record<string, unknown> = {};
    const order = this.names.map((n, i) => [n, i] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [name, i] of order) out[name] = await this.children[i]!.result();
    return out;
  }

  dispose(): void {
    for (const c of this.children) c.dispose?.();
  }
}
