/**
 * Loads NodeOptions from `<home>/config/app.toml`, `<home>/config/config.toml` and flags.
 * Precedence: flag > file > default. Every value is validated; a bad one throws a badConfig error whose
 * message names the key, e.g. `invalid json-rpc config value: json-rpc.api: unknown namespace "foo"`.
 */
import { badConfig } from '../lib/errors.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { CONFIG_KEYS, type ConfigFile, type ConfigKey } from './keys.js';
import {
  DEFAULT_ABCI,
  DEFAULT_CONSENSUS,
  DEFAULT_INSTRUMENTATION,
  DEFAULT_JSON_RPC,
  DEFAULT_LOG_LEVEL,
  DEFAULT_MEMPOOL,
  DEFAULT_MINIMUM_GAS_PRICE,
  DEFAULT_PRUNING,
  DEFAULT_STATE_SYNC,
  DEFAULT_RPC,
  MIN_PRUNING_INTERVAL,
  MIN_PRUNING_KEEP_RECENT,
  NAMESPACES,
  type NodeOptions,
} from './options.js';


export const CONFIG_DIR = 'config';
export const DATA_DIR = 'data';
export const APP_TOML = 'app.toml';
export const CONFIG_TOML = 'config.toml';

const FILES: readonly ConfigFile[] = [APP_TOML, CONFIG_TOML];
const KEYS_BY_NAME = new Map(CONFIG_KEYS.map((k) => [k.name, k]));

/** All defaults, for `home`. Fresh copies: callers may mutate the result. */
export function defaultOptions(home: string): NodeOptions {
  return {
    home,
    minimumGasPrice: DEFAULT_MINIMUM_GAS_PRICE,
    minimumGasPriceFromFlag: false,
    blockEngine: 'revm',
    logLevel: DEFAULT_LOG_LEVEL,
    jsonRpc: { ...DEFAULT_JSON_RPC, api: [...DEFAULT_JSON_RPC.api] },
    rpc: { ...DEFAULT_RPC, corsAllowedOrigins: [...DEFAULT_RPC.corsAllowedOrigins] },
    consensus: { ...DEFAULT_CONSENSUS },
    mempool: { ...DEFAULT_MEMPOOL },
    abci: { ...DEFAULT_ABCI },
    pruning: { ...DEFAULT_PRUNING },
    stateSync: { ...DEFAULT_STATE_SYNC },
    instrumentation: { ...DEFAULT_INSTRUMENTATION },
    dev: false,
  };
}

/** The JSON-RPC listeners of the dev preset (loopback: the private namespaces are served without a token there). */
export const DEV_JSON_RPC_ADDRESS = '127.0.0.1:8545';
export const DEV_WS_ADDRESS = '127.0.0.1:8546';

/**
 * The dev preset (docs/dev-mode.md), over the files and under the flags: every namespace, blocks as
 * soon as a tx arrives and no timer (automine), CORS from any origin, private namespaces without a
 * token on loopback listeners, and the dev accounts unlocked.
 */
function applyDevPreset(opts: NodeOptions): void {
  opts.dev = true;
  opts.jsonRpc.api = [...NAMESPACES];
  opts.jsonRpc.address = DEV_JSON_RPC_ADDRESS;
  opts.jsonRpc.wsAddress = DEV_WS_ADDRESS;
  opts.jsonRpc.privateApiAuth = false;
  opts.jsonRpc.enableUnsafeCors = true;
  opts.consensus.blockOnTx = true;
  // a dev chain is an archive (docs/dev-mode.md): every height's state and blocks stay
  opts.pruning = { ...DEFAULT_PRUNING, strategy: 'nothing' };
}

/**
 * Reads the config files of `home` (a missing file means all defaults) and applies `flags` on top.
 * Flag keys are the flag names without `--` (`'json-rpc.api'`, `'rpc.laddr'`, `'minimum-gas-prices'`,
 * `'consensus.timeout_commit'`, `'log_level'`); values are strings as typed, booleans, or numbers;
 * undefined values are skipped. An unknown flag key is an error.
 */
