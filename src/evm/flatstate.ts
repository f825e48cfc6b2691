/**
 * ethereumjs' StateManagerInterface over the flat state layer (store/flatstate.ts): execution, CheckTx,
 * eth_call and the state getters read accounts, slots and code by key at a height, never walking the
 * trie. Writes go to an in-memory journal (an undo log per checkpoint, so revert is as cheap as the
 * writes it undoes). At block end `commitToTrie` applies the block's final values to the Merkle
 * trie — the trie only computes the state root (the app hash) and serves proofs — and returns the
 * flat change set the block writes beside its trie nodes.
 *
 * Semantics follow MerkleStateManager with caches exactly (the state roots must not change):
 * clearStorage empties an account's storage and sets its storageRoot to the empty root (creating the
 * account if absent), deleteAccount drops the account with its storage, putStorage on a missing account
 * throws, storage values are kept with leading zeros stripped, an account's storageRoot is recomputed at
 * block end from the storage trie of the root it carries.
 */
import type { AccountFields, StateManagerInterface } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import { OriginalStorageCache } from '@ethereumjs/statemanager';
import { Account, Address, KECCAK256_NULL, KECCAK256_RLP, createAccountFromRLP, setLengthLeft, unpadBytes } from '@ethereumjs/util';
import { slotKey, type FlatChange, type FlatState } from '../store/flatstate.js';
import { keccak256 } from './common.js';
import { hashedTrieRoot, type NodeSink } from './orderedtrie.js';
import { accountRlp, rlpEncode } from './rlpwrite.js';
import { updateTrie, type TrieNodeStore } from './trieupdate.js';

const EMPTY = new Uint8Array(0);
const CODE_PREFIX = 0x63; // 'c'

/** a storage record of the journal: `cleared` — nothing below the journal counts (created / wiped) */
interface SlotRecord {
  cleared: boolean;
  slots: Map<string, Uint8Array>;
}

/**
 * A journaled account: the RLP it was read as, or the fields a putAccount gave — encoded only when the
 * block ends (commitToTrie). ethereumjs puts the same accounts several times per tx (the sender's nonce
 * and fee, the value transfer, the refund, the coinbase's fee), so encoding each put was wasted work
 * (docs/benchmarks.md "ERC-20 execution on the chain thread").
 */
type Journaled = Uint8Array | AccountFieldsOf;

type Undo =
  | { t: 0; k: string; prev: Journaled | null | undefined }
  | { t: 1; k: string; s: string; prev: Uint8Array | undefined }
  | { t: 2; k: string; prev: SlotRecord | undefined };

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const bytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

/**
 * The decoded fields of account RLPs this thread has seen, by the RLP array: the flat layer's cache and
 * the journal hand out the same array for as long as they hold it, and ethereumjs asks for the same
 * account many times per tx, wanting a fresh Account each time (it changes and puts it back).
 */
export type AccountFieldsOf = readonly [nonce: bigint, balance: bigint, storageRoot: Uint8Array, codeHash: Uint8Array];
const decoded = new WeakMap<Uint8Array, AccountFieldsOf>();

function accountOf(e: Journaled): Account {
  const f = fieldsOfJournaled(e);
  return new Account(f[0], f[1], f[2], f[3]);
}

function fieldsOfJournaled(e: Journaled): AccountFieldsOf {
  return e instanceof Uint8Array ? fieldsOf(e) : e;
}

/** the account's RLP as the trie stores it (its encoding is canonical) */
function rlpOfJournaled(e: Journaled): Uint8Array {
  return e instanceof Uint8Array ? e : accountRlp(e[0], e[1], e[2], e[3]);
}

/** the decoded fields of an account RLP, decoded once and kept while the RLP lives */
function fieldsOf(rlp: Uint8Array): AccountFieldsOf {
  let f = decoded.get(rlp);
  if (f === undefined) {
    const a = createAccountFromRLP(rlp);
    f = [a.nonce, a.balance, a.storageRoot, a.codeHash];
    decoded.set(rlp, f);
  }
  return f;
}

export class FlatStateManager implements StateManagerInterface {
  /** address hex → account RLP (null: deleted) written since `at` */
  private accounts = new Map<string, Journaled | null>();
  private storage = new Map<string, SlotRecord>();
  /** code hash hex → code put since `at` */
  private codes = new Map<string, Uint8Array>();
  private undo: Undo[][] = [];
  /** accounts read from the flat layer during the current outermost checkpoint (null: none) */
  private reads = new Map<string, Uint8Array | null>();
  private _height = -1;
  readonly originalStorageCache: OriginalStorageCache;

