/**
 * The `ferry` command: init, start, prune, version. `ferry start` on an empty home creates a dev home first.
 */
// first: spawns the chain thread for `start`/`dev` before the modules below evaluate (cold start)
import './prestart.js';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DEV_ACCOUNT_COUNT, DEV_DERIVATION_PATH, DEV_MNEMONIC, devAccounts } from '../config/devaccounts.js';
import { checksumAddress } from '../lib/address.js';
import { DEFAULT_CHAIN_ID, DEFAULT_NEW_HARDFORK, SUPPORTED_HARDFORKS, forkChoice, parseGenesis, sameForks, type ForkChoice, type Genesis } from '../config/genesis.js';
import { CONFIG_KEYS } from '../config/keys.js';
import { defaultOptions, loadOptions } from '../config/load.js';
import { clientVersion } from '../config/version.js';
import { DomainError, badConfig } from '../lib/errors.js';
import { createLogger, type Logger } from '../lib/log.js';
import type { KeyStore } from '../keystore/index.js';
import { readPassphrase } from '../keystore/passphrase.js';
import { defaultHome, ensureHome, ensureJwtSecret, homeExists, homePaths } from '../node/home.js';
import { boot } from '../node/boot.js';
import { phaseDone, startPhases } from '../lib/startphases.js';
import type { RunningNode } from '../node/run.js';
import { makeJwt, readJwtSecret } from '../server/auth.js';

const WEI_PER_ETH = 10n ** 18n;
const EXIT_ERROR = 1;

