/**
 * The EVM transaction pool (application-side mempool). Per sender, txs are keyed by nonce: the run
 * that continues the account's state nonce is `pending` (executable), the rest is `queued` (nonce gap).
 * A same-nonce replacement needs a price bump on both fee cap and tip; the pool is bounded and evicts
 * the cheapest tx when full. Error texts are geth's.
 */
import { txRejected } from '../lib/errors.js';
import type { DecodedTx } from '../evm/tx.js';
import { effectiveTip, feeCap, tipCap } from '../evm/tx.js';
import type { EvmTx } from '../types/chain.js';
import { GethText } from '../lib/gethtexts.js';

export interface PoolEntry {
  decoded: DecodedTx;
  native: Uint8Array;
  /** arrival order */
  seq: number;
}

export interface PoolLimits {
  size: number;
  priceBumpPercent: number;
  accountQueue: number;
}

export interface PoolChange {
  added: EvmTx[];
  removed: Uint8Array[];
  /** the native (TxRaw) bytes of each added tx, same order (Surface B's unconfirmed_txs) */
  natives?: Uint8Array[];
  /** of `removed`: txs that passed CheckTx but were found invalid when a block ran them (CometBFT's evicted_txs) */
  evicted?: number;
}

const key = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

class Account {
  readonly txs = new Map<bigint, PoolEntry>();
  constructor(public stateNonce: bigint) {}
  /** highest nonce of the contiguous executable run, or stateNonce-1 */
  pendingEnd(): bigint {
    let n = this.stateNonce;
    while (this.txs.has(n)) n++;
    return n - 1n;
  }
}

/** The valid authorities (recovered signers) of a set-code tx's authorizations, as hex keys. */
function authoritiesOf(tx: EvmTx): string[] {
  const out: string[] = [];
  for (const a of tx.authorizationList ?? []) if (a.authority !== undefined) out.push(key(a.authority));
  return out;
}

export class TxPool {
  private readonly byHash = new Map<string, PoolEntry>();
  private readonly accounts = new Map<string, Account>();
  /**
   * accounts named as the authority of a pooled set-code tx → those txs' hashes (geth legacypool's
   * lookup.auths): each entry is one a pooled tx holds, so it is bounded by the pool's size
   */
  private readonly auths = new Map<string, Set<string>>();
  private seq = 0;

  constructor(private readonly limits: PoolLimits) {}

  get size(): number {
    return this.byHash.size;
  }

  has(hash: Uint8Array): boolean {
    return this.byHash.has(key(hash));
  }

  get(hash: Uint8Array): PoolEntry | undefined {
    return this.byHash.get(key(hash));
  }

  /**
   * Admits a checked tx. `stateNonce` is the sender's committed nonce. Returns the entries removed
   * (replaced or evicted). Throws txRejected with geth's texts.
   */
  add(entry: Omit<PoolEntry, 'seq'>, stateNonce: bigint, baseFee: bigint): EvmTx[] {
    const tx = entry.decoded.evm;
    const h = key(tx.hash);
    if (this.byHash.has(h)) throw txRejected('known', 'already known');
    if (tx.nonce < stateNonce) throw txRejected('nonceTooLow', 'nonce too low');
    const sender = key(tx.from);
    let acct = this.accounts.get(sender);
    if (!acct) {
      acct = new Account(stateNonce);
      this.accounts.set(sender, acct);
    } else acct.stateNonce = stateNonce;
    const removed: EvmTx[] = [];
    const old = acct.txs.get(tx.nonce);
    if (old) {
      const bump = BigInt(100 + this.limits.priceBumpPercent);
      const o = old.decoded.evm;
      if (feeCap(tx) * 100n < feeCap(o) * bump || tipCap(tx) * 100n < tipCap(o) * bump) {
        throw txRejected('underpriced', 'replacement transaction underpriced');
      }
    } else if (tx.nonce > acct.pendingEnd() + 1n) {
      // a gapped (queued) tx: bounded per account
      let queued = 0;
      const end = acct.pendingEnd();
      for (const n of acct.txs.keys()) if (n > end) queued++;
      if (queued >= this.limits.accountQueue) throw txRejected('poolFull', GethText.txpoolFull);
    }
    if (!old && this.byHash.size >= this.limits.size) {
      const victim = this.cheapest(baseFee);
      if (!victim || effectiveTip(victim.decoded.evm, baseFee) >= effectiveTip(tx, baseFee)) throw txRejected('poolFull', GethText.txpoolFull);
      this.remove(victim.decoded.evm);
      removed.push(victim.decoded.evm);
    }
    if (old) {
      this.forget(old.decoded.evm);
      removed.push(old.decoded.evm);
    }
    const e: PoolEntry = { ...entry, seq: this.seq++ };
    acct.txs.set(tx.nonce, e);
    this.byHash.set(h, e);
    for (const a of authoritiesOf(tx)) {
      const set = this.auths.get(a) ?? new Set<string>();
      set.add(h);
      this.auths.set(a, set);
    }
    return removed;
  }

