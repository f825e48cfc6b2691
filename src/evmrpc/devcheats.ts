/**
 * The dev state cheats (docs/dev-mode.md "State cheats"): anvil_setBalance, anvil_setCode,
 * anvil_setStorageAt, anvil_setNonce and their hardhat_ twins, anvil_dumpState / anvil_loadState,
 * and the state file format they share with `--state FILE`.
 *
 * Parameter forms follow Anvil (foundry `crates/anvil/core/src/eth/mod.rs`: balance and nonce are a
 * JSON number or a hex string, the slot a U256, the storage value a B256) and Hardhat (the value
 * exactly 32 bytes). Results: Anvil answers `null` (setStorageAt: `true`), Hardhat `true`. A cheat is
 * pending on the chain thread until the next block applies it; `latest` reads see it at once.
 *
 * The state format is Anvil's SerializableState (`crates/anvil/src/eth/backend/db.rs`): JSON
 * `{ block, accounts: { addr: { nonce, balance, code, storage } }, best_block_number, blocks,
 * transactions, historical_states }`; anvil_dumpState answers it gzipped, as hex, and the `--state`
 * file is the plain JSON. Ferry writes no blocks or transactions and reads only `accounts`.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { invalidArgument, limitExceeded } from '../lib/errors.js';
import { address } from '../jsonrpc/codecs.js';
import { method, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Address } from '../types/chain.js';
import type { Cheat, StateAccount } from '../types/cheats.js';
import type { DevChannel } from '../types/dev.js';
import { toData as hexData } from '../lib/hex.js';

/** The most bytes of state JSON anvil_dumpState writes and anvil_loadState / `--state` read (after gunzip). */
export const MAX_STATE_BYTES = 64 * 1024 * 1024;
const UINT64_MAX = (1n << 64n) - 1n;
const U256_MAX = (1n << 256n) - 1n;
const HEX_NUMBER = /^0x[0-9a-fA-F]{1,64}$/;
const DECIMAL = /^[0-9]{1,78}$/;
const HEX_BYTES = /^(0x)?([0-9a-fA-F]{2})*$/;

/** What the cheat methods read; node/ wires ChainReader. */
export interface CheatBackend {
  latestNumber(): bigint;
  nonce(addr: Address, n: bigint): Promise<bigint>;
  latestAccounts(): Iterable<StateAccount>;
}

/**
 * The part of Surface A's modules (evmrpc/api.ts) the cheat methods use: the reader, and the dev
 * channel whose `setCheats` makes cheats pending until the next block (a limitExceeded domain error
 * past the pending cap).
 */
export interface CheatModules {
  reader: CheatBackend;
  chain: DevChannel;
}

/** A number as Anvil's `deserialize_number` takes it: a JSON number, a hex or a decimal string. */
function number(name: string, max: bigint): ParamCodec<bigint> {
  return {
    name,
    decode(v, i) {
      const n = parseNumber(v, `invalid argument ${i}: ${name}`);
      if (n > max) throw invalidArgument(`invalid argument ${i}: ${name} ${n} is too large (at most ${max})`);
      return n;
    },
  };
}

function parseNumber(v: unknown, what: string): bigint {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw invalidArgument(`${what} must be a non-negative integer, got ${v}`);
    return BigInt(v);
  }
  if (typeof v === 'string' && (HEX_NUMBER.test(v) || DECIMAL.test(v))) {
    const n = BigInt(v);
    if (n > U256_MAX) throw invalidArgument(`${what} does not fit in 256 bits`);
    return n;
  }
  throw invalidArgument(`${what} must be a number or a hex string of at most 32 bytes, got ${JSON.stringify(v)?.slice(0, 80)}`);
}

function parseBytes(v: unknown, what: string): Uint8Array {
  if (typeof v !== 'string' || !HEX_BYTES.test(v)) throw invalidArgument(`${what} must be hex bytes (0x…, an even number of digits)`);
  return Uint8Array.from(Buffer.from(v.startsWith('0x') ? v.slice(2) : v, 'hex'));
}

const toWord = (n: bigint): Uint8Array => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));

