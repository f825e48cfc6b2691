/**
 * The home directory:
 *   config/app.toml  config/config.toml  config/genesis.json
 *   config/priv_validator_key.json  config/node_key.json  config/jwt.hex (private-API token secret)
 *   keystore/  (node-held accounts, created with the first one)
 *   data/priv_validator_state.json  (and the chain database, written by the node)
 * A home exists once config/genesis.json exists; it is written last, so a half-made home is redone.
 */
import { writeFileAtomic } from '../lib/fs.js';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  NODE_KEY_FILE,
  PRIV_VALIDATOR_KEY_FILE,
  PRIV_VALIDATOR_STATE_FILE,
  generateNodeKey,
  generateValidatorKey,
  initialPrivValidatorState,
  nodeKeyJson,
  privValidatorStateJson,
  validatorKeyJson,
} from '../consensus/cometbft/index.js';
import { DEFAULT_CHAIN_ID, DEFAULT_NEW_HARDFORK, devGenesis, parseChainId, renderGenesis, type ForkChoice } from '../config/genesis.js';
import { APP_TOML, CONFIG_DIR, CONFIG_TOML, DATA_DIR, defaultOptions } from '../config/load.js';
import { DEFAULT_HOME_DIRNAME } from '../config/options.js';
import { renderAppToml, renderConfigToml } from '../config/templates.js';
import { withMinimumGasPrices } from '../config/keys.js';
import { JWT_SECRET_FILE, formatJwtSecret, generateJwtSecret } from '../server/auth.js';

export const GENESIS_FILE = 'genesis.json';
/** the chain database, in the data directory */
export const DB_FILE = 'ferry.db';
/** node-held accounts' key files (imported from here, not from keystore/, to keep `ferry start`'s first imports small) */
export const KEYSTORE_DIR = 'keystore';
const DIR_MODE = 0o700;
const FILE_MODE = 0o644;
const KEY_MODE = 0o600;

export interface HomePaths {
  home: string;
  configDir: string;
  dataDir: string;
  appToml: string;
  configToml: string;
  genesis: string;
  privValidatorKey: string;
  nodeKey: string;
  privValidatorState: string;
  /** Web3 Secret Storage key files of node-held accounts */
  keystoreDir: string;
  /** HS256 secret of the private namespaces' bearer tokens */
  jwtSecret: string;
}

/** `~/.ferry` */
export function defaultHome(): string {
  return join(homedir(), DEFAULT_HOME_DIRNAME);
}

export function homePaths(home: string): HomePaths {
  const configDir = join(home, CONFIG_DIR);
  const dataDir = join(home, DATA_DIR);
  return {
    home,
    configDir,
    dataDir,
    appToml: join(configDir, APP_TOML),
    configToml: join(configDir, CONFIG_TOML),
    genesis: join(configDir, GENESIS_FILE),
    privValidatorKey: join(configDir, PRIV_VALIDATOR_KEY_FILE),
    nodeKey: join(configDir, NODE_KEY_FILE),
    privValidatorState: join(dataDir, PRIV_VALIDATOR_STATE_FILE),
    keystoreDir: join(home, KEYSTORE_DIR),
    jwtSecret: join(configDir, JWT_SECRET_FILE),
  };
}

/** True when `home` holds a genesis.json. */
export function homeExists(home: string): boolean {
  return existsSync(homePaths(home).genesis);
}

/**
 * Creates a dev home in `home` unless one exists: config files with all defaults (JSON-RPC enabled),
 * new validator and node keys, and a dev genesis (the 10 dev accounts funded, one validator).
 * `overwrite` replaces an existing home, and deletes its `data/` so the new chain starts clean.
 */
/** `initialHeight`: CometBFT's initial_height (a fork continues its origin's numbers: docs/fork-mode.md). */
export function ensureHome(home: string, opts: { chainId?: string; overwrite?: boolean; forks?: ForkChoice; initialHeight?: bigint } = {}): { created: boolean } {
  const paths = homePaths(home);
  if (existsSync(paths.genesis) && !opts.overwrite) {
    ensureJwtSecret(home);
    return { created: false };
  }
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  parseChainId(chainId); // throws badConfig naming a bad chain id before anything is written

  if (opts.overwrite) rmSync(paths.dataDir, { recursive: true, force: true });
  mkdirSync(paths.configDir, { recursive: true, mode: DIR_MODE });
  mkdirSync(paths.dataDir, { recursive: true, mode: DIR_MODE });

  const options = defaultOptions(home);
  writeFileAtomic(paths.appToml, renderAppToml(options), FILE_MODE);
  writeFileAtomic(paths.configToml, renderConfigToml(options), FILE_MODE);

  const validatorKey = generateValidatorKey();
  writeFileAtomic(paths.privValidatorKey, validatorKeyJson(validatorKey) + '\n', KEY_MODE);
  writeFileAtomic(paths.nodeKey, nodeKeyJson(generateNodeKey()) + '\n', KEY_MODE);
  writeFileAtomic(paths.privValidatorState, privValidatorStateJson(initialPrivValidatorState()) + '\n', KEY_MODE);
  ensureJwtSecret(home);

  // a new home runs the newest fork unless told otherwise (docs/configuration.md "Hardforks")
  const forks = opts.forks ?? { hardfork: DEFAULT_NEW_HARDFORK };
  const genesis = devGenesis({ chainId, validatorPubKey: validatorKey.pubKey, ...forks, ...(opts.initialHeight !== undefined ? { initialHeight: opts.initialHeight } : {}) });
  writeFileAtomic(paths.genesis, renderGenesis(genesis), FILE_MODE);
  return { created: true };
}

/** Writes `config/jwt.hex` (32 random bytes as hex, mode 0600) unless it exists; a home from before it gets one at start. */
export function ensureJwtSecret(home: string): void {
  const paths = homePaths(home);
  if (existsSync(paths.jwtSecret)) return;
  mkdirSync(paths.configDir, { recursive: true, mode: DIR_MODE });
  writeFileAtomic(paths.jwtSecret, formatJwtSecret(generateJwtSecret()) + '\n', KEY_MODE);
}

/** miner_setGasPrice: sets `minimum-gas-prices` in app.toml, keeping the rest of the file as it is. */
export function writeMinimumGasPrice(home: string, price: bigint): void {
  const path = homePaths(home).appToml;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  writeFileAtomic(path, withMinimumGasPrices(text, price), FILE_MODE);
}

