/**
 * Surface A's state override codec (geth's override.StateOverride, the 3rd param of eth_call and
 * eth_estimateGas and `stateOverrides` in debug_traceCall's config) and its block override codec: geth's override.BlockOverrides (go-ethereum
 * internal/ethapi/override/override.go), the 4th param of eth_call and eth_estimateGas and
 * `blockOverrides` in debug_traceCall's config. Fields decode as geth's JSON decoder reads them
 * (codecs.ts: case-insensitive names, unknown fields ignored, null = absent), with its type names in
 * the errors. `beaconRoot` and `withdrawals` decode and are then refused with geth's Apply texts
 * (-32000), as a call has no block body or beacon root to give them to.
 */
import { invalidRequest } from '../lib/errors.js';
import { argumentError, jsonKind, parseData, parseQuantity, typeMismatch } from '../lib/hex.js';
import { checksumAddress } from '../lib/address.js';
import { ADDRESS_LENGTH, HASH_LENGTH } from '../jsonrpc/codecs.js';
import type { ParamCodec } from '../jsonrpc/types.js';
import type { AccountOverride, BlockOverrides, SlotOverride, StateOverrides } from '../types/query.js';
import { field, inContext, isObject, parseUint64, structField } from './codecs.js';
import { hexKey } from './format.js';

// ---------------------------------------------------------------------------------------------
// State overrides (geth's override.StateOverride)

const OVERRIDE_ACCOUNT = 'OverrideAccount';

/** A storage override map; a slot given twice (in any hex case) keeps its last value, as in Go's map. */
function decodeStorageMap(v: unknown, index: number, name: string): SlotOverride[] {
  if (!isObject(v)) {
    throw argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${OVERRIDE_ACCOUNT}.${name} of type map[common.Hash]common.Hash`);
  }
  const out = new Map<string, SlotOverride>();
  for (const [k, val] of Object.entries(v)) {
    const slot = inContext(index, '', () => parseData(k, index, HASH_LENGTH));
    const value = structField(index, OVERRIDE_ACCOUNT, name, 'common.Hash', () => parseData(val, index, HASH_LENGTH));
    out.set(hexKey(slot), { slot, value });
  }
  return [...out.values()];
}

/**
 * A state override set; an address given twice (in any hex case) keeps its last entry, as in Go's map.
 * `movePrecompileToAddress` is taken only where `moves` (eth_simulateV1) and refused elsewhere.
 */
export function decodeStateOverrides(v: unknown, index: number, moves = false): StateOverrides {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), 'override.StateOverride');
  const out = new Map<string, AccountOverride>();
  for (const [key, account] of Object.entries(v)) {
    const addr = parseData(key, index, ADDRESS_LENGTH);
    if (account === null) continue;
    if (!isObject(account)) throw typeMismatch(index, jsonKind(account), `override.${OVERRIDE_ACCOUNT}`);
    const f = <T>(name: string, goType: string, parse: (x: unknown) => T): T | undefined => {
      const raw = field(account, name);
      return raw === undefined ? undefined : structField(index, OVERRIDE_ACCOUNT, name, goType, () => parse(raw));
    };
    const balance = f('balance', '*hexutil.Big', (x) => parseQuantity(x, index));
    const nonce = f('nonce', 'hexutil.Uint64', (x) => parseUint64(x, index));
    const code = f('code', 'hexutil.Bytes', (x) => parseData(x, index));
    const stateRaw = field(account, 'state');
    const stateDiffRaw = field(account, 'stateDiff');
    const moveRaw = field(account, 'movePrecompileToAddress');
    if (moveRaw !== undefined && !moves) throw argumentError(index, 'movePrecompileToAddress is not supported');
    if (stateRaw !== undefined && stateDiffRaw !== undefined) {
      throw argumentError(index, `account ${checksumAddress(addr)} has both 'state' and 'stateDiff'`);
    }
    const entry: AccountOverride = { address: addr };
    if (balance !== undefined) entry.balance = balance;
    if (nonce !== undefined) entry.nonce = nonce;
    if (code !== undefined) entry.code = code;
    if (stateRaw !== undefined) entry.state = decodeStorageMap(stateRaw, index, 'state');
    if (stateDiffRaw !== undefined) entry.stateDiff = decodeStorageMap(stateDiffRaw, index, 'stateDiff');
    if (moveRaw !== undefined) entry.movePrecompileTo = structField(index, OVERRIDE_ACCOUNT, 'movePrecompileToAddress', '*common.Address', () => parseData(moveRaw, index, ADDRESS_LENGTH));
    out.set(hexKey(addr), entry);
  }
  return [...out.values()];
}

/** Optional state override set (absent or null → undefined). */
export const stateOverrides: ParamCodec<StateOverrides | undefined> = {
  name: 'state overrides',
  optional: true,
  decode: (v, i) => (v === undefined || v === null ? undefined : decodeStateOverrides(v, i)),
};

// ---------------------------------------------------------------------------------------------
// Block overrides (geth's override.BlockOverrides)

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
