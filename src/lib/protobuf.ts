/**
 * Minimal protobuf wire format: a writer (zero values omitted, as gogoproto emits them; CometBFT's and
 * Cosmos' messages are encoded with it) and a field reader for the few messages ferry decodes.
 */
const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;

const UINT64_MASK = (1n << 64n) - 1n;
const textEncoder = new TextEncoder();

/** Appends the uvarint encoding of a non-negative integer below 2^64. */
function pushUvarint(out: number[], value: bigint): void {
  if (value <= 0xffffffffn) return pushSmallUvarint(out, Number(value));
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

/** pushUvarint of a non-negative integer below 2^32 in plain numbers (tags, lengths; no BigInt arithmetic). */
function pushSmallUvarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

// ---- writing into a buffer sized beforehand (hot paths that know every length first, e.g. chain/nativetx.ts) ----

/** bytes of uvarint(v) (v a non-negative integer below 2^64) */
export function uvarintLength(v: number | bigint): number {
  let n = 1;
  if (typeof v === 'number') for (let x = v; x >= 0x80; x = Math.floor(x / 128)) n++;
  else for (let x = v; x >= 0x80n; x >>= 7n) n++;
  return n;
}

/** bytes of a length-delimited field (tag below 16) of `len` bytes, or 0 for an empty one (omitted) */
export const lenFieldLength = (len: number): number => (len === 0 ? 0 : 1 + uvarintLength(len) + len);

/** writes uvarint(v) into `out` at `at`; returns the position after it (the caller sized `out`) */
export function writeUvarint(out: Uint8Array, at: number, v: number | bigint): number {
  if (typeof v === 'number') {
    for (; v >= 0x80; v = Math.floor(v / 128)) out[at++] = (v % 128) | 0x80;
    out[at++] = v;
    return at;
  }
  let x = v;
  while (x >= 0x80n) {
    out[at++] = Number(x & 0x7fn) | 0x80;
    x >>= 7n;
  }
  out[at++] = Number(x);
  return at;
}

/** the tag (field below 16, length-delimited) and length of a field */
export function writeLenHead(out: Uint8Array, at: number, field: number, len: number): number {
  out[at++] = (field << 3) | WIRE_LEN;
  return writeUvarint(out, at, len);
}

/** a bytes field, omitted when empty */
export function writeBytesField(out: Uint8Array, at: number, field: number, b: Uint8Array): number {
  if (b.length === 0) return at;
  at = writeLenHead(out, at, field, b.length);
  out.set(b, at);
  return at + b.length;
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
    pushSmallUvarint(out, field * 8 + wire);
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
    pushSmallUvarint(out, value.length);
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

export interface ProtoField {
  field: number;
  wire: number;
  /** varint value (wire 0) or fixed64 as unsigned (wire 1) or fixed32 (wire 5) */
  int?: bigint;
  /** length-delimited payload (wire 2) */
  bytes?: Uint8Array;
}

export class ProtoDecodeError extends Error {}

/** Reads all fields of one message. Throws ProtoDecodeError on malformed input. */
export function readFields(buf: Uint8Array): ProtoField[] {
  const out: ProtoField[] = [];
  let i = 0;
  const varint = (): bigint => {
    let shift = 0n;
    let result = 0n;
    for (;;) {
      if (i >= buf.length) throw new ProtoDecodeError('unexpected end of varint');
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new ProtoDecodeError('varint too long');
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 0) throw new ProtoDecodeError('field number 0');
    if (wire === 0) out.push({ field, wire, int: varint() });
    else if (wire === 1) {
      if (i + 8 > buf.length) throw new ProtoDecodeError('unexpected end of fixed64');
      out.push({ field, wire, int: new DataView(buf.buffer, buf.byteOffset + i, 8).getBigUint64(0, true) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new ProtoDecodeError('length exceeds buffer');
      out.push({ field, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      if (i + 4 > buf.length) throw new ProtoDecodeError('unexpected end of fixed32');
      out.push({ field, wire, int: BigInt(new DataView(buf.buffer, buf.byteOffset + i, 4).getUint32(0, true)) });
      i += 4;
    } else throw new ProtoDecodeError(`unsupported wire type ${wire}`);
  }
  return out;
}
