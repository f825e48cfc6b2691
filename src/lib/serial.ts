/**
 * Storage codec for domain values: JSON with bigint and Uint8Array preserved. Used only for data the
 * node writes and reads back itself (never on the wire).
 */

const BIG = '$n';
const BYTES = '$b';

function replacer(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { [BIG]: value.toString() };
  if (value instanceof Uint8Array) return { [BYTES]: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  if (value instanceof Map) return { $m: [...value.entries()] };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (typeof o[BIG] === 'string') return BigInt(o[BIG] as string);
    if (typeof o[BYTES] === 'string') return new Uint8Array(Buffer.from(o[BYTES] as string, 'base64'));
    if (Array.isArray(o.$m)) return new Map(o.$m as [unknown, unknown][]);
  }
  return value;
}

/** Uint8Array values inside `value` must not be Buffers with shared pools larger than them: handled via byteOffset. */
export function encodeValue(value: unknown): Buffer {
  // JSON.stringify calls toJSON on Buffers before the replacer sees them; normalise Buffers first.
  return Buffer.from(JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = key === '' ? v : this[key];
    return replacer.call(this, key, raw instanceof Uint8Array ? raw : v);
  }));
}

export function decodeValue<T>(bytes: Uint8Array): T {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), reviver) as T;
}
