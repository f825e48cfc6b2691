/**
 * The dev-node namespaces `evm`, `anvil` and `hardhat` (docs/dev-mode.md): mining on demand, the
 * mining mode, block time, the next block's gas limit, base fee and fee recipient, pool drops and
 * impersonation.
 * Parameter forms and answers follow Anvil (foundry `crates/anvil/src/eth/api.rs`), which also
 * serves the hardhat_* names; a `hardhat_*` method answers as Anvil answers it. Every method is
 * private (a token unless `json-rpc.private-api-auth` is off on loopback, as under `ferry dev`).
 *
 * Numbers (seconds, counts, wei) are accepted as a JSON number or a hex quantity, as Anvil's serde
 * forms take both. Blocks stay real CometBFT blocks made by the chain thread's engine.
 *
 * Each method decodes its params and sends one typed dev operation to the chain thread through the
 * dev channel (src/types/dev.ts; performed in src/node/devops.ts); adding one: docs/dev-mode.md
 * "Adding a dev method".
 */
import { randomBytes } from 'node:crypto';
import { invalidArgument } from '../lib/errors.js';
import { address, bool, hash, string } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Address, CallOrigin } from '../types/chain.js';
import type { CallArgs } from './codecs.js';
import { sendArgs } from './accounts.js';
import type { DevChannel } from '../types/dev.js';
import type { EvmBackend } from './backend.js';
import type { ForkHistoryPort } from './forkhistory.js';
import type { MinerBackend } from './miner.js';
import { argumentError, jsonKind, parseQuantity, toData as hexData, toQuantity as hexQuantity, typeMismatch } from '../lib/hex.js';

/** anvil_mine / hardhat_mine: the most blocks one call makes (each is a signed CometBFT block, written to disk) */
export const MAX_MINE_BLOCKS = 10_000n;
const UINT64_MAX = (1n << 64n) - 1n;
/** anvil_setBlockTimestampInterval: the longest interval, milliseconds (a year; JavaScript times stay exact) */
export const MAX_TIMESTAMP_INTERVAL_MS = 365 * 24 * 3600 * 1000;

/** The signer's side of impersonation: the chain thread admits the impersonated txs, the signer sends them. */
export interface Impersonation {
  setImpersonated(address: Address, on: boolean): void;
  setAutoImpersonate(on: boolean): void;
  /** eth_sendTransaction's fill and send (impersonated when the sender has no key) */
  sendTransaction(args: CallArgs, passphrase?: string, origin?: CallOrigin): Promise<string>;
}

/**
 * The part of Surface A's modules (evmrpc/api.ts) the dev methods use: the dev channel to the chain
 * thread (src/types/dev.ts), the reader for the latest block, the signer for impersonation and the
 * miner for the fee recipient.
 */
export interface DevModules {
  reader: Pick<EvmBackend, 'chainId' | 'latestNumber' | 'genesisNumber' | 'blockByNumber' | 'gasPrice' | 'balance'>;
  chain: DevChannel;
  signer: Impersonation;
  miner: Pick<MinerBackend, 'setEtherbase'>;
  /** a fork's re-fork in place (node/refork.ts); undefined: not a fork */
  refork?: Refork;
}

/**
 * Re-forks in place to what anvil_reset names (docs/fork-mode.md "Reset"): true once the new fork answers;
 * false when it names this fork's own origin and block (the caller does a plain reset). A refusal (bad
 * URL, origin down, block above its head) throws, and nothing changed.
 */
export type Refork = (target: ResetTarget) => Promise<boolean>;

export interface DevInfo {
  clientVersion: string;
  /** e.g. `ferry/0.1.0` */
  clientSemver: string;
  commit: string;
  hardfork: string;
  /** a fork's origin (`ferry dev --fork-url`, docs/fork-mode.md); undefined: this node is not a fork */
  fork?: Pick<ForkHistoryPort, 'label' | 'record' | 'retryBackoffMs' | 'latest'>;
}

/** A JSON number or a hex quantity, at most `max` (Anvil's U256 / u64 params). */
export function numeric(name: string, max: bigint): ParamCodec<bigint>;
export function numeric(name: string, max: bigint, optional: true): ParamCodec<bigint | undefined>;
export function numeric(name: string, max: bigint, optional = false): ParamCodec<bigint | undefined> {
  return {
    name,
    optional,
    decode(v, i) {
      if (v === undefined || v === null) {
        if (optional) return undefined;
        throw invalidArgument(`missing value for required argument ${i}`);
      }
      let n: bigint;
      if (typeof v === 'number') {
        if (!Number.isSafeInteger(v) || v < 0) throw argumentError(i, `${name} must be a non-negative integer`);
        n = BigInt(v);
      } else if (typeof v === 'string') {
        n = parseQuantity(v, i);
      } else {
        throw typeMismatch(i, jsonKind(v), 'uint64');
      }
      if (n > max) throw argumentError(i, `${name} ${n} is too large (at most ${max})`);
      return n;
    },
  };
}