const balance = number('balance', U256_MAX);
const nonce = number('nonce', UINT64_MAX);
const slot: ParamCodec<Uint8Array> = { name: 'slot', decode: (v, i) => toWord(parseNumber(v, `invalid argument ${i}: slot`)) };
/** Anvil's `Bytes`: hex with or without 0x, "" is empty code */
const code: ParamCodec<Uint8Array> = { name: 'code', decode: (v, i) => parseBytes(v, `invalid argument ${i}: code`) };
/** the storage value: exactly 32 bytes (Anvil's B256; Hardhat's "Storage value must be exactly 32 bytes long") */
const word: ParamCodec<Uint8Array> = {
  name: 'value',
  decode(v, i) {
    const b = parseBytes(v, `invalid argument ${i}: value`);
    if (typeof v !== 'string' || !v.startsWith('0x') || b.length !== 32) {
      throw invalidArgument(`invalid argument ${i}: storage value must be exactly 32 bytes long (0x and 64 hex digits), got ${b.length} bytes`);
    }
    return b;
  },
};
const stateBytes: ParamCodec<Uint8Array> = { name: 'state', decode: (v, i) => parseBytes(v, `invalid argument ${i}: state`) };
const optionalBool: ParamCodec<boolean | undefined> = {
  name: 'preserve historical states',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw invalidArgument(`invalid argument ${i}: expected a bool`);
    return v;
  },
};

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const quantity = (n: bigint): string => '0x' + n.toString(16);

/** The latest state as Anvil's SerializableState JSON, at most MAX_STATE_BYTES. */
export function encodeState(backend: CheatBackend): Buffer {
  const n = backend.latestNumber();
  const parts: string[] = [];
  let size = 0;
  const add = (s: string) => {
    size += s.length;
    if (size > MAX_STATE_BYTES) throw limitExceeded(`the state is larger than ${MAX_STATE_BYTES} bytes of JSON (MAX_STATE_BYTES)`);
    parts.push(s);
  };
  // no block env: ferry carries no blocks, and Anvil (1.7) refuses a block env whose block it lacks
  add('{"block":null,"accounts":{');
  let first = true;
  for (const a of backend.latestAccounts()) {
    const storage: Record<string, string> = {};
    for (const [k, v] of a.storage) storage[hex(k)] = hex(v);
    const rec = { nonce: Number(a.nonce), balance: quantity(a.balance), code: hex(a.code), storage };
    add(`${first ? '' : ','}${JSON.stringify(hex(a.address))}:${JSON.stringify(rec)}`);
    first = false;
  }
  add(`},"best_block_number":${Number(n)},"blocks":[],"transactions":[],"historical_states":null}`);
  return Buffer.from(parts.join(''), 'utf8');
}

