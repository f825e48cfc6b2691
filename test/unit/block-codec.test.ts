/**
 * store/blockcodec.ts and store/bytelayout.ts: an EVM block written in the stored layout reads back as
 * the same value (random blocks with every optional tx field absent or present, zero and 256-bit
 * amounts, empty blocks), begins with BLOCK_FORMAT, an older row in the V8 serializer's form still
 * reads, and a damaged row is an error.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { encodeValue } from '../../src/lib/serial.js';
import { BLOCK_FORMAT, decodeBlock, encodeBlock } from '../../src/store/blockcodec.js';
import { LayoutReader, LayoutWriter } from '../../src/store/bytelayout.js';
import type { EvmBlock, EvmTx, TxType } from '../../src/types/chain.js';

/** a deterministic generator (a failing seed can be replayed) */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomBig(next: () => number): bigint {
  const pick = Math.floor(next() * 5);
  if (pick === 0) return 0n;
  if (pick === 1) return 2n ** 256n - 1n;
  if (pick === 2) return 2n ** 48n - 1n + BigInt(Math.floor(next() * 3));
  if (pick === 3) return BigInt(Math.floor(next() * 256));
  return BigInt('0x' + randomBytes(1 + Math.floor(next() * 32)).toString('hex'));
}

/** random bytes, a Node Buffer half of the time (a tx's raw envelope often is one; V8's serializer keeps the kind) */
function bytes(next: () => number, max: number): Uint8Array {
  const b = randomBytes(Math.floor(next() * max));
  return next() < 0.5 ? b : new Uint8Array(b);
}
const maybe = <T>(next: () => number, v: () => T): T | undefined => (next() < 0.5 ? v() : undefined);

function randomTx(next: () => number): EvmTx {
  const type = ([0, 1, 2, 4] as TxType[])[Math.floor(next() * 4)]!;
  const tx: EvmTx = {
    hash: bytes(next, 33),
    type,
    chainId: maybe(next, () => randomBig(next)),
    nonce: randomBig(next),
    gasLimit: randomBig(next),
    gasPrice: maybe(next, () => randomBig(next)),
    maxFeePerGas: maybe(next, () => randomBig(next)),
    maxPriorityFeePerGas: maybe(next, () => randomBig(next)),
    to: maybe(next, () => bytes(next, 21)),
    value: randomBig(next),
    input: bytes(next, next() < 0.1 ? 40_000 : 200),
    accessList: Array.from({ length: Math.floor(next() * 3) }, () => ({ address: bytes(next, 21), storageKeys: Array.from({ length: Math.floor(next() * 3) }, () => bytes(next, 33)) })),
    v: randomBig(next),
    r: randomBig(next),
    s: randomBig(next),
    from: bytes(next, 21),
    raw: bytes(next, 300),
  };
  if (next() < 0.4) {
    const auths = Array.from({ length: Math.floor(next() * 3) }, () => ({
      chainId: randomBig(next),
      address: bytes(next, 21),
      nonce: randomBig(next),
      yParity: randomBig(next),
      r: randomBig(next),
      s: randomBig(next),
      authority: maybe(next, () => bytes(next, 21)),
    }));
    // the key sits where toEvmTx puts it (evm/tx.ts): after accessList
    const { v, r, s, from, raw, ...head } = tx;
    return { ...head, authorizationList: auths, v, r, s, from, raw };
  }
  return tx;
}

function randomBlock(next: () => number, txs: number): EvmBlock {
  return {
    header: {
      number: randomBig(next),
      hash: bytes(next, 33),
      parentHash: bytes(next, 33),
      stateRoot: bytes(next, 33),
      transactionsRoot: bytes(next, 33),
      receiptsRoot: bytes(next, 33),
      logsBloom: bytes(next, 257),
      miner: bytes(next, 21),
      gasLimit: randomBig(next),
      gasUsed: randomBig(next),
      timestamp: randomBig(next),
      extraData: bytes(next, 40),
      baseFeePerGas: randomBig(next),
      mixHash: bytes(next, 33),
      size: randomBig(next),
    },
    transactions: Array.from({ length: txs }, () => randomTx(next)),
  };
}

test('random blocks read back as written, every optional field absent or present; empty blocks too', () => {
  const next = rng(23);
  for (let i = 0; i < 300; i++) {
    const block = randomBlock(next, i % 10 === 0 ? 0 : Math.floor(next() * 12));
    const enc = encodeBlock(block);
    assert.equal(enc[0], BLOCK_FORMAT, 'the first byte is the layout tag');
    assert.deepStrictEqual(decodeBlock(enc), block, `block ${i}`);
  }
});

test('a block row an older ferry wrote (V8 serializer) still reads', () => {
  const block = randomBlock(rng(7), 5);
  const old = encodeValue(block);
  assert.equal(old[0], 0xff);
  assert.deepStrictEqual(decodeBlock(old), block);
});

test('a damaged block row is an error', () => {
  const enc = encodeBlock(randomBlock(rng(9), 3));
  assert.throws(() => decodeBlock(enc.subarray(0, enc.length - 1)), /ends early/);
  assert.throws(() => decodeBlock(Buffer.concat([enc, Uint8Array.of(0)])), /bytes after its end/);
  assert.throws(() => decodeBlock(Uint8Array.of(7, 0, 0)), /unknown format 7/);
});

test('the layout pieces: signed and unsigned integers at their edges', () => {
  const w = new LayoutWriter(1);
  const bigs = [0n, 1n, 255n, 256n, 2n ** 48n - 1n, 2n ** 48n, 2n ** 64n, 2n ** 248n - 1n, 2n ** 200n + 12_345n, 2n ** 256n - 1n, 2n ** 1100n];
  const sbigs = [0n, -1n, -62_135_596_800n, 1_700_000_000n, -(2n ** 70n)];
  const ints = [0, 1, -1, 999_999_999, -2_147_483_648, 2_147_483_647];
  for (const v of bigs) w.big(v);
  for (const v of sbigs) w.sbig(v);
  for (const v of ints) w.int(v);
  w.str('ünïcode ✓');
  const r = new LayoutReader(w.finish(), 'a test record');
  for (const v of bigs) assert.equal(r.big(), v);
  for (const v of sbigs) assert.equal(r.sbig(), v);
  for (const v of ints) assert.equal(r.int(), v);
  assert.equal(r.str(), 'ünïcode ✓');
  r.end();
  assert.throws(() => new LayoutWriter(8).big(-1n), RangeError);
});
