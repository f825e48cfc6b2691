/**
 * Route parameters the way CometBFT decodes them (libs/json for JSON-RPC params, the URI rules of
 * rpc/jsonrpc/server/http_uri_handler.go for `GET /route?arg=value`), with Go's error texts.
 *
 * JSON-RPC: int64/int/uint are strings (`"5"`; a bare number is also accepted — a harmless
 * extension CometBFT does not have), []byte is base64, HexBytes is hex without 0x, null or absent
 * is the Go zero value. URI: ints bare (`5`) or quoted, strings quoted (`"tx.height=5"`) or `0x` hex,
 * bytes `0x…` hex or a quoted string's own bytes.
 */
import { DomainError } from '../lib/errors.js';
import { decodeGoHex } from '../lib/hex.js';
import { jsonText } from '../lib/jsontext.js';
import type { ParamCodec } from '../jsonrpc/types.js';

/**
 * A param that CometBFT could not convert (an `invalidArgument` with Go's text); the envelope adds
 * the transport's prefix and code (errors.ts paramErrorAnswer).
 */
export class ParamError extends DomainError<'invalidArgument'> {
  constructor(detail: string) {
    super('invalidArgument', detail, undefined);
    this.name = 'ParamError';
  }
}

const paramError = (text: string): ParamError => new ParamError(text);

export type ParamKind = 'int64' | 'int' | 'uint' | 'bool' | 'string' | 'bytes' | 'hexbytes' | 'evidence';

export interface CometParam<T = unknown> extends ParamCodec<T> {
  readonly kind: ParamKind;
  /** decodes a URI argument (already URL-decoded, never empty) */
  fromUri(text: string): T;
}

const INT_TEXT = /^-?[0-9]+$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;
const BASE64_STD = /^[A-Za-z0-9+/]*={0,2}$/;

/** Go's name of a JSON value's kind in "cannot unmarshal X into Go value of type T" */
function goKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

const cannot = (v: unknown, goType: string): ParamError => new ParamError(`json: cannot unmarshal ${goKind(v)} into Go value of type ${goType}`);

const quoteChar = (c: string): string => (c === "'" ? "'\\''" : c === '"' ? `'"'` : `'${c}'`);

/**
 * encoding/json's error for text that is not one JSON value (the cases clients meet: a bare word,
 * a truncated value, trailing garbage); undefined when the text parses.
 */
export function goJsonError(text: string): string | undefined {
  const t = text.replace(/^[ \t\r\n]+/, '');
  if (t === '') return 'unexpected end of JSON input';
  try {
    JSON.parse(t);
    return undefined;
  } catch (e) {
    const c = t[0]!;
    for (const literal of ['true', 'false', 'null']) {
      if (c !== literal[0]) continue;
      for (let i = 1; i < literal.length; i++) {
        if (i >= t.length) return 'unexpected end of JSON input';
        if (t[i] !== literal[i]) return `invalid character ${quoteChar(t[i]!)} in literal ${literal} (expecting ${quoteChar(literal[i]!)})`;
      }
      const rest = t.slice(literal.length).replace(/^[ \t\r\n]+/, '');
      return `invalid character ${quoteChar(rest[0]!)} after top-level value`;
    }
    if (/[-0-9]/.test(c)) {
      const num = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(t);
      if (!num) return t.length < 2 ? 'unexpected end of JSON input' : `invalid character ${quoteChar(t[1]!)} in numeric literal`;
      const rest = t.slice(num[0].length).replace(/^[ \t\r\n]+/, '');
      return rest === '' ? 'unexpected end of JSON input' : `invalid character ${quoteChar(rest[0]!)} after top-level value`;
    }
    if (c === '"' || c === '[' || c === '{') {
      if (/end of JSON|Unterminated/i.test((e as Error).message)) return 'unexpected end of JSON input';
      const at = /position (\d+)/.exec((e as Error).message);
      const bad = at ? t[Number(at[1])] : undefined;
      return bad === undefined ? 'unexpected end of JSON input' : `invalid character ${quoteChar(bad)} looking for beginning of value`;
    }
    return `invalid character ${quoteChar(c)} looking for beginning of value`;
  }
}

function parseJsonText(text: string): unknown {
  const err = goJsonError(text);
  if (err !== undefined) throw new ParamError(err);
  return JSON.parse(text);
}

