/**
 * genesis.json: a CometBFT genesis document (int64 as decimal strings, validator keys in base64)
 * whose `app_state.evm` holds the EVM genesis with a geth-style `alloc`.
 */
import { badConfig } from '../lib/errors.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { DEV_ACCOUNT_BALANCE, DEV_ACCOUNT_COUNT, devAccounts } from './devaccounts.js';
import { PREDEPLOYS, predeployAccount } from './predeploys.js';
import { base64, data, DECIMAL, fail, fixed, int64, join, kind, object, record, string, uint, type Obj } from './genesiscodec.js';

/** int64's largest value: a fork time must fit CometBFT's block time */
const INT64_MAX = (1n << 63n) - 1n;

export interface GenesisValidator {
  /** 20 bytes: first 20 bytes of sha256(pubKey) */
  address: Uint8Array;
  /** ed25519, 32 bytes */
  pubKey: Uint8Array;
  power: bigint;
  name: string;
}

export interface GenesisAccount {
  balance: bigint;
  nonce: bigint;
  code?: Uint8Array;
  /** 0x + 64 lowercase hex slot → 32-byte value */
  storage?: Map<string, Uint8Array>;
}

/** A scheduled validator change (`app_state.validator_schedule`): FinalizeBlock of `height` returns it. */
export interface ScheduledValidatorUpdate {
  height: bigint;
  /** ed25519, 32 bytes */
  pubKey: Uint8Array;
  /** 0 removes the validator */
  power: bigint;
}

export interface Genesis {
  /** RFC3339 */
  genesisTime: string;
  chainId: string;
  /** from chainId, see parseChainId */
  evmChainId: bigint;
  initialHeight: bigint;
  maxBytes: bigint;
  /** EVM block gas limit */
  maxGas: bigint;
  validators: GenesisValidator[];
  evm: {
    /** the rules at genesis (docs/configuration.md "Hardforks") */
    hardfork: string;
    /** `app_state.evm.chain_config`: later forks activated by block time; absent = the genesis fork forever */
    forkTimes?: ForkTimes;
    baseFeePerGas: bigint;
    /** 20 bytes */
    coinbase: Uint8Array;
    /** key: lowercase 0x address */
    alloc: Map<string, GenesisAccount>;
  };
  /** validator set changes by height (docs/cometbft-rpc.md "Validator set changes"); absent = none */
  validatorSchedule?: ScheduledValidatorUpdate[];
}

/**
 * Activation times (unix seconds, compared with the block's CometBFT time) of the forks after the
 * genesis one, by fork name; cosmos/evm x/vm ChainConfig's `cancun_time`, `prague_time`, `osaka_time`.
 */
export type ForkTimes = Partial<Record<string, bigint>>;

export const DEFAULT_CHAIN_ID = 'ferry_9000-1';
/** a genesis without `app_state.evm.hardfork` (written before ferry chose the fork at init) runs these rules */
export const DEFAULT_HARDFORK = 'cancun';
/** the fork a new home's genesis names (ferry init, fresh dev homes, ferry testnet) */
export const DEFAULT_NEW_HARDFORK = 'osaka';
/** oldest first: a fork's rules include every earlier one's */
export const SUPPORTED_HARDFORKS: readonly string[] = ['cancun', 'prague', 'osaka'];
export const DEFAULT_BASE_FEE_PER_GAS = 1_000_000_000n;
export const DEFAULT_BLOCK_MAX_BYTES = 22_020_096n;
export const DEFAULT_BLOCK_MAX_GAS = 60_000_000n;
/** CometBFT `types.MaxBlockSizeBytes` */
export const MAX_BLOCK_MAX_BYTES = 104_857_600n;
/** CometBFT `MaxChainIDLen` */
export const MAX_CHAIN_ID_LENGTH = 50;
export const DEV_VALIDATOR_POWER = 10n;
export const DEV_VALIDATOR_NAME = 'ferry';
/** amino JSON name of an ed25519 public key (genesis validators, priv_validator_key.json, /validators) */
export const PUBKEY_TYPE_ED25519 = 'tendermint/PubKeyEd25519';

/**
 * The consensus params ferry supports besides `block`: CometBFT's defaults, which ferry does not
 * change, as CometBFT writes them in genesis.json and /consensus_params (a genesis naming other
 * values is rejected).
 */
export const FIXED_CONSENSUS_PARAMS = {
  evidence: { max_age_num_blocks: '100000', max_age_duration: '172800000000000', max_bytes: '1048576' },
  validator: { pub_key_types: ['ed25519'] },
  version: { app: '0' },
  abci: { vote_extensions_enable_height: '0' },
} as const;

