/**
 * The port Surface A needs. evmrpc/ never imports chain/ or consensus/: node/ wires a concrete
 * implementation (chain/reader.ts) to this interface. All values are domain values (bigint, bytes).
 */
import type { Address, Bytes, CallOrigin, CallRequest, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash, TxLocation } from '../types/chain.js';
import type { AccountProof, BlockOverrides, BlockSelector, FeeHistory, HexLog, LogQuery, StateOverrides, TxPosition } from '../types/query.js';

// the port's value types are defined in src/types/ (shared with chain/, evm/ and store/); re-exported
// here only so code written against the port's old home keeps compiling
export type { CallRequest } from '../types/chain.js';
export type { AccountProof, BlockSelector, FeeHistory, LogQuery, StateOverrides } from '../types/query.js';

export interface EvmBackend {
  readonly chainId: bigint;
  /** net_version */
  readonly networkId: string;

  /** latest committed EVM block number */
  latestNumber(): bigint;
  /** the genesis block's number (0; a fork's: the fork block, docs/fork-mode.md) */
  genesisNumber(): bigint;
  /**
   * `listener` runs after a dev revert rewound the chain to `height` (blocks above it are gone, and
   * their heights will be reused): caches of committed answers must be dropped. Returns the unsubscribe.
   */
  onRewind?(listener: (height: bigint) => void): () => void;
  /** resolves a selector to a committed block number, or undefined if no such block */
  resolveBlock(sel: BlockSelector): bigint | undefined;
  /** throws a `pruned` DomainError when the state of block `n` is no longer kept (docs/abci.md "Pruning") */
  checkState?(n: bigint): void;

  blockByNumber(n: bigint): EvmBlock | undefined;
  blockByHash(hash: Hash): EvmBlock | undefined;
  /** committed (with location) or pending (location undefined) */
  transactionByHash(hash: Hash): { tx: EvmTx; location: TxLocation | undefined; baseFee: bigint | undefined } | undefined;
  receipt(hash: Hash): EvmReceipt | undefined;
  blockReceipts(n: bigint): EvmReceipt[] | undefined;
  /** throws limitExceeded on logs-cap overflow */
  getLogs(q: LogQuery): EvmLog[];
  /** getLogs with the byte fields as hex text, for eth_getLogs' answer (evmrpc/logjson.ts); without it getLogs is used */
  getLogsHex?(q: LogQuery): HexLog[];
  /**
   * The committed txs touching `address` (sender, recipient, created contract, internal calls: the
   * address index) in blocks [lo, hi], newest first (`desc`) or oldest first: the first `count`, then
   * the rest of the last block reached; at most `cap` + 1 (more means over the caller's bound).
   */
  addressTxs?(address: Address, lo: bigint, hi: bigint, desc: boolean, count: number, cap: number): TxPosition[];
  /** the blocks in [lo, hi] holding a tx that touches `address`, oldest first, at most `limit` */
  addressBlocks?(address: Address, lo: bigint, hi: bigint, limit: number): bigint[];

  balance(addr: Address, n: bigint): Promise<bigint>;
  nonce(addr: Address, n: bigint): Promise<bigint>;
  /** nonce including the sender's executable txs in the mempool */
  pendingNonce(addr: Address): Promise<bigint>;
  code(addr: Address, n: bigint): Promise<Bytes>;
  storageAt(addr: Address, slot: Hash, n: bigint): Promise<Hash>;
  proof(addr: Address, slots: Hash[], n: bigint): Promise<AccountProof>;

  /** decodes, checks (CheckTx) and adds to the mempool; resolves to the EVM hash; throws txRejected with geth's texts */
  sendRawTransaction(raw: Bytes): Promise<Hash>;
  /**
   * throws `reverted` (with the revert output) on revert, executionFailed on other VM errors; `block`
   * is geth's block overrides (the header fields the call runs under)
   */
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<Bytes>;
  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<bigint>;

  gasPrice(): bigint;
  maxPriorityFeePerGas(): bigint;
  feeHistory(count: number, newest: bigint, percentiles: number[] | undefined): FeeHistory;
  coinbase(): Address;
  /** base fee the next block will have */
  nextBaseFee(): bigint;
  /** txs in the mempool, executable first */
  pendingTransactions(): EvmTx[];
}