/** One account of a state file, decoded. */
interface LoadedAccount {
  address: Uint8Array;
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  storage: [Uint8Array, Uint8Array][];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Decodes a state file (plain JSON, or gzipped JSON as anvil_dumpState writes it); only `accounts` is read. */
function decodeState(input: Uint8Array): LoadedAccount[] {
  let json: Buffer;
  if (input.length >= 2 && input[0] === 0x1f && input[1] === 0x8b) {
    try {
      json = gunzipSync(input, { maxOutputLength: MAX_STATE_BYTES });
    } catch (e) {
      const tooLarge = (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      if (tooLarge) throw limitExceeded(`the state is larger than ${MAX_STATE_BYTES} bytes of JSON (MAX_STATE_BYTES)`);
      throw invalidArgument(`the state is not valid gzip: ${(e as Error).message}`);
    }
  } else {
    if (input.length > MAX_STATE_BYTES) throw limitExceeded(`the state is larger than ${MAX_STATE_BYTES} bytes of JSON (MAX_STATE_BYTES)`);
    json = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json.toString('utf8'));
  } catch (e) {
    throw invalidArgument(`the state is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc) || !isObject(doc.accounts)) throw invalidArgument('the state has no "accounts" object (the anvil_dumpState format)');
  const out: LoadedAccount[] = [];
  for (const [addr, rec] of Object.entries(doc.accounts)) {
    const where = `state account ${addr}`;
    const a = parseBytes(addr, where);
    if (a.length !== 20 || !addr.startsWith('0x')) throw invalidArgument(`${where}: not a 20-byte 0x address`);
    if (!isObject(rec)) throw invalidArgument(`${where}: expected an object { nonce, balance, code, storage }`);
    const n = parseNumber(rec.nonce ?? 0, `${where}: nonce`);
    if (n > UINT64_MAX) throw invalidArgument(`${where}: nonce does not fit in 64 bits`);
    const storage: [Uint8Array, Uint8Array][] = [];
    const st = rec.storage ?? {};
    if (!isObject(st)) throw invalidArgument(`${where}: storage must be an object of slot: value`);
    for (const [k, v] of Object.entries(st)) storage.push([toWord(parseNumber(k, `${where}: storage slot`)), toWord(parseNumber(v, `${where}: storage value`))]);
    out.push({
      address: a,
      nonce: n,
      balance: parseNumber(rec.balance ?? 0, `${where}: balance`),
      code: parseBytes(rec.code ?? '0x', `${where}: code`),
      storage,
    });
  }
  return out;
}

/**
 * Merges a state into the current one as cheats (pending until the next block), as Anvil's
 * load_state: each account's balance, code and slots are set (other slots stay), its nonce becomes
 * the larger of the current and the loaded one. Nothing changes when the input is refused.
 */
export async function loadState({ reader, chain }: CheatModules, input: Uint8Array): Promise<number> {
  const accounts = decodeState(input);
  const latest = reader.latestNumber();
  const cheats: Cheat[] = [];
  for (const a of accounts) {
    const current = await reader.nonce(a.address, latest);
    cheats.push({ kind: 'balance', address: a.address, value: a.balance });
    cheats.push({ kind: 'nonce', address: a.address, value: a.nonce > current ? a.nonce : current });
    cheats.push({ kind: 'code', address: a.address, code: a.code });
    for (const [s, v] of a.storage) cheats.push({ kind: 'slot', address: a.address, slot: s, value: v });
  }
  await chain.dev({ op: 'setCheats', cheats });
  return accounts.length;
}

export function createCheatMethods(modules: CheatModules): MethodTable {
  const { reader, chain } = modules;
  /** one cheat method with Anvil's (`anvil`) or Hardhat's (`hardhat`) answer */
  const setter = <const P extends readonly ParamCodec[]>(params: P, make: (args: never) => Cheat, answer: null | true) =>
    method(
      params,
      async (args) => {
        await chain.dev({ op: 'setCheats', cheats: [make(args as never)] });
        return answer;
      },
      { private: true },
    );
  const setBalance = (answer: null | true) =>
    setter([address, balance], ([a, v]: [Address, bigint]) => ({ kind: 'balance', address: a, value: v }), answer);
  const setNonce = (answer: null | true) =>
    setter([address, nonce], ([a, v]: [Address, bigint]) => ({ kind: 'nonce', address: a, value: v }), answer);
  const setCode = (answer: null | true) =>
    setter([address, code], ([a, c]: [Address, Uint8Array]) => ({ kind: 'code', address: a, code: c }), answer);
  const setStorageAt = setter(
    [address, slot, word],
    ([a, s, v]: [Address, Uint8Array, Uint8Array]) => ({ kind: 'slot', address: a, slot: s, value: v }),
    true,
  );
  const dumpState = method([optionalBool], () => hexData(gzipSync(encodeState(reader))), { private: true });
  const load = method(
    [stateBytes],
    async ([buf]) => {
      await loadState(modules, buf);
      return true;
    },
    { private: true },
  );
  return Object.freeze({
    anvil_setBalance: setBalance(null),
    hardhat_setBalance: setBalance(true),
    anvil_setNonce: setNonce(null),
    evm_setAccountNonce: setNonce(null),
    hardhat_setNonce: setNonce(true),
    anvil_setCode: setCode(null),
    hardhat_setCode: setCode(true),
    anvil_setStorageAt: setStorageAt,
    hardhat_setStorageAt: setStorageAt,
    anvil_dumpState: dumpState,
    hardhat_dumpState: dumpState,
    anvil_loadState: load,
    hardhat_loadState: load,
  });
}
