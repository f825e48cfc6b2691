/**
 * Surface A param codecs: block parameters (with EIP-1898 where it applies), call objects, state
 * overrides, log filters, storage keys, fee-history arguments. Each decodes one positional param
 * into domain values and throws invalidArgument `invalid argument N: …` with geth's texts.
 *
 * Like Go's encoding/json (which geth uses), object fields match case-insensitively (an exact match
 * wins; so the filter's `blockhash` spelling works), unknown fields are ignored, and a field set to
 * null counts as absent.
 */
import { asBuffer, equalBytes } from '../lib/bytes.js';
import { DomainError, type ArgumentProblem } from '../lib/errors.js';
import { HexError, argumentError, jsonKind, parseData, parseQuantity, typeMismatch } from '../lib/hex.js';
import { ADDRESS_LENGTH, HASH_LENGTH } from '../jsonrpc/codecs.js';
import type { ParamCodec } from '../jsonrpc/types.js';
import type { Address, AuthorizationItem, CallRequest, Hash } from '../types/chain.js';
import { authorityOf } from '../evm/tx.js';
import type { BlockSelector, BlockTag } from '../types/query.js';

export const BLOCK_TAGS: readonly BlockTag[] = ['earliest', 'latest', 'pending', 'safe', 'finalized'];

const MAX_INT64 = (1n << 63n) - 1n;
const MAX_UINT64 = (1n << 64n) - 1n;
/** geth eth/filters: max topic positions (LOG0..LOG4) */
export const MAX_TOPICS = 4;
/** geth eth/filters: max alternatives within one topic position */
export const MAX_SUB_TOPICS = 1000;
/** geth internal/ethapi: max storage keys of one eth_getProof */
export const MAX_PROOF_KEYS = 1024;
/** geth eth/gasprice: max reward percentiles of one eth_feeHistory */
export const MAX_REWARD_PERCENTILES = 100;
const STORAGE_KEY_DIGITS = HASH_LENGTH * 2;
const HEX_DIGITS = /^[0-9a-fA-F]*$/;

const TX_DATA_CONFLICT = 'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data';

/** marks a hexutil decode error: geth's JSON decoder wraps these with the Go field they were found in */
const HEX_DECODE = { hexDecode: true } as const;

export const LATEST: BlockSelector = Object.freeze({ kind: 'tag', tag: 'latest' });
export const PENDING: BlockSelector = Object.freeze({ kind: 'tag', tag: 'pending' });

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isTag(v: string): v is BlockTag {
  return (BLOCK_TAGS as readonly string[]).includes(v);
}

/** A field like Go's encoding/json finds it: exact name first, then case-insensitive; null = absent. */
export function field(obj: JsonObject, name: string): unknown {
  let v: unknown;
  if (Object.prototype.hasOwnProperty.call(obj, name)) {
    v = obj[name];
  } else {
    const lower = name.toLowerCase();
    for (const key of Object.keys(obj)) {
      if (key.toLowerCase() === lower) {
        v = obj[key];
        break;
      }
    }
  }
  return v === null ? undefined : v;
}

/** What a nested decode of argument `index` found wrong; anything else is rethrown. */
function problemOf(err: unknown, index: number): ArgumentProblem {
  if (err instanceof DomainError && err.is('invalidArgument') && err.detail?.index === index) return err.detail;
  throw err;
}

/** Runs a nested decode; on failure the reason gets `context` in front. */
export function inContext<T>(index: number, context: string, decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    throw argumentError(index, context + problemOf(err, index).reason);
  }
}

/**
 * Decodes a struct field, naming it in the error as geth's JSON decoder does:
 * `json: cannot unmarshal hex string without 0x prefix into Go struct field TransactionArgs.from of type common.Address`.
 */
export function structField<T>(index: number, struct: string, name: string, goType: string, decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    const p = problemOf(err, index);
    const where = ` into Go struct field ${struct}.${name} of type ${goType}`;
    if (p.mismatch) throw argumentError(index, `json: cannot unmarshal ${p.mismatch.found}${where}`);
    if (p.hexDecode) throw argumentError(index, `json: cannot unmarshal ${p.reason}${where}`);
    throw argumentError(index, p.reason);
  }
}

