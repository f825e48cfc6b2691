/**
 * Minimal protobuf wire format: a writer and a field reader. Enough for CometBFT/Cosmos messages
 * ferry encodes by hand (zero values omitted, as gogoproto emits them).
 */

export class ProtoWriter {
  private parts: Uint8Array[] = [];
  private size = 0;

  private push(b: Uint8Array): this {
    this.parts.push(b);
    this.size += b.length;
    return this;
  }

  static varint(n: bigint | number): Uint8Array {
    let v = BigInt.asUintN(64, BigInt(n));
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    return Uint8Array.from(out);
  }

  private tag(field: number, wire: number): this {
    return this.push(ProtoWriter.varint((field << 3) | wire));
  }

  /** uint64/int64/enum/bool; omitted when zero */
  uint(field: number, n: bigint | number | boolean): this {
    const v = typeof n === 'boolean' ? (n ? 1 : 0) : n;
    if (BigInt(v) === 0n) return this;
    return this.tag(field, 0).push(ProtoWriter.varint(v));
  }

  /** sfixed64 little-endian; omitted when zero */
  sfixed64(field: number, n: bigint): this {
    if (n === 0n) return this;
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigInt64(0, n, true);
    return this.tag(field, 1).push(b);
  }

  /** bytes; omitted when empty unless `always` */
  bytes(field: number, b: Uint8Array, always = false): this {
    if (b.length === 0 && !always) return this;
    return this.tag(field, 2).push(ProtoWriter.varint(b.length)).push(b);
  }

  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }

  /** embedded message, always emitted (non-nullable) */
  message(field: number, encoded: Uint8Array): this {
    return this.bytes(field, encoded, true);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
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
