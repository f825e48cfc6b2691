/**
 * Pending dev cheats (anvil_setBalance / setCode / setStorageAt / setNonce, anvil_loadState;
 * docs/dev-mode.md "State cheats"): an overlay on the latest committed state.
 *
 * - Reads at the latest height see it at once: the RPC thread keeps a mirror (ChainReader.cheats)
 *   for eth_getBalance/getCode/getStorageAt/getTransactionCount and abci_query, and hands it to
 *   eth_call/estimateGas/createAccessList/debug_traceCall as state overrides; the chain thread's copy
 *   patches the accounts CheckTx and the proposal checks read (nonce, balance).
 * - The next block applies every pending cheat at its start (before its first tx), so the change is
 *   in that block's state, change set and state root (the app hash); an empty block does it too.
 * - The chain thread persists the overlay (store/cheats.ts): the block's store transaction deletes
 *   what it applied, so a restart keeps exactly the cheats still pending.
 *
 * Each pending field carries a sequence number: a block applies the fields pending when it started
 * (`forBlock`), and `applied` later drops exactly those, so a cheat set while a block executes stays
 * pending for the next one.
 */
import type { StateManagerInterface } from '@ethereumjs/common';
import { Account, Address, KECCAK256_NULL, bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';
import { keccak256 } from '../evm/common.js';
import type { AccountOverride, SlotOverride, StateOverrides } from '../types/query.js';
import { appliedCheatRows, type CheatRow, type CheatTable } from '../store/cheats.js';
import type { Store } from '../store/store.js';
import type { Cheat } from '../types/cheats.js';

/** The most fields the overlay holds pending; beyond it a cheat is refused until a block applies them. */
export const MAX_PENDING_CHEATS = 1_000_000;

/** A pending field and its sequence number (what the chain thread sends the RPC thread's mirror). */
export type PendingCheat = [Cheat, number];

/** What `save()` returns: a copy of the pending fields (evm_snapshot / evm_revert). */
export type SavedCheats = ReadonlyMap<string, PendingCheat>;

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const bytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

/** The overlay key of the field a cheat sets. */
function keyOf(c: Cheat): string {
  const a = hex(c.address);
  return c.kind === 'slot' ? `s:${a}:${hex(c.slot)}` : `${c.kind[0]}:${a}`;
}

function toRow(c: Cheat, seq: number): CheatRow {
  const v = c.kind === 'balance' || c.kind === 'nonce' ? bigIntToUnpaddedBytes(c.value) : c.kind === 'code' ? c.code : c.value;
  return { k: keyOf(c), seq, v };
}

function fromRow(r: CheatRow): Cheat {
  const [tag, a, s] = r.k.split(':') as [string, string, string | undefined];
  const address = bytes(a);
  switch (tag) {
    case 'b':
      return { kind: 'balance', address, value: bytesToBigInt(r.v) };
    case 'n':
      return { kind: 'nonce', address, value: bytesToBigInt(r.v) };
    case 'c':
      return { kind: 'code', address, code: r.v };
    case 's':
      return { kind: 'slot', address, slot: bytes(s!), value: r.v };
    default:
      throw new Error(`dev_cheats: unknown row key ${r.k}`);
  }
}

/** The cheats block `height` applied at its start (a replay applies them too: chain/trace.ts). */
export function appliedCheats(store: Store, height: number): Cheat[] {
  return appliedCheatRows(store, height).map(fromRow);
}

export class CheatOverlay {
  private entries = new Map<string, PendingCheat>();
  private seq = 0;
  /** the highest sequence number a committed block applied */
  private appliedSeq = 0;
  /** addresses with a pending field (hex) → how many */
  private perAddress = new Map<string, number>();

  /** called after `restore` with the whole new set (the chain thread tells the RPC thread's mirror) */
  onRestore: ((pending: PendingCheat[]) => void) | undefined;

  /** `table`: the chain thread's persisted copy (loaded here); none for the RPC thread's mirror */
  constructor(private readonly table?: CheatTable) {
    if (table) for (const r of table.all()) this.put(fromRow(r), r.seq);
  }

  /** pending fields */
  get size(): number {
    return this.entries.size;
  }

  /** the sequence number up to which committed blocks applied the cheats (sent with `committed`) */
  get appliedUpTo(): number {
    return this.appliedSeq;
  }

  private put(c: Cheat, seq: number): void {
    const k = keyOf(c);
    const a = hex(c.address);
    if (!this.entries.has(k)) this.perAddress.set(a, (this.perAddress.get(a) ?? 0) + 1);
    this.entries.set(k, [c, seq]);
    if (seq > this.seq) this.seq = seq;
  }

  private remove(k: string, c: Cheat): void {
    this.entries.delete(k);
    const a = hex(c.address);
    const n = (this.perAddress.get(a) ?? 1) - 1;
    if (n > 0) this.perAddress.set(a, n);
    else this.perAddress.delete(a);
  }

  /** Would `count` more fields exceed MAX_PENDING_CHEATS? (fields already pending are replaced, not added) */
  wouldOverflow(cheats: readonly Cheat[]): boolean {
    if (this.entries.size + cheats.length <= MAX_PENDING_CHEATS) return false;
    const fresh = new Set(cheats.map(keyOf).filter((k) => !this.entries.has(k)));
    return this.entries.size + fresh.size > MAX_PENDING_CHEATS;
  }

  /** Sets fields (the chain thread: persisted first); returns them with their sequence numbers for the mirror. */
  set(cheats: readonly Cheat[]): PendingCheat[] {
    const out: PendingCheat[] = cheats.map((c) => [c, ++this.seq]);
    this.table?.put(out.map(([c, s]) => toRow(c, s)));
    for (const [c, s] of out) this.put(c, s);
    return out;
  }

  /** The mirror: fields the chain thread set. */
  receive(pending: readonly PendingCheat[]): void {
    for (const [c, s] of pending) this.put(c, s);
  }

  /** The fields pending now, for the block being made, and the sequence number they go up to. */
  forBlock(): { upTo: number; cheats: Cheat[] } {
    return { upTo: this.seq, cheats: [...this.entries.values()].map(([c]) => c) };
  }

  /**
   * Inside block `height`'s store transaction (every block): the fields it applied (`upTo`, `cheats`;
   * none when it applied none) leave the persisted pending copy and are recorded for its replays.
   */
  persistApplied(height: number, applied: { upTo: number; cheats: readonly Cheat[] } | undefined): void {
    if (applied !== undefined) this.table?.deleteUpTo(applied.upTo);
    this.table?.recordApplied(height, (applied?.cheats ?? []).map((c) => toRow(c, 0)));
  }

  /** A committed block applied every field up to `upTo` (fields set later stay pending). */
  applied(upTo: number): void {
    if (upTo <= this.appliedSeq) return;
    this.appliedSeq = upTo;
    for (const [k, [c, s]] of this.entries) if (s <= upTo) this.remove(k, c);
  }

  /** evm_snapshot: a copy of the pending fields. */
  save(): SavedCheats {
    return new Map(this.entries);
  }

  /** evm_revert: the pending fields become the saved ones (persisted on the chain thread). */
  restore(saved: SavedCheats): void {
    this.entries = new Map();
    this.perAddress = new Map();
    // numbered anew, above every number a block may already have applied
    const ordered = [...saved.values()].sort((x, y) => x[1] - y[1]);
    for (const [c] of ordered) this.put(c, ++this.seq);
    this.table?.replace([...this.entries.values()].map(([c, s]) => toRow(c, s)));
    this.onRestore?.(this.all());
  }

  /** every pending field with its sequence number (the mirror's initial copy, a restored set) */
  all(): PendingCheat[] {
    return [...this.entries.values()];
  }

  /** The mirror: the chain thread's whole set replaces this one. */
  replaceAll(pending: readonly PendingCheat[]): void {
    this.entries = new Map();
    this.perAddress = new Map();
    for (const [c, s] of pending) this.put(c, s);
  }

  private field(tag: string, addr: Uint8Array): Cheat | undefined {
    return this.entries.get(`${tag}:${hex(addr)}`)?.[0];
  }

  /** Does any pending field touch `addr`? */
  touches(addr: Uint8Array): boolean {
    return this.perAddress.has(hex(addr));
  }

  /** the addresses a pending field touches */
  addresses(): Uint8Array[] {
    return [...this.perAddress.keys()].map(bytes);
  }

  /** the pending slots of `addr` as [slot, value] (32 bytes each) */
  slotsOf(addr: Uint8Array): [Uint8Array, Uint8Array][] {
    const prefix = `s:${hex(addr)}:`;
    const out: [Uint8Array, Uint8Array][] = [];
    for (const [k, [c]] of this.entries) if (c.kind === 'slot' && k.startsWith(prefix)) out.push([c.slot, c.value]);
    return out;
  }

  /** the pending code of `addr` (undefined: not set) */
  code(addr: Uint8Array): Uint8Array | undefined {
    const c = this.field('c', addr);
    return c?.kind === 'code' ? c.code : undefined;
  }

  /** the pending value of a slot (32 bytes; undefined: not set) */
  slot(addr: Uint8Array, slot: Uint8Array): Uint8Array | undefined {
    const c = this.entries.get(`s:${hex(addr)}:${hex(slot)}`)?.[0];
    return c?.kind === 'slot' ? c.value : undefined;
  }

  /** The latest account as the cheats change it (created when a pending field touches a missing one). */
  account(addr: Uint8Array, base: Account | undefined): Account | undefined {
    if (!this.touches(addr)) return base;
    const acct = base === undefined ? new Account() : new Account(base.nonce, base.balance, base.storageRoot, base.codeHash);
    const b = this.field('b', addr);
    if (b?.kind === 'balance') acct.balance = b.value;
    const n = this.field('n', addr);
    if (n?.kind === 'nonce') acct.nonce = n.value;
    const code = this.code(addr);
    if (code !== undefined) acct.codeHash = code.length === 0 ? KECCAK256_NULL : keccak256(code);
    return acct;
  }

  /**
   * eth_call & co. at the latest height: the pending fields as state overrides, under the caller's
   * own (a caller's field wins; a caller's `state` replaces the whole storage, the pending slots too).
   */
  overrides(user: StateOverrides | undefined): StateOverrides | undefined {
    if (this.entries.size === 0) return user;
    const byAddress = new Map<string, AccountOverride>();
    for (const [c] of this.entries.values()) {
      const k = hex(c.address);
      const o = byAddress.get(k) ?? { address: c.address };
      if (c.kind === 'balance') o.balance = c.value;
      else if (c.kind === 'nonce') o.nonce = c.value;
      else if (c.kind === 'code') o.code = c.code;
      else (o.stateDiff ??= []).push({ slot: c.slot, value: c.value });
      byAddress.set(k, o);
    }
    for (const u of user ?? []) {
      const k = hex(u.address);
      const o = byAddress.get(k);
      if (o === undefined) {
        byAddress.set(k, u);
        continue;
      }
      const merged: AccountOverride = { address: u.address };
      const balance = u.balance ?? o.balance;
      const nonce = u.nonce ?? o.nonce;
      const code = u.code ?? o.code;
      if (balance !== undefined) merged.balance = balance;
      if (nonce !== undefined) merged.nonce = nonce;
      if (code !== undefined) merged.code = code;
      if (u.state !== undefined) merged.state = u.state;
      else if (u.stateDiff !== undefined || o.stateDiff !== undefined) {
        // each slot once: the caller's value wins over a pending one
        const slots = new Map<string, SlotOverride>();
        for (const d of [...(o.stateDiff ?? []), ...(u.stateDiff ?? [])]) slots.set(hex(d.slot), d);
        merged.stateDiff = [...slots.values()];
      }
      byAddress.set(k, merged);
    }
    return [...byAddress.values()];
  }

  /** A block's `prelude` (EvmRunner.executeBlock, TraceEngine.traceBlock) applying `cheats`; none when there are none. */
  static prelude(cheats: readonly Cheat[]): ((sm: StateManagerInterface) => Promise<void>) | undefined {
    return cheats.length === 0 ? undefined : (sm) => CheatOverlay.apply(sm, cheats);
  }

  /** A block's start: writes `cheats` into its state (the chain thread's execution state manager). */
  static async apply(sm: StateManagerInterface, cheats: readonly Cheat[]): Promise<void> {
    for (const c of cheats) {
      const address = new Address(c.address);
      const acct = (await sm.getAccount(address)) ?? new Account();
      if (c.kind === 'balance') acct.balance = c.value;
      else if (c.kind === 'nonce') acct.nonce = c.value;
      else if (c.kind === 'code' && c.code.length === 0) acct.codeHash = KECCAK256_NULL;
      await sm.putAccount(address, acct);
      if (c.kind === 'code' && c.code.length > 0) await sm.putCode(address, c.code);
      if (c.kind === 'slot') await sm.putStorage(address, c.slot, c.value);
    }
  }
}
