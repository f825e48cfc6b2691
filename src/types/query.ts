/**
 * Values a read of the chain is asked with or answers with, shared by Surface A (evmrpc/: decoded by
 * its codecs, formatted by format.ts), the chain reader and simulator (chain/), the EVM (evm/) and
 * the store (store/). Each is defined here once. Bytes are Uint8Array and numbers bigint — never hex
 * strings (hex exists only at the RPC boundary).
 */
import { equalBytes } from '../lib/bytes.js';
import type { Address, Bytes, Hash } from './chain.js';

/** The block tags a selector may name. */
export type BlockTag = 'earliest' | 'latest' | 'pending' | 'safe' | 'finalized';

/** A resolved block selector. `pending` reads latest state plus the mempool where that matters. */
export type BlockSelector =
  | { kind: 'number'; number: bigint }
  | { kind: 'hash'; hash: Hash; requireCanonical: boolean }
  | { kind: 'tag'; tag: BlockTag };

/** One storage slot an override sets: 32-byte slot, 32-byte value. */
export interface SlotOverride {
  slot: Hash;
  value: Hash;
}

/** geth's override of one account for a call (override.OverrideAccount), decoded. */
export interface AccountOverride {
  address: Address;
  balance?: bigint;
  nonce?: bigint;
  code?: Bytes;
  /** replaces the whole storage */
  state?: SlotOverride[];
  /** patches single slots */
  stateDiff?: SlotOverride[];
  /** eth_simulateV1 only: the precompile at `address` moves here (geth's movePrecompileToAddress) */
  movePrecompileTo?: Address;
}

/** geth's state override set (override.StateOverride): at most one entry per address, each slot once. */
export type StateOverrides = AccountOverride[];

/**
 * geth's block override (override.BlockOverrides): the block fields a call runs under instead of its
 * block's. `difficulty` is taken and has no effect after the merge (geth: "No-op if we're simulating
 * post-merge calls"); `beaconRoot` and `withdrawals` are refused for calls, as geth's Apply refuses them.
 */
export interface BlockOverrides {
  number?: bigint;
  difficulty?: bigint;
  time?: bigint;
  gasLimit?: bigint;
  feeRecipient?: Address;
  prevRandao?: Hash;
  baseFeePerGas?: bigint;
  blobBaseFee?: bigint;
}

/** The override of `address` in a set, if it has one. */
export function overrideOf(overrides: StateOverrides | undefined, address: Address): AccountOverride | undefined {
  return overrides?.find((o) => equalBytes(o.address, address));
}

/** An eth_getLogs query over committed blocks, range resolved. */
export interface LogQuery {
  fromBlock: bigint;
  toBlock: bigint;
  /** empty = any address */
  addresses: Address[];
  /** per position: null = wildcard, else any-of */
  topics: (Hash[] | null)[];
}

/** A committed log with its byte fields as lowercase hex text without `0x` (eth_getLogs' answer, evmrpc/logjson.ts). */
export interface HexLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
}

/** eth_getProof's answer (EIP-1186). */
export interface AccountProof {
  address: Address;
  accountProof: Bytes[];
  balance: bigint;
  codeHash: Hash;
  nonce: bigint;
  storageHash: Hash;
  storageProof: { key: Bytes; value: bigint; proof: Bytes[] }[];
}

/** eth_feeHistory's answer. */
export interface FeeHistory {
  oldestBlock: bigint;
  baseFeePerGas: bigint[];
  gasUsedRatio: number[];
  reward?: bigint[][];
}

/** A committed tx by its place: block number and index in the block (the address index's rows). */
export interface TxPosition {
  height: bigint;
  index: number;
}
