/**
 * store/resultcodec.ts: a tx result's own layout (the `comet_txs.result` bytes and each result in a
 * block's CometBFT record) reads back as written, keys in the order written and Buffers as Buffers;
 * the V8 serializer bytes of older homes still read the same; values that are not exactly an ExecTxResult keep V8's serializer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeValue } from '../../src/lib/serial.js';
import { decodeTxResult, encodeTxResultOnce, RESULT_FORMAT } from '../../src/store/resultcodec.js';
import type { ExecTxResult } from '../../src/types/cometbft.js';
import { xorshift32 as rng } from '../helpers/rng.js';

const TEXTS = ['', 'a', 'out of gas', 'ünï ✓ 🚀', 'x'.repeat(300), '{"address":"0x00","topics":[]}'];

function randomResult(next: () => number): ExecTxResult {
  const int = (n: number) => Math.floor(next() * n);
  const text = () => (next() < 0.8 ? TEXTS[int(TEXTS.length)]! : String(int(1e9)));
  const big = () => [0n, 1n, 21_000n, 2n ** 63n - 1n, 2n ** 64n + 5n, -7n][int(6)]!;
  const len = int(40);
  const data = next() < 0.5 ? Buffer.alloc(len, int(256)) : new Uint8Array(len).fill(int(256));
  const events = Array.from({ length: int(4) }, () => ({
    type: text(),
    attributes: Array.from({ length: int(6) }, () => ({ key: text(), value: text(), index: next() < 0.5 })),
  }));
  const [code, log, info, gasWanted, gasUsed, codespace] = [[0, 1, 5, 2 ** 32 - 1][int(4)]!, text(), text(), big(), big(), text()];
  // both key orders ferry makes results with (chain/abcievents.ts)
  return next() < 0.5 ? { code, data, log, info, gasWanted, gasUsed, codespace, events } : { code, data, log, info, gasWanted, gasUsed, events, codespace };
}

/** deepStrictEqual, and the same key order and byte kinds (V8's serializer keeps both) */
function sameValue(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what);
  assert.equal(JSON.stringify(actual, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)), JSON.stringify(expected, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)), `${what}: key order`);
  const a = actual as ExecTxResult;
  const e = expected as ExecTxResult;
  if (e.data !== undefined) assert.equal(Buffer.isBuffer(a.data), Buffer.isBuffer(e.data), `${what}: data's kind`);
}

test('random tx results read back as written, in the layout, and as V8 read them', () => {
  const next = rng(23);
  for (let i = 0; i < 500; i++) {
    const r = randomResult(next);
    const bytes = encodeTxResultOnce(r);
    assert.equal(bytes[0], RESULT_FORMAT, `result ${i} is in the layout`);
    assert.equal(encodeTxResultOnce(r), bytes, 'encoded once per result object');
    sameValue(decodeTxResult(bytes), r, `result ${i}`);
    // an older home's row: V8's serializer bytes
    const old = encodeValue(r);
    assert.equal(old[0], 0xff);
    sameValue(decodeTxResult(old), r, `result ${i} (V8)`);
    sameValue(decodeTxResult(bytes), decodeTxResult(old), `result ${i}: the layout reads as V8's bytes read`);
  }
});

test("values that are not exactly an ExecTxResult keep V8's serializer and read back as written", () => {
  const base = randomResult(rng(5));
  const odd: object[] = [
    { code: 0, events: [] },
    { ...base, extra: 1 },
    { ...base, code: -1 },
    { ...base, code: 1.5 },
    { ...base, gasUsed: 5 },
    { ...base, data: 'text' },
    { ...base, events: [{ type: 't', attributes: [{ key: 'k', value: 'v', index: 1 }] }] },
    { ...base, events: [{ type: 't', attributes: [], more: true }] },
    { ...base, data: new Uint16Array(2) },
  ];
  for (const [i, v] of odd.entries()) {
    const bytes = encodeTxResultOnce(v);
    assert.equal(bytes[0], 0xff, `value ${i} is V8's`);
    assert.deepStrictEqual(decodeTxResult(bytes), v, `value ${i}`);
  }
});

test('a damaged tx result is an error', () => {
  const bytes = encodeTxResultOnce(randomResult(rng(9)));
  assert.throws(() => decodeTxResult(bytes.subarray(0, bytes.length - 1)), /ends early/);
  assert.throws(() => decodeTxResult(Buffer.concat([bytes, Uint8Array.of(0)])), /bytes after its end/);
  assert.throws(() => decodeTxResult(Uint8Array.of(9, 0)), /unknown format 9/);
});
