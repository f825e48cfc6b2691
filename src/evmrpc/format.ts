/**
 * Surface A's result formatting: the ONE place where domain values (bigint, bytes) become the
 * wire's hex. Shapes follow geth (internal/ethapi: RPCMarshalBlock, RPCTransaction, MarshalReceipt;
 * core/types Log) and validate against the execution-apis schemas.
 *
 * Field order: blocks and receipts are Go maps in geth, so its JSON has their keys sorted; we emit
 * the same order. Transactions and logs are Go structs: struct order.
 *
 * Block header choices (ferry's block hash is the CometBFT header hash, not a keccak of an Ethereum
 * header, so these fields describe the block rather than re-hash to it):
 * - `nonce` 0x0000000000000000, `difficulty` 0x0, `mixHash` from the header, `sha3Uncles` the
 *   empty-list hash, `uncles` [] (proof of stake, as geth after the merge).
 * - `totalDifficulty` 0x0: geth dropped it, Evmos sends it; the Block schema allows extra fields and
 *   older tooling reads it, so it stays.
 * - Cancun header fields (`withdrawals`, `withdrawalsRoot`, `blobGasUsed`, `excessBlobGas`,
 *   `parentBeaconBlockRoot`) are omitted: the EvmHeader port carries none of them, the schema lists
 *   them as optional, and geth itself emits them only when the header has them. Clients (ethers,
 *   viem) treat them as absent-or-null.
 * - Logs carry no `blockTimestamp` (optional in the schema; EvmLog has no timestamp).
 */
import { bytesToBigInt } from '../lib/bytes.js';
import { toData, toQuantity } from '../lib/hex.js';
import type { AccessListItem, AccessListResult, Address, AuthorizationItem, Bytes, EvmBlock, EvmHeader, EvmLog, EvmReceipt, EvmTx, Hash } from '../types/chain.js';
import type { AccountProof, FeeHistory } from '../types/query.js';
import { Lru } from '../lib/lru.js';

/** keccak256(rlp([])): the ommers hash of a block without uncles */
export const EMPTY_UNCLES_HASH = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
/** 8-byte PoW nonce, always zero */
export const ZERO_NONCE = '0x0000000000000000';
const ZERO_QUANTITY = '0x0';

/** Lowercase `0x` hex of bytes: the key form of domain maps (StateOverrides, caches). */
export function hexKey(b: Bytes): string {
  return toData(b);
}


// ---------------------------------------------------------------------------------------------
// Wire shapes

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  transactionIndex: string;
  blockHash: string;
  logIndex: string;
  removed: boolean;
}

export interface RpcAccessListItem {
  address: string;
  storageKeys: string[];
}

/** geth's SetCodeAuthorization JSON (core/types/gen_authorization.go): every number a quantity, no `v` */
export interface RpcAuthorization {
  chainId: string;
  address: string;
  nonce: string;
  yParity: string;
  r: string;
  s: string;
}

export interface RpcTransaction {
  blockHash: string | null;
  blockNumber: string | null;
  blockTimestamp: string | null;
  from: string;
  gas: string;
  gasPrice: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  hash: string;
  input: string;
  nonce: string;
  to: string | null;
  transactionIndex: string | null;
  value: string;
  type: string;
  accessList?: RpcAccessListItem[];
  chainId?: string;
  authorizationList?: RpcAuthorization[];
  v: string;
  r: string;
  s: string;
  yParity?: string;
}

export interface RpcReceipt {
  blockHash: string;
  blockNumber: string;
  contractAddress: string | null;
  cumulativeGasUsed: string;
  effectiveGasPrice: string;
  from: string;
  gasUsed: string;
  logs: RpcLog[];
  logsBloom: string;
  status: string;
  to: string | null;
  transactionHash: string;
  transactionIndex: string;
  type: string;
}

export interface RpcBlock {
  baseFeePerGas: string;
  difficulty: string;
  extraData: string;
  gasLimit: string;
  gasUsed: string;
  hash: string;
  logsBloom: string;
  miner: string;
  mixHash: string;
  nonce: string;
  number: string;
  parentHash: string;
  receiptsRoot: string;
  sha3Uncles: string;
  size: string;
  stateRoot: string;
  timestamp: string;
  totalDifficulty: string;
  transactions: string[] | RpcTransaction[];
  transactionsRoot: string;
  uncles: string[];
}

/** geth's RPCMarshalHeader: the block's fields without size, totalDifficulty, transactions, uncles. */
export type RpcHeader = Omit<RpcBlock, 'size' | 'totalDifficulty' | 'transactions' | 'uncles'>;

/** geth's accessListResult (struct order: accessList, error when the call failed, gasUsed). */
export interface RpcAccessListResult {
  accessList: RpcAccessListItem[];
  error?: string;
  gasUsed: string;
}

