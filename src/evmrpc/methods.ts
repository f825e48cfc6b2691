/**
 * Surface A's method table for the `eth`, `web3` and `net` namespaces: wire name → param codecs →
 * handler. Handlers decode nothing and encode nothing themselves: codecs.ts decodes, the EvmBackend
 * port answers in domain values, format.ts writes the wire form.
 *
 * Not-found lookups answer null; a state query at a block that does not exist is -32000
 * `header not found` (geth). Limits come from `info` (app.toml [json-rpc]); 0 means unlimited for
 * the block-range and logs caps.
 */
import { argumentError } from '../lib/hex.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { invalidArgument, invalidRequest, limitExceeded, notFound, timeout, unsupported } from '../lib/errors.js';
import { formatDuration } from '../config/duration.js';
import { address, bool, data, hash, quantity, quantityNumber } from '../jsonrpc/codecs.js';
import { JsonText, method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { CallRequest, EvmBlock, Hash } from '../types/chain.js';
import { hexLog, logsJson } from './logjson.js';
import type { BlockSelector, LogQuery, StateOverrides } from '../types/query.js';
import type { EvmBackend } from './backend.js';
import { blockOverrides, stateOverrides } from './overrides.js';
import {
  LATEST,
  MAX_PROOF_KEYS,
  MAX_REWARD_PERCENTILES,
  blockCount,
  blockNumberOrTag,
  blockNumberOrTagOrHash,
  blockOrDefault,
  callArgs,
  logFilter,
  rewardPercentiles,
  storageKey,
  storageKeyList,
  type CallArgs,
  type LogFilter,
} from './codecs.js';
import {
  FormatCache,
  formatFeeHistory,
  formatLog,
  formatProof,
  formatTransaction,
  hexData,
  hexKey,
  hexQuantity,
  txContextOf,
  type RpcBlock,
  type RpcFeeHistory,
  type RpcLog,
  type RpcReceipt,
  type RpcTransaction,
} from './format.js';
import { GethText } from '../lib/gethtexts.js';

export interface EvmMethodsInfo {
  /** web3_clientVersion, `<client>/<version>/<os>/<runtime>` */
  clientVersion: string;
  /** max gas of eth_call / eth_estimateGas (0 = no cap) */
  gasCap: bigint;
  /** max `to - from` of eth_getLogs (0 = no cap) */
  blockRangeCap: number;
  /** max logs of one eth_getLogs answer (0 = no cap) */
  logsCap: number;
  /** max block count of eth_feeHistory */
  feeHistoryCap: number;
  /** eth_call / eth_estimateGas answer deadline in ms (0 = none) */
  evmTimeoutMs: number;
}

/** eth/65, what Evmos answers */
export const PROTOCOL_VERSION = '0x41';

const HEADER_NOT_FOUND = GethText.headerNotFound;
const HASH_HEADER_NOT_FOUND = 'header for hash not found';

/** Settles like `p`, or rejects with geth's timeout error after `ms` (0 = no deadline). */
export async function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  if (ms <= 0) return p;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeout(`execution aborted (timeout = ${formatDuration(ms)})`)), ms);
  });
  try {
    return await Promise.race([p, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Go's %f: six decimals. */
function goFloat(p: number): string {
  return p.toFixed(6);
}

/** geth eth/gasprice: percentiles within [0, 100], ascending, at most MAX_REWARD_PERCENTILES. */
function checkPercentiles(ps: readonly number[]): void {
  if (ps.length > MAX_REWARD_PERCENTILES) {
    throw invalidRequest(`invalid reward percentile: over the query limit ${MAX_REWARD_PERCENTILES}`);
  }
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i]!;
    if (p < 0 || p > 100) throw invalidRequest(`invalid reward percentile: ${goFloat(p)}`);
    if (i > 0 && p < ps[i - 1]!) {
      throw invalidRequest(`invalid reward percentile: #${i - 1}:${goFloat(ps[i - 1]!)} >= #${i}:${goFloat(p)}`);
    }
  }
}

const optionalBlockOrHash = blockOrDefault(blockNumberOrTagOrHash);
/** geth's types.BlockNonce */
const POW_NONCE_LENGTH = 8;
const powNonce: ParamCodec<Uint8Array> = {
  name: 'nonce',
  decode: (v, i) => {
    const b = data.decode(v, i);
    if (b.length !== POW_NONCE_LENGTH) {
      throw argumentError(i, `hex string has length ${b.length * 2}, want ${POW_NONCE_LENGTH * 2} for types.BlockNonce`);
    }
    return b;
  },
};

/** The range a log filter selects, clamped to the head; undefined when it lies wholly beyond it. */
function logRange(backend: EvmBackend, blockRangeCap: number, f: LogFilter): { from: bigint; to: bigint } | undefined {
  if (f.blockHash !== undefined) {
    const n = backend.resolveBlock({ kind: 'hash', hash: f.blockHash, requireCanonical: false });
    if (n === undefined) throw notFound('unknown block');
    return { from: n, to: n };
  }
  const latest = backend.latestNumber();
  const resolve = (sel: BlockSelector | undefined): bigint =>
    sel?.kind === 'number' ? sel.number : (backend.resolveBlock(sel ?? LATEST) ?? latest);
  const from = resolve(f.fromBlock);
  let to = resolve(f.toBlock);
  if (from > to) throw invalidArgument(GethText.invalidBlockRange);
  if (to > latest) to = latest;
  // the whole range lies beyond the head: nothing to find
  if (from > to) return undefined;
  if (blockRangeCap > 0 && to - from > BigInt(blockRangeCap)) {
    throw limitExceeded(`maximum [from, to] blocks distance: ${blockRangeCap}`);
  }
  return { from, to };
}

/**
 * eth_getLogs (and eth_getFilterLogs): the logs a filter selects among committed blocks, with the
 * block-range and logs caps of `caps` (0 = no cap).
 */
export function findLogs(backend: EvmBackend, caps: Pick<EvmMethodsInfo, 'blockRangeCap' | 'logsCap'>, f: LogFilter): RpcLog[] {
  return matchingLogs(backend, caps, f, (q) => backend.getLogs(q)).map(formatLog);
}

/** findLogs' answer as JSON text, written from the logs' hex text (evmrpc/logjson.ts): what eth_getLogs sends */
export function findLogsJson(backend: EvmBackend, caps: Pick<EvmMethodsInfo, 'blockRangeCap' | 'logsCap'>, f: LogFilter): JsonText {
  const hex = backend.getLogsHex?.bind(backend) ?? ((q: LogQuery) => backend.getLogs(q).map(hexLog));
  return new JsonText(logsJson(matchingLogs(backend, caps, f, hex)));
}

function matchingLogs<L>(backend: EvmBackend, caps: Pick<EvmMethodsInfo, 'blockRangeCap' | 'logsCap'>, f: LogFilter, read: (q: LogQuery) => L[]): L[] {
  const range = logRange(backend, caps.blockRangeCap, f);
  if (range === undefined) return [];
  const logs = read({ fromBlock: range.from, toBlock: range.to, addresses: f.addresses, topics: f.topics });
  if (caps.logsCap > 0 && logs.length > caps.logsCap) {
    throw limitExceeded(`query returned more than ${caps.logsCap} results`);
  }
  return logs;
}

/** Block number for a state query; -32000 `header not found` when the block does not exist. */
export function stateBlockNumber(backend: Pick<EvmBackend, 'resolveBlock' | 'checkState'>, sel: BlockSelector): bigint {
  const n = backend.resolveBlock(sel);
  if (n === undefined) throw notFound(sel.kind === 'hash' ? HASH_HEADER_NOT_FOUND : HEADER_NOT_FOUND);
  backend.checkState?.(n);
  return n;
}

/**
 * geth's CallDefaults checks (fee styles, chain id), then the gas cap: a larger gas is lowered to
 * it, and a missing gas becomes it when `defaultToCap`.
 */
export function callDefaults(args: CallArgs, chainId: bigint, gasCap: bigint, defaultToCap: boolean): CallRequest {
  const { chainId: argChainId, ...req } = args;
  if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
    throw invalidRequest(GethText.mixedFeeFields);
  }
  if (argChainId !== undefined && argChainId !== chainId) {
    throw invalidRequest(`chainId does not match node's (have=${argChainId}, want=${chainId})`);
  }
  if (gasCap > 0n) {
    if (req.gas === undefined) {
      if (defaultToCap) req.gas = gasCap;
    } else if (req.gas > gasCap) {
      req.gas = gasCap;
    }
  }
  return req;
}

