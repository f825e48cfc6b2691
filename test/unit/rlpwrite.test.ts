/**
 * evm/rlpwrite.ts: the one-buffer RLP writer gives @ethereumjs/rlp's bytes for random nested inputs
 * (every length-prefix boundary: 0, 1, 55, 56, 255, 256, 65,536 bytes), the account and receipt
 * encodings give ethereumjs' `Account.serialize()` and vm `encodeReceipt`, and integers are encoded
 * without leading zeros at every byte width.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RLP, type Input } from '@ethereumjs/rlp';
import { Account, bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { encodeReceipt, type TxReceipt } from '@ethereumjs/vm';
import { receiptRlp } from '../../src/evm/ethrlp.js';
import { accountRlp, rlpDecodeView, rlpEncode, unpaddedBytes, type RlpItem } from '../../src/evm/rlpwrite.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** a deterministic generator (xorshift32), so a failure names a reproducible case */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const LENGTHS = [0, 1, 1, 2, 31, 32, 33, 55, 56, 57, 255, 256, 1000];

function randomBytes(r: () => number): Uint8Array {
  const len = LENGTHS[Math.floor(r() * LENGTHS.length)]!;
  const out = new Uint8Array(len);
  // single bytes both below and from 0x80 (below: encoded as themselves)
  for (let i = 0; i < len; i++) out[i] = Math.floor(r() * 256);
  return out;
}

function randomItem(r: () => number, depth: number): RlpItem {
  if (depth >= 3 || r() < 0.55) return randomBytes(r);
  const n = Math.floor(r() * 20);
  return Array.from({ length: n }, () => randomItem(r, depth + 1));
}

test('rlpEncode gives RLP.encode bytes for random nested byte strings and lists', () => {
  const r = rng(23);
  for (let i = 0; i < 2000; i++) {
    const x = randomItem(r, 0);
    assert.equal(hex(rlpEncode(x)), hex(RLP.encode(x as Input)), `case ${i}`);
  }
});

test('rlpEncode at the long-length boundaries (payloads of 55, 56, 255, 256 and 65,536 bytes)', () => {
  for (const len of [55, 56, 255, 256, 65_535, 65_536, 70_000]) {
    const s = new Uint8Array(len).fill(0xab);
    assert.equal(hex(rlpEncode(s)), hex(RLP.encode(s)), `string of ${len}`);
    const list = [new Uint8Array(len - 1).fill(1)];
    assert.equal(hex(rlpEncode(list)), hex(RLP.encode(list)), `list of ${len}`);
  }
  for (const b of [0x00, 0x7f, 0x80, 0xff]) assert.equal(hex(rlpEncode(Uint8Array.of(b))), hex(RLP.encode(Uint8Array.of(b))));
  assert.equal(hex(rlpEncode([])), 'c0');
  assert.equal(hex(rlpEncode([Uint8Array.of(1)], 2)), '02c101', 'a type byte goes first');
});

test('unpaddedBytes strips leading zeros at every width and refuses negatives', () => {
  const values = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n, 2n ** 255n, 2n ** 256n - 1n];
  for (let k = 0; k < 256; k += 7) values.push(1n << BigInt(k), (1n << BigInt(k)) - 1n, (3n << BigInt(k)) + 5n);
  for (const v of values) assert.equal(hex(unpaddedBytes(v)), hex(bigIntToUnpaddedBytes(v)), `value ${v}`);
  assert.throws(() => unpaddedBytes(-1n), RangeError);
});

test('accountRlp is Account.serialize()', () => {
  const r = rng(7);
  const root = (): Uint8Array => Uint8Array.from({ length: 32 }, () => Math.floor(r() * 256));
  for (let i = 0; i < 300; i++) {
    const nonce = i % 5 === 0 ? 0n : BigInt(Math.floor(r() * 2 ** 40));
    const balance = i % 7 === 0 ? 0n : BigInt(Math.floor(r() * 2 ** 50)) * 10n ** BigInt(Math.floor(r() * 40));
    const a = new Account(nonce, balance, root(), root());
    assert.equal(hex(accountRlp(a.nonce, a.balance, a.storageRoot, a.codeHash)), hex(a.serialize()), `case ${i}`);
  }
});

test('receiptRlp is ethereumjs vm encodeReceipt for every tx type, status and log shape', () => {
  const r = rng(11);
  for (let i = 0; i < 200; i++) {
    const logs: [Uint8Array, Uint8Array[], Uint8Array][] = Array.from({ length: i % 4 }, () => [
      randomBytes(r).slice(0, 20),
      Array.from({ length: Math.floor(r() * 5) }, () => new Uint8Array(32).fill(i)),
      randomBytes(r),
    ]);
    const status = (i % 3 === 0 ? 0 : 1) as 0 | 1;
    const receipt = { status, cumulativeBlockGasUsed: 21_000n + BigInt(i) * 99_991n, bitvector: new Uint8Array(256).fill(i % 256), logs };
    for (const type of [0, 1, 2, 3, 4] as const) {
      assert.equal(
        hex(receiptRlp(type, status, receipt.cumulativeBlockGasUsed, receipt.bitvector, logs)),
        hex(encodeReceipt(receipt as TxReceipt, type)),
        `case ${i} type ${type}`,
      );
    }
  }
});

test('rlpDecodeView reads what RLP.decode reads, as views of the input, and refuses truncated input', () => {
  const r = rng(31);
  const plain = (x: unknown): unknown => (x instanceof Uint8Array ? hex(x) : (x as unknown[]).map(plain));
  for (let i = 0; i < 1000; i++) {
    const enc = rlpEncode(randomItem(r, 0));
    const got = rlpDecodeView(enc);
    assert.deepEqual(plain(got), plain(RLP.decode(enc)), `case ${i}`);
    if (got instanceof Uint8Array && got.length > 0) assert.equal(got.buffer, enc.buffer, 'a view, not a copy');
  }
  const node = rlpEncode([new Uint8Array(32).fill(1), [Uint8Array.of(0x20), Uint8Array.of(5)], new Uint8Array(0)]);
  for (let cut = 1; cut < node.length; cut++) assert.throws(() => rlpDecodeView(node.subarray(0, cut)), /longer than its input|past the end/, `cut at ${cut}`);
  assert.throws(() => rlpDecodeView(Uint8Array.of(0x01, 0x02)), /bytes after the item/);
});
