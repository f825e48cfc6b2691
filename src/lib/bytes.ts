/**
 * Byte helpers over plain Uint8Array (domain code never sees hex). Buffer does the work natively;
 * results are plain Uint8Array so they compare equal to other Uint8Array values in tests.
 */
import { Buffer } from 'node:buffer';

/** A Buffer view of the same memory (no copy). */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** Byte-wise equality. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && asBuffer(a).equals(b);
}

/** Lexicographic comparison: negative, zero or positive. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return asBuffer(a).compare(b);
}

/** Concatenation into a new array. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.byteLength;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/** Big-endian unsigned integer of the bytes (empty → 0n). */
export function bytesToBigInt(b: Uint8Array): bigint {
  return b.byteLength === 0 ? 0n : BigInt('0x' + asBuffer(b).toString('hex'));
}

/**
 * Big-endian bytes of a non-negative integer: minimal length (0n → empty) or left-padded to
 * `size` bytes. Throws RangeError when negative or when it does not fit in `size`.
 */
export function bigIntToBytes(n: bigint, size?: number): Uint8Array {
  if (n < 0n) throw new RangeError(`bigIntToBytes: negative value ${n}`);
  let hex = n === 0n ? '' : n.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  const length = hex.length >>> 1;
  if (size !== undefined && length > size) throw new RangeError(`bigIntToBytes: ${n} does not fit in ${size} bytes`);
  const out = new Uint8Array(size ?? length);
  asBuffer(out).write(hex, out.length - length, 'hex');
  return out;
}
