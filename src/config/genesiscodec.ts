/**
 * The strict JSON codec genesis.json is read with (config/genesis.ts): every reader names the field it
 * failed on, as `invalid genesis: <path>: <detail>`.
 */
import { badConfig } from '../lib/errors.js';

const INT64_TEXT = /^-?\d+$/;
const HEX_QUANTITY = /^0x[0-9a-fA-F]+$/;
export const DECIMAL = /^\d+$/;
const HEX_DATA = /^0x([0-9a-fA-F]{2})*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT64_MAX = (1n << 63n) - 1n;

export function fail(path: string, detail: string): never {
  throw badConfig(path, `invalid genesis: ${path}: ${detail}`);
}

export type Obj = Record<string, unknown>;

/** An object with exactly the allowed keys (`required` must be present). */
export function object(v: unknown, path: string, required: readonly string[], optional: readonly string[] = []): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(path, `expected an object, got ${kind(v)}`);
  const o = v as Obj;
  for (const key of Object.keys(o)) {
    if (!required.includes(key) && !optional.includes(key)) fail(join(path, key), 'unknown field');
  }
  for (const key of required) {
    if (!(key in o)) fail(join(path, key), 'missing');
  }
  return o;
}

/** A JSON object used as a map (any keys). */
export function record(v: unknown, path: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(path, `expected an object, got ${kind(v)}`);
  return v as Obj;
}

export function string(v: unknown, path: string): string {
  if (typeof v !== 'string') fail(path, `expected a string, got ${kind(v)}`);
  return v;
}

/** CometBFT int64: a decimal string. */
export function int64(v: unknown, path: string, min: bigint): bigint {
  const s = string(v, path);
  if (!INT64_TEXT.test(s)) fail(path, `expected an integer string, got ${JSON.stringify(s)}`);
  const n = BigInt(s);
  if (n > INT64_MAX) fail(path, `${s} overflows int64`);
  if (n < min) fail(path, `must be at least ${min}, got ${s}`);
  return n;
}

/** geth HexOrDecimal: `0x…` hex or decimal digits. */
export function uint(v: unknown, path: string, max: bigint): bigint {
  const s = string(v, path);
  if (!HEX_QUANTITY.test(s) && !DECIMAL.test(s)) fail(path, `expected a 0x-hex or decimal number, got ${JSON.stringify(s)}`);
  const n = BigInt(s);
  if (n > max) fail(path, `${s} is too large`);
  return n;
}

export function data(v: unknown, path: string, size?: number): Uint8Array {
  const s = string(v, path);
  if (!HEX_DATA.test(s)) fail(path, `expected 0x-prefixed hex bytes, got ${JSON.stringify(s)}`);
  const bytes = new Uint8Array(Buffer.from(s.slice(2), 'hex'));
  if (size !== undefined && bytes.length !== size) fail(path, `expected ${size} bytes, got ${bytes.length}`);
  return bytes;
}

export function base64(v: unknown, path: string, size: number): Uint8Array {
  const s = string(v, path);
  if (!BASE64.test(s)) fail(path, 'expected base64');
  const bytes = new Uint8Array(Buffer.from(s, 'base64'));
  if (bytes.length !== size) fail(path, `expected ${size} bytes, got ${bytes.length}`);
  return bytes;
}

export function fixed(v: unknown, path: string, want: unknown): void {
  if (JSON.stringify(v) !== JSON.stringify(want)) {
    fail(path, `ferry supports only ${JSON.stringify(want)}, got ${JSON.stringify(v)}`);
  }
}

export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}