export interface RpcStorageProof {
  key: string;
  value: string;
  proof: string[];
}

export interface RpcAccountProof {
  address: string;
  accountProof: string[];
  balance: string;
  codeHash: string;
  nonce: string;
  storageHash: string;
  storageProof: RpcStorageProof[];
}

export interface RpcFeeHistory {
  oldestBlock: string;
  reward?: string[][];
  baseFeePerGas: string[];
  gasUsedRatio: number[];
}

// ---------------------------------------------------------------------------------------------
// Formatters

/** Where a committed transaction sits; undefined for a pending one. */
export interface TxContext {
  blockHash: Hash;
  blockNumber: bigint;
  blockTimestamp: bigint;
  index: number;
  /** base fee of the including block (prices a mined type-2 tx) */
  baseFee: bigint;
}

export function formatLog(l: EvmLog): RpcLog {
  return {
    address: toData(l.address),
    topics: l.topics.map(toData),
    data: toData(l.data),
    blockNumber: toQuantity(l.blockNumber),
    transactionHash: toData(l.transactionHash),
    transactionIndex: toQuantity(l.transactionIndex),
    blockHash: toData(l.blockHash),
    logIndex: toQuantity(l.logIndex),
    removed: false,
  };
}

function formatAccessList(list: AccessListItem[]): RpcAccessListItem[] {
  return list.map((item) => ({ address: toData(item.address), storageKeys: item.storageKeys.map(toData) }));
}

/** An authorization list as geth's RPCTransaction writes it (field order of core/types/gen_authorization.go). */
export function formatAuthorizationList(list: Omit<AuthorizationItem, 'authority'>[]): RpcAuthorization[] {
  return list.map((a) => ({
    chainId: toQuantity(a.chainId),
    address: toData(a.address),
    nonce: toQuantity(a.nonce),
    yParity: toQuantity(a.yParity),
    r: toQuantity(a.r),
    s: toQuantity(a.s),
  }));
}

/** Types whose fees are a fee cap and a tip: EIP-1559 (2) and EIP-7702 set code (4). */
const dynamicFeeType = (type: number): boolean => type === 2 || type === 4;

/** min(tip + baseFee, feeCap): what a mined EIP-1559 tx paid per gas. */
export function effectiveGasPrice(tx: EvmTx, baseFee: bigint): bigint {
  if (!dynamicFeeType(tx.type)) return tx.gasPrice ?? 0n;
  const feeCap = tx.maxFeePerGas ?? 0n;
  const price = (tx.maxPriorityFeePerGas ?? 0n) + baseFee;
  return price < feeCap ? price : feeCap;
}

/** geth's RPCTransaction. `at` undefined = pending (null location, gasPrice = fee cap). */
export function formatTransaction(tx: EvmTx, at: TxContext | undefined): RpcTransaction {
  const dynamicFee = dynamicFeeType(tx.type);
  const typed = tx.type !== 0;
  let gasPrice: bigint;
  if (dynamicFee) gasPrice = at === undefined ? (tx.maxFeePerGas ?? 0n) : effectiveGasPrice(tx, at.baseFee);
  else gasPrice = tx.gasPrice ?? 0n;
  // a legacy tx names its chain only when EIP-155 protected
  let chainId: bigint | undefined = tx.chainId;
  if (typed) chainId ??= 0n;
  else if (chainId === 0n) chainId = undefined;
  // geth's struct order; optional fields in their place
  return {
    blockHash: at === undefined ? null : toData(at.blockHash),
    blockNumber: at === undefined ? null : toQuantity(at.blockNumber),
    blockTimestamp: at === undefined ? null : toQuantity(at.blockTimestamp),
    from: toData(tx.from),
    gas: toQuantity(tx.gasLimit),
    gasPrice: toQuantity(gasPrice),
    ...(dynamicFee
      ? { maxFeePerGas: toQuantity(tx.maxFeePerGas ?? 0n), maxPriorityFeePerGas: toQuantity(tx.maxPriorityFeePerGas ?? 0n) }
      : {}),
    hash: toData(tx.hash),
    input: toData(tx.input),
    nonce: toQuantity(tx.nonce),
    to: tx.to === undefined ? null : toData(tx.to),
    transactionIndex: at === undefined ? null : toQuantity(at.index),
    value: toQuantity(tx.value),
    type: toQuantity(tx.type),
    ...(typed ? { accessList: formatAccessList(tx.accessList) } : {}),
    ...(chainId === undefined ? {} : { chainId: toQuantity(chainId) }),
    ...(tx.authorizationList === undefined ? {} : { authorizationList: formatAuthorizationList(tx.authorizationList) }),
    v: toQuantity(tx.v),
    r: toQuantity(tx.r),
    s: toQuantity(tx.s),
    ...(typed ? { yParity: toQuantity(tx.v) } : {}),
  };
}

