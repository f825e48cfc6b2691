/**
 * Synchronous state reads for JS tracers. QuickJS calls host functions synchronously, but the
 * ethereumjs state manager interface is async, so `db.getBalance(...)` and friends read here: the
 * trace runner's flat state manager (src/evm/flatstate.ts) answers synchronously — its journal holds
 * every write of the block replay and of the running tx, below it the flat layer at the parent height.
 * No trie is walked.
 */
import type { Account } from '@ethereumjs/util';
import type { FlatStateManager } from '../flatstate.js';

export class SyncState {
  constructor(private readonly sm: FlatStateManager) {}

  account(addr: Uint8Array): Account | undefined {
    return this.sm.accountSync(addr);
  }

  code(addr: Uint8Array): Uint8Array {
    return this.sm.codeSync(addr);
  }

  /** 32-byte value of a 32-byte slot */
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    const out = new Uint8Array(32);
    const v = this.sm.storageSync(addr, slot);
    out.set(v.subarray(Math.max(0, v.length - 32)), 32 - Math.min(32, v.length));
    return out;
  }
}
