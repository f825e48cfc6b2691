/**
 * Merkle-Patricia tries built in one pass over sorted keys, so every node is encoded and hashed
 * exactly once (ethereumjs' MPT rehashes and rewrites the path on every put, which dominated block
 * time and genesis): the ordered tries of a block (transactionsRoot, receiptsRoot: keys rlp(index)),
 * and whole secure tries (keys already hashed) with their nodes handed to a sink — the genesis state.
 */
import { RLP } from '@ethereumjs/rlp';
import { keccak256 } from './common.js';
import { rlpEncode, type RlpItem } from './rlpwrite.js';

const EMPTY = new Uint8Array(0);

type Nibbles = ArrayLike<number> & { slice(start?: number, end?: number): ArrayLike<number> };
/** receives each node stored by hash: its hash and its encoding */
export type NodeSink = (hash: Uint8Array, encoded: Uint8Array) => void;

export function toNibbles(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length * 2);
  for (let i = 0; i < b.length; i++) {
    out[2 * i] = b[i]! >> 4;
    out[2 * i + 1] = b[i]! & 15;
  }
  return out;
}

/** hex-prefix encoding of a nibble path (Yellow Paper appendix C) */
export function hexPrefix(path: ArrayLike<number>, leaf: boolean): Uint8Array {
  const odd = path.length % 2 === 1;
  const flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  const out = new Uint8Array(Math.floor(path.length / 2) + 1);
  let i = 0;
  if (odd) {
    out[0] = (flag << 4) | path[0]!;
    i = 1;
  } else out[0] = flag << 4;
  for (let o = 1; i < path.length; i += 2, o++) out[o] = (path[i]! << 4) | path[i + 1]!;
  return out;
}

/** A node as the parent embeds it: the raw list when its encoding is < 32 bytes, else its hash. */
function ref(node: RlpItem[], sink?: NodeSink): RlpItem {
  const enc = rlpEncode(node);
  if (enc.length < 32) return node;
  const h = keccak256(enc);
  sink?.(h, enc);
  return h;
}

function build(items: { key: Nibbles; value: Uint8Array }[], depth: number, sink?: NodeSink): RlpItem[] {
  if (items.length === 1) return [hexPrefix(items[0]!.key.slice(depth), true), items[0]!.value];
  // longest common prefix beyond depth
  let common = 0;
  const first = items[0]!.key;
  outer: for (;;) {
    const d = depth + common;
    if (d >= first.length) break;
    for (const it of items) if (it.key.length <= d || it.key[d] !== first[d]) break outer;
    common++;
  }
  if (common > 0) return [hexPrefix(first.slice(depth, depth + common), false), ref(build(items, depth + common, sink), sink)];
  const branch: RlpItem[] = new Array<RlpItem>(17).fill(EMPTY);
  const groups: { key: Nibbles; value: Uint8Array }[][] = Array.from({ length: 16 }, () => []);
  for (const it of items) {
    if (it.key.length === depth) branch[16] = it.value;
    else groups[it.key[depth]!]!.push(it);
  }
  for (let n = 0; n < 16; n++) if (groups[n]!.length > 0) branch[n] = ref(build(groups[n]!, depth + 1, sink), sink);
  return branch;
}

/** keccak256 of the root node of the trie holding value[i] at key rlp(i). */
export function orderedTrieRoot(values: Uint8Array[]): Uint8Array {
  if (values.length === 0) return keccak256(RLP.encode(new Uint8Array()));
  const items = values
    .map((value, i) => ({ key: toNibbles(RLP.encode(i)), value }))
    .sort((a, b) => {
      const n = Math.min(a.key.length, b.key.length);
      for (let i = 0; i < n; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
      return a.key.length - b.key.length;
    });
  return keccak256(rlpEncode(build(items, 0)));
}

export const EMPTY_TRIE_ROOT = keccak256(RLP.encode(new Uint8Array()));

/**
 * Root of a trie holding `value` at each (distinct, already hashed) `key`, e.g. keccak(address) →
 * account RLP; every node stored by hash, the root included, goes to `sink`. The empty trie stores
 * nothing.
 */
export function hashedTrieRoot(entries: { key: Uint8Array; value: Uint8Array }[], sink: NodeSink): Uint8Array {
  if (entries.length === 0) return EMPTY_TRIE_ROOT;
  const items = entries.map((e) => ({ key: toNibbles(e.key), value: e.value })).sort((a, b) => Buffer.compare(a.key, b.key));
  const enc = rlpEncode(build(items, 0, sink));
  const root = keccak256(enc);
  sink(root, enc);
  return root;
}
