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

function decodeBlockOverrides(v: unknown, index: number): BlockOverrides {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), `override.${STRUCT}`);
  const f = <T>(name: string, goType: string, parse: (x: unknown) => T): T | undefined => {
    const raw = field(v, name);
    return raw === undefined ? undefined : structField(index, STRUCT, name, goType, () => parse(raw));
  };
  const big = (x: unknown) => parseQuantity(x, index);
  const uint64 = (x: unknown) => parseUint64(x, index);
  const out: BlockOverrides = {};
  const number = f('number', '*hexutil.Big', big);
  const difficulty = f('difficulty', '*hexutil.Big', big);
  const time = f('time', '*hexutil.Uint64', uint64);
  const gasLimit = f('gasLimit', '*hexutil.Uint64', uint64);
  const feeRecipient = f('feeRecipient', '*common.Address', (x) => parseData(x, index, ADDRESS_LENGTH));
  const prevRandao = f('prevRandao', '*common.Hash', (x) => parseData(x, index, HASH_LENGTH));
  const baseFeePerGas = f('baseFeePerGas', '*hexutil.Big', big);
  const blobBaseFee = f('blobBaseFee', '*hexutil.Big', big);
  for (const name of REFUSED) {
    if (field(v, name) !== undefined) throw invalidRequest(`block override "${name}" is not supported for this RPC method`);
  }
  if (number !== undefined) out.number = number;
  if (difficulty !== undefined) out.difficulty = difficulty;
  if (time !== undefined) out.time = time;
  if (gasLimit !== undefined) out.gasLimit = gasLimit;
  if (feeRecipient !== undefined) out.feeRecipient = feeRecipient;
  if (prevRandao !== undefined) out.prevRandao = prevRandao;
  if (baseFeePerGas !== undefined) out.baseFeePerGas = baseFeePerGas;
  if (blobBaseFee !== undefined) out.blobBaseFee = blobBaseFee;
  return out;
}

/** Optional block overrides (absent or null → undefined). */
export const blockOverrides: ParamCodec<BlockOverrides | undefined> = {
  name: 'block overrides',
  optional: true,
  decode: (v, i) => (v === undefined || v === null ? undefined : decodeBlockOverrides(v, i)),
};