  /**
   * The eviction candidate: among each account's LAST tx (evicting a lower nonce would strand the
   * account's later txs behind a gap), the one paying the lowest effective tip at `baseFee`.
   */
  private cheapest(baseFee: bigint): PoolEntry | undefined {
    let worst: PoolEntry | undefined;
    for (const acct of this.accounts.values()) {
      let last: PoolEntry | undefined;
      for (const [n, e] of acct.txs) if (!last || n > last.decoded.evm.nonce) last = e;
      if (last && (!worst || effectiveTip(last.decoded.evm, baseFee) < effectiveTip(worst.decoded.evm, baseFee))) worst = last;
    }
    return worst;
  }

  private remove(tx: EvmTx): void {
    const sender = key(tx.from);
    const acct = this.accounts.get(sender);
    acct?.txs.delete(tx.nonce);
    if (acct && acct.txs.size === 0) this.accounts.delete(sender);
    this.forget(tx);
  }

  /** drops a tx from the hash index and from the authorities it names */
  private forget(tx: EvmTx): void {
    const h = key(tx.hash);
    this.byHash.delete(h);
    for (const a of authoritiesOf(tx)) {
      const set = this.auths.get(a);
      set?.delete(h);
      if (set?.size === 0) this.auths.delete(a);
    }
  }

  /** Whether a pooled set-code tx names `addr` as an authority (geth: a pending authorization). */
  hasAuth(addr: Uint8Array): boolean {
    return this.auths.has(key(addr));
  }

  /**
   * The sender's pooled txs: how many, how many are executable (pending), and whether one has `nonce`
   * among the executable ones (geth legacypool: pending and queue lists).
   */
  inFlight(addr: Uint8Array, nonce?: bigint): { total: number; pending: number; pendingHasNonce: boolean } {
    const acct = this.accounts.get(key(addr));
    if (!acct) return { total: 0, pending: 0, pendingHasNonce: false };
    const end = acct.pendingEnd();
    let pending = 0;
    for (const n of acct.txs.keys()) if (n >= acct.stateNonce && n <= end) pending++;
    const pendingHasNonce = nonce !== undefined && nonce >= acct.stateNonce && nonce <= end;
    return { total: acct.txs.size, pending, pendingHasNonce };
  }

  /** Highest pool nonce + 1 of the sender's executable run, or undefined if it has none. */
  pendingNonce(sender: Uint8Array): bigint | undefined {
    const acct = this.accounts.get(key(sender));
    if (!acct) return undefined;
    const end = acct.pendingEnd();
    return end >= acct.stateNonce ? end + 1n : undefined;
  }

  /** whether a block at `baseFee` would include a tx: some sender's next nonce is here, paying at least the base fee */
  hasExecutable(baseFee: bigint): boolean {
    for (const acct of this.accounts.values()) {
      const e = acct.txs.get(acct.stateNonce);
      if (e !== undefined && feeCap(e.decoded.evm) >= baseFee) return true;
    }
    return false;
  }