/** Evmos `ethermint/types/chain_id.go` */
const CHAIN_ID = /^([a-z]{1,})_{1}([1-9][0-9]*)-{1}([1-9][0-9]*)$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const UINT64_MAX = (1n << 64n) - 1n;
const UINT256_MAX = (1n << 256n) - 1n;
const ADDRESS_BYTES = 20;
const ED25519_PUBKEY_BYTES = 32;
const SLOT_BYTES = 32;

/** EVM chain id of a Cosmos chain id `name_<evm id>-<epoch>`, e.g. `ferry_9000-1` → 9000n. */
export function parseChainId(chainId: string): bigint {
  const m = CHAIN_ID.exec(chainId);
  if (!m || chainId.length > MAX_CHAIN_ID_LENGTH) {
    throw badConfig('chain_id', `invalid chain-id ${JSON.stringify(chainId)}: want {name}_{evm chain id}-{epoch}, e.g. ${DEFAULT_CHAIN_ID}`);
  }
  return BigInt(m[2]!);
}

/** CometBFT validator address: first 20 bytes of sha256 of the ed25519 public key. */
export function validatorAddress(pubKey: Uint8Array): Uint8Array {
  return sha256(pubKey).subarray(0, ADDRESS_BYTES);
}

/** The dev coinbase: last 20 bytes of keccak256 of the validator's ed25519 public key. */
export function coinbaseOf(pubKey: Uint8Array): Uint8Array {
  return keccak_256(pubKey).subarray(12);
}

