/**
 * geth's access-list tracer (eth/tracers/logger/access_list_tracer.go), for eth_createAccessList:
 * collects the accounts and storage slots a run touches, starting from a given list.
 *
 * - SLOAD / SSTORE add the slot (top of stack) under the executing account — never excluded, so
 *   the called contract appears with its slots, as in geth.
 * - EXTCODECOPY / EXTCODEHASH / EXTCODESIZE / BALANCE / SELFDESTRUCT add the account on top of the
 *   stack, CALL / CALLCODE / DELEGATECALL / STATICCALL the callee (second on the stack), unless
 *   the account is excluded (sender, recipient, precompiles).
 */
import type { AccessListItem } from '../../types/chain.js';
import type { Step, Tracer } from './types.js';

const SLOAD = 0x54;
const SSTORE = 0x55;
const BALANCE = 0x31;
const EXTCODESIZE = 0x3b;
const EXTCODECOPY = 0x3c;
const EXTCODEHASH = 0x3f;
const SELFDESTRUCT = 0xff;
const CALL = 0xf1;
const CALLCODE = 0xf2;
const DELEGATECALL = 0xf4;
const STATICCALL = 0xfa;

const ADDRESS_HEX_DIGITS = 40;
const WORD_HEX_DIGITS = 64;
const ADDRESS_MASK = (1n << 160n) - 1n;

function hexOf(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function bytesOf(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

export class AccessListTracer implements Tracer {
  readonly wantsSteps = true;
  /** address hex (no 0x) → slot hex set */
  private readonly list = new Map<string, Set<string>>();

  /** `exclude`: address hex (no 0x, lowercase) never added by account-touching opcodes */
  constructor(
    initial: readonly AccessListItem[],
    private readonly exclude: ReadonlySet<string>,
  ) {
    for (const item of initial) {
      const a = hexOf(item.address);
      if (exclude.has(a)) continue;
      const slots = this.slots(a);
      for (const k of item.storageKeys) slots.add(hexOf(k));
    }
  }

  private slots(address: string): Set<string> {
    let s = this.list.get(address);
    if (s === undefined) {
      s = new Set();
      this.list.set(address, s);
    }
    return s;
  }

  private addAccount(word: bigint): void {
    const a = (word & ADDRESS_MASK).toString(16).padStart(ADDRESS_HEX_DIGITS, '0');
    if (!this.exclude.has(a)) this.slots(a);
  }

  onStep(s: Step): void {
    const n = s.stackLength;
    const op = s.op;
    if ((op === SLOAD || op === SSTORE) && n >= 1) {
      this.slots(hexOf(s.address)).add(s.stack[n - 1]!.toString(16).padStart(WORD_HEX_DIGITS, '0'));
    } else if ((op === EXTCODECOPY || op === EXTCODEHASH || op === EXTCODESIZE || op === BALANCE || op === SELFDESTRUCT) && n >= 1) {
      this.addAccount(s.stack[n - 1]!);
    } else if ((op === DELEGATECALL || op === CALL || op === STATICCALL || op === CALLCODE) && n >= 5) {
      this.addAccount(s.stack[n - 2]!);
    }
  }

  /** Same accounts and, per account, the same slots. */
  equal(other: AccessListTracer): boolean {
    if (this.list.size !== other.list.size) return false;
    for (const [a, slots] of this.list) {
      const o = other.list.get(a);
      if (o === undefined || o.size !== slots.size) return false;
      for (const k of slots) if (!o.has(k)) return false;
    }
    return true;
  }

  /** The list as geth orders it: accounts ascending, each account's slots ascending. */
  accessList(): AccessListItem[] {
    return [...this.list.keys()].sort().map((a) => ({
      address: bytesOf(a),
      storageKeys: [...this.list.get(a)!].sort().map(bytesOf),
    }));
  }

  result(): unknown {
    return this.accessList();
  }
}
