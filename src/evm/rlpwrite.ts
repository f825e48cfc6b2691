/**
 * RLP encoding (Yellow Paper appendix B) written into one buffer: the encoded length is computed
 * first, then every item is written in place; and stored trie nodes read back as views, without copies. @ethereumjs/rlp's `RLP.encode` encodes each item into
 * its own array, concatenates them, and builds each length prefix through a hex string, which for a
 * block's trie nodes, accounts and receipts allocated about half of what the chain thread allocates
 * per transfer (docs/benchmarks.md "The chain thread per transfer"). RLP is canonical, so the bytes
 * are the same as `RLP.encode`'s for the same input (test/unit/rlpwrite.test.ts).
 */
import { rlpItemAt } from '../lib/rlpitem.js';

/** a byte string or a list of items */
export type RlpItem = Uint8Array | readonly RlpItem[];

const EMPTY = new Uint8Array(0);

/** bytes needed for `n` as a big-endian integer without leading zeros (n > 0) */
function byteLength(n: number): number {
  let k = 0;
  while (n > 0) {
    k++;
    n = Math.floor(n / 256);
  }
  return k;
}

/** length of the prefix of a string or list whose payload is `len` bytes */
function prefixLength(len: number): number {
  return len < 56 ? 1 : 1 + byteLength(len);
}

function payloadLength(list: readonly RlpItem[]): number {
  let len = 0;
  for (const x of list) len += encodedLength(x);
  return len;
}

/** encoded length of `x` */
function encodedLength(x: RlpItem): number {
  if (x instanceof Uint8Array) return x.length === 1 && x[0]! < 0x80 ? 1 : prefixLength(x.length) + x.length;
  const len = payloadLength(x);
  return prefixLength(len) + len;
}

/** writes the prefix of a payload of `len` bytes (`offset` 0x80 for a string, 0xc0 for a list) at `pos` */
function writePrefix(out: Uint8Array, pos: number, len: number, offset: number): number {
  if (len < 56) {
    out[pos] = offset + len;
    return pos + 1;
  }
  const k = byteLength(len);
  out[pos] = offset + 55 + k;
  for (let i = k; i >= 1; i--) {
    out[pos + i] = len % 256;
    len = Math.floor(len / 256);
  }
  return pos + 1 + k;
}

function writeItem(out: Uint8Array, pos: number, x: RlpItem): number {
  if (x instanceof Uint8Array) {
    if (x.length === 1 && x[0]! < 0x80) {
      out[pos] = x[0]!;
      return pos + 1;
    }
    pos = writePrefix(out, pos, x.length, 0x80);
    out.set(x, pos);
    return pos + x.length;
  }
  pos = writePrefix(out, pos, payloadLength(x), 0xc0);
  for (const item of x) pos = writeItem(out, pos, item);
  return pos;
}

/**
 * rlp(x): the same bytes as @ethereumjs/rlp `RLP.encode(x)` for byte strings and lists; with `typeByte`
 * (an EIP-2718 envelope's type) that byte comes first.
 */
export function rlpEncode(x: RlpItem, typeByte?: number): Uint8Array {
  const at = typeByte === undefined ? 0 : 1;
  const out = new Uint8Array(at + encodedLength(x));
  if (typeByte !== undefined) out[0] = typeByte;
  writeItem(out, at, x);
  return out;
}

/**
 * `typeByte` ‖ rlp's list prefix for `payload` ‖ `payload`: an EIP-2718 envelope around list items that
 * are already encoded (e.g. a byte range of another encoding), without decoding them.
 */
export function typedListOfEncoded(typeByte: number, payload: Uint8Array): Uint8Array {
  const head = 1 + prefixLength(payload.length);
  const out = new Uint8Array(head + payload.length);
  out[0] = typeByte;
  writePrefix(out, 1, payload.length, 0xc0);
  out.set(payload, head);
  return out;
}

/** `n` (≥ 0) as a big-endian byte string without leading zeros (0: empty), as RLP encodes integers */
export function unpaddedBytes(n: bigint): Uint8Array {
  if (n < 0n) throw new RangeError(`cannot encode a negative integer (${n}) in RLP`);
  if (n === 0n) return EMPTY;
  if (n <= BigInt(Number.MAX_SAFE_INTEGER)) {
    let v = Number(n);
    const out = new Uint8Array(byteLength(v));
    for (let i = out.length - 1; i >= 0; i--) {
      out[i] = v % 256;
      v = Math.floor(v / 256);
    }
    return out;
  }
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 === 1 ? '0' + hex : hex, 'hex');
}

/** rlp([nonce, balance, storageRoot, codeHash]): ethereumjs `Account.serialize()`, the state trie's account value */
export function accountRlp(nonce: bigint, balance: bigint, storageRoot: Uint8Array, codeHash: Uint8Array): Uint8Array {
  return rlpEncode([unpaddedBytes(nonce), unpaddedBytes(balance), storageRoot, codeHash]);
}

function readItem(enc: Uint8Array, start: number, stop: number, list: boolean): RlpItem {
  if (!list) return enc.subarray(start, stop);
  const out: RlpItem[] = [];
  for (let pos = start; pos < stop; ) {
    const it = rlpItemAt(enc, pos, stop);
    out.push(readItem(enc, it.start, it.stop, it.list));
    pos = it.stop;
  }
  return out;
}

/**
 * RLP decoding for encodings this node wrote itself (stored trie nodes): the byte strings are views of
 * `enc` (no copies; they keep `enc` alive while they live), lengths are checked against the input, and
 * unlike @ethereumjs/rlp non-canonical prefixes are not refused.
 */
export function rlpDecodeView(enc: Uint8Array): RlpItem {
  const it = rlpItemAt(enc, 0, enc.length);
  if (it.stop !== enc.length) throw new Error('invalid RLP: bytes after the item');
  return readItem(enc, it.start, it.stop, it.list);
}
