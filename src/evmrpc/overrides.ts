/**
 * Surface A's block override codec: geth's override.BlockOverrides (go-ethereum
 * internal/ethapi/override/override.go), the 4th param of eth_call and eth_estimateGas and
 * `blockOverrides` in debug_traceCall's config. Fields decode as geth's JSON decoder reads them
 * (codecs.ts: case-insensitive names, unknown fields ignored, null = absent), with its type names in
 * the errors. `beaconRoot` and `withdrawals` decode and are then refused with geth's Apply texts
 * (-32000), as a call has no block body or beacon root to give them to.
 */
import { invalidRequest } from '../lib/errors.js';
import { jsonKind, parseData, parseQuantity, typeMismatch } from '../lib/hex.js';
import { ADDRESS_LENGTH, HASH_LENGTH } from '../jsonrpc/codecs.js';
import type { ParamCodec } from '../jsonrpc/types.js';
import type { BlockOverrides } from '../types/query.js';
import { field, isObject, parseUint64, structField } from './codecs.js';

const STRUCT = 'BlockOverrides';

/** the fields geth's Apply refuses for a single call */
const REFUSED = ['beaconRoot', 'withdrawals'] as const;

const big = (x: unknown, i: number): bigint => parseQuantity(x, i);
const uint64 = (x: unknown, i: number): bigint => parseUint64(x, i);

/** geth's fields in its order, each with its Go type (named in decode errors) and its parser */
const FIELDS: readonly { name: keyof BlockOverrides; goType: string; parse: (x: unknown, i: number) => bigint | Uint8Array }[] = [
  { name: 'number', goType: '*hexutil.Big', parse: big },
  { name: 'difficulty', goType: '*hexutil.Big', parse: big },
  { name: 'time', goType: '*hexutil.Uint64', parse: uint64 },
  { name: 'gasLimit', goType: '*hexutil.Uint64', parse: uint64 },
  { name: 'feeRecipient', goType: '*common.Address', parse: (x, i) => parseData(x, i, ADDRESS_LENGTH) },
  { name: 'prevRandao', goType: '*common.Hash', parse: (x, i) => parseData(x, i, HASH_LENGTH) },
  { name: 'baseFeePerGas', goType: '*hexutil.Big', parse: big },
  { name: 'blobBaseFee', goType: '*hexutil.Big', parse: big },
];

/** `blockFields`: eth_simulateV1, whose blocks may set `beaconRoot` and `withdrawals` (taken, then not applied) */
export function decodeBlockOverrides(v: unknown, index: number, blockFields = false): BlockOverrides {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), `override.${STRUCT}`);
  const out: Record<string, bigint | Uint8Array> = {};
  for (const { name, goType, parse } of FIELDS) {
    const raw = field(v, name);
    if (raw !== undefined) out[name] = structField(index, STRUCT, name, goType, () => parse(raw, index));
  }
  for (const name of blockFields ? [] : REFUSED) {
    if (field(v, name) !== undefined) throw invalidRequest(`block override "${name}" is not supported for this RPC method`);
  }
  return out as BlockOverrides;
}

/** Optional block overrides (absent or null → undefined). */
export const blockOverrides: ParamCodec<BlockOverrides | undefined> = {
  name: 'block overrides',
  optional: true,
  decode: (v, i) => (v === undefined || v === null ? undefined : decodeBlockOverrides(v, i)),
};