/** The context of the i-th transaction of a committed block. */
export function txContextOf(block: EvmBlock, index: number): TxContext {
  const h = block.header;
  return { blockHash: h.hash, blockNumber: h.number, blockTimestamp: h.timestamp, index, baseFee: h.baseFeePerGas };
}

export function formatBlock(block: EvmBlock, fullTx: boolean): RpcBlock {
  const h = block.header;
  const transactions = fullTx
    ? block.transactions.map((tx, i) => formatTransaction(tx, txContextOf(block, i)))
    : block.transactions.map((tx) => toData(tx.hash));
  return {
    baseFeePerGas: toQuantity(h.baseFeePerGas),
    difficulty: ZERO_QUANTITY,
    extraData: toData(h.extraData),
    gasLimit: toQuantity(h.gasLimit),
    gasUsed: toQuantity(h.gasUsed),
    hash: toData(h.hash),
    logsBloom: toData(h.logsBloom),
    miner: toData(h.miner),
    mixHash: toData(h.mixHash),
    nonce: ZERO_NONCE,
    number: toQuantity(h.number),
    parentHash: toData(h.parentHash),
    receiptsRoot: toData(h.receiptsRoot),
    sha3Uncles: EMPTY_UNCLES_HASH,
    size: toQuantity(h.size),
    stateRoot: toData(h.stateRoot),
    timestamp: toQuantity(h.timestamp),
    totalDifficulty: ZERO_QUANTITY,
    transactions,
    transactionsRoot: toData(h.transactionsRoot),
    uncles: [],
  };
}

/** eth_getHeaderBy*: the header fields of eth_getBlockBy*, in the same (sorted) order. */
export function formatHeader(h: EvmHeader): RpcHeader {
  const { size: _size, totalDifficulty: _td, transactions: _txs, uncles: _uncles, ...header } = formatBlock({ header: h, transactions: [] }, false);
  return header;
}

export function formatAccessListResult(r: AccessListResult): RpcAccessListResult {
  const accessList = formatAccessList(r.accessList);
  const gasUsed = toQuantity(r.gasUsed);
  return r.vmError === undefined ? { accessList, gasUsed } : { accessList, error: r.vmError, gasUsed };
}

/** geth's MarshalReceipt (post-Byzantium: `status`, never `root`). */
export function formatReceipt(r: EvmReceipt): RpcReceipt {
  return {
    blockHash: toData(r.blockHash),
    blockNumber: toQuantity(r.blockNumber),
    contractAddress: r.contractAddress === undefined ? null : toData(r.contractAddress),
    cumulativeGasUsed: toQuantity(r.cumulativeGasUsed),
    effectiveGasPrice: toQuantity(r.effectiveGasPrice),
    from: toData(r.from),
    gasUsed: toQuantity(r.gasUsed),
    logs: r.logs.map(formatLog),
    logsBloom: toData(r.logsBloom),
    status: toQuantity(r.status),
    to: r.to === undefined ? null : toData(r.to),
    transactionHash: toData(r.transactionHash),
    transactionIndex: toQuantity(r.transactionIndex),
    type: toQuantity(r.type),
  };
}

/**
 * eth_getProof result. `fullHashKeys[i]` tells whether the caller wrote key i as a 32-byte hash:
 * geth echoes such keys as 32-byte data and any other form as a quantity.
 */
export function formatProof(p: AccountProof, fullHashKeys: readonly boolean[]): RpcAccountProof {
  return {
    address: toData(p.address),
    accountProof: p.accountProof.map(toData),
    balance: toQuantity(p.balance),
    codeHash: toData(p.codeHash),
    nonce: toQuantity(p.nonce),
    storageHash: toData(p.storageHash),
    storageProof: p.storageProof.map((sp, i) => ({
      key: fullHashKeys[i] === false ? toQuantity(bytesToBigInt(sp.key)) : toData(sp.key),
      value: toQuantity(sp.value),
      proof: sp.proof.map(toData),
    })),
  };
}

export function formatFeeHistory(f: FeeHistory): RpcFeeHistory {
  const oldestBlock = toQuantity(f.oldestBlock);
  const baseFeePerGas = f.baseFeePerGas.map(toQuantity);
  // geth's struct order: oldestBlock, reward (only with percentiles), baseFeePerGas, gasUsedRatio
  if (f.reward === undefined) return { oldestBlock, baseFeePerGas, gasUsedRatio: f.gasUsedRatio };
  return { oldestBlock, reward: f.reward.map((row) => row.map(toQuantity)), baseFeePerGas, gasUsedRatio: f.gasUsedRatio };
}

