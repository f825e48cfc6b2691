/**
 * Generic positional-param codecs built on src/lib/hex.ts. Each throws invalidArgument whose
 * message names the argument (`invalid argument N: …`). Surface-specific codecs (block tags, call
 * objects, filters) live with their surface.
 */
import { jsonKind, parseData, parseQuantity, parseQuantityNumber, typeMismatch } from '../lib/hex.js';
import type { ParamCodec } from './types.js';

export const ADDRESS_LENGTH = 20;
export const HASH_LENGTH = 32;

/** Quantity up to 256 bits → bigint. */
export const quantity: ParamCodec<bigint> = { name: 'quantity', decode: parseQuantity };

/** Quantity that fits in a JS safe integer → number (indexes, counts, block numbers). */
export const quantityNumber: ParamCodec<number> = { name: 'quantity', decode: parseQuantityNumber };

/** Data of any length → bytes. */
export const data: ParamCodec<Uint8Array> = { name: 'data', decode: (v, i) => parseData(v, i) };

/** 20-byte data. */
export const address: ParamCodec<Uint8Array> = { name: 'address', decode: (v, i) => parseData(v, i, ADDRESS_LENGTH) };

/** 32-byte data (hashes, topics, storage keys). */
export const hash: ParamCodec<Uint8Array> = { name: 'hash', decode: (v, i) => parseData(v, i, HASH_LENGTH) };

export const bool: ParamCodec<boolean> = {
  name: 'boolean',
  decode(v, i) {
    if (typeof v !== 'boolean') throw typeMismatch(i, jsonKind(v), 'bool');
    return v;
  },
};

export const string: ParamCodec<string> = {
  name: 'string',
  decode(v, i) {
    if (typeof v !== 'string') throw typeMismatch(i, jsonKind(v), 'string');
    return v;
  },
};

/** The param may be absent or null; the handler then receives undefined. */
export function optional<T>(codec: ParamCodec<T>): ParamCodec<T | undefined> {
  return {
    name: codec.name,
    optional: true,
    decode: (v, i) => (v === undefined || v === null ? undefined : codec.decode(v, i)),
  };
}
