/**
 * Strict hex codecs for the JSON-RPC encodings Quantity and Data (execution-apis base types; geth
 * common/hexutil).
 *
 * Encoders (`toQuantity`, `toData`, `bytesToHex`) and the trusted decoder `hexToBytes` are for
 * internal use. The strict parsers (`parseQuantity`, `parseQuantityNumber`, `parseData`) are for
 * values that come from the wire: they throw an invalidArgument DomainError with geth's `common/hexutil` texts,
 * prefixed `invalid argument N: ` like geth's positional-argument decoder.
 *
 * Like geth, the prefix may be `0x` or `0X` and digits may be upper or lower case. Unlike geth's
 * JSON decoders, the empty string is rejected ("empty hex string") instead of read as zero/empty,
 * and the hexutil messages are not wrapped in encoding/json's "cannot unmarshal … into Go value"
 * (a value that is not a string is: `json: cannot unmarshal non-string into Go value of type
 * hexutil.Big`). The error's ArgumentProblem keeps the bare reason for codecs of nested fields.
 */
import { asBuffer } from './bytes.js';
import { invalidArgument, type ArgumentProblem, type DomainError } from './errors.js';

/** geth `common/hexutil` error texts */
export const HexError = {
  empty: 'empty hex string',
  syntax: 'invalid hex string',
  missingPrefix: 'hex string without 0x prefix',
  oddLength: 'hex string of odd length',
  emptyNumber: 'hex string "0x"',
  leadingZero: 'hex number with leading zero digits',
  big256Range: 'hex number > 256 bits',
  /** quantities decoded to a JS number must be safe integers (2^53 - 1) */
  safeRange: 'hex number > 53 bits',
} as const;

/** Max hex digits of a 256-bit quantity. */
const MAX_QUANTITY_NIBBLES = 64;
/** Hex digits of Number.MAX_SAFE_INTEGER (0x1fffffffffffff). */
const MAX_SAFE_NIBBLES = 14;
/** Hex digits only (prefix, emptiness and leading zeros are checked before). */
const QUANTITY_DIGITS = /^[0-9a-fA-F]+$/;

const UINT64 = 'hexutil.Uint64';
/** hexutil's reason for a JSON value that is not a string */
const NON_STRING = 'non-string';
/** geth's Go type names, used in its length and type errors. */
const FIXED_TYPE_NAMES: Readonly<Record<number, string>> = { 20: 'common.Address', 32: 'common.Hash' };

/** The error for argument `index`, geth style: `invalid argument N: <reason>`. */
export function argumentError(index: number, reason: string, problem?: Omit<ArgumentProblem, 'index' | 'reason'>): DomainError<'invalidArgument'> {
  return invalidArgument(`invalid argument ${index}: ${reason}`, { index, reason, ...problem });
}

/** Go encoding/json's name of a JSON value kind, for type-mismatch messages. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

/**
 * geth's text for a value of the wrong JSON kind, e.g.
 * `json: cannot unmarshal number into Go value of type bool`; hexutil types say `non-string`.
 */
export function typeMismatch(index: number, kind: string, goType: string): DomainError<'invalidArgument'> {
  return argumentError(index, `json: cannot unmarshal ${kind} into Go value of type ${goType}`, { mismatch: { found: kind, goType } });
}

/**
 * The error of the strict hex parsers: a hexutil decode error (`reason` is a HexError value), which
 * a codec for a nested field words as geth does there, e.g.
 * `json: cannot unmarshal <reason> into Go struct field TransactionArgs.value of type *hexutil.Big`;
 * a value that is not a string is a type mismatch.
 */
function hexError(index: number, reason: string, goType: string): DomainError<'invalidArgument'> {
  return reason === NON_STRING ? typeMismatch(index, NON_STRING, goType) : argumentError(index, reason, { hexDecode: true });
}

function hasPrefix(s: string): boolean {
  return s.length >= 2 && s.charCodeAt(0) === 48 /* 0 */ && (s.charCodeAt(1) | 0x20) === 120 /* x */;
}

/** Quantity: `0x` + compact lowercase hex, zero is `0x0`. n must be a non-negative integer. */
export function toQuantity(n: bigint | number): string {
  if (typeof n === 'number' ? !(Number.isInteger(n) && n >= 0) : n < 0n) {
    throw new RangeError(`toQuantity: not a non-negative integer: ${n}`);
  }
  return '0x' + n.toString(16);
}

/** Lowercase hex of the bytes, no prefix. */
export function bytesToHex(b: Uint8Array): string {
  return asBuffer(b).toString('hex');
}

/** Data: `0x` + lowercase hex, two digits per byte; empty is `0x`. */
export function toData(b: Uint8Array): string {
  return '0x' + bytesToHex(b);
}