  constructor(readonly flat: FlatState) {
    this.originalStorageCache = new OriginalStorageCache(this.getStorage.bind(this));
  }

  /** the height whose state this reads (-1: the empty state before genesis) */
  get height(): number {
    return this._height;
  }

  /** Moves to the state after block `height`, dropping everything journaled. */
  at(height: number): void {
    this.accounts = new Map();
    this.storage = new Map();
    this.codes = new Map();
    this.undo = [];
    this.reads = new Map();
    this.originalStorageCache.clear();
    this._height = height;
  }

  /** journaled writes (for tests) */
  get dirty(): number {
    return this.accounts.size + this.storage.size;
  }

  private record(u: Undo): void {
    const top = this.undo[this.undo.length - 1];
    if (top !== undefined) top.push(u);
  }

  private entryOf(k: string, addr: Uint8Array): Journaled | undefined {
    const j = this.accounts.get(k);
    if (j !== undefined) return j ?? undefined;
    const r = this.reads.get(k);
    if (r !== undefined) return r ?? undefined;
    const v = this.flat.account(addr, this._height);
    this.reads.set(k, v ?? null);
    return v;
  }

  private setAccount(k: string, v: Journaled | null): void {
    this.record({ t: 0, k, prev: this.accounts.get(k) });
    this.accounts.set(k, v);
  }

  private setRecord(k: string, rec: SlotRecord): void {
    this.record({ t: 2, k, prev: this.storage.get(k) });
    this.storage.set(k, rec);
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    return this.accountSync(address.bytes);
  }

  /** The account as the running code sees it (journal first), synchronously (JS tracers' `db`). */
  accountSync(addr: Uint8Array): Account | undefined {
    const e = this.entryOf(hex(addr), addr);
    return e === undefined ? undefined : accountOf(e);
  }

  /** the account's [nonce, balance, storageRoot, codeHash] as the running code sees it, without making an Account (evm/revmtx.ts) */
  accountFieldsSync(addr: Uint8Array): AccountFieldsOf | undefined {
    const e = this.entryOf(hex(addr), addr);
    return e === undefined ? undefined : fieldsOfJournaled(e);
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    if (account === undefined) return this.deleteAccount(address);
    const { nonce, balance, storageRoot, codeHash } = account;
    // what encoding would refuse (rlpwrite.ts unpaddedBytes), refused at the put as before
    if (nonce < 0n || balance < 0n) throw new RangeError(`cannot encode a negative integer (${nonce < 0n ? nonce : balance}) in RLP`);
    this.setAccount(hex(address.bytes), [nonce, balance, storageRoot, codeHash]);
  }