/** Expected failures (bad config, bad files) print one line; anything else is a bug and shows its stack. */
function fail(e: unknown): void {
  if (e instanceof DomainError) process.stderr.write(`error: ${e.message}\n`);
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

/** Anvil's fork flags (foundry crates/anvil/src/cmd.rs), for `ferry dev` and `ferry start --dev`; docs/fork-mode.md */
function addForkModeOptions(cmd: Command): void {
  cmd.option('--fork-url <url>', 'fork the chain at this JSON-RPC URL: state is fetched from it lazily and cached in the home (a new home; a fork home restarts as the same fork)');
  cmd.option('--fork-block-number <n>', "fork at this block (negative: back from the origin's latest; default: the latest)");
  cmd.option('--fork-transaction-hash <hash>', "fork at the block before this transaction's block");
  cmd.option('--fork-chain-id <id>', "the fork's EVM chain id (default: the origin's)");
  cmd.option('--fork-retries <n>', 'retries of a failed origin request (429, 5xx, timeout, refused; default: 5)');
  cmd.option('--fork-timeout <ms>', 'timeout of one origin request, milliseconds or a duration such as 30s (default: 45000)');
  cmd.option('--fork-compute-units-per-second <n>', 'origin calls per second at most (default: no limit)');
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

function banner(
  home: string,
  genesis: Genesis,
  endpoints: { jsonRpc?: string; ws?: string; rpc?: string; page?: string; cometMetrics?: string; rpcMetrics?: string },
): string {
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
  if (endpoints.page) lines.push(`Node page:      ${endpoints.page}`);
  if (endpoints.cometMetrics) lines.push(`Metrics:        ${endpoints.cometMetrics} (CometBFT)`);
  if (endpoints.rpcMetrics) lines.push(`Metrics:        ${endpoints.rpcMetrics} (JSON-RPC)`);
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

const STATE_HELP = "load the accounts of this state file (anvil_dumpState's JSON) at start if it exists, write the state to it at a clean exit (as anvil --state)";

/** `ferry start` (`--dev`: the dev preset) and `ferry dev` (always the preset). */
async function start(cmd: Command, preset: { dev?: boolean } = {}): Promise<void> {
  phaseDone('mainImported');
  const home = resolveHome(cmd.opts().home);
  const dev = preset.dev === true || cmd.opts<{ dev?: boolean }>().dev === true;
  const forks = forkFlags(cmd);
  const forkOpts = cmd.opts<{ forkUrl?: string }>();
  if (forkOpts.forkUrl !== undefined && !dev) throw badConfig('fork-url', '--fork-url is a dev-mode flag: use `ferry dev` (or `ferry start --dev`)');
  if (dev) {
    const { prepareForkHome } = await import('../node/forkhome.js');
    await prepareForkHome(home, forkOpts, forks);
  }
  const { created } = ensureHome(home, { forks });
  const opts = loadOptions(home, configFlags(cmd), { dev });
  opts.jsonRpc.enableMetrics = cmd.opts<{ metrics?: boolean }>().metrics === true;
  opts.stateFile = cmd.opts<{ state?: string }>().state;
  const genesis = parseGenesis(readFileSync(homePaths(home).genesis, 'utf8'));
  if (!created && forks !== undefined && !sameForks(genesis, forks)) {
    // never change a running chain's rules silently: the fork flags only shape a new home
    throw badConfig(
      'hardfork',
      `the home ${home} runs ${describeForks(genesis.evm)}; --hardfork and --<fork>-time apply only when a home is created ` +
        '(use a new --home, or `ferry init --overwrite`; a running network schedules a fork in genesis chain_config: docs/configuration.md "Hardforks")',
    );
  }
  const log: Logger = createLogger({ level: opts.logLevel });
  if (created) log.info({ home }, 'created a new dev home');

  let node: RunningNode | undefined;
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

  // the chain thread (spawned by prestart.ts) gets its start data and opens the store while this thread loads the RPC side
  const started = boot(opts, genesis);
  try {
    const { runNode } = await import('../node/run.js');
    phaseDone('nodeImported');
    node = await runNode(opts, genesis, log, started);
  } catch (e) {
    // a start-up failure (a port in use, a bad store) ends the process even though threads it started
    // are still alive: nothing was committed by this run that an abrupt end could lose
    fail(e);
    process.exit(EXIT_ERROR);
  }
  phaseDone('started');
  log.debug({ ...startPhases, processStart: performance.timeOrigin }, 'start-up phases (ms since the process started)');
  if (stopping) return shutdown(node);
  process.stdout.write(banner(home, genesis, node.endpoints));
}

/** `--hardfork` and `--prague-time` / `--osaka-time` when any is given (docs/configuration.md "Hardforks"). */
function forkFlags(cmd: Command): ForkChoice | undefined {
  const o = cmd.opts<{ hardfork?: string; pragueTime?: string; osakaTime?: string }>();
  if (o.hardfork === undefined && o.pragueTime === undefined && o.osakaTime === undefined) return undefined;
  return forkChoice(o.hardfork, { prague: o.pragueTime, osaka: o.osakaTime }, BigInt(Math.floor(Date.now() / 1000)));
}

function describeForks(f: ForkChoice): string {
  const later = Object.entries(f.forkTimes ?? {}).map(([fork, t]) => `, ${fork} at ${t}`);
  return `${f.hardfork}${later.join('')}`;
}

/** the fork flags of the commands that make a genesis */
function addForkOptions(c: Command): Command {
  return c
    .option('--hardfork <name>', `the genesis hardfork of a new home: ${SUPPORTED_HARDFORKS.join(', ')} (default: ${DEFAULT_NEW_HARDFORK}; Anvil's names); an existing home keeps its genesis's rules (eth_config shows them)`)
    .option('--prague-time <seconds>', 'schedule Prague at this block time in a new home (unix seconds, or +N seconds from now)')
    .option('--osaka-time <seconds>', 'schedule Osaka at this block time in a new home (unix seconds, or +N seconds from now), e.g. --hardfork prague --osaka-time +30');
}

function init(cmd: Command): void {
  const o = cmd.opts<{ home?: string; chainId?: string; overwrite?: boolean }>();
  const home = resolveHome(o.home);
  if (homeExists(home) && !o.overwrite) {
    throw badConfig('home', `${homePaths(home).genesis} already exists; use --overwrite to replace the home (its chain data is deleted)`);
  }
  ensureHome(home, { chainId: o.chainId, overwrite: o.overwrite === true, forks: forkFlags(cmd) });
  process.stdout.write(`initialized ${home} (chain id ${o.chainId ?? DEFAULT_CHAIN_ID})\n`);
}

/** The home of a `keys`/`auth` command; it must exist (`ferry init` or a first `ferry start`). */
function existingHome(flag: unknown): string {
  const home = resolveHome(flag);
  if (!homeExists(home)) throw badConfig('home', `no ferry home at ${home}: run \`ferry init\` first`);
  return home;
}

async function keyStoreOf(home: string): Promise<KeyStore> {
  const { KeyStore } = await import('../keystore/index.js');
  return new KeyStore(homePaths(home).keystoreDir);
}

async function keysNew(cmd: Command): Promise<void> {
  const o = cmd.opts<{ home?: string; passwordFile?: string }>();
  const ks = await keyStoreOf(existingHome(o.home));
  const address = await ks.newAccount(await readPassphrase({ file: o.passwordFile, confirm: true }));
  process.stdout.write(`Public address of the key:   ${checksumAddress(address)}\nPath of the secret key file: ${ks.find(address)!.path}\n`);
}

async function keysList(cmd: Command): Promise<void> {
  const ks = await keyStoreOf(existingHome(cmd.opts<{ home?: string }>().home));
  ks.accounts().forEach((a, i) => process.stdout.write(`Account #${i}: {${Buffer.from(a.address).toString('hex')}} keystore://${a.path}\n`));
}

/** A v3 JSON key file is copied in (its encryption kept); a file holding a hex private key is encrypted with a new passphrase. */
async function keysImport(file: string, cmd: Command): Promise<void> {
  const o = cmd.opts<{ home?: string; passwordFile?: string }>();
  const ks = await keyStoreOf(existingHome(o.home));
  const text = readFileSync(file, 'utf8').trim();
  let address: Uint8Array;
  if (text.startsWith('{')) {
    address = await ks.importKeyFile(text, o.passwordFile === undefined ? undefined : await readPassphrase({ file: o.passwordFile }));
  } else {
    const digits = text.replace(/^0x/i, '');
    if (!/^[0-9a-fA-F]{64}$/.test(digits)) throw badConfig('keyfile', `${file} holds neither a JSON key file nor a hex private key`);
    const key = new Uint8Array(Buffer.from(digits, 'hex'));
    try {
      address = await ks.importKey(key, await readPassphrase({ file: o.passwordFile, confirm: true }));
    } finally {
      key.fill(0);
    }
  }
  process.stdout.write(`Imported ${checksumAddress(address)} into ${ks.find(address)!.path}\n`);
}

function authToken(cmd: Command): void {
  const home = existingHome(cmd.opts<{ home?: string }>().home);
  ensureJwtSecret(home);
  process.stdout.write(makeJwt(readJwtSecret(homePaths(home).jwtSecret)) + '\n');
}

async function testnet(cmd: Command): Promise<void> {
  const o = cmd.opts<{ validators: string; fullNodes: string; output?: string; chainId?: string; basePort?: string; timeoutCommit?: string; abciTransport?: string; mempool?: string }>();
  const oneOf = <T extends string>(v: string | undefined, flag: string, allowed: readonly T[]): T | undefined => {
    if (v === undefined || (allowed as readonly string[]).includes(v)) return v as T | undefined;
    throw badConfig(flag, `--${flag}: one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  };
  if (!o.output) throw badConfig('output', '--output <dir> is required');
  const count = (v: string | undefined, flag: string): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw badConfig(flag, `--${flag}: expected a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  const { writeTestnet } = await import('../node/testnet.js');
  const nodes = writeTestnet({
    validators: count(o.validators, 'validators')!,
    fullNodes: count(o.fullNodes, 'full-nodes') ?? 0,
    output: o.output,
    chainId: o.chainId,
    forks: forkFlags(cmd),
    basePort: count(o.basePort, 'base-port'),
    timeoutCommit: o.timeoutCommit,
    transport: oneOf(o.abciTransport, 'abci-transport', ['socket', 'grpc'] as const),
    mempool: oneOf(o.mempool, 'mempool', ['flood', 'app'] as const),
  });
  const dir = resolve(o.output);
  const lines = [`wrote a network of ${nodes.length} nodes to ${dir}`];
  for (const n of nodes) {
    lines.push(
      `  ${n.name} (${n.validator ? 'validator' : 'full node'}): JSON-RPC http://127.0.0.1:${n.ports.jsonRpc}, CometBFT RPC http://127.0.0.1:${n.ports.rpc}, ABCI tcp://127.0.0.1:${n.ports.abci}, P2P ${n.ports.p2p}`,
    );
  }
  lines.push(`start: ${join(dir, 'start.sh')}   stop: ${join(dir, 'stop.sh')}   (docs/abci.md)`);
  process.stdout.write(lines.join('\n') + '\n');
}

function buildProgram(): Command {
  const program = new Command('ferry')
    .description('An EVM chain on a CometBFT-style consensus engine, with Ethereum JSON-RPC and CometBFT v0.38 RPC')
    .showHelpAfterError('(run with --help for usage)');

  const initCmd = program
    .command('init')
    .description('create a home directory: config files, validator and node keys, a dev genesis (funded dev accounts, the CREATE2 deployer, Multicall3, the EIP-2935 contract)')
    .addOption(homeOption())
    .option('--chain-id <id>', `chain id, {name}_{evm chain id}-{epoch} (default: ${DEFAULT_CHAIN_ID})`)
    .option('--overwrite', 'replace an existing home, deleting its chain data');
  addForkOptions(initCmd).action((_opts, cmd: Command) => init(cmd));

  const startCmd = program
    .command('start')
    .description('run the node (creates a dev home first when the home is empty)')
    .addOption(homeOption());
  startCmd.option('--dev', 'the dev preset (as `ferry dev`; see docs/dev-mode.md)');
  addForkOptions(startCmd);
  addConfigOptions(startCmd);
  startCmd.option('--metrics', 'serve the JSON-RPC metrics (geth names) at /debug/metrics/prometheus on json-rpc.metrics-address (Evmos\'s flag)');
  startCmd.option('--state <file>', STATE_HELP);
  addForkModeOptions(startCmd);
  startCmd.action((_opts, cmd: Command) => start(cmd));

  const testnetCmd = program
    .command('testnet')
    .description('write a local network run by real CometBFT (v0.38 or v0.39): per node a CometBFT home and a ferry home (--with-cometbft=false), start.sh/stop.sh')
    .option('--validators <n>', 'number of validators', '4')
    .option('--full-nodes <n>', 'number of non-validator full nodes', '0')
    .option('--output <dir>', 'directory to write (must be empty or absent)')
    .option('--chain-id <id>', `chain id (default: ${DEFAULT_CHAIN_ID})`)
    .option('--base-port <port>', 'first port; node i uses base + 10 i + {0 p2p, 1 CometBFT RPC, 2 ABCI, 3 JSON-RPC, 4 WebSocket} (default: 26600)')
    .option('--timeout-commit <duration>', "CometBFT's consensus.timeout_commit (default: 500ms)")
    .option('--abci-transport <socket|grpc>', 'ABCI between each ferry and its CometBFT (default: socket; grpc with --mempool app)')
    .option('--mempool <flood|app>', "CometBFT's mempool: flood (CheckTx gossip, default) or app (v0.39's application-side mempool: InsertTx/ReapTxs, needs CometBFT v0.39 and gRPC)");
  addForkOptions(testnetCmd).action((_opts, cmd: Command) => testnet(cmd));

  const devCmd = program
    .command('dev')
    .description(
      'run a dev node: `ferry start` with the dev preset (docs/dev-mode.md): a block as soon as a transaction arrives, ' +
        'every namespace including evm/anvil/hardhat, the dev accounts unlocked, CORS from any origin; every `start` flag applies on top',
    )
    .addOption(homeOption());
  addForkOptions(devCmd);
  addConfigOptions(devCmd);
  devCmd.option('--metrics', 'serve the JSON-RPC metrics (geth names) at /debug/metrics/prometheus on json-rpc.metrics-address (Evmos\'s flag)');
  devCmd.option('--state <file>', STATE_HELP);
  addForkModeOptions(devCmd);
  devCmd.action((_opts, cmd: Command) => start(cmd, { dev: true }));

  const keys = program.command('keys').description('node-held accounts: Web3 Secret Storage v3 files in <home>/keystore');
  keys
    .command('new')
    .description('create an account (the passphrase is asked, read from --password-file, or read from stdin)')
    .addOption(homeOption())
    .option('--password-file <file>', 'read the passphrase from the first line of this file')
    .action((_opts, cmd: Command) => keysNew(cmd));
  keys
    .command('list')
    .description('list the accounts of the key store')
    .addOption(homeOption())
    .action((_opts, cmd: Command) => keysList(cmd));
  keys
    .command('import <keyfile>')
    .description('import a v3 JSON key file (ethers, geth, …) as it is, or a file holding a hex private key (encrypted with a new passphrase)')
    .addOption(homeOption())
    .option('--password-file <file>', "the passphrase: checks a JSON file's, or encrypts a raw key with it")
    .action((file: string, _opts, cmd: Command) => keysImport(file, cmd));

  program
    .command('auth')
    .description('authentication of the private JSON-RPC namespaces (personal, miner)')
    .command('token')
    .description('print a fresh JWT (HS256 over <home>/config/jwt.hex, valid for 60 s from now) for `Authorization: Bearer <token>`')
    .addOption(homeOption())
    .action((_opts, cmd: Command) => authToken(cmd));

  program
    .command('state')
    .description('the flat state layer')
    .command('verify')
    .description('recompute the state root from the flat state layer and compare it with the stored root (exit code 2 on mismatch)')
    .addOption(homeOption())
    .option('--height <n>', 'the height to verify (default: the latest)')
    .action(async (_opts, cmd: Command) => {
      const o = cmd.opts<{ home?: string; height?: string }>();
      const { stateVerify } = await import('../node/stateverify.js');
      process.exitCode = await stateVerify(existingHome(o.home), o.height);
    });

  program
    .command('prune')
    .description(
      'with the node stopped: prune the home to its app.toml pruning keys now, collect the trie nodes an archive wrote before ' +
        'it was switched to pruning (once; resumable), and compact the database (docs/abci.md "Pruning")',
    )
    .addOption(homeOption())
    .action(async (_opts, cmd: Command) => {
      const { pruneHome } = await import('../node/prunecmd.js');
      pruneHome(existingHome(cmd.opts<{ home?: string }>().home));
    });

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
