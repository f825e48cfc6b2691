/**
 * ReapTxs for CometBFT v0.39's application-side mempool (docs/abci.md "v0.39's application-side mempool"):
 * which pooled txs ferry hands CometBFT to gossip.
 *
 * CometBFT v0.39.4 calls ReapTxs every `reap_interval` (mempool/app_mempool.go reapTxs) and sends what it
 * returns once, to the peers connected at that moment (mempool/app_reactor.go broadcastTransactionsBatch,
 * p2p/switch.go BroadcastAsync: a send that times out is dropped); it keeps no record per peer, so a peer
 * that connects later, or missed the send, never gets the tx from it. The receiving CometBFT drops a tx it
 * has seen before asking its application (its seen cache, `mempool.seen_cache_size`), so offering a tx
 * again costs a peer that has it one lookup. (CometBFT's own flood mempool instead walks its whole list
 * for every newly connected peer: mempool/reactor.go broadcastTxRoutine.)
 *
 * So a pooled tx is offered when it arrives and again, while it stays in the pool, after
 * `REAP_REOFFER_AFTER` reaps, the gap doubling at each offer up to `MAX_REAP_REOFFER_GAP` reaps: a tx
 * that sat in the pool while the node had no peers reaches them once they connect, and a tx that waits
 * long (a nonce gap) is offered rarely. Included or dropped txs leave the pool, and with it this record.
 */
import type { PoolEntry } from './txpool.js';

/** reaps after a tx's first offer before it is offered again */
export const REAP_REOFFER_AFTER = 4;
/** most reaps between two offers of the same pooled tx (32 s at CometBFT's default reap_interval of 500 ms) */
export const MAX_REAP_REOFFER_GAP = 64;

interface Offered {
  /** the reap from which the tx is offered again */
  due: number;
  /** reaps between its last offer and `due` */
  gap: number;
}

export class Reaper {
  /** by pool entry: a replaced tx is a new entry, and a record goes with the entry it belongs to */
  private readonly offered = new WeakMap<PoolEntry, Offered>();
  private round = 0;

  /**
   * One ReapTxs: the pool's entries (`inArrivalOrder`) never offered, then those due again, each group in
   * arrival order, within `maxBytes` of native bytes and `maxGas` (0: no bound). A tx that does not fit
   * is left for a later reap, and the ones after it that fit are taken.
   */
  reap(inArrivalOrder: readonly PoolEntry[], maxBytes: bigint, maxGas: bigint): PoolEntry[] {
    const round = ++this.round;
    const fresh: PoolEntry[] = [];
    const due: PoolEntry[] = [];
    for (const e of inArrivalOrder) {
      const o = this.offered.get(e);
      if (!o) fresh.push(e);
      else if (o.due <= round) due.push(e);
    }
    const out: PoolEntry[] = [];
    let bytes = 0n;
    let gas = 0n;
    for (const e of [...fresh, ...due]) {
      const b = bytes + BigInt(e.native.length);
      const g = gas + e.decoded.evm.gasLimit;
      if ((maxBytes > 0n && b > maxBytes) || (maxGas > 0n && g > maxGas)) continue;
      bytes = b;
      gas = g;
      const o = this.offered.get(e);
      const gap = o ? Math.min(o.gap * 2, MAX_REAP_REOFFER_GAP) : REAP_REOFFER_AFTER;
      this.offered.set(e, { due: round + gap, gap });
      out.push(e);
    }
    return out;
  }
}
