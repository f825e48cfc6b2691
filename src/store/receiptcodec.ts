/**
 * The stored form of a receipt (the `txs.receipt` column): a flat byte layout written in one pass into
 * one buffer, read back as views into the row's bytes. The storage codec (lib/serial.ts, V8's
 * serializer) spent ~28 µs per ERC-20 receipt, most of it in Node's JS callback for each of its ~15 byte
 * arrays (docs/benchmarks.md "The block's store transaction"); this layout takes a few.
 *
 * Rows written before it hold V8 serializer bytes, which always begin with 0xFF (its version tag);
 * this layout begins with RECEIPT_FORMAT, so both are read without a migration.
 *
 * Layout (uvarint: unsigned LEB128; bytes: uvarint length then the bytes; big: bytes of the value's
 * minimal big-endian form, empty for 0):
 *   u8 RECEIPT_FORMAT, u8 flags (FLAG), u8 type, u8 status
 *   bytes transactionHash, uvarint transactionIndex, bytes blockHash, big blockNumber, bytes from,
 *   [bytes to], big cumulativeGasUsed, big gasUsed, big effectiveGasPrice, [bytes contractAddress],
 *   bytes logsBloom, [bytes vmError (UTF-8)], [bytes revertData],
 *   uvarint log count, each log: u8 own (1: its block and tx fields are its own, 0: the receipt's),
 *     bytes address, uvarint topic count, bytes per topic, bytes data, uvarint logIndex,
 *     and when own: big blockNumber, bytes blockHash, bytes transactionHash, uvarint transactionIndex
 */
import { bigIntToBytes } from '../lib/bytes.js';
import { uvarintLength, writeUvarint } from '../lib/protobuf.js';
import { decodeValue } from '../lib/serial.js';
import type { EvmLog, EvmReceipt, TxType } from '../types/chain.js';
import { layoutReader } from './bytelayout.js';

/** The first byte of a receipt in this layout (V8's serializer output begins with 0xFF). */
export const RECEIPT_FORMAT = 1;

/** the flags byte: which optional fields follow */
const FLAG = { to: 1, contract: 2, vmError: 4, revertData: 8 } as const;

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a === b || Buffer.compare(a, b) === 0;

class Writer {
  readonly out: Buffer;
  at = 0;
  constructor(size: number) {
    this.out = Buffer.allocUnsafe(size);
  }
  u8(v: number): void {
    this.out[this.at++] = v;
  }
  uvarint(n: number): void {
    this.at = writeUvarint(this.out, this.at, n);
  }
  bytes(b: Uint8Array): void {
    this.uvarint(b.length);
    this.out.set(b, this.at);
    this.at += b.length;
  }
}

const bytesSize = (b: Uint8Array): number => uvarintLength(b.length) + b.length;

/** true when a log's block and tx fields are the receipt's own (always, for the logs a block builds) */
function logIsReceipts(l: EvmLog, r: EvmReceipt): boolean {
  return l.blockNumber === r.blockNumber && l.transactionIndex === r.transactionIndex && sameBytes(l.blockHash, r.blockHash) && sameBytes(l.transactionHash, r.transactionHash);
}