// ---------------------------------------------------------------------------------------------
// Cache of formatted immutable answers

/** Entries kept per cache. Full-transaction blocks can be large, so fewer of them. */
export const FORMAT_CACHE_SIZES = {
  blocks: 256,
  fullBlocks: 16,
  blockNumbers: 1024,
  receipts: 4096,
  blockReceipts: 16,
  transactions: 4096,
} as const;
export type FormatCacheSizes = { [K in keyof typeof FORMAT_CACHE_SIZES]: number };

/**
 * Bounded LRU caches of the formatted JSON of committed blocks, receipts and transactions, keyed by
 * hash. A committed block never changes (single chain, instant finality), so its answers never
 * expire; the number → hash index is valid for the same reason. Cached objects are shared between
 * requests: callers must not mutate them.
 */
export class FormatCache {
  private readonly blocks: Lru<string, RpcBlock>;
  private readonly fullBlocks: Lru<string, RpcBlock>;
  private readonly blockNumbers: Lru<bigint, string>;
  private readonly receipts: Lru<string, RpcReceipt>;
  private readonly blockReceiptLists: Lru<string, RpcReceipt[]>;
  private readonly transactions: Lru<string, RpcTransaction>;

  constructor(sizes: FormatCacheSizes = FORMAT_CACHE_SIZES) {
    this.blocks = new Lru(sizes.blocks);
    this.fullBlocks = new Lru(sizes.fullBlocks);
    this.blockNumbers = new Lru(sizes.blockNumbers);
    this.receipts = new Lru(sizes.receipts);
    this.blockReceiptLists = new Lru(sizes.blockReceipts);
    this.transactions = new Lru(sizes.transactions);
  }

  /** A dev revert rewound the chain: blocks, receipts and txs above the new head are gone (heights get reused). */
  clear(): void {
    for (const c of [this.blocks, this.fullBlocks, this.blockNumbers, this.receipts, this.blockReceiptLists, this.transactions] as Lru<unknown, unknown>[]) c.clear();
  }

  /** Hash (key form) of committed block n, when known. */
  hashOfNumber(n: bigint): string | undefined {
    return this.blockNumbers.get(n);
  }

  cachedBlock(hash: string, fullTx: boolean): RpcBlock | undefined {
    return (fullTx ? this.fullBlocks : this.blocks).get(hash);
  }

  /** Formats a committed block (or returns its cached form). */
  block(block: EvmBlock, fullTx: boolean): RpcBlock {
    const key = hexKey(block.header.hash);
    const cache = fullTx ? this.fullBlocks : this.blocks;
    let out = cache.get(key);
    if (out === undefined) {
      out = formatBlock(block, fullTx);
      cache.set(key, out);
      this.blockNumbers.set(block.header.number, key);
      // the block's transactions are committed too: share their objects with by-hash lookups
      if (fullTx) {
        const txs = out.transactions as RpcTransaction[];
        block.transactions.forEach((tx, i) => this.transactions.set(hexKey(tx.hash), txs[i]!));
      }
    }
    return out;
  }

  cachedReceipt(txHash: string): RpcReceipt | undefined {
    return this.receipts.get(txHash);
  }

  receipt(r: EvmReceipt): RpcReceipt {
    const key = hexKey(r.transactionHash);
    let out = this.receipts.get(key);
    if (out === undefined) {
      out = formatReceipt(r);
      this.receipts.set(key, out);
    }
    return out;
  }

  cachedBlockReceipts(blockHash: string): RpcReceipt[] | undefined {
    return this.blockReceiptLists.get(blockHash);
  }

  /** Formats the receipts of committed block `blockNumber`/`blockHash` (or returns the cached list). */
  blockReceipts(blockNumber: bigint, blockHash: Hash, rs: EvmReceipt[]): RpcReceipt[] {
    const key = hexKey(blockHash);
    let out = this.blockReceiptLists.get(key);
    if (out === undefined) {
      out = rs.map((r) => this.receipt(r));
      this.blockReceiptLists.set(key, out);
      this.blockNumbers.set(blockNumber, key);
    }
    return out;
  }

  cachedTransaction(txHash: string): RpcTransaction | undefined {
    return this.transactions.get(txHash);
  }

  /** Formats a committed transaction (or returns its cached form). */
  transaction(tx: EvmTx, at: TxContext): RpcTransaction {
    const key = hexKey(tx.hash);
    let out = this.transactions.get(key);
    if (out === undefined) {
      out = formatTransaction(tx, at);
      this.transactions.set(key, out);
    }
    return out;
  }
}

/** Quantity and data encoders for scalar results (re-exported so handlers stay hex-free). */
export { toData as hexData, toQuantity as hexQuantity };