  async deleteAccount(address: Address): Promise<void> {
    const k = hex(address.bytes);
    this.setAccount(k, null);
    this.setRecord(k, { cleared: true, slots: new Map() });
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const acct = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) acct.nonce = fields.nonce;
    if (fields.balance !== undefined) acct.balance = fields.balance;
    if (fields.storageRoot !== undefined) acct.storageRoot = fields.storageRoot;
    if (fields.codeHash !== undefined) acct.codeHash = fields.codeHash;
    await this.putAccount(address, acct);
  }

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const codeHash = keccak256(value);
    this.codes.set(hex(codeHash), value);
    await this.modifyAccountFields(address, { codeHash });
  }

  async getCode(address: Address): Promise<Uint8Array> {
    return this.codeSync(address.bytes);
  }

  codeSync(addr: Uint8Array): Uint8Array {
    const acct = this.accountSync(addr);
    if (!acct || !acct.isContract()) return new Uint8Array(0);
    return this.codes.get(hex(acct.codeHash)) ?? this.flat.code(acct.codeHash) ?? new Uint8Array(0);
  }

  /** code by its hash: put in this block, or committed (empty when unknown) */
  codeByHashSync(hash: Uint8Array): Uint8Array {
    return this.codes.get(hex(hash)) ?? this.flat.code(hash) ?? EMPTY;
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    return this.storageSync(address.bytes, key);
  }

  /** a slot's value (leading zeros stripped), synchronously */
  storageSync(addr: Uint8Array, key: Uint8Array): Uint8Array {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long');
    const k = hex(addr);
    const rec = this.storage.get(k);
    if (rec !== undefined) {
      const v = rec.slots.get(hex(key));
      if (v !== undefined) return v;
      if (rec.cleared) return EMPTY;
    }
    if (this.entryOf(k, addr) === undefined) return EMPTY;
    return this.flat.storage(addr, key, this._height);
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long');
    if (value.length > 32) throw new Error('Storage value cannot be longer than 32 bytes');
    const k = hex(address.bytes);
    if (this.entryOf(k, address.bytes) === undefined) throw new Error('putStorage() called on non-existing account');
    let rec = this.storage.get(k);
    if (rec === undefined) {
      rec = { cleared: false, slots: new Map() };
      this.setRecord(k, rec);
    }
    const s = hex(key);
    this.record({ t: 1, k, s, prev: rec.slots.get(s) });
    rec.slots.set(s, unpadBytes(value));
  }

  async clearStorage(address: Address): Promise<void> {
    const acct = (await this.getAccount(address)) ?? new Account();
    acct.storageRoot = KECCAK256_RLP;
    await this.putAccount(address, acct);
    this.setRecord(hex(address.bytes), { cleared: true, slots: new Map() });
  }

  async checkpoint(): Promise<void> {
    this.undo.push([]);
  }

  /** how many checkpoints are open (evm/blockexec.ts reverts those a throwing tx left) */
  get openCheckpoints(): number {
    return this.undo.length;
  }

  async commit(): Promise<void> {
    const top = this.undo.pop();
    if (top === undefined) throw new Error('commit without checkpoint');
    const parent = this.undo[this.undo.length - 1];
    if (parent !== undefined) for (const u of top) parent.push(u);
    else {
      this.originalStorageCache.clear();
      this.reads = new Map();
    }
  }

  async revert(): Promise<void> {
    const top = this.undo.pop();
    if (top === undefined) throw new Error('revert without checkpoint');
    for (let i = top.length - 1; i >= 0; i--) {
      const u = top[i]!;
      if (u.t === 0) {
        if (u.prev === undefined) this.accounts.delete(u.k);
        else this.accounts.set(u.k, u.prev);
      } else if (u.t === 1) {
        const rec = this.storage.get(u.k)!;
        if (u.prev === undefined) rec.slots.delete(u.s);
        else rec.slots.set(u.s, u.prev);
      } else if (u.prev === undefined) this.storage.delete(u.k);
      else this.storage.set(u.k, u.prev);
    }
    if (this.undo.length === 0) {
      this.originalStorageCache.clear();
      this.reads = new Map();
    }
  }

  /** the root of the last commitToTrie */
  private root: Uint8Array | undefined;

  async getStateRoot(): Promise<Uint8Array> {
    if (this.root === undefined) throw new Error('flat state: no state root computed yet');
    return this.root;
  }

  async setStateRoot(): Promise<void> {
    throw new Error('flat state: move by height (at), not by root');
  }

  async hasStateRoot(): Promise<boolean> {
    throw new Error('flat state: roots live in the trie');
  }

  clearCaches(): void {}

  shallowCopy(): FlatStateManager {
    const copy = new FlatStateManager(this.flat);
    copy.at(this._height);
    return copy;
  }

  /**
   * Applies the journal (no open checkpoint) to the trie whose state root is `parentRoot` (the state
   * of `height`), writing the new nodes to `nodes` — each storage trie, then the account trie, each in
   * one batch (evm/trieupdate.ts) — and returns the new root and the flat change set. The journal is
   * left as is: `at(next)` after the block is stored.
   */
  commitToTrie(nodes: TrieNodeStore, parentRoot: Uint8Array): { root: Uint8Array; change: FlatChange; codes: [Uint8Array, Uint8Array][] } {
    if (this.undo.length > 0) throw new Error('commitToTrie with an open checkpoint');
    const change: FlatChange = { accounts: [], slots: [] };
    const usedCodes = new Set<string>();
    const accountUpdates: [Uint8Array, Uint8Array | undefined][] = [];
    const keys = new Set([...this.accounts.keys(), ...this.storage.keys()]);
    for (const k of [...keys].sort()) {
      const addr = bytes(k);
      const entry = this.entryOf(k, addr);
      const rec = this.storage.get(k);
      const before = this.flat.account(addr, this._height);
      const slotRows: [Uint8Array, Uint8Array][] = [];
      if (rec?.cleared) {
        for (const slot of this.flat.slotsOf(addr, this._height)) {
          if (!rec.slots.has(hex(slot))) slotRows.push([slotKey(addr, slot), EMPTY]);
        }
      }
      if (entry === undefined) {
        if (before !== undefined) {
          accountUpdates.push([keccak256(addr), undefined]);
          change.accounts.push([addr, EMPTY]);
        }
        change.slots.push(...slotRows);
        continue;
      }
      if (rec === undefined) {
        // storage untouched: the journal's RLP is the account as the trie stores it (its encoding is canonical)
        usedCodes.add(hex(fieldsOfJournaled(entry)[3]));
        const rlp = rlpOfJournaled(entry);
        if (before === undefined || Buffer.compare(before, rlp) !== 0) {
          accountUpdates.push([keccak256(addr), rlp]);
          change.accounts.push([addr, rlp]);
        }
        change.slots.push(...slotRows);
        continue;
      }
      const [nonce, balance, storageRoot, codeHash] = fieldsOfJournaled(entry);
      const slotUpdates: [Uint8Array, Uint8Array | undefined][] = [];
      for (const [s, v] of rec.slots) {
        const slot = bytes(s);
        slotUpdates.push([keccak256(slot), v.length > 0 ? rlpEncode(v) : undefined]);
        if (rec.cleared || v.length > 0 || this.flat.storage(addr, slot, this._height).length > 0) {
          slotRows.push([slotKey(addr, slot), v]);
        }
      }
      const newRoot = updateTrie(nodes, rec.cleared ? KECCAK256_RLP : storageRoot, slotUpdates);
      usedCodes.add(hex(codeHash));
      const out = accountRlp(nonce, balance, newRoot, codeHash);
      if (before === undefined || Buffer.compare(before, out) !== 0) {
        accountUpdates.push([keccak256(addr), out]);
        change.accounts.push([addr, out]);
      }
      change.slots.push(...slotRows);
    }
    const codes: [Uint8Array, Uint8Array][] = [];
    for (const [h, code] of this.codes) {
      if (!usedCodes.has(h)) continue;
      const key = new Uint8Array(33);
      key[0] = CODE_PREFIX;
      key.set(bytes(h), 1);
      codes.push([key, code]);
    }
    this.root = updateTrie(nodes, parentRoot, accountUpdates);
    return { root: this.root, change, codes };
  }
}