/** Decodes even-length hex with or without `0x`. Trusted input only: no validation. */
export function hexToBytes(hex: string): Uint8Array {
  const digits = hasPrefix(hex) ? hex.slice(2) : hex;
  const out = new Uint8Array(digits.length >>> 1);
  asBuffer(out).write(digits, 'hex');
  return out;
}

/** Go's `strconv.IsPrint` for a code point below 0x100 (what `%#U` quotes). */
function goPrintableLatin1(c: number): boolean {
  return (c >= 0x20 && c <= 0x7e) || (c >= 0xa1 && c <= 0xff && c !== 0xad);
}

/**
 * Go's `encoding/hex.DecodeString` (hex without a prefix), with its error texts (go src/encoding/hex/hex.go):
 * the first byte, of the string's UTF-8, that is no hex digit is `encoding/hex: invalid byte: U+00XX 'c'`
 * (Go's `%#U` of the byte, the quoted char only when printable); then an odd length is
 * `encoding/hex: odd length hex string`. `fail` builds the thrown error from that text.
 */
export function decodeGoHex(s: string, fail: (text: string) => Error = invalidArgument): Uint8Array {
  const bytes = Buffer.from(s, 'utf8');
  for (const b of bytes) {
    const digit = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    if (digit) continue;
    const code = 'U+' + b.toString(16).toUpperCase().padStart(4, '0');
    throw fail(`encoding/hex: invalid byte: ${goPrintableLatin1(b) ? `${code} '${String.fromCharCode(b)}'` : code}`);
  }
  if (bytes.length % 2 !== 0) throw fail('encoding/hex: odd length hex string');
  return hexToBytes(s);
}

/** Checks prefix and digits of a wire quantity; returns the digit count. */
function checkQuantity(v: unknown, index: number, goType: string): number {
  if (typeof v !== 'string') throw hexError(index, NON_STRING, goType);
  if (v.length === 0) throw hexError(index, HexError.empty, goType);
  if (!hasPrefix(v)) throw hexError(index, HexError.missingPrefix, goType);
  const nibbles = v.length - 2;
  if (nibbles === 0) throw hexError(index, HexError.emptyNumber, goType);
  if (nibbles > 1 && v.charCodeAt(2) === 48) throw hexError(index, HexError.leadingZero, goType);
  if (nibbles > MAX_QUANTITY_NIBBLES) throw hexError(index, HexError.big256Range, goType);
  // V8 regexes run natively; `BigInt`/`Number` alone would accept surrounding whitespace
  if (!QUANTITY_DIGITS.test(v.slice(2))) throw hexError(index, HexError.syntax, goType);
  return nibbles;
}

/** Strict wire quantity → bigint (≤ 256 bits). */
export function parseQuantity(v: unknown, index: number): bigint {
  checkQuantity(v, index, 'hexutil.Big');
  return BigInt(v as string);
}

/** Strict wire quantity → JS number; rejects values above Number.MAX_SAFE_INTEGER. */
export function parseQuantityNumber(v: unknown, index: number): number {
  const nibbles = checkQuantity(v, index, UINT64);
  if (nibbles > MAX_SAFE_NIBBLES) throw hexError(index, HexError.safeRange, UINT64);
  const n = Number(v as string);
  if (n > Number.MAX_SAFE_INTEGER) throw hexError(index, HexError.safeRange, UINT64);
  return n;
}

/**
 * Strict wire data → bytes. With `size`, exactly that many bytes (geth's fixed-size types:
 * `hex string has length 38, want 40 for common.Address`).
 */
export function parseData(v: unknown, index: number, size?: number): Uint8Array {
  const goType = size === undefined ? 'hexutil.Bytes' : (FIXED_TYPE_NAMES[size] ?? `[${size}]byte`);
  if (typeof v !== 'string') throw hexError(index, NON_STRING, goType);
  if (v.length === 0) throw hexError(index, HexError.empty, goType);
  if (!hasPrefix(v)) throw hexError(index, HexError.missingPrefix, goType);
  const digits = v.length - 2;
  if (digits % 2 !== 0) throw hexError(index, HexError.oddLength, goType);
  if (size !== undefined && digits !== size * 2) {
    throw argumentError(index, `hex string has length ${digits}, want ${size * 2} for ${goType}`);
  }
  const out = new Uint8Array(digits >>> 1);
  // Buffer's hex decoder stops at the first pair that is not hex: a short count means bad syntax
  const written = asBuffer(out).write(v.slice(2), 'hex');
  if (written !== out.length) throw hexError(index, HexError.syntax, goType);
  return out;
}
