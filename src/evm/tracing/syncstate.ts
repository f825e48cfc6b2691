/**
 * Synchronous state reads for JS tracers. QuickJS calls host functions synchronously, but the
 * ethereumjs state manager is async, so `db.getBalance(...)` and friends read here instead: first
 * the state manager's caches (which hold every write of the block replay and of the running tx),
 * then a plain Merkle-Patricia walk over trie nodes fetched by a synchronous node reader.
 */
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { RLP } from '@ethereumjs/rlp';
import { Address, KECCAK256_NULL, createAccountFromRLP, type Account } from '@ethereumjs/util';
import { keccak256 } from '../common.js';

/** trie node (or code) by its database key */
export type NodeReader = (key: Uint8Array) => Uint8Array | undefined;

const CODEHASH_PREFIX = Uint8Array.of(0x63); // 'c', ethereumjs' code key prefix

type Node = Uint8Array | Node[];

function nibbles(key: Uint8Array): number[] {
  const out = new Array<number>(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    out[2 * i] = key[i]! >> 4;
    out[2 * i + 1] = key[i]! & 15;
  }
  return out;
}

/** Looks `key` up in the trie under `root`; undefined when absent. */
export function trieGet(read: NodeReader, root: Uint8Array, key: Uint8Array): Uint8Array | undefined {
  if (root.length === 32 && root.every((b, i) => b === EMPTY_ROOT[i])) return undefined;
  const path = nibbles(key);
  let pos = 0;
  let node: Node | undefined = resolve(read, root);
  while (node !== undefined) {
    if (!Array.isArray(node)) return undefined;
    if (node.length === 17) {
      if (pos === path.length) return nonEmpty(node[16] as Uint8Array);
      node = child(read, node[path[pos++]!]!);
      continue;
    }
    const hp = nibbles(node[0] as Uint8Array);
    const flag = hp[0]!;
    const seg = hp.slice(flag & 1 ? 1 : 2);
    for (let i = 0; i < seg.length; i++) if (path[pos + i] !== seg[i]) return undefined;
    pos += seg.length;
    if (flag >= 2) return pos === path.length ? (node[1] as Uint8Array) : undefined;
    node = child(read, node[1]!);
  }
  return undefined;
}

const EMPTY_ROOT = keccak256(RLP.encode(new Uint8Array()));

function nonEmpty(b: Uint8Array): Uint8Array | undefined {
  return b.length === 0 ? undefined : b;
}

function resolve(read: NodeReader, hash: Uint8Array): Node | undefined {
  const raw = read(hash);
  return raw === undefined ? undefined : (RLP.decode(raw) as Node);
}

function child(read: NodeReader, ref: Node): Node | undefined {
  if (Array.isArray(ref)) return ref;
  if (ref.length === 0) return undefined;
  return ref.length === 32 ? resolve(read, ref) : (RLP.decode(ref) as Node);
}

interface Caches {
  account?: { get(a: Address): { accountRLP: Uint8Array | undefined } | undefined };
  storage?: { get(a: Address, k: Uint8Array): Uint8Array | undefined };
  code?: { get(a: Address): { code: Uint8Array | undefined } | undefined };
}

export class SyncState {
  constructor(
    private readonly sm: MerkleStateManager,
    private readonly read: NodeReader,
  ) {}

  private get caches(): Caches {
    return ((this.sm as unknown as { _caches?: Caches })._caches ?? {}) as Caches;
  }

  private root(): Uint8Array {
    return (this.sm as unknown as { _trie: { root(): Uint8Array } })._trie.root();
  }

  account(addr: Uint8Array): Account | undefined {
    const a = new Address(addr);
    const hit = this.caches.account?.get(a);
    if (hit !== undefined) return hit.accountRLP === undefined ? undefined : createAccountFromRLP(hit.accountRLP);
    const rlp = trieGet(this.read, this.root(), keccak256(addr));
    return rlp === undefined ? undefined : createAccountFromRLP(rlp);
  }

  code(addr: Uint8Array): Uint8Array {
    const hit = this.caches.code?.get(new Address(addr));
    if (hit !== undefined) return hit.code ?? new Uint8Array();
    const acct = this.account(addr);
    if (!acct || acct.codeHash.every((b, i) => b === KECCAK256_NULL[i])) return new Uint8Array();
    const key = new Uint8Array(33);
    key.set(CODEHASH_PREFIX);
    key.set(acct.codeHash, 1);
    return this.read(key) ?? new Uint8Array();
  }

  /** 32-byte value of a 32-byte slot */
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    const out = new Uint8Array(32);
    let raw: Uint8Array | undefined = this.caches.storage?.get(new Address(addr), slot);
    if (raw === undefined) {
      const acct = this.account(addr);
      if (!acct) return out;
      raw = trieGet(this.read, acct.storageRoot, keccak256(slot));
    }
    if (raw === undefined || raw.length === 0) return out;
    const v = RLP.decode(raw) as Uint8Array;
    out.set(v.subarray(Math.max(0, v.length - 32)), 32 - Math.min(32, v.length));
    return out;
  }
}