export function createEvmMethods(backend: EvmBackend, info: EvmMethodsInfo): MethodTable {
  const cache = new FormatCache();
  // a dev revert: committed answers above the new head are no longer true
  backend.onRewind?.(() => cache.clear());

  const stateBlock = (sel: BlockSelector) => stateBlockNumber(backend, sel);

  function blockJsonByNumber(n: bigint, fullTx: boolean): RpcBlock | null {
    const key = cache.hashOfNumber(n);
    const hit = key === undefined ? undefined : cache.cachedBlock(key, fullTx);
    if (hit !== undefined) return hit;
    const block = backend.blockByNumber(n);
    return block === undefined ? null : cache.block(block, fullTx);
  }

  function blockJsonByHash(h: Hash, fullTx: boolean): RpcBlock | null {
    const hit = cache.cachedBlock(hexKey(h), fullTx);
    if (hit !== undefined) return hit;
    const block = backend.blockByHash(h);
    return block === undefined ? null : cache.block(block, fullTx);
  }

  function blockJson(sel: BlockSelector, fullTx: boolean): RpcBlock | null {
    if (sel.kind === 'hash') return blockJsonByHash(sel.hash, fullTx);
    const n = backend.resolveBlock(sel);
    return n === undefined ? null : blockJsonByNumber(n, fullTx);
  }

  function txInBlock(block: EvmBlock | undefined, index: number): RpcTransaction | null {
    const tx = block?.transactions[index];
    return block === undefined || tx === undefined ? null : cache.transaction(tx, txContextOf(block, index));
  }

  const callRequest = (args: CallArgs, defaultToCap: boolean) => callDefaults(args, backend.chainId, info.gasCap, defaultToCap);

  const table: Record<string, MethodSpec> = {
    // --- web3, net -------------------------------------------------------------------------
    web3_clientVersion: method([], () => info.clientVersion),
    web3_sha3: method([data], ([input]) => hexData(keccak_256(input))),
    net_version: method([], () => backend.networkId),
    net_peerCount: method([], () => 0),
    // no p2p listener (Surface B's net_info says `listening: false` too)
    net_listening: method([], () => false),

    // --- eth: node and chain ---------------------------------------------------------------
    eth_protocolVersion: method([], () => PROTOCOL_VERSION),
    eth_syncing: method([], () => false),
    eth_chainId: method([], () => hexQuantity(backend.chainId)),
    eth_coinbase: method([], () => hexData(backend.coinbase())),
    eth_blockNumber: method([], () => hexQuantity(backend.latestNumber())),
    eth_gasPrice: method([], () => hexQuantity(backend.gasPrice())),
    eth_maxPriorityFeePerGas: method([], () => hexQuantity(backend.maxPriorityFeePerGas())),
    eth_feeHistory: method(
      [blockCount, blockNumberOrTag, rewardPercentiles],
      ([count, newestSel, percentiles]): RpcFeeHistory => {
        if (count > info.feeHistoryCap) {
          throw limitExceeded(`FeeHistory user block count ${count} higher than ${info.feeHistoryCap}`);
        }
        if (count === 0) return { oldestBlock: hexQuantity(0), baseFeePerGas: [], gasUsedRatio: [] };
        if (percentiles !== undefined) checkPercentiles(percentiles);
        const latest = backend.latestNumber();
        let newest: bigint;
        if (newestSel.kind === 'number') {
          newest = newestSel.number;
          if (newest > latest) throw invalidRequest(`request beyond head block: requested ${newest}, head ${latest}`);
        } else {
          newest = backend.resolveBlock(newestSel) ?? latest;
        }
        // not before genesis
        const blocks = BigInt(count) > newest + 1n ? Number(newest + 1n) : count;
        return formatFeeHistory(backend.feeHistory(blocks, newest, percentiles));
      },
    ),

    // --- eth: state ------------------------------------------------------------------------
    eth_getBalance: method([address, optionalBlockOrHash], async ([addr, sel]) =>
      hexQuantity(await backend.balance(addr, stateBlock(sel))),
    ),
    eth_getTransactionCount: method([address, optionalBlockOrHash], async ([addr, sel]) => {
      if (sel.kind === 'tag' && sel.tag === 'pending') return hexQuantity(await backend.pendingNonce(addr));
      return hexQuantity(await backend.nonce(addr, stateBlock(sel)));
    }),
    eth_getCode: method([address, optionalBlockOrHash], async ([addr, sel]) =>
      hexData(await backend.code(addr, stateBlock(sel))),
    ),
    // Anvil's one-request account read (foundry crates/anvil/src/eth/api.rs get_account_info), which forge
    // asks an origin first: the balance, nonce and code of eth_getBalance, eth_getTransactionCount, eth_getCode
    eth_getAccountInfo: method([address, optionalBlockOrHash], async ([addr, sel]) => {
      const at = stateBlock(sel);
      const pending = sel.kind === 'tag' && sel.tag === 'pending';
      const [balance, nonce, code] = await Promise.all([
        backend.balance(addr, at),
        pending ? backend.pendingNonce(addr) : backend.nonce(addr, at),
        backend.code(addr, at),
      ]);
      return { balance: hexQuantity(balance), nonce: hexQuantity(nonce), code: hexData(code) };
    }),
    eth_getStorageAt: method(
      [address, storageKey, optionalBlockOrHash],
      async ([addr, key, sel]) =>
        hexData(await backend.storageAt(addr, key.slot, stateBlock(sel))),
    ),
    eth_getProof: method(
      [address, storageKeyList, optionalBlockOrHash],
      async ([addr, keys, sel]) => {
        if (keys.length > MAX_PROOF_KEYS) {
          throw invalidArgument(`too many storage keys requested (max ${MAX_PROOF_KEYS}, got ${keys.length})`);
        }
        const proof = await backend.proof(addr, keys.map((k) => k.slot), stateBlock(sel));
        return formatProof(proof, keys.map((k) => k.fullHash));
      },
    ),

    // --- eth: blocks -----------------------------------------------------------------------
    eth_getBlockByNumber: method([blockNumberOrTag, bool], ([sel, full]) => blockJson(sel, full)),
    eth_getBlockByHash: method([hash, bool], ([h, full]) => blockJsonByHash(h, full)),
    eth_getBlockTransactionCountByNumber: method([blockNumberOrTag], ([sel]) => {
      const block = blockJson(sel, false);
      return block === null ? null : hexQuantity(block.transactions.length);
    }),
    eth_getBlockTransactionCountByHash: method([hash], ([h]) => {
      const block = blockJsonByHash(h, false);
      return block === null ? null : hexQuantity(block.transactions.length);
    }),
    eth_getBlockReceipts: method([blockNumberOrTagOrHash], ([sel]): RpcReceipt[] | null => {
      const n = backend.resolveBlock(sel);
      if (n === undefined) return null;
      const key = cache.hashOfNumber(n);
      const hit = key === undefined ? undefined : cache.cachedBlockReceipts(key);
      if (hit !== undefined) return hit;
      const receipts = backend.blockReceipts(n);
      if (receipts === undefined) return null;
      if (receipts.length === 0) return [];
      return cache.blockReceipts(n, receipts[0]!.blockHash, receipts);
    }),
    eth_getUncleCountByBlockNumber: method([blockNumberOrTag], ([sel]) =>
      blockJson(sel, false) === null ? null : hexQuantity(0),
    ),
    eth_getUncleCountByBlockHash: method([hash], ([h]) => (blockJsonByHash(h, false) === null ? null : hexQuantity(0))),
    eth_getUncleByBlockNumberAndIndex: method([blockNumberOrTag, quantityNumber], () => null),
    eth_getUncleByBlockHashAndIndex: method([hash, quantityNumber], () => null),

    // --- eth: transactions and receipts ----------------------------------------------------
    eth_getTransactionByHash: method([hash], ([h]): RpcTransaction | null => {
      const hit = cache.cachedTransaction(hexKey(h));
      if (hit !== undefined) return hit;
      const found = backend.transactionByHash(h);
      if (found === undefined) return null;
      const loc = found.location;
      if (loc === undefined) return formatTransaction(found.tx, undefined);
      const block = backend.blockByNumber(loc.blockNumber);
      if (block === undefined) return null;
      return cache.transaction(found.tx, {
        blockHash: loc.blockHash,
        blockNumber: loc.blockNumber,
        blockTimestamp: block.header.timestamp,
        index: loc.index,
        baseFee: found.baseFee ?? block.header.baseFeePerGas,
      });
    }),
    eth_getTransactionByBlockHashAndIndex: method([hash, quantityNumber], ([h, index]) => {
      const full = cache.cachedBlock(hexKey(h), true);
      if (full !== undefined) return (full.transactions as RpcTransaction[])[index] ?? null;
      return txInBlock(backend.blockByHash(h), index);
    }),
    eth_getTransactionByBlockNumberAndIndex: method([blockNumberOrTag, quantityNumber], ([sel, index]) => {
      const n = backend.resolveBlock(sel);
      return n === undefined ? null : txInBlock(backend.blockByNumber(n), index);
    }),
    eth_getTransactionReceipt: method([hash], ([h]): RpcReceipt | null => {
      const hit = cache.cachedReceipt(hexKey(h));
      if (hit !== undefined) return hit;
      const receipt = backend.receipt(h);
      return receipt === undefined ? null : cache.receipt(receipt);
    }),

    // --- eth: execution and sending --------------------------------------------------------
    eth_sendRawTransaction: method([data], async ([raw]) => hexData(await backend.sendRawTransaction(raw))),
    // the 4th param: geth's block overrides (evmrpc/overrides.ts)
    eth_call: method(
      [callArgs, optionalBlockOrHash, stateOverrides, blockOverrides],
      async ([args, sel, overrides, block], ctx) => {
        const req = callRequest(args, true);
        const n = stateBlock(sel);
        return hexData(await withDeadline(backend.call(req, n, overrides, ctx, block), info.evmTimeoutMs));
      },
    ),
    eth_estimateGas: method(
      [callArgs, optionalBlockOrHash, stateOverrides, blockOverrides],
      async ([args, sel, overrides, block], ctx) => {
        const req = callRequest(args, false);
        const n = stateBlock(sel);
        return hexQuantity(await withDeadline(backend.estimateGas(req, n, overrides, ctx, block), info.evmTimeoutMs));
      },
    ),

    // --- eth: logs -------------------------------------------------------------------------
    eth_getLogs: method([logFilter], ([f]) => findLogsJson(backend, info, f)),

    // --- eth: proof-of-work leftovers (geth's answers without a PoW engine) ------------------
    eth_mining: method([], () => false),
    eth_hashrate: method([], () => hexQuantity(0)),
    eth_getWork: method([], () => {
      throw unsupported('not supported');
    }),
    eth_submitWork: method([powNonce, hash, hash], () => false),
    eth_submitHashrate: method([quantity, hash], () => false),
  };
  return Object.freeze(table);
}
