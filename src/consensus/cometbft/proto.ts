/**
 * A minimal protobuf writer for the handful of CometBFT messages we hash, sign and split into parts.
 *
 * Zero-value rules follow what gogoproto generates for CometBFT's proto3 messages:
 * - scalars (varint, sfixed64) are omitted when zero;
 * - `bytes`/`string` singular fields are omitted when empty;
 * - non-nullable embedded messages (`(gogoproto.nullable) = false`, stdtime timestamps) are always
 *   written, even when their encoding is empty (`tag 00`);
 * - every element of a repeated field is written, empty or not.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;

const UINT64_MASK = (1n << 64n) - 1n;
const textEncoder = new TextEncoder();

/** Appends the uvarint encoding of a non-negative integer below 2^64. */
function pushUvarint(out: number[], value: bigint): void {
  let v = value;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

/** uvarint(value) as bytes; `value` must be a non-negative integer below 2^64. */
export function uvarint(value: bigint | number): Uint8Array {
  const v = BigInt(value);
  if (v < 0n || v > UINT64_MASK) throw new RangeError(`uvarint out of range: ${v}`);
  const out: number[] = [];
  pushUvarint(out, v);
  return Uint8Array.from(out);
}

export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  private push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  private tag(field: number, wire: number): number[] {
    const out: number[] = [];
    pushUvarint(out, BigInt((field << 3) | wire));
    return out;
  }

  /** uint32/uint64/enum field; omitted when zero. */
  uint(field: number, value: bigint | number): this {
    const v = BigInt(value);
    if (v === 0n) return this;
    if (v < 0n || v > UINT64_MASK) throw new RangeError(`field ${field}: unsigned value out of range: ${v}`);
    const out = this.tag(field, WIRE_VARINT);
    pushUvarint(out, v);
    this.push(Uint8Array.from(out));
    return this;
  }

  /** int32/int64 field (negative values take 10 bytes, two's complement); omitted when zero. */
  int(field: number, value: bigint | number): this {
    const v = BigInt(value);
    if (v === 0n) return this;
    if (v < -(1n << 63n) || v >= 1n << 63n) throw new RangeError(`field ${field}: int64 out of range: ${v}`);
    const out = this.tag(field, WIRE_VARINT);
    pushUvarint(out, BigInt.asUintN(64, v));
    this.push(Uint8Array.from(out));
    return this;
  }

  /** sfixed64 field (8 bytes little-endian); omitted when zero. */
  sfixed64(field: number, value: bigint | number): this {
    const v = BigInt(value);
    if (v === 0n) return this;
    const out = this.tag(field, WIRE_FIXED64);
    const fixed = new Uint8Array(8);
    new DataView(fixed.buffer).setBigInt64(0, BigInt.asIntN(64, v), true);
    this.push(Uint8Array.from(out));
    this.push(fixed);
    return this;
  }

  /** singular bytes field; omitted when empty. */
  bytes(field: number, value: Uint8Array): this {
    if (value.length === 0) return this;
    return this.lengthDelimited(field, value);
  }

  /** singular string field (UTF-8); omitted when empty. */
  string(field: number, value: string): this {
    if (value.length === 0) return this;
    return this.lengthDelimited(field, textEncoder.encode(value));
  }

  /**
   * A length-delimited field written unconditionally: a non-nullable embedded message (pass its
   * encoding, possibly empty) or one element of a repeated bytes/message field.
   */
  lengthDelimited(field: number, value: Uint8Array): this {
    const out = this.tag(field, WIRE_LEN);
    pushUvarint(out, BigInt(value.length));
    this.push(Uint8Array.from(out));
    if (value.length > 0) this.push(value);
    return this;
  }

  /** The encoded message. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** `uvarint(len(m)) || m`, the framing of libs/protoio (sign bytes, ABCI socket messages). */
export function lengthPrefixed(message: Uint8Array): Uint8Array {
  const prefix = uvarint(message.length);
  const out = new Uint8Array(prefix.length + message.length);
  out.set(prefix, 0);
  out.set(message, prefix.length);
  return out;
}