const seconds = numeric('seconds', UINT64_MAX);
const optionalCount = numeric('blocks', UINT64_MAX, true);
const optionalSeconds = numeric('seconds', UINT64_MAX, true);
export const wei = numeric('wei', (1n << 256n) - 1n);

interface MineOptions {
  timestamp?: bigint;
  blocks?: bigint;
}

/** evm_mine's one optional param: a timestamp, or Anvil's `{ timestamp?, blocks? }` object. */
export const mineOptions: ParamCodec<MineOptions> = {
  name: 'mine options',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return {};
    if (typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        if (k !== 'timestamp' && k !== 'blocks') throw argumentError(i, `unknown field ${JSON.stringify(k)}, expected timestamp or blocks`);
      }
      return { timestamp: optionalSeconds.decode(o.timestamp, i), blocks: optionalCount.decode(o.blocks, i) };
    }
    return { timestamp: seconds.decode(v, i) };
  },
};

/** What anvil_reset's `forking` names (either may be absent). */
export interface ResetTarget {
  url?: string;
  blockNumber?: bigint;
}

const optionalBlockNumber = numeric('blockNumber', UINT64_MAX, true);

/**
 * anvil_reset's one optional param: absent, null, `{}`, or `{ forking: { jsonRpcUrl?, blockNumber? } }`
 * (Hardhat's form; the two fields are also taken beside `forking`). A `forking` naming neither a URL nor a
 * block (viem's `reset()` sends `{"forking":{"blockNumber":null}}`) is a plain reset (undefined); what a URL
 * or block means is the handler's to decide (docs/fork-mode.md "Reset").
 */
const resetOptions: ParamCodec<ResetTarget | undefined> = {
  name: 'reset options',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) throw invalidArgument(`invalid argument ${i}: want an object such as {"forking":{...}}, got ${jsonKind(v)}`);
    const fields = (o: Record<string, unknown>, allowed: readonly string[]): ResetTarget => {
      for (const k of Object.keys(o)) if (!allowed.includes(k)) throw invalidArgument(`invalid argument ${i}: unknown field ${JSON.stringify(k)}`);
      const url = o.jsonRpcUrl;
      if (url !== undefined && url !== null && (typeof url !== 'string' || !/^https?:$/.test(URL.canParse(url) ? new URL(url).protocol : ''))) {
        throw invalidArgument(`invalid argument ${i}: jsonRpcUrl: want an http(s) URL, got ${JSON.stringify(url)}`);
      }
      const blockNumber = optionalBlockNumber.decode(o.blockNumber, i);
      return { ...(typeof url === 'string' ? { url } : {}), ...(blockNumber !== undefined ? { blockNumber } : {}) };
    };
    const o = v as Record<string, unknown>;
    const flat = fields(o, ['forking', 'jsonRpcUrl', 'blockNumber']);
    const forking = o.forking;
    if (forking !== undefined && forking !== null && (typeof forking !== 'object' || Array.isArray(forking))) {
      throw invalidArgument(`invalid argument ${i}: forking: want an object, got ${jsonKind(forking)}`);
    }
    const nested = forking ? fields(forking as Record<string, unknown>, ['jsonRpcUrl', 'blockNumber']) : {};
    const t = { ...flat, ...nested };
    return t.url === undefined && t.blockNumber === undefined ? undefined : t;
  },
};

export function checkBlocks(blocks: bigint): bigint {
  if (blocks > MAX_MINE_BLOCKS) throw invalidArgument(`cannot mine more than ${MAX_MINE_BLOCKS} blocks in one call (asked ${blocks})`);
  return blocks;
}

/** Any param, undecoded: a refused method answers its refusal whatever it is sent. */
const anyParam: ParamCodec<unknown> = { name: 'argument', optional: true, decode: (v) => v };

/** A method Anvil serves that Ferry does not: every call (up to four params) refused with `reason`. */
function refuse(reason: string): MethodSpec {
  return method([anyParam, anyParam, anyParam, anyParam], () => {
    throw invalidArgument(`not supported on ferry: ${reason}`);
  }, PRIVATE);
}

