/**
 * A block's changes applied to a stored Merkle-Patricia trie in one batch: every touched path is
 * loaded once, all puts and deletes are applied to the nodes in memory, and only then is each changed
 * node encoded and hashed — once, bottom-up. ethereumjs' MPT re-encodes and re-hashes the whole path
 * on every put and writes each intermediate version, which the block's commit then had to sort out
 * (only the final nodes are reachable from the new root). The trie's shape is canonical for its key
 * set, so the root is the same as after the same puts and deletes on the MPT, in any order
 * (test/unit/trie-update.test.ts checks it against ethereumjs over random batches).
 */
import { keccak256 } from './common.js';
import { rlpDecodeView, rlpEncode, type RlpItem } from './rlpwrite.js';
import { EMPTY_TRIE_ROOT, hexPrefix, toNibbles } from './orderedtrie.js';
import { concatBytes, equalBytes } from '../lib/bytes.js';

/** Where the nodes live: stored node encodings by hash, and new ones written by hash. */
export interface TrieNodeStore {
  /** the encoding of the node with this hash (undefined: not stored) */
  node(hash: Uint8Array): Uint8Array | undefined;
  putNode(hash: Uint8Array, encoded: Uint8Array): void;
}

/** a child: absent, a stored node not loaded yet (its 32-byte hash), or a node in memory */
type Ref = Node | Uint8Array | undefined;
/** `h`: the hash the node is stored under, while it is unchanged (a node in memory without it was changed or is embedded) */
interface Leaf {
  t: 0;
  path: Uint8Array;
  value: Uint8Array;
  h?: Uint8Array;
}
interface Ext {
  t: 1;
  path: Uint8Array;
  child: Ref;
  h?: Uint8Array;
}
interface Branch {
  t: 2;
  kids: Ref[];
  value: Uint8Array | undefined;
  h?: Uint8Array;
}
type Node = Leaf | Ext | Branch;

const EMPTY = new Uint8Array(0);

/** The nibbles of a hex-prefix encoded path and whether it ends in a leaf. */
function fromHexPrefix(hp: Uint8Array): { path: Uint8Array; leaf: boolean } {
  const flag = hp[0]! >> 4;
  const odd = (flag & 1) === 1;
  const path = new Uint8Array((hp.length - 1) * 2 + (odd ? 1 : 0));
  let o = 0;
  if (odd) path[o++] = hp[0]! & 15;
  for (let i = 1; i < hp.length; i++) {
    path[o++] = hp[i]! >> 4;
    path[o++] = hp[i]! & 15;
  }
  return { path, leaf: flag >= 2 };
}

function parse(raw: readonly RlpItem[], h?: Uint8Array): Node {
  if (raw.length === 17) {
    const kids: Ref[] = new Array(16);
    for (let i = 0; i < 16; i++) kids[i] = childRef(raw[i]!);
    const v = raw[16] as Uint8Array;
    return { t: 2, kids, value: v.length > 0 ? v : undefined, h };
  }
  if (raw.length !== 2) throw new Error(`invalid trie node: a list of ${raw.length} items`);
  const { path, leaf } = fromHexPrefix(raw[0] as Uint8Array);
  return leaf ? { t: 0, path, value: raw[1] as Uint8Array, h } : { t: 1, path, child: childRef(raw[1]!), h };
}

function childRef(raw: RlpItem): Ref {
  if (!(raw instanceof Uint8Array)) return parse(raw);
  const b = raw as Uint8Array;
  return b.length === 0 ? undefined : b;
}

function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

const leafNode = (path: Uint8Array, value: Uint8Array): Leaf => ({ t: 0, path, value });
const extNode = (path: Uint8Array, child: Ref): Ext => ({ t: 1, path, child });

class TrieBatch {
  constructor(private readonly store: TrieNodeStore) {}

  load(ref: Ref): Node | undefined {
    if (!(ref instanceof Uint8Array)) return ref;
    const enc = this.store.node(ref);
    if (enc === undefined) throw new Error(`missing trie node ${Buffer.from(ref).toString('hex')}`);
    const raw = rlpDecodeView(enc);
    if (raw instanceof Uint8Array) throw new Error(`invalid trie node ${Buffer.from(ref).toString('hex')}: not a list`);
    return parse(raw, ref);
  }

  /** the child at `i` of a branch, loaded (and kept loaded in the branch) */
  kid(b: Branch, i: number): Node | undefined {
    const n = this.load(b.kids[i]);
    b.kids[i] = n;
    return n;
  }

  extChild(e: Ext): Node | undefined {
    const n = this.load(e.child);
    e.child = n;
    return n;
  }

