/**
 * RFC-6962 Merkle trees as CometBFT builds them (crypto/merkle): SHA-256, leaf = H(0x00||item),
 * inner = H(0x01||left||right), empty tree = H(""), split at the largest power of two below n.
 */
import * as nodeCrypto from 'node:crypto';
import { concatBytes } from '../../lib/bytes.js';

/** Most aunts a proof may carry (a tree of 2^100 items), as crypto/merkle MaxAunts. */
export const MAX_AUNTS = 100;
export const HASH_SIZE = 32;

type OneShotHash = (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer;
/** node:crypto `hash()` (Node ≥ 20.12): one native call per digest, no Hash object; createHash before it. */
const oneShot = (nodeCrypto as { hash?: OneShotHash }).hash;

function digest(data: Uint8Array): Uint8Array {
  if (oneShot) {
    const d = oneShot('sha256', data, 'buffer');
    return new Uint8Array(d.buffer, d.byteOffset, d.length);
  }
  return new Uint8Array(nodeCrypto.createHash('sha256').update(data).digest());
}

export function sha256(...parts: Uint8Array[]): Uint8Array {
  return digest(parts.length === 1 ? parts[0]! : concatBytes(...parts));
}

/** H(prefix || a || b) over one joined buffer: a Merkle node costs one native hash call (RFC 6962 2.1). */
function prefixedHash(prefix: number, a: Uint8Array, b?: Uint8Array): Uint8Array {
  const joined = new Uint8Array(1 + a.length + (b?.length ?? 0));
  joined[0] = prefix;
  joined.set(a, 1);
  if (b) joined.set(b, 1 + a.length);
  return digest(joined);
}

export function leafHash(item: Uint8Array): Uint8Array {
  return prefixedHash(0, item);
}

export function innerHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return prefixedHash(1, left, right);
}

/** Largest power of two strictly less than n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function rootOf(items: readonly Uint8Array[], lo: number, hi: number): Uint8Array {
  const n = hi - lo;
  if (n === 0) return sha256();
  if (n === 1) return leafHash(items[lo]!);
  const k = splitPoint(n);
  return innerHash(rootOf(items, lo, lo + k), rootOf(items, lo + k, hi));
}

/** `merkle.HashFromByteSlices(items)`. */
export function merkleRoot(items: readonly Uint8Array[]): Uint8Array {
  return rootOf(items, 0, items.length);
}

/** crypto/merkle Proof; `aunts` run from the leaf's sibling up to a child of the root. */
export interface MerkleProof {
  total: bigint;
  index: bigint;
  leafHash: Uint8Array;
  aunts: Uint8Array[];
}

function auntsOf(items: readonly Uint8Array[], lo: number, hi: number, index: number, out: Uint8Array[]): void {
  const n = hi - lo;
  if (n === 1) return;
  const k = splitPoint(n);
  if (index < lo + k) {
    auntsOf(items, lo, lo + k, index, out);
    out.push(rootOf(items, lo + k, hi));
  } else {
    auntsOf(items, lo + k, hi, index, out);
    out.push(rootOf(items, lo, lo + k));
  }
}

/** The proof `merkle.ProofsFromByteSlices(items)[index]`. */
export function merkleProof(items: readonly Uint8Array[], index: number): MerkleProof {
  if (!Number.isInteger(index) || index < 0 || index >= items.length) {
    throw new RangeError(`merkle proof index ${index} out of range for ${items.length} items`);
  }
  const aunts: Uint8Array[] = [];
  auntsOf(items, 0, items.length, index, aunts);
  return { total: BigInt(items.length), index: BigInt(index), leafHash: leafHash(items[index]!), aunts };
}

function rootFromAunts(index: bigint, total: bigint, leaf: Uint8Array, aunts: readonly Uint8Array[]): Uint8Array | undefined {
  if (index < 0n || total <= 0n || index >= total) return undefined;
  if (total === 1n) return aunts.length === 0 ? leaf : undefined;
  if (aunts.length === 0) return undefined;
  let k = 1n;
  while (k * 2n < total) k *= 2n;
  const last = aunts[aunts.length - 1]!;
  const rest = aunts.slice(0, -1);
  if (index < k) {
    const left = rootFromAunts(index, k, leaf, rest);
    return left && innerHash(left, last);
  }
  const right = rootFromAunts(index - k, total - k, leaf, rest);
  return right && innerHash(last, right);
}

/** The root a proof commits to, or undefined when the proof is malformed (as Proof.computeRootHash). */
export function merkleProofRoot(proof: MerkleProof): Uint8Array | undefined {
  if (proof.aunts.length > MAX_AUNTS) return undefined;
  return rootFromAunts(proof.index, proof.total, proof.leafHash, proof.aunts);
}

/** `Proof.Verify(root, item) == nil`: the leaf hash matches `item` and the aunts lead to `root`. */
export function verifyMerkleProof(root: Uint8Array, item: Uint8Array, proof: MerkleProof): boolean {
  if (!bytesEqual(leafHash(item), proof.leafHash)) return false;
  const computed = merkleProofRoot(proof);
  return computed !== undefined && bytesEqual(computed, root);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