  /** pending (executable) and queued entries, each sorted by sender then nonce */
  content(): { pending: PoolEntry[]; queued: PoolEntry[] } {
    const pending: PoolEntry[] = [];
    const queued: PoolEntry[] = [];
    for (const acct of this.accounts.values()) {
      const end = acct.pendingEnd();
      for (const n of [...acct.txs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        (n <= end ? pending : queued).push(acct.txs.get(n)!);
      }
    }
    return { pending, queued };
  }

  /** Every entry (pending and queued) in arrival order: what ReapTxs chooses from (chain/reap.ts). */
  inArrivalOrder(): PoolEntry[] {
    const all: PoolEntry[] = [];
    for (const acct of this.accounts.values()) for (const e of acct.txs.values()) all.push(e);
    return all.sort((a, b) => a.seq - b.seq);
  }

  /**
   * Picks executable txs for a block: across senders, the head with the highest effective tip first
   * (ties: arrival order), nonces in order per sender, until gas or bytes run out. `maxEthBytes`
   * (EIP-7934, evm/blocksize.ts builderTxBudget): the signed envelopes' total stays below it, and the
   * first tx that would reach it ends the selection, as geth's builder stops (miner/worker.go txFitsSize).
   */
  select(baseFee: bigint, maxGas: bigint, maxBytes: number, maxEthBytes = Number.POSITIVE_INFINITY): PoolEntry[] {
    const heads: { acct: Account; next: bigint }[] = [];
    for (const acct of this.accounts.values()) heads.push({ acct, next: acct.stateNonce });
    const out: PoolEntry[] = [];
    let gas = 0n;
    let bytes = 0;
    let ethBytes = 0;
    const entryOf = (h: { acct: Account; next: bigint }) => h.acct.txs.get(h.next);
    let live = heads.filter((h) => {
      const e = entryOf(h);
      return e !== undefined && feeCap(e.decoded.evm) >= baseFee;
    });
    while (live.length > 0) {
      let best = 0;
      for (let i = 1; i < live.length; i++) {
        const a = entryOf(live[i]!)!;
        const b = entryOf(live[best]!)!;
        const ta = effectiveTip(a.decoded.evm, baseFee);
        const tb = effectiveTip(b.decoded.evm, baseFee);
        if (ta > tb || (ta === tb && a.seq < b.seq)) best = i;
      }
      const head = live[best]!;
      const e = entryOf(head)!;
      const g = e.decoded.evm.gasLimit;
      if (gas + g > maxGas || bytes + e.native.length > maxBytes) {
        live.splice(best, 1);
        continue;
      }
      if (ethBytes + e.decoded.evm.raw.length >= maxEthBytes) break;
      out.push(e);
      gas += g;
      bytes += e.native.length;
      ethBytes += e.decoded.evm.raw.length;
      head.next++;
      const nx = entryOf(head);
      if (!nx || feeCap(nx.decoded.evm) < baseFee) live.splice(best, 1);
    }
    return out;
  }

  /**
   * After a block: the senders' new state nonces. Drops txs whose nonce is now below the state
   * nonce (included or made stale). Returns what was dropped.
   */
  onCommit(newNonces: Map<string, bigint>): EvmTx[] {
    const dropped: EvmTx[] = [];
    for (const [sender, nonce] of newNonces) {
      const acct = this.accounts.get(sender);
      if (!acct) continue;
      acct.stateNonce = nonce;
      for (const [n, e] of acct.txs) {
        if (n < nonce) {
          acct.txs.delete(n);
          this.forget(e.decoded.evm);
          dropped.push(e.decoded.evm);
        }
      }
      if (acct.txs.size === 0) this.accounts.delete(sender);
    }
    return dropped;
  }

  /** The senders with txs in the pool. */
  senders(): Uint8Array[] {
    return [...this.accounts.values()].map((a) => [...a.txs.values()][0]!.decoded.evm.from);
  }

  /**
   * After a dev revert: every sender's state nonce is set (it may go down: pool txs stay, and become
   * executable again from that nonce); txs below it are dropped and returned.
   */
  resetNonces(nonces: Map<string, bigint>): EvmTx[] {
    for (const [sender, acct] of this.accounts) acct.stateNonce = nonces.get(sender) ?? acct.stateNonce;
    return this.onCommit(nonces);
  }

  /** Removes specific txs (failed to apply in a block). */
  drop(txs: EvmTx[]): void {
    for (const t of txs) if (this.byHash.has(key(t.hash))) this.remove(t);
  }
}

export { key as hexKey };
