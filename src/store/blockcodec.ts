/**
 * The stored form of an EVM block (the `blocks.evm` column, types/chain.ts EvmBlock): its own layout
 * (store/bytelayout.ts), read back as views into the row's bytes. Rows written before it hold V8
 * serializer bytes (lib/serial.ts), which always begin with 0xFF; this layout begins with BLOCK_FORMAT,
 * so both are read without a migration (as receipts, store/receiptcodec.ts).
 *
 * Layout: u8 BLOCK_FORMAT; the header: bytes hash, parentHash, stateRoot, transactionsRoot,
 * receiptsRoot, logsBloom, miner, extraData, mixHash; big number, gasLimit, gasUsed, timestamp,
 * baseFeePerGas, size; then uvarint tx count, each tx: u8 flags (TX_FLAG: which optional fields
 * follow), u8 type, bytes hash, [big chainId], big nonce, big gasLimit, [big gasPrice], [big
 * maxFeePerGas], [big maxPriorityFeePerGas], [bytes to], big value, bytes input, uvarint access-list
 * length, each: bytes address, uvarint key count, bytes per key; [uvarint authorization count, each:
 * big chainId, bytes address, big nonce, big yParity, big r, big s, u8 1 then bytes authority or u8 0],
 * big v, big r, big s, bytes from, bytes raw. Every bytes field is written as a blob (bytelayout.ts: it comes
 * back a Node Buffer when it was one, as from the V8 serializer: a tx's raw envelope often is).
 */
import { decodeValue } from '../lib/serial.js';
import type { AccessListItem, AuthorizationItem, EvmBlock, EvmHeader, EvmTx, TxType } from '../types/chain.js';
import { LayoutWriter, layoutReader, type LayoutReader } from './bytelayout.js';

/** The first byte of a block in this layout (V8's serializer output begins with 0xFF). */
export const BLOCK_FORMAT = 1;

/** the flags byte of a tx: which optional fields follow */
const TX_FLAG = { chainId: 1, gasPrice: 2, maxFeePerGas: 4, maxPriorityFeePerGas: 8, to: 16, authorizationList: 32 } as const;

/** bytes of a header in this layout, about (the writer's first size) */
const HEADER_BYTES = 700;
/** bytes of a tx in this layout besides its input and signed envelope, about */
const TX_FIXED_BYTES = 200;

function writeTx(w: LayoutWriter, tx: EvmTx): void {
  let flags = 0;
  if (tx.chainId !== undefined) flags |= TX_FLAG.chainId;
  if (tx.gasPrice !== undefined) flags |= TX_FLAG.gasPrice;
  if (tx.maxFeePerGas !== undefined) flags |= TX_FLAG.maxFeePerGas;
  if (tx.maxPriorityFeePerGas !== undefined) flags |= TX_FLAG.maxPriorityFeePerGas;
  if (tx.to !== undefined) flags |= TX_FLAG.to;
  if (tx.authorizationList !== undefined) flags |= TX_FLAG.authorizationList;
  w.u8(flags);
  w.u8(tx.type);
  w.blob(tx.hash);
  if (tx.chainId !== undefined) w.big(tx.chainId);
  w.big(tx.nonce);
  w.big(tx.gasLimit);
  if (tx.gasPrice !== undefined) w.big(tx.gasPrice);
  if (tx.maxFeePerGas !== undefined) w.big(tx.maxFeePerGas);
  if (tx.maxPriorityFeePerGas !== undefined) w.big(tx.maxPriorityFeePerGas);
  if (tx.to !== undefined) w.blob(tx.to);
  w.big(tx.value);
  w.blob(tx.input);
  w.uvarint(tx.accessList.length);
  for (const item of tx.accessList) {
    w.blob(item.address);
    w.uvarint(item.storageKeys.length);
    for (const k of item.storageKeys) w.blob(k);
  }
  const list = tx.authorizationList;
  if (list !== undefined) {
    w.uvarint(list.length);
    for (const a of list) {
      w.big(a.chainId);
      w.blob(a.address);
      w.big(a.nonce);
      w.big(a.yParity);
      w.big(a.r);
      w.big(a.s);
      if (a.authority === undefined) w.u8(0);
      else {
        w.u8(1);
        w.blob(a.authority);
      }
    }
  }
  w.big(tx.v);
  w.big(tx.r);
  w.big(tx.s);
  w.blob(tx.from);
  w.blob(tx.raw);
}