/** every dev method needs the token (or `json-rpc.private-api-auth` off on loopback) */
export const PRIVATE = { private: true } as const;

export function createDevMethods({ reader, chain, signer, miner, refork }: DevModules, info: DevInfo): MethodTable {
  const { fork } = info;
  const instanceId = hexData(new Uint8Array(randomBytes(32)));
  /**
   * Anvil points its fork at a new upstream, and answers null doing nothing when it is not forking
   * (foundry crates/anvil/src/eth/api.rs anvil_set_rpc_url); Ferry does the same when not forking, and
   * refuses on a fork: its origin is fixed at the fork's start (docs/fork-mode.md).
   */
  const setRpcUrl = (name: string) =>
    method([string], () => {
      if (fork !== undefined) throw invalidArgument(`${name}: a fork's origin is fixed when it starts; restart \`ferry dev --fork-url URL\` to change it (docs/fork-mode.md)`);
      return null;
    }, PRIVATE);
  /** the latest block: its number and header (absent only before the first block is readable) */
  const latest = () => {
    const n = reader.latestNumber();
    return { n, header: reader.blockByNumber(n)?.header };
  };

  const mine = method([optionalCount, optionalSeconds], async ([blocks, interval]) => {
    await chain.dev({ op: 'mine', blocks: checkBlocks(blocks ?? 1n), interval });
    return null;
  }, PRIVATE);
  const setAutomine = method([bool], async ([on]) => {
    await chain.dev({ op: 'setAutomine', enabled: on });
    return null;
  }, PRIVATE);
  const getAutomine = method([], async () => (await chain.dev({ op: 'status' })).automine, PRIVATE);
  const setIntervalMining = method([seconds], async ([s]) => {
    await chain.dev({ op: 'setInterval', seconds: s });
    return null;
  }, PRIVATE);
  const dropTransaction = method([hash], async ([h]) => {
    const dropped = await chain.dev({ op: 'dropTxs', hashes: [h] });
    return dropped.length > 0 ? hexData(dropped[0]!) : null;
  }, PRIVATE);
  const setNextBaseFee = method([wei], async ([fee]) => {
    await chain.dev({ op: 'setNextBaseFee', fee });
    return null;
  }, PRIVATE);
  const setCoinbase = method([address], async ([a]) => {
    await miner.setEtherbase(a);
    return null;
  }, PRIVATE);
  const minGasPrice = (name: string) =>
    method([wei], () => {
      throw invalidArgument(`${name} is not supported when EIP-1559 is active`);
    }, PRIVATE);
  // impersonation (docs/dev-mode.md): eth_sendTransaction from the address needs no key
  const impersonate = (on: boolean) =>
    method([address], async ([a]) => {
      await chain.dev({ op: 'impersonate', address: a, on });
      signer.setImpersonated(a, on);
      return null;
    }, PRIVATE);
  const autoImpersonate = method([bool], async ([on]) => {
    await chain.dev({ op: 'autoImpersonate', enabled: on });
    signer.setAutoImpersonate(on);
    return null;
  }, PRIVATE);
  const snapshot = method([], async () => hexQuantity(await chain.dev({ op: 'snapshot' })), PRIVATE);
  const revert = method([numeric('snapshot id', (1n << 256n) - 1n)], ([id]) => chain.dev({ op: 'revert', id }), PRIVATE);
  /**
   * anvil_reset naming a URL or block (foundry crates/anvil/src/eth/api.rs anvil_reset; a URL without a block
   * is the origin's latest block, as Anvil): on a fork, the same origin and fork block is a plain reset
   * (back to the fork block); another block or origin re-forks in place (node/refork.ts), refused before
   * anything changes when the origin cannot give it; any URL or block on a node that is not a fork is refused
   * (docs/fork-mode.md "Reset").
   */
  const reforked = async (t: ResetTarget): Promise<boolean> => {
    if (fork === undefined || refork === undefined) {
      throw invalidArgument(`invalid argument 0: this node is not a fork: anvil_reset goes back to the genesis of the dev home and takes no ${t.url !== undefined ? 'jsonRpcUrl' : 'blockNumber'}; a fork starts with \`ferry dev --fork-url URL\` on a new home (docs/fork-mode.md)`);
    }
    return refork(t);
  };
  const reset = method([resetOptions], async ([target]) => {
    if (target !== undefined && (await reforked(target))) return null;
    await chain.dev({ op: 'reset' });
    return null;
  }, PRIVATE);
  const increaseTime = method([seconds], async ([s]) => Number(await chain.dev({ op: 'increaseTime', seconds: s })), PRIVATE);
  const dropAllTransactions = method([], async () => {
    await chain.dev({ op: 'dropTxs' });
    return null;
  }, PRIVATE);
  const metadata = method([], async () => {
    const s = await chain.dev({ op: 'status' });
    const { n, header } = latest();
    return {
      clientVersion: info.clientSemver,
      clientSemver: info.clientSemver,
      clientCommitSha: info.commit,
      chainId: Number(reader.chainId),
      instanceId,
      latestBlockNumber: Number(n),
      latestBlockHash: header ? hexData(header.hash) : null,
      // Anvil's: the fork's chain id (--fork-chain-id when given), the fork block and its hash as the origin reports it
      forkedNetwork: fork ? { chainId: Number(fork.record.chainId), forkBlockNumber: Number(fork.record.blockNumber), forkBlockHash: fork.record.blockHash } : null,
      // Anvil's map: id → [block number, block hash]
      snapshots: Object.fromEntries(s.snapshots.map(([id, height, hash]) => [hexQuantity(id), [Number(height), hexData(hash)]])),
    };
  }, PRIVATE);

  const setTime = method([seconds], async ([s]) => Number(await chain.dev({ op: 'setTime', seconds: s })), PRIVATE);
  // Ferry writes no per-request log lines to toggle (docs/dev-mode.md): accepted, as clients set it before benchmarks
  const setLoggingEnabled = method([bool], () => null, PRIVATE);
  // foundry crates/anvil/src/eth/api.rs anvil_set_block_timestamp_interval: `()`; remove: whether one was set
  // Anvil takes seconds; viem's mode 'hardhat' sends milliseconds (viem actions/test/setBlockTimestampInterval)
  const setTimestampInterval = (msPerUnit: number) =>
    method([numeric('interval', BigInt(MAX_TIMESTAMP_INTERVAL_MS / msPerUnit))], async ([n]) => {
      await chain.dev({ op: 'setTimestampInterval', ms: Number(n) * msPerUnit });
      return null;
    }, PRIVATE);
  const removeTimestampInterval = method([], () => chain.dev({ op: 'setTimestampInterval' }), PRIVATE);

  const table: Record<string, MethodSpec> = {
    anvil_setTime: setTime,
    evm_setTime: setTime,
    // foundry crates/anvil/src/eth/api.rs anvil_set_block_timestamp_interval: `()`; remove: whether one was set
    anvil_setBlockTimestampInterval: setTimestampInterval(1000),
    anvil_removeBlockTimestampInterval: removeTimestampInterval,
    // not Anvil names, but viem's test client in mode 'hardhat' sends them
    hardhat_setBlockTimestampInterval: setTimestampInterval(1),
    hardhat_removeBlockTimestampInterval: removeTimestampInterval,
    // the genesis time, seconds (Anvil: u64)
    anvil_getGenesisTime: method([], () => Number(reader.blockByNumber(reader.genesisNumber())?.header.timestamp ?? 0n), PRIVATE),
    anvil_setLoggingEnabled: setLoggingEnabled,
    hardhat_setLoggingEnabled: setLoggingEnabled,
    anvil_addBalance: method([address, wei], async ([a, amount]) => {
      const balance = (await reader.balance(a, reader.latestNumber())) + amount;
      if (balance >= 1n << 256n) throw invalidArgument(`balance ${balance} would overflow uint256`);
      await chain.dev({ op: 'setCheats', cheats: [{ kind: 'balance', address: a, value: balance }] });
      return null;
    }, PRIVATE),
    anvil_rollback: method([optionalCount], async ([depth]) => {
      await chain.dev({ op: 'rollback', depth: depth ?? 1n });
      return null;
    }, PRIVATE),
    // Anvil sends from `from` with no signature; Ferry impersonates the sender as anvil_impersonateAccount does and leaves it so (docs/dev-mode.md)
    eth_sendUnsignedTransaction: method([sendArgs], async ([args], ctx) => {
      if (args.from === undefined) throw invalidArgument('eth_sendUnsignedTransaction needs a from address');
      await chain.dev({ op: 'impersonate', address: args.from, on: true });
      signer.setImpersonated(args.from, true);
      // the request's origin: the gas estimate sees the pending dev cheats (anvil_setBalance …), as eth_sendTransaction's
      return signer.sendTransaction(args, undefined, ctx);
    }, PRIVATE),
    anvil_setChainId: refuse('the chain id is fixed by the genesis file and signed into every transaction (docs/dev-mode.md)'),
    evm_mine: method([mineOptions], async ([o]) => {
      await chain.dev({ op: 'mine', blocks: checkBlocks(o.blocks ?? 1n), timestamp: o.timestamp });
      return '0x0';
    }, PRIVATE),
    anvil_mine: mine,
    hardhat_mine: mine,
    evm_increaseTime: increaseTime,
    anvil_increaseTime: increaseTime,
    evm_setNextBlockTimestamp: method([seconds], async ([s]) => {
      await chain.dev({ op: 'setNextTimestamp', seconds: s });
      return null;
    }, PRIVATE),
    evm_setBlockGasLimit: method([numeric('gas limit', UINT64_MAX)], async ([gas]) => {
      await chain.dev({ op: 'setBlockGasLimit', gas });
      return true;
    }, PRIVATE),
    evm_setAutomine: setAutomine,
    anvil_setAutomine: setAutomine,
    anvil_getAutomine: getAutomine,
    // the interval in seconds, or null when interval mining is off (foundry crates/anvil/src/eth/api.rs
    // anvil_get_interval_mining: Option<u64>)
    anvil_getIntervalMining: method([], async () => {
      const { intervalMs } = await chain.dev({ op: 'status' });
      return intervalMs === 0 ? null : Math.floor(intervalMs / 1000);
    }, PRIVATE),
    hardhat_getAutomine: getAutomine,
    evm_setIntervalMining: setIntervalMining,
    anvil_setIntervalMining: setIntervalMining,
    anvil_dropTransaction: dropTransaction,
    hardhat_dropTransaction: dropTransaction,
    anvil_dropAllTransactions: dropAllTransactions,
    hardhat_dropAllTransactions: dropAllTransactions,
    // every pool tx of one sender (foundry crates/anvil/src/eth/api.rs anvil_remove_pool_transactions: `()`)
    anvil_removePoolTransactions: method([address], async ([from]) => {
      await chain.dev({ op: 'dropTxs', from });
      return null;
    }, PRIVATE),
    anvil_setNextBlockBaseFeePerGas: setNextBaseFee,
    hardhat_setNextBlockBaseFeePerGas: setNextBaseFee,
    anvil_setCoinbase: setCoinbase,
    hardhat_setCoinbase: setCoinbase,
    anvil_impersonateAccount: impersonate(true),
    hardhat_impersonateAccount: impersonate(true),
    anvil_stopImpersonatingAccount: impersonate(false),
    hardhat_stopImpersonatingAccount: impersonate(false),
    anvil_autoImpersonateAccount: autoImpersonate,
    hardhat_autoImpersonateAccount: autoImpersonate,
    anvil_setMinGasPrice: minGasPrice('anvil_setMinGasPrice'),
    hardhat_setMinGasPrice: minGasPrice('hardhat_setMinGasPrice'),
    anvil_nodeInfo: method([], async () => {
      const s = await chain.dev({ op: 'status' });
      const { n, header } = latest();
      return {
        currentBlockNumber: hexQuantity(n),
        currentBlockTimestamp: Number(header?.timestamp ?? 0n),
        currentBlockHash: header ? hexData(header.hash) : null,
        hardFork: info.hardfork,
        transactionOrder: 'fees',
        environment: {
          baseFee: hexQuantity(s.nextBaseFee),
          chainId: Number(reader.chainId),
          gasLimit: hexQuantity(s.blockGasLimit),
          gasPrice: hexQuantity(reader.gasPrice()),
        },
        // forkRetryBackoff: the first retry's wait in ms (Ferry's, ORIGIN_BACKOFF_MS; Anvil's default is 1000)
        forkConfig: fork
          ? { forkUrl: fork.record.url, forkBlockNumber: Number(fork.record.blockNumber), forkRetryBackoff: fork.retryBackoffMs }
          : { forkUrl: null, forkBlockNumber: null, forkRetryBackoff: null },
      };
    }, PRIVATE),
    anvil_metadata: metadata,
    hardhat_metadata: metadata,
    evm_snapshot: snapshot,
    anvil_snapshot: snapshot,
    evm_revert: revert,
    anvil_revert: revert,
    anvil_reset: reset,
    anvil_setRpcUrl: setRpcUrl('anvil_setRpcUrl'),
    hardhat_reset: reset,
    hardhat_setRpcUrl: setRpcUrl('hardhat_setRpcUrl'),
  };
  return Object.freeze(table);
}