function decodeBase64Go(s: string): Uint8Array {
  if (s.length % 4 !== 0 || !BASE64_STD.test(s)) {
    let at = 0;
    while (at < s.length && /[A-Za-z0-9+/]/.test(s[at]!)) at++;
    throw new ParamError(`illegal base64 data at input byte ${Math.min(at, s.length - (s.length % 4 === 0 ? 0 : s.length % 4))}`);
  }
  return new Uint8Array(Buffer.from(s, 'base64'));
}

// ---- integers ---------------------------------------------------------------------------------

type IntKind = 'int64' | 'int' | 'uint';
const GO_INT_TYPE: Record<IntKind, string> = { int64: 'int64', int: 'int', uint: 'uint' };

function checkIntRange(n: bigint, text: string, kind: IntKind): bigint {
  const ok = kind === 'uint' ? n >= 0n && n <= UINT64_MAX : n >= INT64_MIN && n <= INT64_MAX;
  if (!ok) throw new ParamError(`json: cannot unmarshal number ${text} into Go value of type ${GO_INT_TYPE[kind]}`);
  return n;
}

/** the text inside a libs/json 64-bit integer string */
function intFromText(text: string, kind: IntKind): bigint {
  if (INT_TEXT.test(text)) return checkIntRange(BigInt(text), text, kind);
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) throw new ParamError(`json: cannot unmarshal number ${text} into Go value of type ${GO_INT_TYPE[kind]}`);
  throw new ParamError(goJsonError(text) ?? `json: cannot unmarshal ${text} into Go value of type ${GO_INT_TYPE[kind]}`);
}

/** libs/json's error for an integer not written as a string; `raw` is the value's JSON text */
const notAnIntString = (raw: string): ParamError => new ParamError(`invalid 64-bit integer encoding ${JSON.stringify(raw)}, expected string`);

function intFromJson(v: unknown, kind: IntKind, raw?: string): bigint {
  if (typeof v === 'string') return intFromText(v, kind);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new ParamError(`json: cannot unmarshal number ${v} into Go value of type ${GO_INT_TYPE[kind]}`);
    return checkIntRange(BigInt(v), String(v), kind);
  }
  throw notAnIntString(raw ?? jsonText(v));
}

function intFromUri(text: string, kind: IntKind): bigint {
  if (INT_TEXT.test(text)) return checkIntRange(BigInt(text), text, kind);
  if (text.toLowerCase().startsWith('0x')) throw new ParamError(`got a hex string arg, but expected '${GO_INT_TYPE[kind]}'`);
  return intFromJson(parseJsonText(text), kind, text);
}

/** `*int64` / `int64` (absent → undefined; the handler applies Go's zero value where it has one). */
export function int64Param(name: string): CometParam<bigint | undefined> {
  return {
    name,
    kind: 'int64',
    optional: true,
    decode: (v) => (v === undefined || v === null ? undefined : intFromJson(v, 'int64')),
    fromUri: (t) => intFromUri(t, 'int64'),
  };
}

/** `*int` (page, per_page, limit) as a JS number (values beyond ±2^53 are clamped by the caller's bounds). */
export function intParam(name: string): CometParam<number | undefined> {
  const toNum = (n: bigint): number => Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n < -BigInt(Number.MAX_SAFE_INTEGER) ? -BigInt(Number.MAX_SAFE_INTEGER) : n);
  return {
    name,
    kind: 'int',
    optional: true,
    decode: (v) => (v === undefined || v === null ? undefined : toNum(intFromJson(v, 'int'))),
    fromUri: (t) => toNum(intFromUri(t, 'int')),
  };
}

export function uintParam(name: string): CometParam<bigint | undefined> {
  return {
    name,
    kind: 'uint',
    optional: true,
    decode: (v) => (v === undefined || v === null ? undefined : intFromJson(v, 'uint')),
    fromUri: (t) => intFromUri(t, 'uint'),
  };
}

// ---- other kinds ------------------------------------------------------------------------------

function boolFromJson(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  throw cannot(v, 'bool');
}

