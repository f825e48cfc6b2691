/**
 * geth's native `4byteTracer` (selector-size → count of calls, precompiles and creates excluded)
 * and `noopTracer` (`{}`).
 */
import { hexOf } from './structlog.js';
import type { FrameStart, Tracer } from './types.js';

/** Cancun's precompiles: 0x01 … 0x0a */
export const PRECOMPILE_COUNT = 10;

function isPrecompile(addr: Uint8Array): boolean {
  for (let i = 0; i < 19; i++) if (addr[i] !== 0) return false;
  const last = addr[19]!;
  return last >= 1 && last <= PRECOMPILE_COUNT;
}

const CALLS = new Set(['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL']);

export class FourByteTracer implements Tracer {
  readonly wantsSteps = false;
  private readonly ids = new Map<string, number>();

  onEnter(f: FrameStart): void {
    if (f.input.length < 4 || !CALLS.has(f.type) || isPrecompile(f.to)) return;
    const key = `${hexOf(f.input, 0, 4)}-${f.input.length - 4}`;
    this.ids.set(key, (this.ids.get(key) ?? 0) + 1);
  }

  result(): unknown {
    return Object.fromEntries(this.ids);
  }
}

export class NoopTracer implements Tracer {
  readonly wantsSteps = false;
  result(): unknown {
    return {};
  }
}
