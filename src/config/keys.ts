/**
 * The table of every configuration key: which file and section it lives in, its flag, how its value
 * is read and validated, how it is written back to TOML, and its comment in the templates. load.ts,
 * templates.ts and the CLI all work from this one table.
 */
import { badConfig } from '../lib/errors.js';
import { parseAbciAddress, parseHostPort, parseLaddr } from './address.js';
import { formatDuration, parseDuration } from './duration.js';
import { ABCI_TRANSPORTS, CALL_ENGINES, type CallEngine, PRUNING_STRATEGIES, type PruningStrategy, EVM_DENOM, LOG_LEVELS, MAX_MINIMUM_GAS_PRICE, NAMESPACES, type Namespace, type NodeOptions } from './options.js';

/**
 * A bad configuration value or file throws badConfig (src/lib/errors.ts): its `key` is the flag-style
 * name (`json-rpc.logs-cap`) or the file.
 */

export type ConfigFile = 'app.toml' | 'config.toml';

export interface ConfigKey {
  file: ConfigFile;
  /** TOML table; '' for a top-level key */
  section: string;
  key: string;
  /** flag name without `--`, also the name in error messages: `section.key` or `key` */
  name: string;
  /** a boolean flag may be given without a value (`--json-rpc.enable`) */
  boolean: boolean;
  /** one-line description (template comment and `--help`) */
  help: string;
  /** validates a file or flag value and stores it in the options */
  apply(opts: NodeOptions, raw: unknown): void;
  /** the option's current value as a TOML value */
  toToml(opts: NodeOptions): string;
}

/** Thrown by the readers below; `apply` turns it into a badConfig error with the section's prefix. */
class Invalid extends Error {}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);
const INTEGER = /^[+-]?\d+$/;
const DEC_COIN = /^(\d+(?:\.\d+)?)([a-zA-Z][a-zA-Z0-9/:._-]{2,127})$/;
const UINT64_MAX = (1n << 64n) - 1n;

function readBool(raw: unknown, name: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string' && GO_TRUE.has(raw)) return true;
  if (typeof raw === 'string' && GO_FALSE.has(raw)) return false;
  throw new Invalid(`${name}: expected true or false, got ${show(raw)}`);
}

function readInteger(raw: unknown, name: string): bigint {
  if (typeof raw === 'bigint') return raw;
  if (typeof raw === 'number' && Number.isInteger(raw)) return BigInt(raw);
  if (typeof raw === 'string' && INTEGER.test(raw.trim())) return BigInt(raw.trim());
  throw new Invalid(`${name}: expected an integer, got ${show(raw)}`);
}

/** A non-negative integer (`min` 1: positive) that fits a JS number. */
function readCount(raw: unknown, name: string, min: 0 | 1 = 0): number {
  const n = readInteger(raw, name);
  if (n < BigInt(min)) throw new Invalid(min === 0 ? `${name} cannot be negative` : `${name} cannot be negative or 0`);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new Invalid(`${name}: ${n} is too large`);
  return Number(n);
}

function readUint64(raw: unknown, name: string): bigint {
  const n = readInteger(raw, name);
  if (n < 0n) throw new Invalid(`${name} cannot be negative`);
  if (n > UINT64_MAX) throw new Invalid(`${name}: ${n} is too large`);
  return n;
}

/** A Go duration string → milliseconds, not negative. */
function readDuration(raw: unknown, name: string): number {
  if (typeof raw !== 'string') throw new Invalid(`${name}: expected a duration like "5s", got ${show(raw)}`);
  let ms: number;
  try {
    ms = parseDuration(raw.trim());
  } catch (e) {
    throw new Invalid(`${name}: ${(e as Error).message}`);
  }
  if (ms < 0) throw new Invalid(`${name} cannot be negative`);
  return ms;
}

function readString(raw: unknown, name: string): string {
  if (typeof raw !== 'string') throw new Invalid(`${name}: expected a string, got ${show(raw)}`);
  return raw.trim();
}

function readPruning(raw: unknown, name: string): PruningStrategy {
  const text = readString(raw, name);
  const found = PRUNING_STRATEGIES.find((s) => s === text);
  if (!found) throw new Invalid(`${name}: unknown pruning strategy ${JSON.stringify(text)}, want one of ${PRUNING_STRATEGIES.join(', ')}`);
  return found;
}

