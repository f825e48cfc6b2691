/**
 * The flat state layer: accounts and storage slots by key, for the latest state and any past height,
 * without walking the Merkle trie (the trie stays the source of the state root and of proofs).
 *
 * Storage: history tables holding the value AFTER each change, keyed (key, height) —
 *   state_accounts (addr, height) → the account's trie RLP [nonce, balance, storageRoot, codeHash]
 *                                   (empty: the account does not exist from that height on)
 *   state_slots (addr ‖ slot, height) → the slot's value, leading zeros stripped (empty: zero)
 * so "value as of height N" is ONE index seek: `WHERE key = ? AND height <= N ORDER BY height DESC
 * LIMIT 1`, and the latest value is the same query at the head. A per-block change set
 * (state_changes: which keys block N changed) lets every reader keep its cache valid as the chain
 * moves. Code is content-addressed and already stored by hash in the trie table ('c' ‖ codeHash).
 * Rows are written by the chain thread inside the block's one store transaction.
 */
import { GenerationalCache, Lru } from '../lib/lru.js';
import type { Store } from './store.js';

/** Bytes of flat entries the chain thread keeps in memory (execution, CheckTx). */
export const FLAT_CACHE_BYTES = 16 * 1024 * 1024;
/** Bytes of flat entries each reader thread keeps (RPC thread, each call worker). */
export const READER_FLAT_CACHE_BYTES = 8 * 1024 * 1024;
/** Bytes of contract code kept by hash per thread. */
export const CODE_CACHE_BYTES = 4 * 1024 * 1024;
/** What one cached entry costs beyond its key and value bytes (object, Map entry, strings). */
export const FLAT_CACHE_ENTRY_OVERHEAD = 160;
/** A reader more blocks behind than this drops its cache instead of replaying the change sets. */
export const FLAT_CATCHUP_BLOCKS = 256;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS state_accounts (addr BLOB NOT NULL, height INTEGER NOT NULL, v BLOB NOT NULL, PRIMARY KEY (addr, height)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_slots (k BLOB NOT NULL, height INTEGER NOT NULL, v BLOB NOT NULL, PRIMARY KEY (k, height)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_changes (height INTEGER PRIMARY KEY, accounts BLOB NOT NULL, slots BLOB NOT NULL);
`;

const CODE_PREFIX = 0x63; // 'c', ethereumjs' CODEHASH_PREFIX

/** One block's final values: accounts (20-byte address → RLP, empty = gone) and slots (addr ‖ slot → value). */
export interface FlatChange {
  accounts: [Uint8Array, Uint8Array][];
  slots: [Uint8Array, Uint8Array][];
}

interface Entry {
  v: Uint8Array;
  /** the height of the change that set v (-1: never set) */
  from: number;
}

const EMPTY = new Uint8Array(0);
const NONE: Entry = { v: EMPTY, from: -1 };
const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const key = (tag: string, b: Uint8Array) => tag + buf(b).toString('latin1');

export function slotKey(addr: Uint8Array, slot: Uint8Array): Uint8Array {
  const k = new Uint8Array(52);
  k.set(addr, 0);
  k.set(slot, 20);
  return k;
}

export class FlatState {
  private readonly stmts;
  private readonly cache: GenerationalCache<string, Entry>;
  private readonly codes = new Lru<string, Uint8Array>(CODE_CACHE_BYTES, (k, v) => FLAT_CACHE_ENTRY_OVERHEAD + k.length + v.byteLength);
  /** every cache entry is the value at every height in [entry.from, frontier] */
  private frontier: number;

  constructor(
    private readonly store: Store,
    cacheBytes = store.reader ? READER_FLAT_CACHE_BYTES : FLAT_CACHE_BYTES,
  ) {
    if (!store.reader) store.db.exec(SCHEMA);
    this.cache = new GenerationalCache(cacheBytes, (k, e) => FLAT_CACHE_ENTRY_OVERHEAD + k.length + e.v.byteLength);
    const db = store.db;
    this.stmts = {
      acct: db.prepare<[Buffer, number], { height: number; v: Buffer }>(
        'SELECT height, v FROM state_accounts WHERE addr = ? AND height <= ? ORDER BY height DESC LIMIT 1',
      ),
      slot: db.prepare<[Buffer, number], { height: number; v: Buffer }>(
        'SELECT height, v FROM state_slots WHERE k = ? AND height <= ? ORDER BY height DESC LIMIT 1',
      ),
      slotKeys: db.prepare<[Buffer, Buffer], { k: Buffer }>('SELECT DISTINCT k FROM state_slots WHERE k >= ? AND k <= ?'),
      changes: db.prepare<[number], { accounts: Buffer; slots: Buffer }>('SELECT accounts, slots FROM state_changes WHERE height = ?'),
      top: db.prepare<[], { h: number | null }>('SELECT max(height) AS h FROM state_changes'),
      addrs: db.prepare<[], { addr: Buffer }>('SELECT DISTINCT addr FROM state_accounts'),
      low: db.prepare<[], { h: number | null }>('SELECT min(height) AS h FROM state_changes'),
      putAcct: db.prepare('INSERT OR REPLACE INTO state_accounts (addr, height, v) VALUES (?, ?, ?)'),
      putSlot: db.prepare('INSERT OR REPLACE INTO state_slots (k, height, v) VALUES (?, ?, ?)'),
      putChanges: db.prepare('INSERT OR REPLACE INTO state_changes (height, accounts, slots) VALUES (?, ?, ?)'),
      changesAbove: db.prepare<[number], { height: number; accounts: Buffer; slots: Buffer }>(
        'SELECT height, accounts, slots FROM state_changes WHERE height > ?',
      ),
      delAcct: db.prepare('DELETE FROM state_accounts WHERE addr = ? AND height = ?'),
      delSlot: db.prepare('DELETE FROM state_slots WHERE k = ? AND height = ?'),
      delChangesAbove: db.prepare('DELETE FROM state_changes WHERE height > ?'),
    };
    this.frontier = this.top() ?? -1;
  }

  /** the highest height with a change set (undefined: the flat layer is empty) */
  top(): number | undefined {
    return this.stmts.top.get()?.h ?? undefined;
  }

  /** the lowest height the flat layer answers for (above 0 on a home migrated at that height) */
  low(): number | undefined {
    return this.stmts.low.get()?.h ?? undefined;
  }

  /** every address the flat layer has a row for (ferry state verify) */
  addresses(): Uint8Array[] {
    return this.stmts.addrs.all().map((r) => r.addr);
  }

  /** cached entries (for tests and metrics) */
  get cachedBytes(): number {
    return this.cache.weight;
  }

  /** The chain moved to `height` (reader threads): forget what blocks after the frontier changed. */
  follow(height: number): void {
    if (height <= this.frontier) return;
    if (height - this.frontier > FLAT_CATCHUP_BLOCKS) {
      this.cache.clear();
      this.frontier = height;
      return;
    }
    for (let h = this.frontier + 1; h <= height; h++) {
      const row = this.stmts.changes.get(h);
      if (!row) {
        this.cache.clear();
        break;
      }
      for (let i = 0; i < row.accounts.length; i += 20) this.cache.delete('a' + row.accounts.subarray(i, i + 20).toString('latin1'));
      for (let i = 0; i < row.slots.length; i += 52) this.cache.delete('s' + row.slots.subarray(i, i + 52).toString('latin1'));
    }
    this.frontier = height;
  }

  /**
   * The entry at `height`; `fallback` (a fork home: the origin's value at the fork block, docs/fork-mode.md)
   * answers for a key no local block ever wrote — local writes shadow it.
   */
  private lookup(stmt: typeof this.stmts.acct, tag: string, k: Uint8Array, height: number, fallback?: () => Uint8Array): Uint8Array {
    if (height > this.frontier) this.follow(height);
    const ck = key(tag, k);
    const hit = this.cache.get(ck);
    if (hit !== undefined && hit.from <= height) return hit.v;
    const query = (at: number): Entry => {
      const row = stmt.get(buf(k), at);
      return row ? { v: row.v, from: row.height } : NONE;
    };
    if (hit === undefined) {
      const e = query(this.frontier);
      if (e.from <= height) {
        if (e.from === -1 && fallback !== undefined) {
          const v = fallback();
          this.cache.set(ck, { v, from: -1 });
          return v;
        }
        this.cache.set(ck, e);
        return e.v;
      }
    }
    const e = query(height);
    return e.from === -1 && fallback !== undefined ? fallback() : e.v;
  }

  /** The account's RLP at `height` (undefined: no account). */
  account(addr: Uint8Array, height: number): Uint8Array | undefined {
    const fork = this.store.fork;
    const v = this.lookup(this.stmts.acct, 'a', addr, height, fork && (() => fork.account(addr) ?? EMPTY));
    return v.length === 0 ? undefined : v;
  }

  /** The slot's value at `height`, leading zeros stripped (empty: zero). */
  storage(addr: Uint8Array, slot: Uint8Array, height: number): Uint8Array {
    const fork = this.store.fork;
    // only a contract of the origin has storage there (an account the fork created asks nothing)
    const fromOrigin = fork && (() => (fork.hasCode(addr) ? fork.storage(addr, slot) : EMPTY));
    return this.lookup(this.stmts.slot, 's', slotKey(addr, slot), height, fromOrigin);
  }

  /** Slots of `addr` with a non-zero value at `height` (wiping an account's storage). */
  slotsOf(addr: Uint8Array, height: number): Uint8Array[] {
    const lo = slotKey(addr, new Uint8Array(32));
    const hi = slotKey(addr, new Uint8Array(32).fill(0xff));
    return this.stmts.slotKeys
      .all(buf(lo), buf(hi))
      .map((r) => r.k.subarray(20))
      .filter((slot) => this.storage(addr, slot, height).length > 0);
  }

  /** Contract code by hash (content-addressed, in the trie table). */
  code(hash: Uint8Array): Uint8Array | undefined {
    const ck = buf(hash).toString('latin1');
    const hit = this.codes.get(ck);
    if (hit !== undefined) return hit;
    const k = new Uint8Array(33);
    k[0] = CODE_PREFIX;
    k.set(hash, 1);
    const v = this.store.trieGet(buf(k)) ?? this.store.fork?.code(hash);
    if (v === undefined) return undefined;
    this.codes.set(ck, v);
    return v;
  }

  /** Empties the flat layer (before rebuilding it). */
  clearAll(): void {
    this.store.db.exec('DELETE FROM state_accounts; DELETE FROM state_slots; DELETE FROM state_changes;');
    this.cache.clear();
    this.frontier = -1;
  }

  /**
   * Dev revert: deletes the rows every block above `height` wrote (its change set names them), so the
   * latest value of every key is again the one as of `height`. Call inside the rewinding store
   * transaction, then forget(height) on every FlatState of the database.
   */
  rewindTo(height: number): void {
    for (const row of this.stmts.changesAbove.all(height)) {
      for (let i = 0; i < row.accounts.length; i += 20) this.stmts.delAcct.run(row.accounts.subarray(i, i + 20), row.height);
      for (let i = 0; i < row.slots.length; i += 52) this.stmts.delSlot.run(row.slots.subarray(i, i + 52), row.height);
    }
    this.stmts.delChangesAbove.run(height);
  }

  /**
   * The chain was rewound to `height` (dev revert): cached entries may hold values of rewound blocks,
   * and the heights above will be written again. Drops the cache and moves the frontier back.
   */
  forget(height: number): void {
    this.cache.clear();
    this.frontier = height;
  }

  /** Writes one block's change set (call inside the block's store transaction). */
  write(height: number, change: FlatChange): void {
    for (const [addr, v] of change.accounts) this.stmts.putAcct.run(buf(addr), height, buf(v));
    for (const [k, v] of change.slots) this.stmts.putSlot.run(buf(k), height, buf(v));
    this.stmts.putChanges.run(
      height,
      Buffer.concat(change.accounts.map(([a]) => a)),
      Buffer.concat(change.slots.map(([k]) => k)),
    );
  }

  /** After the block transaction committed (the writer): the new values become the cached latest. */
  applied(height: number, change: FlatChange): void {
    if (height !== this.frontier + 1) this.cache.clear();
    this.frontier = height;
    for (const [addr, v] of change.accounts) this.cache.set(key('a', addr), { v, from: height });
    for (const [k, v] of change.slots) this.cache.set(key('s', k), { v, from: height });
  }
}