export function boolParam(name: string): CometParam<boolean> {
  return {
    name,
    kind: 'bool',
    optional: true,
    decode: (v) => (v === undefined || v === null ? false : boolFromJson(v)),
    fromUri: (t) => {
      if (t.toLowerCase().startsWith('0x')) throw new ParamError("got a hex string arg, but expected 'bool'");
      return boolFromJson(parseJsonText(t));
    },
  };
}

function stringFromJson(v: unknown): string {
  if (typeof v === 'string') return v;
  throw cannot(v, 'string');
}

export function stringParam(name: string): CometParam<string> {
  return {
    name,
    kind: 'string',
    optional: true,
    decode: (v) => (v === undefined || v === null ? '' : stringFromJson(v)),
    fromUri: (t) => {
      if (t.toLowerCase().startsWith('0x')) return Buffer.from(decodeGoHex(t.slice(2), paramError)).toString('utf8');
      return stringFromJson(parseJsonText(t));
    },
  };
}

/** bytes from a URI argument: `0x…` hex, or a quoted string's own bytes, else `other(text)` */
function bytesFromUri(t: string, other: (t: string) => Uint8Array): Uint8Array {
  if (t.toLowerCase().startsWith('0x')) return decodeGoHex(t.slice(2), paramError);
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) {
    const s = parseJsonText(t);
    if (typeof s !== 'string') throw cannot(s, 'string');
    return new Uint8Array(Buffer.from(s, 'utf8'));
  }
  return other(t);
}

function bytesFromJson(v: unknown): Uint8Array {
  if (typeof v === 'string') return decodeBase64Go(v);
  throw cannot(v, '[]uint8');
}

/** `[]byte` (base64 in JSON-RPC) */
export function bytesParam(name: string): CometParam<Uint8Array> {
  return {
    name,
    kind: 'bytes',
    optional: true,
    decode: (v) => (v === undefined || v === null ? new Uint8Array() : bytesFromJson(v)),
    fromUri: (t) => bytesFromUri(t, (text) => bytesFromJson(parseJsonText(text))),
  };
}

function hexBytesFromJson(v: unknown): Uint8Array {
  if (typeof v !== 'string') throw new ParamError(`invalid hex string: ${jsonText(v)}`);
  return decodeGoHex(v, paramError);
}

/** `bytes.HexBytes` (hex without 0x in JSON-RPC) */
export function hexBytesParam(name: string): CometParam<Uint8Array> {
  return {
    name,
    kind: 'hexbytes',
    optional: true,
    decode: (v) => (v === undefined || v === null ? new Uint8Array() : hexBytesFromJson(v)),
    fromUri: (t) =>
      bytesFromUri(t, (text) => {
        throw new ParamError(`invalid hex string: ${text}`);
      }),
  };
}

/** `[]string` (JSON array of strings; in URIs a JSON array, e.g. `seeds=["id@host:26656"]`) */
export function stringListParam(name: string): CometParam<string[]> {
  const fromJson = (v: unknown): string[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw cannot(v, '[]string');
    return v.map((x) => stringFromJson(x));
  };
  return { name, kind: 'string', optional: true, decode: (v) => fromJson(v), fromUri: (t) => fromJson(parseJsonText(t)) };
}

/** Evidence as libs/json writes an interface: `{"type": "tendermint/…Evidence", "value": {…}}`. */
export const EVIDENCE_TYPES: readonly string[] = ['tendermint/DuplicateVoteEvidence', 'tendermint/LightClientAttackEvidence'];

function evidenceFromJson(v: unknown): { type: string; value: unknown } | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new ParamError(`json: cannot unmarshal ${goKind(v)} into Go value of type struct { Type string "json:\\"type\\""; Value json.RawMessage "json:\\"value\\"" }`);
  const o = v as Record<string, unknown>;
  if (typeof o.type !== 'string' || o.type === '') throw new ParamError('interface type cannot be empty');
  if (!EVIDENCE_TYPES.includes(o.type)) throw new ParamError(`unknown type "${o.type}" for interface types.Evidence`);
  if (o.value === undefined) throw new ParamError('value cannot be empty');
  return { type: o.type, value: o.value };
}

export function evidenceParam(name: string): CometParam<{ type: string; value: unknown } | undefined> {
  return {
    name,
    kind: 'evidence',
    optional: true,
    decode: (v) => evidenceFromJson(v),
    fromUri: (t) => evidenceFromJson(parseJsonText(t)),
  };
}
