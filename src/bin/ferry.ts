/**
 * The `ferry` command: init, start, version. `ferry start` on an empty home creates a dev home first.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DEV_ACCOUNT_COUNT, DEV_DERIVATION_PATH, DEV_MNEMONIC, checksumAddress, devAccounts } from '../config/devaccounts.js';
import { DEFAULT_CHAIN_ID, parseGenesis, type Genesis } from '../config/genesis.js';
import { CONFIG_KEYS, ConfigError } from '../config/keys.js';
import { defaultOptions, loadOptions } from '../config/load.js';
import { clientVersion } from '../config/version.js';
import { FerryError } from '../lib/errors.js';
import { createLogger, type Logger } from '../lib/log.js';
import { defaultHome, ensureHome, homeExists, homePaths } from '../node/home.js';

const WEI_PER_ETH = 10n ** 18n;
const EXIT_ERROR = 1;

/** Expected failures (bad config, bad files) print one line; anything else is a bug and shows its stack. */
function fail(e: unknown): void {
  if (e instanceof FerryError) process.stderr.write(`error: ${e.message}\n`);
  else process.stderr.write(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = EXIT_ERROR;
}

function resolveHome(flag: unknown): string {
  if (typeof flag !== 'string' || flag === '') return defaultHome();
  if (flag === '~' || flag.startsWith('~/')) return join(homedir(), flag.slice(1));
  return resolve(flag);
}

const homeOption = (): Option => new Option('--home <dir>', `home directory (default: ${defaultHome()})`);

/** `--<key name>` options of every config key; no commander defaults, so an unset flag leaves file values alone. */
function addConfigOptions(cmd: Command): void {
  const defaults = defaultOptions('');
  for (const key of CONFIG_KEYS) {
    const shown = key.toToml(defaults);
    const description = `${key.help} (${key.file}${key.section ? ` [${key.section}]` : ''} ${key.key}; default: ${shown})`;
    cmd.addOption(new Option(key.boolean ? `--${key.name} [bool]` : `--${key.name} <value>`, description));
  }
}

/** The config flags given on the command line, keyed by flag name (`json-rpc.api`). */
function configFlags(cmd: Command): Record<string, unknown> {
  const values = cmd.opts<Record<string, unknown>>();
  const flags: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    const option = cmd.options.find((o) => o.long === `--${key.name}`);
    const value = option ? values[option.attributeName()] : undefined;
    if (value !== undefined) flags[key.name] = value;
  }
  return flags;
}

function formatEth(wei: bigint): string {
  const whole = wei / WEI_PER_ETH;
  const fraction = wei % WEI_PER_ETH;
  if (fraction === 0n) return `${whole}`;
  return `${whole}.${fraction.toString().padStart(18, '0').replace(/0+$/, '')}`;
}

function banner(home: string, genesis: Genesis, endpoints: { jsonRpc?: string; ws?: string; rpc?: string }): string {
  const lines = [
    '',
    clientVersion(),
    '',
    `Home:           ${home}`,
    `Chain ID:       ${genesis.chainId}`,
    `EVM chain ID:   ${genesis.evmChainId}`,
    '',
    'Endpoints',
    '==================',
    `JSON-RPC HTTP:  ${endpoints.jsonRpc ?? '(disabled)'}`,
    `JSON-RPC WS:    ${endpoints.ws ?? '(disabled)'}`,
    `CometBFT RPC:   ${endpoints.rpc ?? '(disabled)'}`,
  ];
  const funded = devAccounts(DEV_ACCOUNT_COUNT)
    .map((a, i) => ({ ...a, i, account: genesis.evm.alloc.get('0x' + Buffer.from(a.address).toString('hex')) }))
    .filter((a) => a.account !== undefined);
  if (funded.length > 0) {
    lines.push('', 'Available Accounts', '==================');
    for (const a of funded) lines.push(`(${a.i}) ${checksumAddress(a.address)} (${formatEth(a.account!.balance)} ETH)`);
    lines.push('', 'Private Keys', '==================');
    for (const a of funded) lines.push(`(${a.i}) 0x${Buffer.from(a.privateKey).toString('hex')}`);
    lines.push('', 'Wallet', '==================', `Mnemonic:        ${DEV_MNEMONIC}`, `Derivation path: ${DEV_DERIVATION_PATH}/{account_index}`);
  }
  lines.push('', 'These keys are public: never use them on a real network.', '');
  return lines.join('\n') + '\n';
}

async function start(cmd: Command): Promise<void> {
  const home = resolveHome(cmd.opts().home);
  const { created } = ensureHome(home);
  const opts = loadOptions(home, configFlags(cmd));
  const genesis = parseGenesis(readFileSync(homePaths(home).genesis, 'utf8'));
  const log: Logger = createLogger({ level: opts.logLevel });
  if (created) log.info({ home }, 'created a new dev home');

  const { runNode } = await import('../node/run.js');
  let node: Awaited<ReturnType<typeof runNode>> | undefined;
  let stopping = false;
  const shutdown = (running: NonNullable<typeof node>): void => {
    running.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e instanceof Error ? e.stack : String(e) }, 'shutdown failed');
        process.exit(EXIT_ERROR);
      },
    );
  };
  // installed before start-up so that a signal at any moment gets a clean shutdown
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      process.stderr.write(`received ${signal} again: exiting without a clean shutdown\n`);
      process.exit(EXIT_ERROR);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    if (node) shutdown(node); // else: as soon as start-up finishes
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    node = await runNode(opts, genesis, log);
  } catch (e) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    throw e;
  }
  if (stopping) return shutdown(node);
  process.stdout.write(banner(home, genesis, node.endpoints));
}

function init(cmd: Command): void {
  const o = cmd.opts<{ home?: string; chainId?: string; overwrite?: boolean }>();
  const home = resolveHome(o.home);
  if (homeExists(home) && !o.overwrite) {
    throw new ConfigError('home', `${homePaths(home).genesis} already exists; use --overwrite to replace the home (its chain data is deleted)`);
  }
  ensureHome(home, { chainId: o.chainId, overwrite: o.overwrite === true });
  process.stdout.write(`initialized ${home} (chain id ${o.chainId ?? DEFAULT_CHAIN_ID})\n`);
}

function buildProgram(): Command {
  const program = new Command('ferry')
    .description('An EVM chain on a CometBFT-style consensus engine, with Ethereum JSON-RPC and CometBFT v0.38 RPC')
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('init')
    .description('create a home directory: config files, validator and node keys, a dev genesis')
    .addOption(homeOption())
    .option('--chain-id <id>', `chain id, {name}_{evm chain id}-{epoch} (default: ${DEFAULT_CHAIN_ID})`)
    .option('--overwrite', 'replace an existing home, deleting its chain data')
    .action((_opts, cmd: Command) => init(cmd));

  const startCmd = program
    .command('start')
    .description('run the node (creates a dev home first when the home is empty)')
    .addOption(homeOption());
  addConfigOptions(startCmd);
  startCmd.action((_opts, cmd: Command) => start(cmd));

  program
    .command('version')
    .description('print the version')
    .action(() => {
      process.stdout.write(clientVersion() + '\n');
    });
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch(fail);