/** Quantity that fits in 64 bits (geth's hexutil.Uint64). */
export function parseUint64(v: unknown, index: number): bigint {
  const n = parseQuantity(v, index);
  if (n > MAX_UINT64) throw argumentError(index, 'hex number > 64 bits');
  return n;
}

// ---------------------------------------------------------------------------------------------
// Block parameters

/** geth rpc.BlockNumber: a tag or a quantity. Unquoted JSON is read as hex text, as geth does. */
function decodeBlockNumber(v: unknown, index: number): BlockSelector {
  if (typeof v !== 'string') throw argumentError(index, HexError.missingPrefix, HEX_DECODE);
  if (isTag(v)) return { kind: 'tag', tag: v };
  const n = parseUint64(v, index);
  if (n > MAX_INT64) throw argumentError(index, 'block number larger than int64');
  return { kind: 'number', number: n };
}

/** geth rpc.BlockNumberOrHash (EIP-1898): tag, quantity, 32-byte hash string, or an object. */
function decodeBlockNumberOrHash(v: unknown, index: number): BlockSelector {
  if (isObject(v)) {
    const num = field(v, 'blockNumber');
    const hash = field(v, 'blockHash');
    const canonical = field(v, 'requireCanonical');
    if (num !== undefined && hash !== undefined) {
      throw argumentError(index, 'cannot specify both BlockHash and BlockNumber, choose one or the other');
    }
    if (num === undefined && hash === undefined) throw argumentError(index, 'must specify either BlockHash or BlockNumber');
    if (canonical !== undefined && typeof canonical !== 'boolean') {
      throw argumentError(
        index,
        `json: cannot unmarshal ${jsonKind(canonical)} into Go struct field BlockNumberOrHash.requireCanonical of type bool`,
      );
    }
    if (num !== undefined) return decodeBlockNumber(num, index);
    return { kind: 'hash', hash: parseData(hash, index, HASH_LENGTH), requireCanonical: canonical === true };
  }
  if (typeof v !== 'string') throw typeMismatch(index, jsonKind(v), 'string');
  if (isTag(v)) return { kind: 'tag', tag: v };
  if (v.length === 2 + HASH_LENGTH * 2) {
    return { kind: 'hash', hash: parseData(v, index, HASH_LENGTH), requireCanonical: false };
  }
  const n = parseUint64(v, index);
  if (n > MAX_INT64) throw argumentError(index, 'blocknumber too high');
  return { kind: 'number', number: n };
}

/** Block number or tag (no hash): eth_getBlockByNumber, eth_feeHistory, filter bounds, … */
export const blockNumberOrTag: ParamCodec<BlockSelector> = { name: 'block', decode: decodeBlockNumber };

/** Block number, tag or hash (EIP-1898): state methods, eth_call, eth_getBlockReceipts. */
export const blockNumberOrTagOrHash: ParamCodec<BlockSelector> = { name: 'block', decode: decodeBlockNumberOrHash };

/** The block param may be absent or null; it then selects `fallback` (geth: latest). */
export function blockOrDefault(codec: ParamCodec<BlockSelector>, fallback: BlockSelector = LATEST): ParamCodec<BlockSelector> {
  return {
    name: codec.name,
    optional: true,
    decode: (v, i) => (v === undefined || v === null ? fallback : codec.decode(v, i)),
  };
}

// ---------------------------------------------------------------------------------------------
// Call object (geth's TransactionArgs)

/** eth_call / eth_estimateGas input; `chainId` is checked against the node's by the handler. */
export interface CallArgs extends CallRequest {
  chainId?: bigint;
}

const TX_ARGS = 'TransactionArgs';

