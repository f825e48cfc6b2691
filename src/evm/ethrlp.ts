/**
 * Ethereum consensus encodings of ferry's blocks, headers and receipts (geth's rlp.EncodeToBytes of
 * types.Header / types.Block, and Receipt.MarshalBinary), and the decoding of a block's RLP.
 *
 * The header is the one eth_getBlockByNumber describes, with the fields of the chain's hardfork
 * (ethereumjs decides which: from Shanghai a withdrawals root, from Cancun blob gas and a parent
 * beacon root, all empty). Its keccak is NOT the block hash, except at genesis: ferry's block hash
 * is the CometBFT header hash of the same height (docs/compatibility.md).
 */
import { createBlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { RLP, type Input } from '@ethereumjs/rlp';
import { Address, bytesToBigInt } from '@ethereumjs/util';
import type { Bytes, EvmHeader, EvmReceipt } from '../types/chain.js';
import { rlpEncode, unpaddedBytes, type RlpItem } from './rlpwrite.js';

/** The header's field list (ethereumjs BlockHeader.raw()): what its RLP encodes. */
function headerFields(common: Common, h: EvmHeader): Uint8Array[] {
  return createBlockHeader(
    {
      parentHash: h.parentHash,
      coinbase: new Address(h.miner),
      stateRoot: h.stateRoot,
      transactionsTrie: h.transactionsRoot,
      receiptTrie: h.receiptsRoot,
      logsBloom: h.logsBloom,
      difficulty: 0n,
      number: h.number,
      gasLimit: h.gasLimit,
      gasUsed: h.gasUsed,
      timestamp: h.timestamp,
      extraData: h.extraData,
      mixHash: h.mixHash,
      baseFeePerGas: h.baseFeePerGas,
      blobGasUsed: 0n,
      excessBlobGas: 0n,
      parentBeaconBlockRoot: new Uint8Array(32),
    },
    { common, skipConsensusFormatValidation: true },
  ).raw();
}

/** rlp(header): debug_getRawHeader. */
export function encodeHeader(common: Common, h: EvmHeader): Bytes {
  return RLP.encode(headerFields(common, h));
}

/** A signed tx as a block's list embeds it: typed envelopes as byte strings, legacy txs as their list. */
function embeddedTx(raw: Bytes): Input {
  return raw[0]! >= 0xc0 ? (RLP.decode(raw) as Input) : raw;
}

/** rlp([header, txs, uncles, withdrawals]): debug_getRawBlock; its length is the block's `size`. */
export function encodeBlock(common: Common, h: EvmHeader, rawTxs: readonly Bytes[]): Bytes {
  // every supported hardfork (Cancun, Prague) has withdrawals: an empty list
  return RLP.encode([headerFields(common, h), rawTxs.map(embeddedTx), [], []] as Input);
}

/** Byte length of the block's Ethereum RLP encoding (the `size` field). */
export function ethBlockSize(common: Common, h: EvmHeader, rawTxs: readonly Bytes[]): bigint {
  return BigInt(encodeBlock(common, h, rawTxs).length);
}

const STATUS_OK = Uint8Array.of(1);
const STATUS_FAILED = new Uint8Array(0);

/** geth's Receipt.MarshalBinary: [type byte] ‖ rlp([status, cumulativeGasUsed, bloom, logs]). */
export function encodeReceipt(r: EvmReceipt): Bytes {
  return receiptRlp(r.type, r.status, r.cumulativeGasUsed, r.logsBloom, r.logs.map((l) => [l.address, l.topics, l.data]));
}

/**
 * The same encoding from its parts (what the block's receiptsRoot hashes; ethereumjs vm encodeReceipt
 * gives these bytes for every receipt a block holds, whose cumulative gas is never 0), written into one
 * buffer with the type byte in front.
 */
export function receiptRlp(type: number, status: number, cumulativeGasUsed: bigint, logsBloom: Uint8Array, logs: RlpItem): Bytes {
  const fields: RlpItem = [status === 1 ? STATUS_OK : STATUS_FAILED, unpaddedBytes(cumulativeGasUsed), logsBloom, logs];
  return type === 0 ? rlpEncode(fields) : rlpEncode(fields, type);
}

/** The parts of a decoded block that replaying it needs. */
export interface DecodedBlock {
  /** rlp of the header as given */
  headerRlp: Bytes;
  parentHash: Bytes;
  number: bigint;
  coinbase: Bytes;
  gasLimit: bigint;
  timestamp: bigint;
  mixHash: Bytes;
  baseFeePerGas: bigint;
  /** each tx's signed envelope (what eth_sendRawTransaction takes) */
  rawTxs: Bytes[];
}

/** London header: 15 pre-London fields + base fee */
const MIN_HEADER_FIELDS = 16;

function bytesAt(list: unknown[], i: number, len: number | undefined, what: string): Uint8Array {
  const v = list[i];
  if (!(v instanceof Uint8Array)) throw new Error(`${what}: expected a byte string`);
  if (len !== undefined && v.length !== len) throw new Error(`${what}: expected ${len} bytes, got ${v.length}`);
  return v;
}

function uintAt(list: unknown[], i: number, what: string): bigint {
  const v = bytesAt(list, i, undefined, what);
  if (v.length > 0 && v[0] === 0) throw new Error(`${what}: non-canonical integer (leading zero bytes)`);
  if (v.length > 32) throw new Error(`${what}: integer over 256 bits`);
  return bytesToBigInt(v);
}

/** Decodes a block's RLP; throws an Error with the reason when it is not one. */
export function decodeBlock(raw: Bytes): DecodedBlock {
  const top = RLP.decode(raw) as unknown;
  if (!Array.isArray(top) || top.length < 3) throw new Error('expected a list [header, transactions, uncles, ...]');
  const [header, txs] = top as unknown[];
  if (!Array.isArray(header) || header.length < MIN_HEADER_FIELDS) {
    throw new Error(`header: expected a list of at least ${MIN_HEADER_FIELDS} fields`);
  }
  if (!Array.isArray(txs)) throw new Error('transactions: expected a list');
  const h = header as unknown[];
  return {
    headerRlp: RLP.encode(header as Input),
    parentHash: bytesAt(h, 0, 32, 'parentHash'),
    coinbase: bytesAt(h, 2, 20, 'coinbase'),
    number: uintAt(h, 8, 'number'),
    gasLimit: uintAt(h, 9, 'gasLimit'),
    timestamp: uintAt(h, 11, 'timestamp'),
    mixHash: bytesAt(h, 13, 32, 'mixHash'),
    baseFeePerGas: uintAt(h, 15, 'baseFeePerGas'),
    rawTxs: (txs as unknown[]).map((t) => (Array.isArray(t) ? RLP.encode(t as Input) : (t as Uint8Array))),
  };
}