function readHostPort(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (!parseHostPort(text)) throw new Invalid(`${name}: malformed address ${JSON.stringify(text)}, want host:port`);
  return text;
}

/** `host:port`, or `:port` for every interface (Go's net.Listen form, CometBFT's prometheus_listen_addr) */
function readListenAddr(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (!/^:\d{1,5}$/.test(text) && !parseHostPort(text)) throw new Invalid(`${name}: malformed address ${JSON.stringify(text)}, want host:port or :port`);
  if (Number(text.slice(text.lastIndexOf(':') + 1)) > 65535) throw new Invalid(`${name}: port out of range in ${JSON.stringify(text)}`);
  return text;
}

/** A Prometheus metric name prefix: empty, or [a-zA-Z_][a-zA-Z0-9_]* */
function readNamespace(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (text !== '' && !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(text)) throw new Invalid(`${name}: ${JSON.stringify(text)} is not a valid metric name prefix`);
  return text;
}

/** web3_clientVersion's prefix: empty, or one word of [A-Za-z0-9._-], at most MAX_CLIENT_VERSION_PREFIX characters */
export const MAX_CLIENT_VERSION_PREFIX = 32;
function readClientVersionPrefix(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (text !== '' && !new RegExp(`^[A-Za-z0-9._-]{1,${MAX_CLIENT_VERSION_PREFIX}}$`).test(text)) {
    throw new Invalid(`${name}: ${JSON.stringify(text)} is not a client name (letters, digits, ".", "_", "-"; at most ${MAX_CLIENT_VERSION_PREFIX})`);
  }
  return text;
}

function readLaddr(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (!parseLaddr(text)) throw new Invalid(`${name}: malformed address ${JSON.stringify(text)}, want tcp://host:port`);
  return text;
}

/** A TOML array of strings, or a comma-separated string (flags, Evmos's app.toml `api`). */
function readList(raw: unknown, name: string): string[] {
  let items: unknown[];
  if (typeof raw === 'string') items = raw.split(',');
  else if (Array.isArray(raw)) items = raw;
  else throw new Invalid(`${name}: expected a list of strings, got ${show(raw)}`);
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new Invalid(`${name}: expected a list of strings, got ${show(item)}`);
    const s = item.trim();
    if (s !== '') out.push(s);
  }
  return out;
}

function readAbciAddress(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (!parseAbciAddress(text)) throw new Invalid(`${name}: malformed address ${JSON.stringify(text)}, want tcp://host:port or unix:///path`);
  return text;
}

function readTransport(raw: unknown, name: string): string {
  const text = readString(raw, name);
  if (!(ABCI_TRANSPORTS as readonly string[]).includes(text)) throw new Invalid(`${name}: unknown transport ${JSON.stringify(text)}, want ${ABCI_TRANSPORTS.join(' or ')}`);
  return text;
}

function readCallEngine(raw: unknown, name: string): CallEngine {
  const text = readString(raw, name);
  if (!(CALL_ENGINES as readonly string[]).includes(text)) throw new Invalid(`${name}: unknown engine ${JSON.stringify(text)}, want one of ${CALL_ENGINES.join(', ')}`);
  return text as CallEngine;
}

function readNamespaces(raw: unknown, name: string): Namespace[] {
  const out: Namespace[] = [];
  for (const ns of readList(raw, name)) {
    if (!(NAMESPACES as readonly string[]).includes(ns)) {
      throw new Invalid(`${name}: unknown namespace ${JSON.stringify(ns)} (known: ${NAMESPACES.join(', ')})`);
    }
    if (out.includes(ns as Namespace)) throw new Invalid(`${name}: repeated API namespace ${JSON.stringify(ns)}`);
    out.push(ns as Namespace);
  }
  return out;
}

function readLogLevel(raw: unknown, name: string): string {
  const level = readString(raw, name);
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new Invalid(`${name}: unknown level ${JSON.stringify(level)} (known: ${LOG_LEVELS.join(', ')})`);
  }
  return level;
}