function decodeAccessList(v: unknown, index: number, struct: string, name: string): CallRequest['accessList'] {
  if (!Array.isArray(v)) {
    throw argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${struct}.${name} of type types.AccessList`);
  }
  return v.map((item) => {
    if (!isObject(item)) {
      throw argumentError(index, `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${struct}.${name} of type types.AccessTuple`);
    }
    const address = field(item, 'address');
    const keys = field(item, 'storageKeys');
    if (address === undefined) throw argumentError(index, "missing required field 'address' for AccessTuple");
    if (keys === undefined) throw argumentError(index, "missing required field 'storageKeys' for AccessTuple");
    if (!Array.isArray(keys)) {
      throw argumentError(index, `json: cannot unmarshal ${jsonKind(keys)} into Go struct field ${struct}.${name}.storageKeys of type []common.Hash`);
    }
    return {
      address: structField(index, struct, `${name}.address`, 'common.Address', () => parseData(address, index, ADDRESS_LENGTH)),
      storageKeys: keys.map((k) => structField(index, struct, `${name}.storageKeys`, 'common.Hash', () => parseData(k, index, HASH_LENGTH))),
    };
  });
}

const AUTH = 'SetCodeAuthorization';
const AUTH_FIELDS = ['chainId', 'address', 'nonce', 'yParity', 'r', 's'] as const;
const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * EIP-7702 authorizations of a call object: geth's SetCodeAuthorization JSON (core/types/gen_authorization.go:
 * every field required; chainId, r, s 256-bit quantities, nonce and yParity 64-bit), each authority recovered here.
 */
function decodeAuthorizationList(v: unknown, index: number): AuthorizationItem[] {
  if (!Array.isArray(v)) {
    throw argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${TX_ARGS}.authorizationList of type []types.${AUTH}`);
  }
  return v.map((item) => {
    if (!isObject(item)) {
      throw argumentError(index, `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${TX_ARGS}.authorizationList of type types.${AUTH}`);
    }
    for (const name of AUTH_FIELDS) {
      if (field(item, name) === undefined) throw argumentError(index, `missing required field '${name}' for ${AUTH}`);
    }
    const u256 = (name: string) =>
      structField(index, AUTH, name, 'hexutil.U256', () => {
        const n = parseQuantity(field(item, name), index);
        if (n > MAX_UINT256) throw argumentError(index, 'hex number > 256 bits');
        return n;
      });
    const u64 = (name: string) => structField(index, AUTH, name, 'hexutil.Uint64', () => parseUint64(field(item, name), index));
    const a = {
      chainId: u256('chainId'),
      address: structField(index, AUTH, 'address', 'common.Address', () => parseData(field(item, 'address'), index, ADDRESS_LENGTH)),
      nonce: u64('nonce'),
      yParity: u64('yParity'),
      r: u256('r'),
      s: u256('s'),
    };
    return { ...a, authority: authorityOf(a) };
  });
}

/** Transaction type as a byte: `0x2` or `0x02`. */
function parseTxType(v: unknown, index: number): number {
  if (typeof v === 'string' && /^0[xX][0-9a-fA-F]{1,2}$/.test(v)) return Number.parseInt(v.slice(2), 16);
  if (typeof v !== 'string') throw typeMismatch(index, 'non-string', 'hexutil.Uint64');
  throw argumentError(index, 'invalid transaction type (want a byte such as 0x2)');
}

function decodeCallArgs(v: unknown, index: number): CallArgs {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), `ethapi.${TX_ARGS}`);
  const out: CallArgs = {};
  const f = <T>(name: string, goType: string, parse: (x: unknown) => T): T | undefined => {
    const raw = field(v, name);
    return raw === undefined ? undefined : structField(index, TX_ARGS, name, goType, () => parse(raw));
  };
  const address = (x: unknown) => parseData(x, index, ADDRESS_LENGTH);
  const big = (x: unknown) => parseQuantity(x, index);
  const uint64 = (x: unknown) => parseUint64(x, index);
  const bytes = (x: unknown) => parseData(x, index);

  const from = f('from', 'common.Address', address);
  const to = f('to', 'common.Address', address);
  const gas = f('gas', 'hexutil.Uint64', uint64);
  const gasPrice = f('gasPrice', '*hexutil.Big', big);
  const maxFeePerGas = f('maxFeePerGas', '*hexutil.Big', big);
  const maxPriorityFeePerGas = f('maxPriorityFeePerGas', '*hexutil.Big', big);
  const value = f('value', '*hexutil.Big', big);
  const nonce = f('nonce', 'hexutil.Uint64', uint64);
  const data = f('data', 'hexutil.Bytes', bytes);
  const input = f('input', 'hexutil.Bytes', bytes);
  const chainId = f('chainId', '*hexutil.Big', big);
  const type = f('type', 'hexutil.Uint64', (x) => parseTxType(x, index));
  const accessListRaw = field(v, 'accessList');
  const authorizationListRaw = field(v, 'authorizationList');

  if (data !== undefined && input !== undefined && !equalBytes(data, input)) {
    throw argumentError(index, TX_DATA_CONFLICT);
  }
  if (from !== undefined) out.from = from;
  if (to !== undefined) out.to = to;
  if (gas !== undefined) out.gas = gas;
  if (gasPrice !== undefined) out.gasPrice = gasPrice;
  if (maxFeePerGas !== undefined) out.maxFeePerGas = maxFeePerGas;
  if (maxPriorityFeePerGas !== undefined) out.maxPriorityFeePerGas = maxPriorityFeePerGas;
  if (value !== undefined) out.value = value;
  if (nonce !== undefined) out.nonce = nonce;
  const callData = input ?? data;
  if (callData !== undefined) out.data = callData;
  if (accessListRaw !== undefined) out.accessList = decodeAccessList(accessListRaw, index, TX_ARGS, 'accessList');
  if (authorizationListRaw !== undefined && authorizationListRaw !== null) {
    out.authorizationList = decodeAuthorizationList(authorizationListRaw, index);
  }
  if (type !== undefined) out.type = type;
  if (chainId !== undefined) out.chainId = chainId;
  return out;
}

