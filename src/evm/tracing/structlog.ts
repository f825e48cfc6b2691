/**
 * geth's default tracer, the struct logger: `{gas, failed, returnValue, structLogs: [...]}` with one
 * entry per opcode in geth's legacy JSON form (eth/tracers/logger): `op` by name, `gas`/`gasCost`
 * as numbers, stack items as minimal 0x quantities (bottom first), memory as 32-byte 0x words,
 * `storage` (the contract's slots touched so far) only on SLOAD/SSTORE, `refund` and `error` only
 * when set, `returnData` only with enableReturnData.
 *
 * `limit` counts entries (execution-apis TraceConfig: "maximum number of opcode steps to capture").
 */
import { Address, setLengthLeft } from '@ethereumjs/util';
import { opName } from './opcodes.js';
import { OP } from './hook.js';
import type { FrameEnd, Step, Tracer, TraceOptions, TxEnd } from './types.js';
import { GethText } from '../../lib/gethtexts.js';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function hexOf(b: Uint8Array, start = 0, end = b.length): string {
  let s = '0x';
  for (let i = start; i < end; i++) s += HEX[b[i]!];
  return s;
}

const ZERO_WORD = '0x' + '0'.repeat(64);

/** a 32-byte word as geth's common.Hash hex */
function wordHex(v: bigint): string {
  const s = v.toString(16);
  return '0x' + (s.length < 64 ? '0'.repeat(64 - s.length) + s : s);
}

export interface StructLogEntry {
  pc: number;
  op: string;
  gas: number;
  gasCost: number;
  depth: number;
  error?: string;
  stack?: string[];
  returnData?: string;
  memory?: string[];
  storage?: Record<string, string>;
  refund?: number;
}

export class StructLogger implements Tracer {
  readonly wantsSteps = true;
  private readonly logs: StructLogEntry[] = [];
  /** per contract (hex address): slots seen so far, in first-seen order */
  private readonly storage = new Map<string, Map<string, string>>();
  private gasUsed = 0n;
  private output: Uint8Array = new Uint8Array();
  private error: string | undefined;

  constructor(private readonly cfg: Pick<TraceOptions, 'disableStack' | 'disableStorage' | 'enableMemory' | 'enableReturnData' | 'limit'>) {}

  onStep(s: Step): void | Promise<void> {
    if (this.cfg.limit > 0 && this.logs.length >= this.cfg.limit) return;
    const op = s.op;
    const entry: StructLogEntry = { pc: s.pc, op: opName(op), gas: Number(s.gas), gasCost: Number(s.cost), depth: s.depth };
    if (!this.cfg.disableStack) {
      const stack = new Array<string>(s.stackLength);
      for (let i = 0; i < s.stackLength; i++) stack[i] = '0x' + s.stack[i]!.toString(16);
      entry.stack = stack;
    }
    if (this.cfg.enableReturnData && s.returnData.length > 0) entry.returnData = hexOf(s.returnData);
    if (this.cfg.enableMemory && s.memorySize > 0) {
      const words = new Array<string>(s.memorySize / 32);
      for (let i = 0; i < words.length; i++) words[i] = hexOf(s.memory, i * 32, i * 32 + 32);
      entry.memory = words;
    }
    if (s.refund > 0n) entry.refund = Number(s.refund);
    this.logs.push(entry);
    if (!this.cfg.disableStorage && (op === OP.SLOAD || op === OP.SSTORE)) return this.storageAt(s, entry);
    return undefined;
  }

  private async storageAt(s: Step, entry: StructLogEntry): Promise<void> {
    const n = s.stackLength;
    const contract = hexOf(s.address);
    let slots = this.storage.get(contract);
    if (!slots) {
      slots = new Map();
      this.storage.set(contract, slots);
    }
    if (s.op === OP.SLOAD && n >= 1) {
      const key = s.stack[n - 1]!;
      const raw = await s.state.getStorage(new Address(s.address), setLengthLeft(bytes32(key), 32));
      slots.set(wordHex(key), raw.length === 0 ? ZERO_WORD : hexOf(setLengthLeft(raw, 32)));
    } else if (s.op === OP.SSTORE && n >= 2) {
      slots.set(wordHex(s.stack[n - 1]!), wordHex(s.stack[n - 2]!));
    } else {
      return;
    }
    entry.storage = Object.fromEntries(slots);
  }

  onStepError(depth: number, error: string): void {
    const last = this.logs[this.logs.length - 1];
    if (last && last.depth === depth) last.error = error;
  }

  onExit(f: FrameEnd): void {
    if (f.depth !== 0) return;
    this.output = f.output;
    this.error = f.error;
  }

  onTxEnd(r: TxEnd): void {
    this.gasUsed = r.gasUsed;
  }

  result(): unknown {
    const failed = this.error !== undefined;
    // the return data on success, the revert data on a revert, nothing after other failures
    const ret = failed && this.error !== GethText.executionReverted ? new Uint8Array() : this.output;
    return { gas: Number(this.gasUsed), failed, returnValue: hexOf(ret), structLogs: this.logs };
  }
}

export function bytes32(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let x = v;
  for (let i = 31; i >= 0 && x > 0n; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}
