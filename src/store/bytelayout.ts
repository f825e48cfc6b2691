/**
 * The pieces of the store's own record layouts (store/blockcodec.ts, store/cometcodec.ts): fixed-order
 * fields written into one growing buffer and read back as views into the row's bytes. Node's V8
 * serializer (lib/serial.ts) calls back into JavaScript for each byte array it writes or reads, which
 * made it the larger part of a small block's store write (docs/benchmarks.md "The fixed cost of a dev
 * block").
 *
 * Encodings: uvarint is unsigned LEB128 (numbers below 2^53); bytes: uvarint length, then the bytes;
 * blob: uvarint (length × 2, + 1 for a Node Buffer), then the bytes (read back as the same kind);
 * big: the bytes of a non-negative bigint's minimal big-endian form (empty for 0); sbig: a u8 sign
 * (1: negative) then big of the magnitude; int: a zigzag uvarint of a safe integer; str: UTF-8 bytes.
 */
import { writeUvarint } from '../lib/protobuf.js';

/** V8's serializer output always begins with its version tag: rows of older homes begin with it */
export const V8_VERSION_TAG = 0xff;

const TWO_POW_48 = 2 ** 48;
/** strings shorter than this (their length is one uvarint byte) are tried as ASCII in JavaScript */
const SHORT_STRING = 0x80;

export class LayoutWriter {
  private out: Buffer;
  private at = 0;

  /** `sizeHint`: the expected size (the buffer grows past it when needed) */
  constructor(sizeHint: number) {
    this.out = Buffer.allocUnsafe(Math.max(64, sizeHint));
  }

  private room(n: number): void {
    if (this.at + n <= this.out.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.at + n));
    this.out.copy(next, 0, 0, this.at);
    this.out = next;
  }

  u8(v: number): void {
    this.room(1);
    this.out[this.at++] = v;
  }

  uvarint(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`a stored length or count is not a non-negative safe integer: ${v}`);
    this.room(8);
    this.at = writeUvarint(this.out, this.at, v);
  }

  int(v: number): void {
    if (!Number.isSafeInteger(v) || Math.abs(v) >= TWO_POW_48) throw new RangeError(`a stored integer is out of range: ${v}`);
    this.uvarint(v < 0 ? -v * 2 - 1 : v * 2);
  }

  bytes(b: Uint8Array): void {
    this.uvarint(b.length);
    this.room(b.length);
    this.out.set(b, this.at);
    this.at += b.length;
  }

  /** blob: bytes that keep their kind, Node Buffer or plain Uint8Array, as V8's serializer keeps it */
  blob(b: Uint8Array): void {
    this.uvarint(b.length * 2 + (Buffer.isBuffer(b) ? 1 : 0));
    this.room(b.length);
    this.out.set(b, this.at);
    this.at += b.length;
  }

  big(v: bigint): void {
    if (v < 0n) throw new RangeError(`a stored unsigned integer is negative: ${v}`);
    if (v < 0x1000000000000n) {
      // below 2^48: the bytes from a number, without a hex string
      let n = Number(v);
      let len = 0;
      for (let x = n; x > 0; x = Math.floor(x / 256)) len++;
      this.u8(len);
      this.room(len);
      for (let i = len - 1; i >= 0; i--) {
        this.out[this.at + i] = n % 256;
        n = Math.floor(n / 256);
      }
      this.at += len;
      return;
    }
    let hex = v.toString(16);
    if (hex.length % 2 === 1) hex = '0' + hex;
    const len = hex.length / 2;
    this.uvarint(len);
    this.room(len);
    this.out.write(hex, this.at, 'hex');
    this.at += len;
  }

  sbig(v: bigint): void {
    this.u8(v < 0n ? 1 : 0);
    this.big(v < 0n ? -v : v);
  }

  str(s: string): void {
    // a short ASCII string: its bytes written here, without the two calls into Node for its length and copy
    if (s.length < SHORT_STRING) {
      this.room(s.length + 1);
      const start = this.at;
      this.out[this.at++] = s.length;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        this.out[this.at++] = c;
      }
      if (i === s.length) return;
      this.at = start;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uvarint(len);
    this.room(len);
    this.at += this.out.write(s, this.at, 'utf8');
  }

  /** the bytes written (a view of the writer's buffer) */
  finish(): Buffer {
    return this.out.subarray(0, this.at);
  }
}

