/**
 * The port Surface A needs. evmrpc/ never imports chain/ or consensus/: node/ wires a concrete
 * implementation (chain/reader.ts) to this interface. All values are domain values (bigint, bytes).
 */
import type { Address, Bytes, CallOrigin, CallRequest, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash, TxLocation } from '../types/chain.js';

/** A resolved block selector. `pending` reads latest state plus the mempool where that matters. */
export type BlockSelector =
  | { kind: 'number'; number: bigint }
  | { kind: 'hash'; hash: Hash; requireCanonical: boolean }
  | { kind: 'tag'; tag: 'latest' | 'pending' | 'earliest' | 'safe' | 'finalized' };

export type { CallRequest } from '../types/chain.js';

/** geth's state override set, decoded. */
export type StateOverrides = Map<
  string /* lowercase 0x address */,
  {
    balance?: bigint;
    nonce?: bigint;
    code?: Bytes;
    /** replaces the whole storage */
    state?: Map<string /* 0x slot */, Hash>;
    /** patches single slots */
    stateDiff?: Map<string /* 0x slot */, Hash>;
  }
>;

export interface LogQuery {
  fromBlock: bigint;
  toBlock: bigint;
  /** empty = any address */
  addresses: Address[];
  /** per position: null = wildcard, else any-of */
  topics: (Hash[] | null)[];
}

export interface AccountProof {
  address: Address;
  accountProof: Bytes[];
  balance: bigint;
  codeHash: Hash;
  nonce: bigint;
  storageHash: Hash;
  storageProof: { key: Bytes; value: bigint; proof: Bytes[] }[];
}

export interface FeeHistory {
  oldestBlock: bigint;
  baseFeePerGas: bigint[];
  gasUsedRatio: number[];
  reward?: bigint[][];
}

export interface PendingTxView {
  tx: EvmTx;
}

export interface EvmBackend {
  readonly chainId: bigint;
  /** net_version */
  readonly networkId: string;

  /** latest committed EVM block number */
  latestNumber(): bigint;
  /**
   * `listener` runs after a dev revert rewound the chain to `height` (blocks above it are gone, and
   * their heights will be reused): caches of committed answers must be dropped. Returns the unsubscribe.
   */
  onRewind?(listener: (height: bigint) => void): () => void;
  /** resolves a selector to a committed block number, or undefined if no such block */
  resolveBlock(sel: BlockSelector): bigint | undefined;

  blockByNumber(n: bigint): EvmBlock | undefined;
  blockByHash(hash: Hash): EvmBlock | undefined;
  /** committed (with location) or pending (location undefined) */
  transactionByHash(hash: Hash): { tx: EvmTx; location: TxLocation | undefined; baseFee: bigint | undefined } | undefined;
  receipt(hash: Hash): EvmReceipt | undefined;
  blockReceipts(n: bigint): EvmReceipt[] | undefined;
  /** throws FerryError on logs-cap overflow */
  getLogs(q: LogQuery): EvmLog[];

  balance(addr: Address, n: bigint): Promise<bigint>;
  nonce(addr: Address, n: bigint): Promise<bigint>;
  /** nonce including the sender's executable txs in the mempool */
  pendingNonce(addr: Address): Promise<bigint>;
  code(addr: Address, n: bigint): Promise<Bytes>;
  storageAt(addr: Address, slot: Hash, n: bigint): Promise<Hash>;
  proof(addr: Address, slots: Hash[], n: bigint): Promise<AccountProof>;

  /** decodes, checks (CheckTx) and adds to the mempool; resolves to the EVM hash; throws FerryError with geth's texts */
  sendRawTransaction(raw: Bytes): Promise<Hash>;
  /** throws FerryError code 3 with revert data on revert, -32000 on other VM errors */
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin): Promise<Bytes>;
  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin): Promise<bigint>;

  gasPrice(): bigint;
  maxPriorityFeePerGas(): bigint;
  feeHistory(count: number, newest: bigint, percentiles: number[] | undefined): FeeHistory;
  coinbase(): Address;
  /** base fee the next block will have */
  nextBaseFee(): bigint;
  /** txs in the mempool, executable first */
  pendingTransactions(): EvmTx[];
}