/** Cosmos dec-coins in the EVM denom: `1000000000aferry`, `0aferry`, or empty for 0. */
export function parseMinimumGasPrices(text: string): bigint {
  const trimmed = text.trim();
  if (trimmed === '') return 0n;
  const m = DEC_COIN.exec(trimmed);
  if (!m) throw new Error(`malformed gas price ${JSON.stringify(trimmed)}, want e.g. "1000000000${EVM_DENOM}"`);
  const [, amount, denom] = m;
  if (denom !== EVM_DENOM) throw new Error(`unknown denom ${JSON.stringify(denom)}, want ${EVM_DENOM}`);
  const [whole, fraction = ''] = amount!.split('.');
  if (/[1-9]/.test(fraction)) throw new Error(`${amount}${denom} is not a whole number of ${EVM_DENOM} (1 ${EVM_DENOM} = 1 wei)`);
  const price = BigInt(whole!);
  if (price > MAX_MINIMUM_GAS_PRICE) throw new Error(`${amount}${denom} is above the maximum ${MAX_MINIMUM_GAS_PRICE}${EVM_DENOM}`);
  return price;
}

function readGasPrice(raw: unknown, name: string): bigint {
  const text = readString(raw, name);
  try {
    return parseMinimumGasPrices(text);
  } catch (e) {
    throw new Invalid(`${name}: ${(e as Error).message}`);
  }
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return 'a list';
  if (v !== null && typeof v === 'object') return 'a table';
  return String(v);
}

const tomlString = (s: string): string => JSON.stringify(s);
const tomlList = (items: readonly string[]): string => `[${items.map(tomlString).join(', ')}]`;

type Reader<T> = (raw: unknown, name: string) => T;

function def<T>(
  file: ConfigFile,
  section: string,
  key: string,
  read: Reader<T>,
  set: (o: NodeOptions, v: T) => void,
  toToml: (o: NodeOptions) => string,
  help: string,
): ConfigKey {
  const name = section === '' ? key : `${section}.${key}`;
  return {
    file,
    section,
    key,
    name,
    boolean: (read as unknown) === readBool,
    help,
    toToml,
    apply(o, raw) {
      try {
        set(o, read(raw, name));
      } catch (e) {
        if (!(e instanceof Invalid)) throw e;
        throw badConfig(name, `invalid ${section === '' ? '' : section + ' '}config value: ${e.message}`);
      }
    },
  };
}

const APP = 'app.toml';
const CFG = 'config.toml';
const JR = 'json-rpc';