/** A dev genesis: one validator, the dev accounts funded with 10000 ETH each, the predeploys (config/predeploys.ts). */
export function devGenesis(args: { chainId?: string; validatorPubKey: Uint8Array; genesisTime?: string; hardfork?: string; forkTimes?: ForkTimes; initialHeight?: bigint }): Genesis {
  const chainId = args.chainId ?? DEFAULT_CHAIN_ID;
  const alloc = new Map<string, GenesisAccount>();
  for (const a of devAccounts(DEV_ACCOUNT_COUNT)) {
    alloc.set(hex(a.address), { balance: DEV_ACCOUNT_BALANCE, nonce: 0n });
  }
  for (const p of PREDEPLOYS) alloc.set(p.address.toLowerCase(), predeployAccount(p));
  return {
    genesisTime: args.genesisTime ?? new Date().toISOString(),
    chainId,
    evmChainId: parseChainId(chainId),
    initialHeight: args.initialHeight ?? 1n,
    maxBytes: DEFAULT_BLOCK_MAX_BYTES,
    maxGas: DEFAULT_BLOCK_MAX_GAS,
    validators: [
      {
        address: validatorAddress(args.validatorPubKey),
        pubKey: args.validatorPubKey,
        power: DEV_VALIDATOR_POWER,
        name: DEV_VALIDATOR_NAME,
      },
    ],
    evm: {
      hardfork: args.hardfork ?? DEFAULT_HARDFORK,
      ...(args.forkTimes === undefined ? {} : { forkTimes: args.forkTimes }),
      baseFeePerGas: DEFAULT_BASE_FEE_PER_GAS,
      coinbase: coinbaseOf(args.validatorPubKey),
      alloc,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// parsing

/** Parses and checks genesis.json text (or its already-parsed JSON value). Errors name the field. */
export function parseGenesis(json: string | unknown): Genesis {
  let doc: unknown = json;
  if (typeof json === 'string') {
    try {
      doc = JSON.parse(json);
    } catch (e) {
      throw badConfig('genesis', `invalid genesis: not JSON: ${(e as Error).message}`);
    }
  }
  const g = object(doc, '', ['genesis_time', 'chain_id', 'initial_height', 'consensus_params', 'validators', 'app_hash', 'app_state']);

  const genesisTime = string(g.genesis_time, 'genesis_time');
  if (!RFC3339.test(genesisTime) || Number.isNaN(Date.parse(genesisTime))) {
    fail('genesis_time', `expected an RFC3339 time, got ${JSON.stringify(genesisTime)}`);
  }
  const chainId = string(g.chain_id, 'chain_id');
  let evmChainId: bigint;
  try {
    evmChainId = parseChainId(chainId);
  } catch (e) {
    fail('chain_id', (e as Error).message);
  }
  const initialHeight = int64(g.initial_height, 'initial_height', 1n);

  const cp = object(g.consensus_params, 'consensus_params', ['block'], Object.keys(FIXED_CONSENSUS_PARAMS));
  const block = object(cp.block, 'consensus_params.block', ['max_bytes', 'max_gas']);
  const maxBytes = int64(block.max_bytes, 'consensus_params.block.max_bytes', 1n);
  if (maxBytes > MAX_BLOCK_MAX_BYTES) fail('consensus_params.block.max_bytes', `must be at most ${MAX_BLOCK_MAX_BYTES}`);
  const maxGas = int64(block.max_gas, 'consensus_params.block.max_gas', 1n);
  for (const [name, want] of Object.entries(FIXED_CONSENSUS_PARAMS)) {
    if (name in cp) fixed(cp[name], `consensus_params.${name}`, want);
  }

  if (!Array.isArray(g.validators) || g.validators.length === 0) fail('validators', 'expected a non-empty array');
  const validators = g.validators.map((v, i) => parseValidator(v, `validators[${i}]`));

  if (g.app_hash !== '') fail('app_hash', 'must be "" (the application computes the genesis state root)');

  const appState = object(g.app_state, 'app_state', ['evm'], ['validator_schedule']);
  const evm = object(appState.evm, 'app_state.evm', ['alloc'], ['hardfork', 'chain_config', 'base_fee_per_gas', 'coinbase']);
  const hardfork = evm.hardfork === undefined ? DEFAULT_HARDFORK : string(evm.hardfork, 'app_state.evm.hardfork');
  if (!SUPPORTED_HARDFORKS.includes(hardfork)) {
    fail('app_state.evm.hardfork', `unsupported hardfork ${JSON.stringify(hardfork)} (supported: ${SUPPORTED_HARDFORKS.join(', ')})`);
  }
  const forkTimes = evm.chain_config === undefined ? undefined : parseChainConfig(evm.chain_config, hardfork);
  const baseFeePerGas =
    evm.base_fee_per_gas === undefined ? DEFAULT_BASE_FEE_PER_GAS : uint(evm.base_fee_per_gas, 'app_state.evm.base_fee_per_gas', UINT256_MAX);
  const coinbase = evm.coinbase === undefined ? coinbaseOf(validators[0]!.pubKey) : data(evm.coinbase, 'app_state.evm.coinbase', ADDRESS_BYTES);

  const allocDoc = record(evm.alloc, 'app_state.evm.alloc');
  const alloc = new Map<string, GenesisAccount>();
  for (const [addr, account] of Object.entries(allocDoc)) {
    const path = `app_state.evm.alloc.${addr}`;
    const key = hex(data(addr, path, ADDRESS_BYTES));
    if (alloc.has(key)) fail(path, 'duplicate address');
    alloc.set(key, parseAccount(account, path));
  }

  return {
    genesisTime,
    chainId,
    evmChainId,
    initialHeight,
    maxBytes,
    maxGas,
    validators,
    evm: { hardfork, ...(forkTimes === undefined ? {} : { forkTimes }), baseFeePerGas, coinbase, alloc },
    ...(appState.validator_schedule === undefined ? {} : { validatorSchedule: parseValidatorSchedule(appState.validator_schedule) }),
  };
}

/** The forks a new home runs: `--hardfork` (default DEFAULT_NEW_HARDFORK) and `--<fork>-time` flags. */
export interface ForkChoice {
  hardfork: string;
  forkTimes?: ForkTimes;
}

/**
 * The fork flags of `ferry init` / `dev` / `start` / `testnet`: `hardfork` a supported name (Anvil's
 * `--hardfork` names), `times` by fork name: unix seconds, or `+N` for N seconds from `nowSeconds`.
 * Checked as the genesis codec checks `chain_config` (order, monotonic times).
 */
export function forkChoice(hardfork: string | undefined, times: Record<string, string | undefined>, nowSeconds: bigint): ForkChoice {
  const fork = (hardfork ?? DEFAULT_NEW_HARDFORK).toLowerCase();
  if (!SUPPORTED_HARDFORKS.includes(fork)) {
    throw badConfig('hardfork', `--hardfork: unsupported hardfork ${JSON.stringify(hardfork)} (supported: ${SUPPORTED_HARDFORKS.join(', ')})`);
  }
  const doc: Record<string, string> = {};
  for (const [name, v] of Object.entries(times)) {
    if (v === undefined) continue;
    const m = /^(\+?)(\d+)$/.exec(v);
    if (!m) throw badConfig(`${name}-time`, `--${name}-time: expected unix seconds or +seconds from now, got ${JSON.stringify(v)}`);
    doc[forkTimeKey(name)] = (m[1] === '+' ? nowSeconds + BigInt(m[2]!) : BigInt(m[2]!)).toString();
  }
  if (Object.keys(doc).length === 0) return { hardfork: fork };
  return { hardfork: fork, forkTimes: parseChainConfig(doc, fork) };
}

/** Whether a genesis runs the forks `choice` asks for (a `--hardfork` given for an existing home must match it). */
export function sameForks(g: Genesis, choice: ForkChoice): boolean {
  if (g.evm.hardfork !== choice.hardfork) return false;
  return SUPPORTED_HARDFORKS.every((f) => g.evm.forkTimes?.[f] === choice.forkTimes?.[f]);
}

/** `app_state.evm.chain_config` key of a fork's activation time */
const forkTimeKey = (fork: string) => `${fork}_time`;

/**
 * `app_state.evm.chain_config`: `<fork>_time` per supported fork, unix seconds as a decimal string (as
 * cosmos/evm's x/vm ChainConfig writes its math.Int fields) or a JSON integer; null or absent = not scheduled.
 * Forks after `hardfork` activate in order (geth params/config.go CheckConfigForkOrder): a scheduled fork
 * needs every fork between it and `hardfork` scheduled, at the same time or earlier. Times of forks up to
 * `hardfork` are allowed (they are active from genesis) and ignored.
 */
function parseChainConfig(v: unknown, hardfork: string): ForkTimes {
  const path = 'app_state.evm.chain_config';
  const o = object(v, path, [], SUPPORTED_HARDFORKS.map(forkTimeKey));
  const times: ForkTimes = {};
  let previous: { fork: string; time: bigint } | undefined;
  for (const fork of SUPPORTED_HARDFORKS.slice(SUPPORTED_HARDFORKS.indexOf(hardfork) + 1)) {
    const key = forkTimeKey(fork);
    const raw = o[key];
    if (raw === undefined || raw === null) {
      previous = undefined;
      continue;
    }
    const time = forkTime(raw, join(path, key));
    const before = SUPPORTED_HARDFORKS[SUPPORTED_HARDFORKS.indexOf(fork) - 1]!;
    if (before !== hardfork && previous === undefined) {
      fail(join(path, key), `${fork} is scheduled but ${before} is not (forks after the genesis hardfork ${hardfork} activate in order)`);
    }
    if (previous !== undefined && time < previous.time) {
      fail(join(path, key), `${fork} at ${time} would activate before ${previous.fork} at ${previous.time}`);
    }
    times[fork] = time;
    previous = { fork, time };
  }
  for (const fork of SUPPORTED_HARDFORKS.slice(0, SUPPORTED_HARDFORKS.indexOf(hardfork) + 1)) {
    const raw = o[forkTimeKey(fork)];
    if (raw !== undefined && raw !== null) forkTime(raw, join(path, forkTimeKey(fork)));
  }
  return times;
}

/** unix seconds: a decimal string or a non-negative JSON integer */
function forkTime(v: unknown, path: string): bigint {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) fail(path, `expected a non-negative integer, got ${v}`);
    return BigInt(v);
  }
  const s = string(v, path);
  if (!DECIMAL.test(s)) fail(path, `expected unix seconds as decimal digits, got ${JSON.stringify(s)}`);
  const n = BigInt(s);
  if (n > INT64_MAX) fail(path, `${s} overflows int64`);
  return n;
}

function parseValidatorSchedule(v: unknown): ScheduledValidatorUpdate[] {
  const path = 'app_state.validator_schedule';
  if (!Array.isArray(v)) fail(path, `expected an array, got ${kind(v)}`);
  return v.map((entry, i) => {
    const at = `${path}[${i}]`;
    const o = object(entry, at, ['height', 'pub_key', 'power']);
    const pk = object(o.pub_key, `${at}.pub_key`, ['type', 'value']);
    if (pk.type !== PUBKEY_TYPE_ED25519) fail(`${at}.pub_key.type`, `expected ${JSON.stringify(PUBKEY_TYPE_ED25519)}`);
    return {
      height: int64(o.height, `${at}.height`, 1n),
      pubKey: base64(pk.value, `${at}.pub_key.value`, ED25519_PUBKEY_BYTES),
      power: int64(o.power, `${at}.power`, 0n),
    };
  });
}

function parseValidator(v: unknown, path: string): GenesisValidator {
  const o = object(v, path, ['address', 'pub_key', 'power'], ['name']);
  const pk = object(o.pub_key, `${path}.pub_key`, ['type', 'value']);
  if (pk.type !== PUBKEY_TYPE_ED25519) fail(`${path}.pub_key.type`, `expected ${JSON.stringify(PUBKEY_TYPE_ED25519)}`);
  const pubKey = base64(pk.value, `${path}.pub_key.value`, ED25519_PUBKEY_BYTES);
  const addressText = string(o.address, `${path}.address`);
  if (!/^[0-9a-fA-F]{40}$/.test(addressText)) fail(`${path}.address`, 'expected 40 hex digits');
  const address = new Uint8Array(Buffer.from(addressText, 'hex'));
  if (hex(address) !== hex(validatorAddress(pubKey))) {
    fail(`${path}.address`, `does not match pub_key (want ${Buffer.from(validatorAddress(pubKey)).toString('hex').toUpperCase()})`);
  }
  const power = int64(o.power, `${path}.power`, 1n);
  const name = o.name === undefined ? '' : string(o.name, `${path}.name`);
  return { address, pubKey, power, name };
}

function parseAccount(v: unknown, path: string): GenesisAccount {
  const o = object(v, path, ['balance'], ['nonce', 'code', 'storage']);
  const account: GenesisAccount = {
    balance: uint(o.balance, `${path}.balance`, UINT256_MAX),
    nonce: o.nonce === undefined ? 0n : uint(o.nonce, `${path}.nonce`, UINT64_MAX),
  };
  if (o.code !== undefined) {
    const code = data(o.code, `${path}.code`);
    if (code.length > 0) account.code = code;
  }
  if (o.storage !== undefined) {
    const storageDoc = record(o.storage, `${path}.storage`);
    const storage = new Map<string, Uint8Array>();
    for (const [slot, value] of Object.entries(storageDoc)) {
      const slotPath = `${path}.storage.${slot}`;
      const key = hex(data(slot, slotPath, SLOT_BYTES));
      if (storage.has(key)) fail(slotPath, 'duplicate slot');
      storage.set(key, data(value, slotPath, SLOT_BYTES));
    }
    account.storage = storage;
  }
  return account;
}

// ---------------------------------------------------------------------------------------------
// rendering

/** genesis.json text (2-space indent, trailing newline). Throws if evmChainId does not match chainId. */
export function renderGenesis(g: Genesis): string {
  if (parseChainId(g.chainId) !== g.evmChainId) {
    throw badConfig('chain_id', `genesis evmChainId ${g.evmChainId} does not match chain id ${g.chainId}`);
  }
  const alloc: Obj = {};
  for (const [addr, a] of [...g.evm.alloc].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const entry: Obj = { balance: quantity(a.balance) };
    if (a.nonce !== 0n) entry.nonce = quantity(a.nonce);
    if (a.code && a.code.length > 0) entry.code = hex(a.code);
    if (a.storage && a.storage.size > 0) {
      const storage: Obj = {};
      for (const [slot, value] of [...a.storage].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
        storage[slot] = hex(value);
      }
      entry.storage = storage;
    }
    alloc[addr] = entry;
  }
  const doc = {
    genesis_time: g.genesisTime,
    chain_id: g.chainId,
    initial_height: g.initialHeight.toString(),
    consensus_params: {
      block: { max_bytes: g.maxBytes.toString(), max_gas: g.maxGas.toString() },
      ...FIXED_CONSENSUS_PARAMS,
    },
    validators: g.validators.map((v) => ({
      address: Buffer.from(v.address).toString('hex').toUpperCase(),
      pub_key: { type: PUBKEY_TYPE_ED25519, value: Buffer.from(v.pubKey).toString('base64') },
      power: v.power.toString(),
      name: v.name,
    })),
    app_hash: '',
    app_state: {
      ...(g.validatorSchedule && g.validatorSchedule.length > 0
        ? {
            validator_schedule: g.validatorSchedule.map((u) => ({
              height: u.height.toString(),
              pub_key: { type: PUBKEY_TYPE_ED25519, value: Buffer.from(u.pubKey).toString('base64') },
              power: u.power.toString(),
            })),
          }
        : {}),
      evm: {
        hardfork: g.evm.hardfork,
        ...(g.evm.forkTimes === undefined ? {} : { chain_config: renderChainConfig(g.evm.forkTimes) }),
        base_fee_per_gas: g.evm.baseFeePerGas.toString(),
        coinbase: hex(g.evm.coinbase),
        alloc,
      },
    },
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

function renderChainConfig(times: ForkTimes): Record<string, string> {
  const out: Record<string, string> = {};
  for (const fork of SUPPORTED_HARDFORKS) {
    const t = times[fork];
    if (t !== undefined) out[forkTimeKey(fork)] = t.toString();
  }
  return out;
}

function hex(b: Uint8Array): string {
  return '0x' + Buffer.from(b).toString('hex');
}

function quantity(n: bigint): string {
  return '0x' + n.toString(16);
}
