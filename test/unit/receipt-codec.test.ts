/**
 * store/receiptcodec.ts: a receipt written in the stored layout reads back as the same value (every
 * optional field present or absent, logs with the receipt's block and tx fields or their own, zero and
 * 256-bit amounts), an older row in the V8 serializer's form still reads, and a damaged row is an error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeValue } from '../../src/lib/serial.js';
import { decodeReceipt, encodeReceipt, RECEIPT_FORMAT } from '../../src/store/receiptcodec.js';
import type { EvmLog, EvmReceipt } from '../../src/types/chain.js';

const bytes = (n: number, tag: number): Uint8Array => new Uint8Array(n).fill(tag);

function receipt(over: Partial<EvmReceipt> = {}): EvmReceipt {
  const base: EvmReceipt = {
    transactionHash: bytes(32, 1),
    transactionIndex: 3,
    blockHash: bytes(32, 2),
    blockNumber: 1_234_567n,
    from: bytes(20, 3),
    to: bytes(20, 4),
    type: 2,
    status: 1,
    cumulativeGasUsed: 210_000n,
    gasUsed: 51_234n,
    effectiveGasPrice: 1_000_000_007n,
    contractAddress: undefined,
    logs: [],
    logsBloom: bytes(256, 5),
    vmError: undefined,
    revertData: undefined,
  };
  return { ...base, ...over };
}

function log(r: EvmReceipt, logIndex: number, topics: number, over: Partial<EvmLog> = {}): EvmLog {
  return {
    address: bytes(20, 6 + logIndex),
    topics: Array.from({ length: topics }, (_, i) => bytes(32, 10 + i)),
    data: Uint8Array.from({ length: 3 + 40 * logIndex }, (_, i) => i & 0xff),
    blockNumber: r.blockNumber,
    blockHash: r.blockHash,
    transactionHash: r.transactionHash,
    transactionIndex: r.transactionIndex,
    logIndex,
    ...over,
  };
}

const roundTrip = (r: EvmReceipt): EvmReceipt => decodeReceipt(encodeReceipt(r));

test('receipts read back as written, every optional field present or absent', () => {
  const plain = receipt();
  assert.deepEqual(roundTrip(plain), plain);

  const created = receipt({ to: undefined, contractAddress: bytes(20, 9), transactionIndex: 0, blockNumber: 0n, cumulativeGasUsed: 0n, gasUsed: 0n, effectiveGasPrice: 0n });
  assert.deepEqual(roundTrip(created), created);

  const reverted = receipt({ status: 0, type: 0, vmError: 'execution reverted: ünïcode', revertData: Uint8Array.of(8, 0xc3, 0x79, 0xa0), effectiveGasPrice: 2n ** 256n - 1n, transactionIndex: 300 });
  assert.deepEqual(roundTrip(reverted), reverted);

  const failed = receipt({ status: 0, vmError: 'out of gas', revertData: new Uint8Array(), logsBloom: new Uint8Array() });
  assert.deepEqual(roundTrip(failed), failed);
});

test('logs keep their fields, whether the receipt\'s block and tx fields or their own', () => {
  const r = receipt({ transactionIndex: 129 });
  r.logs = [log(r, 0, 0), log(r, 1, 3), log(r, 2, 4)];
  const back = roundTrip(r);
  assert.deepEqual(back, r);
  assert.equal(back.logs[1]!.topics.length, 3);

  const other = receipt();
  other.logs = [log(other, 7, 2, { blockNumber: 9n, blockHash: bytes(32, 0xee), transactionHash: bytes(32, 0xdd), transactionIndex: 70_000 }), log(other, 8, 1)];
  assert.deepEqual(roundTrip(other), other);
});

test('the stored layout begins with its format byte; an older V8-serialized row still reads', () => {
  const r = receipt({ logs: [] });
  r.logs = [log(r, 0, 3)];
  assert.equal(encodeReceipt(r)[0], RECEIPT_FORMAT);
  const old = encodeValue(r);
  assert.equal(old[0], 0xff);
  assert.deepEqual(decodeReceipt(old), r);
});

test('a damaged stored receipt is an error, not a wrong receipt', () => {
  const r = receipt();
  r.logs = [log(r, 0, 2)];
  const enc = encodeReceipt(r);
  assert.throws(() => decodeReceipt(enc.subarray(0, enc.length - 1)), /ends early/);
  assert.throws(() => decodeReceipt(Buffer.concat([enc, Uint8Array.of(0)])), /bytes after its end/);
  assert.throws(() => decodeReceipt(Uint8Array.of(7, 0, 0)), /unknown format 7/);
});