export function encodeReceipt(r: EvmReceipt): Buffer {
  // big: minimal big-endian bytes (lib/bytes; a negative value is a RangeError)
  const blockNumber = bigIntToBytes(r.blockNumber);
  const cumulative = bigIntToBytes(r.cumulativeGasUsed);
  const gasUsed = bigIntToBytes(r.gasUsed);
  const price = bigIntToBytes(r.effectiveGasPrice);
  const vmError = r.vmError === undefined ? undefined : Buffer.from(r.vmError, 'utf8');
  const own = r.logs.map((l) => !logIsReceipts(l, r));
  const logBig = r.logs.map((l, i) => (own[i] ? bigIntToBytes(l.blockNumber) : undefined));
  let size = 4 + bytesSize(r.transactionHash) + uvarintLength(r.transactionIndex) + bytesSize(r.blockHash) + bytesSize(blockNumber) + bytesSize(r.from);
  if (r.to !== undefined) size += bytesSize(r.to);
  size += bytesSize(cumulative) + bytesSize(gasUsed) + bytesSize(price) + bytesSize(r.logsBloom);
  if (r.contractAddress !== undefined) size += bytesSize(r.contractAddress);
  if (vmError !== undefined) size += bytesSize(vmError);
  if (r.revertData !== undefined) size += bytesSize(r.revertData);
  size += uvarintLength(r.logs.length);
  r.logs.forEach((l, i) => {
    size += 1 + bytesSize(l.address) + uvarintLength(l.topics.length) + bytesSize(l.data) + uvarintLength(l.logIndex);
    for (const t of l.topics) size += bytesSize(t);
    if (own[i]) size += bytesSize(logBig[i]!) + bytesSize(l.blockHash) + bytesSize(l.transactionHash) + uvarintLength(l.transactionIndex);
  });
  const w = new Writer(size);
  let flags = 0;
  if (r.to !== undefined) flags |= FLAG.to;
  if (r.contractAddress !== undefined) flags |= FLAG.contract;
  if (vmError !== undefined) flags |= FLAG.vmError;
  if (r.revertData !== undefined) flags |= FLAG.revertData;
  w.u8(RECEIPT_FORMAT);
  w.u8(flags);
  w.u8(r.type);
  w.u8(r.status);
  w.bytes(r.transactionHash);
  w.uvarint(r.transactionIndex);
  w.bytes(r.blockHash);
  w.bytes(blockNumber);
  w.bytes(r.from);
  if (r.to !== undefined) w.bytes(r.to);
  w.bytes(cumulative);
  w.bytes(gasUsed);
  w.bytes(price);
  if (r.contractAddress !== undefined) w.bytes(r.contractAddress);
  w.bytes(r.logsBloom);
  if (vmError !== undefined) w.bytes(vmError);
  if (r.revertData !== undefined) w.bytes(r.revertData);
  w.uvarint(r.logs.length);
  r.logs.forEach((l, i) => {
    w.u8(own[i] ? 1 : 0);
    w.bytes(l.address);
    w.uvarint(l.topics.length);
    for (const t of l.topics) w.bytes(t);
    w.bytes(l.data);
    w.uvarint(l.logIndex);
    if (own[i]) {
      w.bytes(logBig[i]!);
      w.bytes(l.blockHash);
      w.bytes(l.transactionHash);
      w.uvarint(l.transactionIndex);
    }
  });
  if (w.at !== size) throw new Error(`receipt encoding wrote ${w.at} bytes of ${size}`);
  return w.out;
}

/** A stored receipt, in either form (this layout, or the V8 serializer's of older rows). */
export function decodeReceipt(bytes: Uint8Array): EvmReceipt {
  const r = layoutReader(bytes, RECEIPT_FORMAT, 'a stored receipt');
  if (r === undefined) return decodeValue<EvmReceipt>(bytes);
  const flags = r.u8();
  const type = r.u8() as TxType;
  const status = r.u8() as 0 | 1;
  const transactionHash = r.bytes();
  const transactionIndex = r.uvarint();
  const blockHash = r.bytes();
  const blockNumber = r.big();
  const from = r.bytes();
  const to = flags & FLAG.to ? r.bytes() : undefined;
  const cumulativeGasUsed = r.big();
  const gasUsed = r.big();
  const effectiveGasPrice = r.big();
  const contractAddress = flags & FLAG.contract ? r.bytes() : undefined;
  const logsBloom = r.bytes();
  const vmError = flags & FLAG.vmError ? Buffer.from(r.bytes()).toString('utf8') : undefined;
  const revertData = flags & FLAG.revertData ? r.bytes() : undefined;
  const logs: EvmLog[] = new Array(r.uvarint());
  for (let i = 0; i < logs.length; i++) {
    const own = r.u8() === 1;
    const address = r.bytes();
    const topics: Uint8Array[] = new Array(r.uvarint());
    for (let t = 0; t < topics.length; t++) topics[t] = r.bytes();
    const data = r.bytes();
    const logIndex = r.uvarint();
    logs[i] = own
      ? { address, topics, data, blockNumber: r.big(), blockHash: r.bytes(), transactionHash: r.bytes(), transactionIndex: r.uvarint(), logIndex }
      : { address, topics, data, blockNumber, blockHash, transactionHash, transactionIndex, logIndex };
  }
  r.end();
  return {
    transactionHash,
    transactionIndex,
    blockHash,
    blockNumber,
    from,
    to,
    type,
    status,
    cumulativeGasUsed,
    gasUsed,
    effectiveGasPrice,
    contractAddress,
    logs,
    logsBloom,
    vmError,
    revertData,
  };
}