/** Every key, in template order. */
export const CONFIG_KEYS: readonly ConfigKey[] = [
  def(APP, '', 'minimum-gas-prices', readGasPrice, (o, v) => (o.minimumGasPrice = v),
    (o) => tomlString(`${o.minimumGasPrice}${EVM_DENOM}`),
    `minimum gas price a transaction must offer, in ${EVM_DENOM} per gas (1 ${EVM_DENOM} = 1 wei), e.g. "1000000000${EVM_DENOM}"`),
  def(APP, '', 'with-cometbft', readBool, (o, v) => (o.abci.withCometbft = v), (o) => String(o.abci.withCometbft),
    'true: run the embedded consensus engine; false: run the application alone and wait for CometBFT on --address (docs/abci.md)'),
  def(APP, '', 'address', readAbciAddress, (o, v) => (o.abci.address = v), (o) => tomlString(o.abci.address),
    'ABCI listen address with --with-cometbft=false (tcp://host:port or unix:///path; CometBFT\'s proxy_app)'),
  def(APP, '', 'transport', readTransport, (o, v) => (o.abci.transport = v), (o) => tomlString(o.abci.transport),
    'ABCI transport with --with-cometbft=false: socket or grpc (CometBFT\'s `abci` setting must match)'),
  def(APP, '', 'cometbft-rpc', readLaddr, (o, v) => (o.abci.cometbftRpc = v), (o) => tomlString(o.abci.cometbftRpc),
    'with --with-cometbft=false: the local CometBFT RPC (tcp://host:port) that eth_sendRawTransaction submits to'),
  def(APP, '', 'pruning', readPruning, (o, v) => (o.pruning.strategy = v), (o) => tomlString(o.pruning.strategy),
    'state pruning: default (keep 362880 recent heights), nothing (archive), everything (keep 2), custom (the two keys below; docs/abci.md "Pruning")'),
  def(APP, '', 'pruning-keep-recent', readCount, (o, v) => (o.pruning.keepRecent = v), (o) => tomlString(String(o.pruning.keepRecent)),
    'with pruning = "custom": heights of state kept below the head (at least 2)'),
  def(APP, '', 'pruning-interval', readCount, (o, v) => (o.pruning.interval = v), (o) => tomlString(String(o.pruning.interval)),
    'with pruning = "custom": prune every this many blocks (at least 10)'),
  def(APP, '', 'min-retain-blocks', readCount, (o, v) => (o.pruning.minRetainBlocks = v), (o) => String(o.pruning.minRetainBlocks),
    'blocks of history kept below the head, returned to CometBFT as retain_height (0 = keep every block)'),
  def(APP, '', 'block-engine', readCallEngine, (o, v) => (o.blockEngine = v), (o) => tomlString(o.blockEngine),
    "engine of a block's txs: revm (contract txs of types 0-2 through the native addon; ethereumjs for the rest and when it is not built), or ethereumjs"),
  def(APP, 'state-sync', 'snapshot-interval', readCount, (o, v) => (o.stateSync.snapshotInterval = v), (o) => String(o.stateSync.snapshotInterval),
    'with --with-cometbft=false: take a state-sync snapshot every this many blocks (0 = none; docs/abci.md "State sync")'),
  def(APP, 'state-sync', 'snapshot-keep-recent', readCount, (o, v) => (o.stateSync.snapshotKeepRecent = v), (o) => String(o.stateSync.snapshotKeepRecent),
    'state-sync snapshots kept, the most recent ones (0 = keep all)'),

  def(APP, JR, 'enable', readBool, (o, v) => (o.jsonRpc.enable = v), (o) => String(o.jsonRpc.enable),
    'start the EVM JSON-RPC HTTP and WebSocket servers'),
  def(APP, JR, 'address', readHostPort, (o, v) => (o.jsonRpc.address = v), (o) => tomlString(o.jsonRpc.address),
    'HTTP listen address (host:port)'),
  def(APP, JR, 'ws-address', readHostPort, (o, v) => (o.jsonRpc.wsAddress = v), (o) => tomlString(o.jsonRpc.wsAddress),
    'WebSocket listen address (host:port)'),
  def(APP, JR, 'api', readNamespaces, (o, v) => (o.jsonRpc.api = v), (o) => tomlString(o.jsonRpc.api.join(',')),
    `namespaces to serve, comma-separated, from: ${NAMESPACES.join(',')}`),
  def(APP, JR, 'gas-cap', readUint64, (o, v) => (o.jsonRpc.gasCap = v), (o) => String(o.jsonRpc.gasCap),
    'gas cap of eth_call and eth_estimateGas (0 = no cap)'),
  def(APP, JR, 'evm-timeout', readDuration, (o, v) => (o.jsonRpc.evmTimeoutMs = v),
    (o) => tomlString(formatDuration(o.jsonRpc.evmTimeoutMs)), 'time limit of eth_call and eth_estimateGas (0s = none)'),
  def(APP, JR, 'call-engine', readCallEngine, (o, v) => (o.jsonRpc.callEngine = v), (o) => tomlString(o.jsonRpc.callEngine),
    'engine of plain eth_calls: revm (a native addon built when cargo is present; ethereumjs when it is not built), or ethereumjs'),
  def(APP, JR, 'call-workers', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.callWorkers = v),
    (o) => String(o.jsonRpc.callWorkers), 'worker threads that run eth_call and eth_estimateGas off the serving thread'),
  def(APP, JR, 'filter-cap', readCount, (o, v) => (o.jsonRpc.filterCap = v), (o) => String(o.jsonRpc.filterCap),
    'maximum number of polling filters, across all clients'),
  def(APP, JR, 'feehistory-cap', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.feeHistoryCap = v),
    (o) => String(o.jsonRpc.feeHistoryCap), 'maximum blockCount of eth_feeHistory'),
  def(APP, JR, 'logs-cap', readCount, (o, v) => (o.jsonRpc.logsCap = v), (o) => String(o.jsonRpc.logsCap),
    'maximum number of matching logs eth_getLogs and eth_getFilterLogs return (0 = no cap)'),
  def(APP, JR, 'block-range-cap', readCount, (o, v) => (o.jsonRpc.blockRangeCap = v),
    (o) => String(o.jsonRpc.blockRangeCap), 'maximum distance between fromBlock and toBlock of a logs query'),
  def(APP, JR, 'http-timeout', readDuration, (o, v) => (o.jsonRpc.httpTimeoutMs = v),
    (o) => tomlString(formatDuration(o.jsonRpc.httpTimeoutMs)), 'read and write timeout of the HTTP server'),
  def(APP, JR, 'http-idle-timeout', readDuration, (o, v) => (o.jsonRpc.httpIdleTimeoutMs = v),
    (o) => tomlString(formatDuration(o.jsonRpc.httpIdleTimeoutMs)), 'keep-alive idle timeout of the HTTP server'),
  def(APP, JR, 'allow-unprotected-txs', readBool, (o, v) => (o.jsonRpc.allowUnprotectedTxs = v),
    (o) => String(o.jsonRpc.allowUnprotectedTxs), 'accept transactions without EIP-155 replay protection over RPC'),
  def(APP, JR, 'private-api-auth', readBool, (o, v) => (o.jsonRpc.privateApiAuth = v), (o) => String(o.jsonRpc.privateApiAuth),
    'personal_* and miner_* need a JWT bearer token (HS256, secret in config/jwt.hex); false is refused unless every JSON-RPC listener is on loopback'),
  def(APP, JR, 'max-open-connections', readCount, (o, v) => (o.jsonRpc.maxOpenConnections = v),
    (o) => String(o.jsonRpc.maxOpenConnections), 'maximum simultaneous HTTP connections (0 = unlimited)'),
  def(APP, JR, 'batch-request-limit', readCount, (o, v) => (o.jsonRpc.batchRequestLimit = v),
    (o) => String(o.jsonRpc.batchRequestLimit), 'maximum requests in one batch (0 = unlimited)'),
  def(APP, JR, 'batch-response-max-size', readCount, (o, v) => (o.jsonRpc.batchResponseMaxSize = v),
    (o) => String(o.jsonRpc.batchResponseMaxSize), 'maximum bytes of one batch response (0 = unlimited)'),
  def(APP, JR, 'http-body-limit', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.httpBodyLimit = v),
    (o) => String(o.jsonRpc.httpBodyLimit), 'maximum bytes of one HTTP request body'),
  def(APP, JR, 'ws-origins', readList, (o, v) => (o.jsonRpc.wsOrigins = v), (o) => tomlList(o.jsonRpc.wsOrigins),
    'browser origins allowed to open a WebSocket: [scheme://]host[:port] rules, "*" = any (clients sending no Origin are always allowed)'),
  def(APP, JR, 'filter-timeout', readDuration, (o, v) => (o.jsonRpc.filterTimeoutMs = v),
    (o) => tomlString(formatDuration(o.jsonRpc.filterTimeoutMs)), 'a polling filter not polled for this long is uninstalled (0s = never)'),
  def(APP, JR, 'ws-max-message-size', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.wsMaxMessageSize = v),
    (o) => String(o.jsonRpc.wsMaxMessageSize), 'maximum bytes of one WebSocket message (a bigger one closes the connection with 1009)'),
  def(APP, JR, 'ws-max-connections', readCount, (o, v) => (o.jsonRpc.wsMaxConnections = v),
    (o) => String(o.jsonRpc.wsMaxConnections), 'maximum simultaneous WebSocket connections (0 = unlimited)'),
  def(APP, JR, 'ws-max-subscriptions', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.wsMaxSubscriptions = v),
    (o) => String(o.jsonRpc.wsMaxSubscriptions), 'maximum eth_subscribe subscriptions of one WebSocket connection'),
  def(APP, JR, 'ws-max-queue-bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.jsonRpc.wsMaxQueueBytes = v),
    (o) => String(o.jsonRpc.wsMaxQueueBytes), 'maximum bytes waiting to be sent to one WebSocket client; a client that falls further behind is disconnected'),
  def(APP, JR, 'trace-timeout-cap', readDuration, (o, v) => (o.jsonRpc.traceTimeoutCapMs = v),
    (o) => tomlString(formatDuration(o.jsonRpc.traceTimeoutCapMs)),
    'longest timeout a debug_trace* call may ask for (its default is 5s, like geth); a longer one is lowered to this'),
  def(APP, JR, 'trace-result-max-size', readCount, (o, v) => (o.jsonRpc.traceResultMaxSize = v),
    (o) => String(o.jsonRpc.traceResultMaxSize), 'maximum bytes of one debug_trace* result; a bigger one is answered with an error (0 = unlimited)'),
  def(APP, JR, 'enable-profiling', readBool, (o, v) => (o.jsonRpc.enableProfiling = v), (o) => String(o.jsonRpc.enableProfiling),
    'serve the debug profiling methods (debug_startCPUProfile, debug_writeMemProfile, ...; files under <home>/profiles/); needs "debug" in api'),
  def(APP, JR, 'metrics-address', readHostPort, (o, v) => (o.jsonRpc.metricsAddress = v), (o) => tomlString(o.jsonRpc.metricsAddress),
    'listen address (host:port) of the JSON-RPC metrics server (Prometheus text at /debug/metrics/prometheus); it runs only with the --metrics flag'),
  def(APP, JR, 'node-page', readBool, (o, v) => (o.jsonRpc.nodePage = v), (o) => String(o.jsonRpc.nodePage),
    'serve the node page (a live block explorer) at GET /explorer on the JSON-RPC HTTP listener'),
  def(APP, JR, 'enable-unsafe-cors', readBool, (o, v) => (o.jsonRpc.enableUnsafeCors = v), (o) => String(o.jsonRpc.enableUnsafeCors),
    'answer browser requests from any origin: CORS headers on HTTP, any Origin on WebSocket (ws-origins ignored); on with `ferry dev`'),
  def(APP, JR, 'client-version-prefix', readClientVersionPrefix, (o, v) => (o.jsonRpc.clientVersionPrefix = v), (o) => tomlString(o.jsonRpc.clientVersionPrefix),
    'a name put before web3_clientVersion ("anvil" gives "anvil/ferry/..."), for tools that accept only named dev nodes, e.g. Hardhat\'s network helpers; empty = ferry\'s own'),

  def(CFG, '', 'log_level', readLogLevel, (o, v) => (o.logLevel = v), (o) => tomlString(o.logLevel),
    `log level: ${LOG_LEVELS.join(' | ')}`),

  def(CFG, 'rpc', 'laddr', readLaddr, (o, v) => (o.rpc.laddr = v), (o) => tomlString(o.rpc.laddr),
    'consensus RPC listen address (tcp://host:port), HTTP and WebSocket at /websocket'),
  def(CFG, 'rpc', 'cors_allowed_origins', readList, (o, v) => (o.rpc.corsAllowedOrigins = v),
    (o) => tomlList(o.rpc.corsAllowedOrigins), 'origins allowed to make cross-domain requests ("*" = any; empty = CORS off)'),
  def(CFG, 'rpc', 'unsafe', readBool, (o, v) => (o.rpc.unsafe = v), (o) => String(o.rpc.unsafe),
    'serve the unsafe routes (dial_seeds, dial_peers, unsafe_flush_mempool)'),
  def(CFG, 'rpc', 'max_open_connections', readCount, (o, v) => (o.rpc.maxOpenConnections = v),
    (o) => String(o.rpc.maxOpenConnections), 'maximum simultaneous connections, HTTP and WebSocket (0 = unlimited)'),
  def(CFG, 'rpc', 'max_subscription_clients', readCount, (o, v) => (o.rpc.maxSubscriptionClients = v),
    (o) => String(o.rpc.maxSubscriptionClients), 'maximum distinct clients that can /subscribe'),
  def(CFG, 'rpc', 'max_subscriptions_per_client', readCount, (o, v) => (o.rpc.maxSubscriptionsPerClient = v),
    (o) => String(o.rpc.maxSubscriptionsPerClient), 'maximum subscriptions of one client'),
  def(CFG, 'rpc', 'experimental_subscription_buffer_size', (r, n) => readCount(r, n, 1),
    (o, v) => (o.rpc.experimentalSubscriptionBufferSize = v), (o) => String(o.rpc.experimentalSubscriptionBufferSize),
    'events buffered per subscription before it is cancelled'),
  def(CFG, 'rpc', 'experimental_websocket_write_buffer_size', (r, n) => readCount(r, n, 1),
    (o, v) => (o.rpc.experimentalWebsocketWriteBufferSize = v), (o) => String(o.rpc.experimentalWebsocketWriteBufferSize),
    'messages buffered per WebSocket connection'),
  def(CFG, 'rpc', 'experimental_close_on_slow_client', readBool, (o, v) => (o.rpc.experimentalCloseOnSlowClient = v),
    (o) => String(o.rpc.experimentalCloseOnSlowClient), 'close a WebSocket client that cannot keep up instead of dropping events'),
  def(CFG, 'rpc', 'timeout_broadcast_tx_commit', readDuration, (o, v) => (o.rpc.timeoutBroadcastTxCommitMs = v),
    (o) => tomlString(formatDuration(o.rpc.timeoutBroadcastTxCommitMs)), 'how long broadcast_tx_commit waits for the block'),
  def(CFG, 'rpc', 'max_request_batch_size', readCount, (o, v) => (o.rpc.maxRequestBatchSize = v),
    (o) => String(o.rpc.maxRequestBatchSize), 'maximum requests in one JSON-RPC batch (0 = unlimited)'),
  def(CFG, 'rpc', 'max_body_bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.rpc.maxBodyBytes = v),
    (o) => String(o.rpc.maxBodyBytes), 'maximum bytes of a request body or WebSocket message'),
  def(CFG, 'rpc', 'max_header_bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.rpc.maxHeaderBytes = v),
    (o) => String(o.rpc.maxHeaderBytes), 'maximum bytes of the HTTP request headers'),
  def(CFG, 'rpc', 'websocket_max_queue_bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.rpc.websocketMaxQueueBytes = v),
    (o) => String(o.rpc.websocketMaxQueueBytes), 'maximum bytes waiting to be sent to one WebSocket client; a client that falls further behind is disconnected (1008)'),
  def(CFG, 'rpc', 'websocket_max_total_queue_bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.rpc.websocketMaxTotalQueueBytes = v),
    (o) => String(o.rpc.websocketMaxTotalQueueBytes), 'maximum bytes waiting to be sent to all WebSocket clients together; over it, a client that is behind is disconnected (1008)'),

  def(CFG, 'consensus', 'timeout_commit', readDuration, (o, v) => (o.consensus.timeoutCommitMs = v),
    (o) => tomlString(formatDuration(o.consensus.timeoutCommitMs)), 'time between blocks'),
  def(CFG, 'consensus', 'create_empty_blocks', readBool, (o, v) => (o.consensus.createEmptyBlocks = v),
    (o) => String(o.consensus.createEmptyBlocks), 'make blocks without transactions'),
  def(CFG, 'consensus', 'block_on_tx', readBool, (o, v) => (o.consensus.blockOnTx = v),
    (o) => String(o.consensus.blockOnTx), 'dev option: make a block as soon as a transaction arrives'),

  def(CFG, 'mempool', 'size', (r, n) => readCount(r, n, 1), (o, v) => (o.mempool.size = v),
    (o) => String(o.mempool.size), 'maximum transactions in the mempool (pending and queued)'),
  def(CFG, 'mempool', 'max_tx_bytes', (r, n) => readCount(r, n, 1), (o, v) => (o.mempool.maxTxBytes = v),
    (o) => String(o.mempool.maxTxBytes), 'maximum bytes of one transaction'),
  def(CFG, 'mempool', 'price_bump', readCount, (o, v) => (o.mempool.priceBumpPercent = v),
    (o) => String(o.mempool.priceBumpPercent), 'percent a replacement must raise the fee cap and tip by'),
  def(CFG, 'mempool', 'account_queue', readCount, (o, v) => (o.mempool.accountQueue = v),
    (o) => String(o.mempool.accountQueue), 'maximum queued (nonce-gap) transactions of one account'),

  def(CFG, 'instrumentation', 'prometheus', readBool, (o, v) => (o.instrumentation.prometheus = v),
    (o) => String(o.instrumentation.prometheus), 'serve the consensus engine\'s Prometheus metrics (CometBFT names) on prometheus_listen_addr'),
  def(CFG, 'instrumentation', 'prometheus_listen_addr', readListenAddr, (o, v) => (o.instrumentation.prometheusListenAddr = v),
    (o) => tomlString(o.instrumentation.prometheusListenAddr), 'address of the Prometheus metrics server (host:port, or :port for every interface)'),
  def(CFG, 'instrumentation', 'namespace', readNamespace, (o, v) => (o.instrumentation.namespace = v),
    (o) => tomlString(o.instrumentation.namespace), 'prefix of the metric names'),
];

/**
 * app.toml text with the top-level `minimum-gas-prices` set to `price` (miner_setGasPrice); every
 * other line stays as written, comments included. A missing key is added above the first table.
 */
export function withMinimumGasPrices(appToml: string, price: bigint): string {
  const line = `minimum-gas-prices = ${tomlString(`${price}${EVM_DENOM}`)}`;
  const lines = appToml.split('\n');
  let firstTable = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t.startsWith('[')) {
      firstTable = i;
      break;
    }
    if (/^"?minimum-gas-prices"?\s*=/.test(t)) {
      lines[i] = line;
      return lines.join('\n');
    }
  }
  lines.splice(firstTable, 0, line, '');
  return lines.join('\n');
}
