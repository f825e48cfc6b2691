/**
 * EIP-7934 (Osaka): the RLP encoding of an execution block is at most MAX_RLP_BLOCK_SIZE bytes
 * (MAX_BLOCK_SIZE 10 MiB less a 2 MiB safety margin). How geth applies it, and ferry after it
 * (docs/limits.md; docs/abci.md "The ABCI methods"):
 *   - validating, a block over the bound is refused (go-ethereum core/block_validator.go ValidateBody,
 *     `ErrBlockOversized`): ferry's ProcessProposal, which bounds the block from above (`blockSizeBound`);
 *   - building, txs are added while the header's size plus the txs' sizes stays below the bound less a
 *     buffer zone for what the block adds around them, and the first tx that does not fit ends the
 *     block (go-ethereum miner/worker.go txFitsSize, maxBlockSizeBufferZone): `builderTxBudget`.
 * A tx's size is its signed envelope's length (geth's tx.Size()).
 */
import { Hardfork, type Common } from '@ethereumjs/common';
import type { EvmHeader } from '../types/chain.js';
import { encodeHeader } from './ethrlp.js';

/** EIP-7934's MAX_RLP_BLOCK_SIZE (go-ethereum params.MaxBlockSize) */
export const MAX_RLP_BLOCK_SIZE = 8_388_608;
/** what a block builder leaves free under the bound (go-ethereum miner/worker.go maxBlockSizeBufferZone) */
export const BLOCK_SIZE_BUFFER_ZONE = 1_000_000;

const U64_MAX = (1n << 64n) - 1n;
const U256_MAX = (1n << 256n) - 1n;
/** a header with every number at its widest: its RLP length bounds every header of the fork */
const WIDEST: EvmHeader = {
  number: U64_MAX,
  hash: new Uint8Array(32),
  parentHash: new Uint8Array(32),
  stateRoot: new Uint8Array(32),
  transactionsRoot: new Uint8Array(32),
  receiptsRoot: new Uint8Array(32),
  logsBloom: new Uint8Array(256),
  miner: new Uint8Array(20),
  gasLimit: U64_MAX,
  gasUsed: U64_MAX,
  timestamp: U64_MAX,
  extraData: new Uint8Array(),
  baseFeePerGas: U256_MAX,
  mixHash: new Uint8Array(32),
  size: 0n,
};
const headerBounds = new WeakMap<Common, number>();

/**
 * Whether EIP-7934 applies under these rules: from Osaka on (geth: IsOsaka). ethereumjs 10.1.3 knows the
 * EIP but its Osaka does not list it (nor a `maxRlpBlockSize` param), so the fork decides here.
 */
export function blockSizeBounded(common: Common): boolean {
  return common.gteHardfork(Hardfork.Osaka);
}

/** The most bytes a header's RLP takes under these rules. */
export function headerSizeBound(common: Common): number {
  let n = headerBounds.get(common);
  if (n === undefined) {
    n = encodeHeader(common, WIDEST).length;
    headerBounds.set(common, n);
  }
  return n;
}

/** the length of an RLP string or list prefix for a payload of `n` bytes */
function prefixLength(n: number): number {
  if (n < 56) return 1;
  let bytes = 0;
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes++;
  return 1 + bytes;
}

/** A signed tx's bytes inside a block's RLP: a typed envelope as a byte string, a legacy tx as its own list. */
function embeddedSize(raw: Uint8Array): number {
  return raw[0]! >= 0xc0 ? raw.length : prefixLength(raw.length) + raw.length;
}

/**
 * An upper bound of the RLP length of a block with these txs, rlp([header, txs, uncles, withdrawals])
 * (evm/ethrlp.ts encodeBlock): exact but for the header, counted at its widest.
 */
export function blockSizeBound(common: Common, rawTxs: readonly Uint8Array[]): number {
  let txs = 0;
  for (const raw of rawTxs) txs += embeddedSize(raw);
  // the empty uncle and withdrawal lists take one byte each
  const body = headerSizeBound(common) + prefixLength(txs) + txs + 2;
  return prefixLength(body) + body;
}

/** What a builder may spend on txs' envelopes (each must keep the running total below it): geth's txFitsSize. */
export function builderTxBudget(common: Common): number {
  return MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE - headerSizeBound(common);
}