export function loadOptions(home: string, flags: Record<string, unknown>, preset: { dev?: boolean } = {}): NodeOptions {
  const opts = defaultOptions(home);
  for (const file of FILES) {
    const path = join(home, CONFIG_DIR, file);
    if (existsSync(path)) applyFile(opts, file, path);
  }
  if (preset.dev === true) applyDevPreset(opts);
  for (const [name, raw] of Object.entries(flags)) {
    if (raw === undefined) continue;
    const key = KEYS_BY_NAME.get(name);
    if (!key) throw badConfig(name, `unknown flag --${name}`);
    key.apply(opts, raw);
    if (name === 'minimum-gas-prices') opts.minimumGasPriceFromFlag = true;
  }
  checkCombination(opts);
  checkAbciFlags(opts, flags);
  return opts;
}

function applyFile(opts: NodeOptions, file: ConfigFile, path: string): void {
  let doc: Record<string, unknown>;
  try {
    doc = parse(readFileSync(path, 'utf8'), { integersAsBigInt: true });
  } catch (e) {
    const detail = e instanceof TomlError ? e.message.split('\n')[0] : (e as Error).message;
    throw badConfig(file, `cannot read ${path}: ${detail}`);
  }
  const keys = CONFIG_KEYS.filter((k) => k.file === file);
  const sections = new Set(keys.map((k) => k.section));
  for (const [name, value] of Object.entries(doc)) {
    if (sections.has(name) && name !== '') {
      if (!isTable(value)) throw badConfig(name, `${path}: [${name}] must be a table`);
      for (const [key, raw] of Object.entries(value)) applyKey(keys, name, key, raw, path);
    } else {
      applyKey(keys, '', name, value, path);
    }
  }

  function applyKey(keys: readonly ConfigKey[], section: string, key: string, raw: unknown, where: string): void {
    const spec = keys.find((k) => k.section === section && k.key === key);
    const name = section === '' ? key : `${section}.${key}`;
    if (!spec) throw badConfig(name, `${where}: unknown key ${JSON.stringify(name)}`);
    spec.apply(opts, raw);
  }
}

/** Rules across keys (Evmos `JSONRPCConfig.Validate`, Cosmos SDK `PruningOptions.Validate`). */
function checkCombination(opts: NodeOptions): void {
  checkPruning(opts);
  if (opts.jsonRpc.enable && opts.jsonRpc.api.length === 0) {
    throw badConfig(
      'json-rpc.api',
      'invalid json-rpc config value: json-rpc.api: cannot enable JSON-RPC without defining any API namespace',
    );
  }
}

/** evmosd's rule: --address and --transport only mean something for an application started without its consensus. */
function checkAbciFlags(opts: NodeOptions, flags: Record<string, unknown>): void {
  if (!opts.abci.withCometbft) return;
  for (const name of ['address', 'transport', 'cometbft-rpc']) {
    if (flags[name] !== undefined) {
      throw badConfig(name, `--${name} applies only with --with-cometbft=false (the application waiting for an external CometBFT); the embedded engine is running`);
    }
  }
}

function isTable(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
}

/** Cosmos SDK store/pruning/types/options.go Validate: custom pruning needs a usable interval and keep-recent. */
function checkPruning(opts: NodeOptions): void {
  const p = opts.pruning;
  if (p.strategy !== 'custom') return;
  if (p.interval === 0) {
    throw badConfig('pruning-interval', `'pruning-interval' must not be 0. If you want to disable pruning, select pruning = "nothing"`);
  }
  if (p.interval < MIN_PRUNING_INTERVAL) {
    throw badConfig(
      'pruning-interval',
      `'pruning-interval' must not be less than ${MIN_PRUNING_INTERVAL}. For the most aggressive pruning, select pruning = "everything"`,
    );
  }
  if (p.keepRecent < MIN_PRUNING_KEEP_RECENT) {
    throw badConfig(
      'pruning-keep-recent',
      `'pruning-keep-recent' must not be less than ${MIN_PRUNING_KEEP_RECENT}. For the most aggressive pruning, select pruning = "everything"`,
    );
  }
}
