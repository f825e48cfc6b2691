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
 */
import { randomBytes } from 'node:crypto';
import { invalidArgument } from '../lib/errors.js';
import { address, bool, hash } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Address, Hash } from '../types/chain.js';
import type { EvmBackend } from './backend.js';
import { argumentError, jsonKind, parseQuantity, toData as hexData, toQuantity as hexQuantity, typeMismatch } from '../lib/hex.js';

/** anvil_mine / hardhat_mine: the most blocks one call makes (each is a signed CometBFT block, written to disk) */
export const MAX_MINE_BLOCKS = 10_000n;
const UINT64_MAX = (1n << 64n) - 1n;

/** The chain thread's dev state. */
export interface DevStatus {
  automine: boolean;
  /** milliseconds; 0 = no interval mining */
  intervalMs: number;
  blockGasLimit: bigint;
  nextBaseFee: bigint;
  /** the snapshots held: [id, block number, block hash] */
  snapshots: [bigint, bigint, Uint8Array][];
}

/** What the dev methods change; node/ wires it to the chain thread. A backwards time rejects with invalidParams. */
export interface DevControls {
  mine(blocks: bigint, intervalSec?: bigint, timestamp?: bigint): Promise<void>;
  /** resolves to the total increase, seconds */
  increaseTime(seconds: bigint): Promise<bigint>;
  setNextTimestamp(seconds: bigint): Promise<void>;
  setAutomine(enabled: boolean): Promise<void>;
  /** 0 = interval mining off */
  setIntervalMining(seconds: bigint): Promise<void>;
  setBlockGasLimit(gas: bigint): Promise<void>;
  setNextBaseFee(fee: bigint): Promise<void>;
  /** undefined: every pool tx; resolves to the hashes dropped */
  dropTxs(hashes: Hash[] | undefined): Promise<Hash[]>;
  setCoinbase(address: Address): Promise<void>;
  /** anvil_impersonateAccount (on) / stopImpersonatingAccount (off) */
  impersonate(address: Address, on: boolean): Promise<void>;
  autoImpersonate(enabled: boolean): Promise<void>;
  /** evm_snapshot: the new id (rejects with limitExceeded when too many are held) */
  snapshot(): Promise<bigint>;
  /** evm_revert: false for an unknown id */
  revert(id: bigint): Promise<boolean>;
  /** anvil_reset: back to genesis */
  reset(): Promise<void>;
  status(): Promise<DevStatus>;
}

export interface DevInfo {
  clientVersion: string;
  /** e.g. `ferry/0.1.0` */
  clientSemver: string;
  commit: string;
  hardfork: string;
}

/** A JSON number or a hex quantity, at most `max` (Anvil's U256 / u64 params). */
function numeric(name: string, max: bigint): ParamCodec<bigint>;
function numeric(name: string, max: bigint, optional: true): ParamCodec<bigint | undefined>;
function numeric(name: string, max: bigint, optional = false): ParamCodec<bigint | undefined> {
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
const wei = numeric('wei', (1n << 256n) - 1n);

interface MineOptions {
  timestamp?: bigint;
  blocks?: bigint;
}

/** evm_mine's one optional param: a timestamp, or Anvil's `{ timestamp?, blocks? }` object. */
const mineOptions: ParamCodec<MineOptions> = {
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

/**
 * anvil_reset's one optional param. Ferry does not fork: absent, null, `{}` and a `forking` object
 * naming neither a URL nor a block (viem's `reset()` sends `{"forking":{"blockNumber":null}}`) reset
 * to genesis; a `jsonRpcUrl` or `blockNumber` anywhere is refused.
 */
const resetOptions: ParamCodec<undefined> = {
  name: 'reset options',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) throw invalidArgument(`invalid argument ${i}: want an object such as {"forking":{...}}, got ${jsonKind(v)}`);
    const check = (fields: Record<string, unknown>, allowed: readonly string[]) => {
      for (const [k, val] of Object.entries(fields)) {
        if (!allowed.includes(k)) throw invalidArgument(`invalid argument ${i}: unknown field ${JSON.stringify(k)}`);
        if (k !== 'forking' && val !== undefined && val !== null) {
          throw invalidArgument(`invalid argument ${i}: ferry does not fork: anvil_reset resets to the genesis of the dev home and takes no ${k}`);
        }
      }
    };
    const o = v as Record<string, unknown>;
    check(o, ['forking', 'jsonRpcUrl', 'blockNumber']);
    const forking = o.forking;
    if (forking !== undefined && forking !== null) {
      if (typeof forking !== 'object' || Array.isArray(forking)) throw invalidArgument(`invalid argument ${i}: forking: want an object, got ${jsonKind(forking)}`);
      check(forking as Record<string, unknown>, ['jsonRpcUrl', 'blockNumber']);
    }
    return undefined;
  },
};

function checkBlocks(blocks: bigint): bigint {
  if (blocks > MAX_MINE_BLOCKS) throw invalidArgument(`cannot mine more than ${MAX_MINE_BLOCKS} blocks in one call (asked ${blocks})`);
  return blocks;
}

/** every dev method needs the token (or `json-rpc.private-api-auth` off on loopback) */
const PRIVATE = { private: true } as const;