/**
 * A reader past the format byte of a stored record in this layout; undefined when the bytes are an older
 * row of V8's serializer (the caller decodes those its old way). Any other first byte is refused.
 */
export function layoutReader(bytes: Uint8Array, format: number, what: string): LayoutReader | undefined {
  if (bytes[0] === V8_VERSION_TAG) return undefined;
  if (bytes[0] !== format) throw new Error(`${what} has an unknown format ${bytes[0]}`);
  const r = new LayoutReader(bytes, what);
  r.at = 1;
  return r;
}

/** Reads a layout; `what` names the record in errors ("a stored block"). */
export class LayoutReader {
  at = 0;
  private view: DataView | undefined;
  constructor(
    private readonly b: Uint8Array,
    private readonly what: string,
  ) {}

  private short(): RangeError {
    return new RangeError(`${this.what} ends early`);
  }

  u8(): number {
    if (this.at >= this.b.length) throw this.short();
    return this.b[this.at++]!;
  }

  uvarint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const byte = this.u8();
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 0x80;
      if (scale > Number.MAX_SAFE_INTEGER) throw new RangeError(`${this.what} has a length over 2^53`);
    }
  }

  int(): number {
    const z = this.uvarint();
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }

  /** a view into the record's bytes */
  bytes(): Uint8Array {
    const n = this.uvarint();
    if (this.at + n > this.b.length) throw this.short();
    const v = new Uint8Array(this.b.buffer, this.b.byteOffset + this.at, n);
    this.at += n;
    return v;
  }

  /** a view into the record's bytes, a Buffer when a Buffer was written */
  blob(): Uint8Array {
    const tagged = this.uvarint();
    const n = Math.floor(tagged / 2);
    if (this.at + n > this.b.length) throw this.short();
    const at = this.b.byteOffset + this.at;
    this.at += n;
    return tagged % 2 === 1 ? Buffer.from(this.b.buffer, at, n) : new Uint8Array(this.b.buffer, at, n);
  }

  big(): bigint {
    const n = this.uvarint();
    if (this.at + n > this.b.length) throw this.short();
    if (n > 6) return this.wideBig(n);
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + this.b[this.at + i]!;
    this.at += n;
    return BigInt(v);
  }

  /** a big of more than 6 bytes: 8 bytes at a time (a hex string costs about 3x as much for 32 bytes) */
  private wideBig(n: number): bigint {
    const dv = (this.view ??= new DataView(this.b.buffer, this.b.byteOffset, this.b.byteLength));
    const end = this.at + n;
    let v = 0n;
    // the leading n % 8 bytes, in numbers of at most 6 bytes (exact below 2^53)
    for (let rest = n % 8; rest > 0; ) {
      const k = Math.min(rest, 6);
      let head = 0;
      for (let i = 0; i < k; i++) head = head * 256 + this.b[this.at++]!;
      v = (v << BigInt(8 * k)) | BigInt(head);
      rest -= k;
    }
    for (; this.at < end; this.at += 8) v = (v << 64n) | dv.getBigUint64(this.at);
    return v;
  }

  sbig(): bigint {
    const negative = this.u8() === 1;
    const v = this.big();
    return negative ? -v : v;
  }

  str(): string {
    const v = this.bytes();
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  }

  /** throws unless every byte was read */
  end(): void {
    if (this.at !== this.b.length) throw new Error(`${this.what} has bytes after its end`);
  }
}
