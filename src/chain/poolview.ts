/**
 * A read-only mirror of the chain thread's tx pool, kept by the RPC thread from pool-change messages:
 * pending tx lookups, pending nonces, pending-tx listings — without asking the chain thread.
 */
import type { EvmTx } from '../types/chain.js';
import { hexKey, type PoolChange } from './txpool.js';

/** Bound of the mirror (the pool itself is bounded; this guards against lost removals). */
export const POOL_VIEW_MAX = 50_000;

export class PoolView {
  private readonly byHash = new Map<string, EvmTx>();
  private readonly bySender = new Map<string, Map<bigint, EvmTx>>();

  apply(change: PoolChange): void {
    for (const h of change.removed) {
      const k = hexKey(h);
      const tx = this.byHash.get(k);
      if (!tx) continue;
      this.byHash.delete(k);
      const s = this.bySender.get(hexKey(tx.from));
      if (s && s.get(tx.nonce) === tx) {
        s.delete(tx.nonce);
        if (s.size === 0) this.bySender.delete(hexKey(tx.from));
      }
    }
    for (const tx of change.added) {
      if (this.byHash.size >= POOL_VIEW_MAX) break;
      this.byHash.set(hexKey(tx.hash), tx);
      const sk = hexKey(tx.from);
      let s = this.bySender.get(sk);
      if (!s) this.bySender.set(sk, (s = new Map()));
      const prev = s.get(tx.nonce);
      if (prev) this.byHash.delete(hexKey(prev.hash));
      s.set(tx.nonce, tx);
    }
  }

  get(hash: Uint8Array): EvmTx | undefined {
    return this.byHash.get(hexKey(hash));
  }

  /** state nonce advanced by the sender's contiguous pool txs */
  pendingNonce(sender: Uint8Array, stateNonce: bigint): bigint {
    const s = this.bySender.get(hexKey(sender));
    let n = stateNonce;
    while (s?.has(n)) n++;
    return n;
  }

  all(): EvmTx[] {
    return [...this.byHash.values()];
  }

  /**
   * The pool split as geth's txpool_*: per sender, the txs whose nonces continue the account's
   * state nonce without a gap are pending (executable), the rest queued. `stateNonce` reads the
   * committed nonce; the split is of a snapshot taken before any of those reads.
   */
  async content(stateNonce: (sender: Uint8Array) => Promise<bigint>): Promise<{ pending: EvmTx[]; queued: EvmTx[] }> {
    const senders = [...this.bySender.values()].map((s) => [...s.values()].sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0)));
    const pending: EvmTx[] = [];
    const queued: EvmTx[] = [];
    for (const txs of senders) {
      const first = await stateNonce(txs[0]!.from);
      let next = first;
      for (const tx of txs) {
        if (tx.nonce < first) continue; // included by a block whose removal has not arrived yet
        if (tx.nonce === next) {
          pending.push(tx);
          next++;
        } else {
          queued.push(tx);
        }
      }
    }
    return { pending, queued };
  }

  get size(): number {
    return this.byHash.size;
  }
}