export function createDevMethods(backend: EvmBackend, dev: DevControls, info: DevInfo): MethodTable {
  const instanceId = hexData(new Uint8Array(randomBytes(32)));
  /** the latest block: its number and header (absent only before the first block is readable) */
  const latest = () => {
    const n = backend.latestNumber();
    return { n, header: backend.blockByNumber(n)?.header };
  };

  const mine = method([optionalCount, optionalSeconds], async ([blocks, interval]) => {
    await dev.mine(checkBlocks(blocks ?? 1n), interval);
    return null;
  }, PRIVATE);
  const setAutomine = method([bool], async ([on]) => {
    await dev.setAutomine(on);
    return null;
  }, PRIVATE);
  const getAutomine = method([], async () => (await dev.status()).automine, PRIVATE);
  const setIntervalMining = method([seconds], async ([s]) => {
    await dev.setIntervalMining(s);
    return null;
  }, PRIVATE);
  const dropTransaction = method([hash], async ([h]) => {
    const dropped = await dev.dropTxs([h]);
    return dropped.length > 0 ? hexData(dropped[0]!) : null;
  }, PRIVATE);
  const setNextBaseFee = method([wei], async ([fee]) => {
    await dev.setNextBaseFee(fee);
    return null;
  }, PRIVATE);
  const setCoinbase = method([address], async ([a]) => {
    await dev.setCoinbase(a);
    return null;
  }, PRIVATE);
  const minGasPrice = (name: string) =>
    method([wei], () => {
      throw invalidArgument(`${name} is not supported when EIP-1559 is active`);
    }, PRIVATE);
  // impersonation (docs/dev-mode.md): eth_sendTransaction from the address needs no key
  const impersonate = (on: boolean) =>
    method([address], async ([a]) => {
      await dev.impersonate(a, on);
      return null;
    }, PRIVATE);
  const autoImpersonate = method([bool], async ([on]) => {
    await dev.autoImpersonate(on);
    return null;
  }, PRIVATE);
  const snapshot = method([], async () => hexQuantity(await dev.snapshot()), PRIVATE);
  const revert = method([numeric('snapshot id', (1n << 256n) - 1n)], ([id]) => dev.revert(id), PRIVATE);
  const reset = method([resetOptions], async () => {
    await dev.reset();
    return null;
  }, PRIVATE);
  const metadata = method([], async () => {
    const s = await dev.status();
    const { n, header } = latest();
    return {
      clientVersion: info.clientSemver,
      clientSemver: info.clientSemver,
      clientCommitSha: info.commit,
      chainId: Number(backend.chainId),
      instanceId,
      latestBlockNumber: Number(n),
      latestBlockHash: header ? hexData(header.hash) : null,
      forkedNetwork: null,
      // Anvil's map: id → [block number, block hash]
      snapshots: Object.fromEntries(s.snapshots.map(([id, height, hash]) => [hexQuantity(id), [Number(height), hexData(hash)]])),
    };
  }, PRIVATE);

  const table: Record<string, MethodSpec> = {
    evm_mine: method([mineOptions], async ([o]) => {
      await dev.mine(checkBlocks(o.blocks ?? 1n), undefined, o.timestamp);
      return '0x0';
    }, PRIVATE),
    anvil_mine: mine,
    hardhat_mine: mine,
    evm_increaseTime: method([seconds], async ([s]) => Number(await dev.increaseTime(s)), PRIVATE),
    evm_setNextBlockTimestamp: method([seconds], async ([s]) => {
      await dev.setNextTimestamp(s);
      return null;
    }, PRIVATE),
    evm_setBlockGasLimit: method([numeric('gas limit', UINT64_MAX)], async ([gas]) => {
      await dev.setBlockGasLimit(gas);
      return true;
    }, PRIVATE),
    evm_setAutomine: setAutomine,
    anvil_setAutomine: setAutomine,
    anvil_getAutomine: getAutomine,
    hardhat_getAutomine: getAutomine,
    evm_setIntervalMining: setIntervalMining,
    anvil_setIntervalMining: setIntervalMining,
    anvil_dropTransaction: dropTransaction,
    hardhat_dropTransaction: dropTransaction,
    anvil_dropAllTransactions: method([], async () => {
      await dev.dropTxs(undefined);
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
      const s = await dev.status();
      const { n, header } = latest();
      return {
        currentBlockNumber: hexQuantity(n),
        currentBlockTimestamp: Number(header?.timestamp ?? 0n),
        currentBlockHash: header ? hexData(header.hash) : null,
        hardFork: info.hardfork,
        transactionOrder: 'fees',
        environment: {
          baseFee: hexQuantity(s.nextBaseFee),
          chainId: Number(backend.chainId),
          gasLimit: hexQuantity(s.blockGasLimit),
          gasPrice: hexQuantity(backend.gasPrice()),
        },
        forkConfig: { forkUrl: null, forkBlockNumber: null, forkRetryBackoff: null },
      };
    }, PRIVATE),
    anvil_metadata: metadata,
    hardhat_metadata: metadata,
    evm_snapshot: snapshot,
    anvil_snapshot: snapshot,
    evm_revert: revert,
    anvil_revert: revert,
    anvil_reset: reset,
    hardhat_reset: reset,
  };
  return Object.freeze(table);
}