/** eth_call / eth_estimateGas call object. */
export const callArgs: ParamCodec<CallArgs> = { name: 'call object', decode: decodeCallArgs };

// ---------------------------------------------------------------------------------------------
// Log filter (geth's filters.FilterCriteria)

/** A decoded log filter: either `blockHash` (EIP-234) or a from/to range (absent = latest). */
export interface LogFilter {
  blockHash: Hash | undefined;
  fromBlock: BlockSelector | undefined;
  toBlock: BlockSelector | undefined;
  /** empty = any address */
  addresses: Address[];
  /** per position: null = wildcard, else any-of */
  topics: (Hash[] | null)[];
}

function decodeFilterBytes(s: string, index: number, size: number, what: string): Uint8Array {
  const b = parseData(s, index);
  if (b.length !== size) throw argumentError(index, `hex has invalid length ${b.length} after decoding; expected ${size} for ${what}`);
  return b;
}

function decodeFilterAddresses(v: unknown, index: number): Address[] {
  if (v === undefined) return [];
  if (typeof v === 'string') return [inContext(index, 'invalid address: ', () => decodeFilterBytes(v, index, ADDRESS_LENGTH, 'address'))];
  if (!Array.isArray(v)) throw argumentError(index, 'invalid addresses in query');
  return v.map((a, i) => {
    if (typeof a !== 'string') throw argumentError(index, `non-string address at index ${i}`);
    return inContext(index, `invalid address at index ${i}: `, () => decodeFilterBytes(a, index, ADDRESS_LENGTH, 'address'));
  });
}

function decodeFilterTopics(v: unknown, index: number): (Hash[] | null)[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw argumentError(index, `json: cannot unmarshal ${jsonKind(v)} into Go struct field input.topics of type []interface {}`);
  }
  if (v.length > MAX_TOPICS) throw argumentError(index, 'exceed max topics');
  return v.map((t): Hash[] | null => {
    if (t === null) return null;
    if (typeof t === 'string') return [decodeFilterBytes(t, index, HASH_LENGTH, 'topic')];
    if (!Array.isArray(t)) throw argumentError(index, 'invalid topic(s)');
    if (t.length > MAX_SUB_TOPICS) throw argumentError(index, 'exceed max topics');
    const anyOf: Hash[] = [];
    for (const sub of t) {
      // a null alternative matches anything: the whole position is a wildcard
      if (sub === null) return null;
      if (typeof sub !== 'string') throw argumentError(index, 'invalid topic(s)');
      anyOf.push(decodeFilterBytes(sub, index, HASH_LENGTH, 'topic'));
    }
    return anyOf.length === 0 ? null : anyOf;
  });
}