/** One genesis account, as the genesis file gives it (storage: 0x + 64 hex slot → 32-byte value). */
export interface GenesisAccount {
  balance: bigint;
  nonce: bigint;
  code?: Uint8Array;
  storage?: Map<string, Uint8Array>;
}

/**
 * The genesis state written directly: each storage trie and then the account trie built in one pass
 * over the sorted hashed keys (evm/orderedtrie.ts), every node handed to `sink` once. Same root and
 * same flat change set as putting the accounts through FlatStateManager and commitToTrie, at a
 * fraction of the time and memory, so a genesis of a million accounts is practical.
 */
export function genesisState(
  alloc: Map<string, GenesisAccount>,
  sink: NodeSink,
): { root: Uint8Array; change: FlatChange; codes: [Uint8Array, Uint8Array][] } {
  const change: FlatChange = { accounts: [], slots: [] };
  const codes: [Uint8Array, Uint8Array][] = [];
  const accounts: { key: Uint8Array; value: Uint8Array }[] = [];
  for (const addrHex of [...alloc.keys()].sort()) {
    const acc = alloc.get(addrHex)!;
    const addr = bytes(addrHex.slice(2));
    const slots: { key: Uint8Array; value: Uint8Array }[] = [];
    for (const [slotHex, value] of acc.storage ?? []) {
      const v = unpadBytes(value);
      if (v.length === 0) continue;
      const slot = setLengthLeft(bytes(slotHex.slice(2)), 32);
      slots.push({ key: keccak256(slot), value: RLP.encode(v) });
      change.slots.push([slotKey(addr, slot), v]);
    }
    let codeHash = KECCAK256_NULL;
    if (acc.code && acc.code.length > 0) {
      codeHash = keccak256(acc.code);
      const key = new Uint8Array(33);
      key[0] = CODE_PREFIX;
      key.set(codeHash, 1);
      codes.push([key, acc.code]);
    }
    const rlp = new Account(acc.nonce, acc.balance, hashedTrieRoot(slots, sink), codeHash).serialize();
    accounts.push({ key: keccak256(addr), value: rlp });
    change.accounts.push([addr, rlp]);
  }
  return { root: hashedTrieRoot(accounts, sink), change, codes };
}