export function encodeBlock(block: EvmBlock): Buffer {
  let size = HEADER_BYTES;
  for (const tx of block.transactions) size += TX_FIXED_BYTES + tx.input.length + tx.raw.length;
  const w = new LayoutWriter(size);
  const h = block.header;
  w.u8(BLOCK_FORMAT);
  for (const b of [h.hash, h.parentHash, h.stateRoot, h.transactionsRoot, h.receiptsRoot, h.logsBloom, h.miner, h.extraData, h.mixHash]) w.blob(b);
  for (const n of [h.number, h.gasLimit, h.gasUsed, h.timestamp, h.baseFeePerGas, h.size]) w.big(n);
  w.uvarint(block.transactions.length);
  for (const tx of block.transactions) writeTx(w, tx);
  return w.finish();
}

function readTx(r: LayoutReader): EvmTx {
  const flags = r.u8();
  const type = r.u8() as TxType;
  const hash = r.blob();
  const chainId = flags & TX_FLAG.chainId ? r.big() : undefined;
  const nonce = r.big();
  const gasLimit = r.big();
  const gasPrice = flags & TX_FLAG.gasPrice ? r.big() : undefined;
  const maxFeePerGas = flags & TX_FLAG.maxFeePerGas ? r.big() : undefined;
  const maxPriorityFeePerGas = flags & TX_FLAG.maxPriorityFeePerGas ? r.big() : undefined;
  const to = flags & TX_FLAG.to ? r.blob() : undefined;
  const value = r.big();
  const input = r.blob();
  const accessList: AccessListItem[] = new Array(r.uvarint());
  for (let i = 0; i < accessList.length; i++) {
    const address = r.blob();
    const storageKeys: Uint8Array[] = new Array(r.uvarint());
    for (let k = 0; k < storageKeys.length; k++) storageKeys[k] = r.blob();
    accessList[i] = { address, storageKeys };
  }
  let authorizationList: AuthorizationItem[] | undefined;
  if (flags & TX_FLAG.authorizationList) {
    authorizationList = new Array(r.uvarint());
    for (let i = 0; i < authorizationList.length; i++) {
      authorizationList[i] = {
        chainId: r.big(),
        address: r.blob(),
        nonce: r.big(),
        yParity: r.big(),
        r: r.big(),
        s: r.big(),
        authority: r.u8() === 1 ? r.blob() : undefined,
      };
    }
  }
  // the optional key exists only on the txs that had it (types/chain.ts: type 4 only), where evm/tx.ts puts it
  if (authorizationList === undefined) {
    return { hash, type, chainId, nonce, gasLimit, gasPrice, maxFeePerGas, maxPriorityFeePerGas, to, value, input, accessList, v: r.big(), r: r.big(), s: r.big(), from: r.blob(), raw: r.blob() };
  }
  return { hash, type, chainId, nonce, gasLimit, gasPrice, maxFeePerGas, maxPriorityFeePerGas, to, value, input, accessList, authorizationList, v: r.big(), r: r.big(), s: r.big(), from: r.blob(), raw: r.blob() };
}

/** A stored block, in either form (this layout, or the V8 serializer's of older rows). */
export function decodeBlock(bytes: Uint8Array): EvmBlock {
  const r = layoutReader(bytes, BLOCK_FORMAT, 'a stored block');
  if (r === undefined) return decodeValue<EvmBlock>(bytes);
  const hash = r.blob();
  const parentHash = r.blob();
  const stateRoot = r.blob();
  const transactionsRoot = r.blob();
  const receiptsRoot = r.blob();
  const logsBloom = r.blob();
  const miner = r.blob();
  const extraData = r.blob();
  const mixHash = r.blob();
  const header: EvmHeader = {
    number: r.big(),
    hash,
    parentHash,
    stateRoot,
    transactionsRoot,
    receiptsRoot,
    logsBloom,
    miner,
    gasLimit: r.big(),
    gasUsed: r.big(),
    timestamp: r.big(),
    extraData,
    baseFeePerGas: r.big(),
    mixHash,
    size: r.big(),
  };
  const transactions: EvmTx[] = new Array(r.uvarint());
  for (let i = 0; i < transactions.length; i++) transactions[i] = readTx(r);
  r.end();
  return { header, transactions };
}