function decodeLogFilter(v: unknown, index: number): LogFilter {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), 'filters.FilterCriteria');
  const hashRaw = field(v, 'blockHash');
  const fromRaw = field(v, 'fromBlock');
  const toRaw = field(v, 'toBlock');
  const blockHash =
    hashRaw === undefined
      ? undefined
      : structField(index, 'input', 'blockHash', 'common.Hash', () => parseData(hashRaw, index, HASH_LENGTH));
  const fromBlock = fromRaw === undefined ? undefined : decodeBlockNumber(fromRaw, index);
  const toBlock = toRaw === undefined ? undefined : decodeBlockNumber(toRaw, index);
  if (blockHash !== undefined && (fromBlock !== undefined || toBlock !== undefined)) {
    throw argumentError(index, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
  }
  return {
    blockHash,
    fromBlock,
    toBlock,
    addresses: decodeFilterAddresses(field(v, 'address'), index),
    topics: decodeFilterTopics(field(v, 'topics'), index),
  };
}

/** eth_getLogs / eth_newFilter filter object. */
export const logFilter: ParamCodec<LogFilter> = { name: 'filter', decode: decodeLogFilter };

// ---------------------------------------------------------------------------------------------
// Storage keys

/** A storage slot, and whether the caller wrote it as a full 32-byte hash (eth_getProof echoes that form). */
export interface StorageKey {
  slot: Hash;
  fullHash: boolean;
}

/** A quantity (`0x1a`) or data of at most 32 bytes (`0x00…01`), left-padded to 32 bytes. */
function decodeStorageKey(v: unknown, index: number): StorageKey {
  if (typeof v !== 'string') throw typeMismatch(index, jsonKind(v), 'string');
  if (v.length === 0) throw argumentError(index, HexError.empty, HEX_DECODE);
  if (!(v.startsWith('0x') || v.startsWith('0X'))) throw argumentError(index, HexError.missingPrefix, HEX_DECODE);
  let digits = v.slice(2);
  if (digits.length === 0) throw argumentError(index, HexError.emptyNumber, HEX_DECODE);
  if (!HEX_DIGITS.test(digits)) throw argumentError(index, HexError.syntax, HEX_DECODE);
  if (digits.length > STORAGE_KEY_DIGITS) throw argumentError(index, 'storage key too long (want at most 32 bytes)');
  // odd digit count: only a compact quantity is acceptable
  if (digits.length % 2 === 1) {
    if (digits.length > 1 && digits[0] === '0') throw argumentError(index, HexError.leadingZero, HEX_DECODE);
    digits = '0' + digits;
  }
  const slot = new Uint8Array(HASH_LENGTH);
  asBuffer(slot).write(digits, HASH_LENGTH - digits.length / 2, 'hex');
  return { slot, fullHash: v.length === 2 + STORAGE_KEY_DIGITS };
}

export const storageKey: ParamCodec<StorageKey> = { name: 'storage key', decode: decodeStorageKey };

/** eth_getProof's key list; the count limit is checked by the handler (geth's text has no argument index). */
export const storageKeyList: ParamCodec<StorageKey[]> = {
  name: 'storage keys',
  decode(v, i) {
    if (!Array.isArray(v)) throw typeMismatch(i, jsonKind(v), '[]string');
    return v.map((k) => decodeStorageKey(k, i));
  },
};

// ---------------------------------------------------------------------------------------------
// eth_feeHistory

/** Block count: a quantity, a decimal string, or a JSON number (geth's math.HexOrDecimal64). */
export const blockCount: ParamCodec<number> = {
  name: 'block count',
  decode(v, i) {
    if (typeof v === 'number') {
      if (Number.isSafeInteger(v) && v >= 0) return v;
      throw argumentError(i, `invalid hex or decimal integer "${String(v)}"`);
    }
    if (typeof v !== 'string') throw typeMismatch(i, jsonKind(v), 'math.HexOrDecimal64');
    if (v.startsWith('0x') || v.startsWith('0X')) {
      const n = parseUint64(v, i);
      if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw argumentError(i, HexError.safeRange, HEX_DECODE);
      return Number(n);
    }
    if (!/^(0|[1-9][0-9]*)$/.test(v) || !Number.isSafeInteger(Number(v))) {
      throw argumentError(i, `invalid hex or decimal integer "${v}"`);
    }
    return Number(v);
  },
};

/** Optional reward percentiles: an array of JSON numbers (absent or null → undefined). */
export const rewardPercentiles: ParamCodec<number[] | undefined> = {
  name: 'reward percentiles',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) throw typeMismatch(i, jsonKind(v), '[]float64');
    return v.map((p) => {
      if (typeof p !== 'number') throw typeMismatch(i, jsonKind(p), 'float64');
      return p;
    });
  },
};