  /** `node` with `key[d..]` set to `value`; the same object when nothing changed */
  put(node: Node | undefined, key: Uint8Array, d: number, value: Uint8Array): Node {
    const rest = key.subarray(d);
    if (node === undefined) return leafNode(rest, value);
    if (node.t === 0) {
      if (equalBytes(node.path, rest)) return equalBytes(node.value, value) ? node : leafNode(node.path, value);
      const c = commonPrefix(node.path, rest);
      const br: Branch = { t: 2, kids: new Array<Ref>(16).fill(undefined), value: undefined };
      if (node.path.length === c) br.value = node.value;
      else br.kids[node.path[c]!] = leafNode(node.path.subarray(c + 1), node.value);
      if (rest.length === c) br.value = value;
      else br.kids[rest[c]!] = leafNode(rest.subarray(c + 1), value);
      return c > 0 ? extNode(rest.subarray(0, c), br) : br;
    }
    if (node.t === 1) {
      const c = commonPrefix(node.path, rest);
      if (c === node.path.length) {
        const old = this.extChild(node);
        const child = this.put(old, key, d + c, value);
        return child === old ? node : extNode(node.path, child);
      }
      const br: Branch = { t: 2, kids: new Array<Ref>(16).fill(undefined), value: undefined };
      br.kids[node.path[c]!] = node.path.length === c + 1 ? node.child : extNode(node.path.subarray(c + 1), node.child);
      if (rest.length === c) br.value = value;
      else br.kids[rest[c]!] = leafNode(rest.subarray(c + 1), value);
      return c > 0 ? extNode(rest.subarray(0, c), br) : br;
    }
    if (rest.length === 0) {
      if (node.value !== undefined && equalBytes(node.value, value)) return node;
      return { t: 2, kids: node.kids.slice(), value };
    }
    const i = rest[0]!;
    const old = this.kid(node, i);
    const child = this.put(old, key, d + 1, value);
    if (child === old) return node;
    const kids = node.kids.slice();
    kids[i] = child;
    return { t: 2, kids, value: node.value };
  }

  /** `node` without `key[d..]`; the same object when the key is absent */
  del(node: Node | undefined, key: Uint8Array, d: number): Node | undefined {
    if (node === undefined) return undefined;
    const rest = key.subarray(d);
    if (node.t === 0) return equalBytes(node.path, rest) ? undefined : node;
    if (node.t === 1) {
      if (commonPrefix(node.path, rest) !== node.path.length) return node;
      const old = this.extChild(node);
      const child = this.del(old, key, d + node.path.length);
      if (child === old) return node;
      return child === undefined ? undefined : this.prefixed(node.path, child);
    }
    let kids = node.kids;
    let value = node.value;
    if (rest.length === 0) {
      if (value === undefined) return node;
      value = undefined;
    } else {
      const i = rest[0]!;
      const old = this.kid(node, i);
      if (old === undefined) return node;
      const child = this.del(old, key, d + 1);
      if (child === old) return node;
      kids = kids.slice();
      kids[i] = child;
    }
    // a branch keeps at least two entries: with one left it becomes that entry, one nibble longer
    let only = -1;
    let count = value === undefined ? 0 : 1;
    for (let i = 0; i < 16; i++) {
      if (kids[i] !== undefined) {
        count++;
        only = i;
      }
    }
    if (count >= 2) return { t: 2, kids, value };
    if (count === 0) return undefined;
    if (value !== undefined) return leafNode(EMPTY, value);
    const b: Branch = { t: 2, kids, value };
    return this.prefixed(Uint8Array.of(only), this.kid(b, only)!);
  }

  /** `child` reached through `prefix` more nibbles: merged into a leaf or extension, or under a new extension */
  private prefixed(prefix: Uint8Array, child: Node): Node {
    if (child.t === 0) return leafNode(concatBytes(prefix, child.path), child.value);
    if (child.t === 1) return extNode(concatBytes(prefix, child.path), child.child);
    return extNode(prefix, child);
  }

  /** what a parent holds for `ref`: its hash (new nodes of 32 bytes or more are hashed and stored), or an embedded node's list */
  ref(ref: Ref): RlpItem {
    if (ref === undefined) return EMPTY;
    if (ref instanceof Uint8Array) return ref;
    if (ref.h !== undefined) return ref.h;
    const raw = this.raw(ref);
    const enc = rlpEncode(raw);
    if (enc.length < 32) return raw;
    const h = keccak256(enc);
    this.store.putNode(h, enc);
    ref.h = h;
    return h;
  }

  raw(n: Node): RlpItem[] {
    if (n.t === 0) return [hexPrefix(n.path, true), n.value];
    if (n.t === 1) return [hexPrefix(n.path, false), this.ref(n.child)];
    const out: RlpItem[] = new Array(17);
    for (let i = 0; i < 16; i++) out[i] = this.ref(n.kids[i]);
    out[16] = n.value ?? EMPTY;
    return out;
  }
}

/**
 * Applies `updates` (trie key → value; undefined deletes the key) to the trie with root `root` and
 * returns the new root. Only the nodes of the new trie that did not exist before are written to
 * `store` (the root always, as ethereumjs stores it); untouched subtrees are never loaded. Keys are
 * used as given (a secure trie's caller passes keccak256 of the address or slot).
 */
export function updateTrie(store: TrieNodeStore, root: Uint8Array, updates: Iterable<readonly [Uint8Array, Uint8Array | undefined]>): Uint8Array {
  const batch = new TrieBatch(store);
  let top = equalBytes(root, EMPTY_TRIE_ROOT) ? undefined : batch.load(root);
  for (const [key, value] of updates) {
    const nibbles = toNibbles(key);
    top = value === undefined || value.length === 0 ? batch.del(top, nibbles, 0) : batch.put(top, nibbles, 0, value);
  }
  if (top === undefined) return EMPTY_TRIE_ROOT;
  if (top.h !== undefined) return top.h;
  const enc = rlpEncode(batch.raw(top));
  const h = keccak256(enc);
  store.putNode(h, enc);
  return h;
}
