/**
 * Keccak-256 and secp256k1 recovery from ferry's addon (native/revm-call/src/crypto.rs, used by
 * src/evm/common.ts) against @noble/hashes and @noble/curves, and against the `secp256k1` package's
 * path it replaced (same answers and same error texts for every input, edge signatures included). Under
 * CI=true the addon must have been built with both; elsewhere the addon-only checks skip without it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 as noble } from '@noble/curves/secp256k1.js';
import { ecrecover, keccak256 } from '../../src/evm/common.js';
import { loadRevm } from '../../src/evm/revm.js';

const { addon, why } = loadRevm();
const nativeHash = addon?.keccak256;
const nativeRecover = addon?.ecrecover;
const skipNative = nativeHash && nativeRecover ? false : `the addon has no keccak256/ecrecover: ${why}`;

const secp = createRequire(import.meta.url)('secp256k1') as {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const N = noble.Point.CURVE().n;
const P = noble.Point.CURVE().p;
const word = (n: bigint): Uint8Array => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');

/** What the `secp256k1` package's path answered (evm/common.ts before the addon): the key, or the error text. */
function packageAnswer(msg: Uint8Array, recid: number, r: Uint8Array, s: Uint8Array): string {
  try {
    const sig = new Uint8Array(64);
    sig.set(r, 32 - r.length);
    sig.set(s, 64 - s.length);
    return hex(secp.ecdsaRecover(sig, recid, msg, false).subarray(1));
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

function answer(msg: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): string {
  try {
    const pub = ecrecover(msg, v, r, s, chainId);
    assert.equal(pub.length, 64);
    return hex(pub);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

function nobleKey(msg: Uint8Array, recid: number, r: bigint, s: bigint): string {
  try {
    return hex(new noble.Signature(r, s, recid).recoverPublicKey(msg).toBytes(false).subarray(1));
  } catch {
    return 'none';
  }
}

describe('native Keccak-256 and secp256k1 recovery', () => {
  it('are in the addon under CI=true', { skip: process.env.CI === 'true' ? false : 'CI is not true' }, () => {
    assert.ok(nativeHash && nativeRecover, `the addon lacks keccak256/ecrecover under CI=true: ${why}`);
  });

  it('keccak256 equals @noble/hashes for every length 0..300 and a few large inputs, in place and as views', () => {
    const lengths = [...Array.from({ length: 301 }, (_, i) => i), 1000, 4095, 65_537, 1 << 20];
    for (const n of lengths) {
      const msg = new Uint8Array(randomBytes(n));
      const want = hex(keccak_256(msg));
      assert.equal(hex(keccak256(msg)), want, `length ${n}`);
      // a view at an odd offset of a larger buffer, and an array on V8's heap (up to 64 bytes)
      const big = new Uint8Array(n + 7);
      big.set(msg, 3);
      assert.equal(hex(keccak256(big.subarray(3, 3 + n))), want, `length ${n} as a view`);
      assert.equal(hex(keccak256(Uint8Array.from(msg))), want, `length ${n}, a fresh array`);
    }
  });

  it('keccak256 gives each hash its own bytes, and the input is left as it was', () => {
    const a = Uint8Array.of(1, 2, 3);
    const ha = keccak256(a);
    const hb = keccak256(new Uint8Array(100).fill(9));
    assert.notEqual(ha.buffer, hb.buffer);
    assert.equal(hex(ha), hex(keccak_256(Uint8Array.of(1, 2, 3))));
    assert.deepEqual(a, Uint8Array.of(1, 2, 3));
  });

  it('the addon hashes only the first len bytes and refuses len beyond the data or a short out', { skip: skipNative }, () => {
    const data = new Uint8Array(randomBytes(200));
    const out = new Uint8Array(32);
    for (const len of [0, 1, 64, 65, 136, 199, 200]) {
      nativeHash!(data, len, out);
      assert.equal(hex(out), hex(keccak_256(data.subarray(0, len))), `len ${len}`);
    }
    assert.throws(() => nativeHash!(data, 201, out), /len is beyond data/);
    assert.throws(() => nativeHash!(data, 10, new Uint8Array(31)), /shorter than 32 bytes/);
  });

  it('ecrecover recovers the signer of random keys and messages as @noble/curves and the package do, low and high s', () => {
    for (let i = 0; i < 150; i++) {
      const key = noble.utils.randomSecretKey();
      const msg = new Uint8Array(randomBytes(32));
      const want = hex(noble.getPublicKey(key, false).subarray(1));
      const { signature, recid } = secp.ecdsaSign(msg, key);
      const r = signature.subarray(0, 32);
      const s = signature.subarray(32, 64);
      assert.equal(answer(msg, BigInt(recid), r, s), want, `key ${i}`);
      assert.equal(answer(msg, 27n + BigInt(recid), r, s), want, `key ${i}, v 27/28`);
      assert.equal(answer(msg, 9000n * 2n + 35n + BigInt(recid), r, s, 9000n), want, `key ${i}, EIP-155 v`);
      // high s: the same key with the other recovery id (the precompile accepts it)
      const high = word(N - BigInt('0x' + hex(s)));
      assert.equal(answer(msg, BigInt(recid ^ 1), r, high), want, `key ${i}, high s`);
      assert.equal(packageAnswer(msg, recid ^ 1, r, high), want, `key ${i}, high s, package`);
      // r and s without leading zero bytes, as a tx's fields carry them
      const bare = (b: Uint8Array) => b.subarray(b.findIndex((x) => x !== 0));
      assert.equal(answer(msg, BigInt(recid), bare(r), bare(s)), want, `key ${i}, unpadded`);
      // a wrong message still recovers (another key), the same one as the package's
      const other = new Uint8Array(randomBytes(32));
      assert.equal(answer(other, BigInt(recid), r, s), packageAnswer(other, recid, r, s), `key ${i}, other message`);
    }
  });

  it('ecrecover answers edge signatures as the package path did (the same key or the same error text)', () => {
    const msg = new Uint8Array(randomBytes(32));
    const valid = secp.ecdsaSign(msg, noble.utils.randomSecretKey());
    const r = valid.signature.subarray(0, 32);
    const s = valid.signature.subarray(32, 64);
    const cases: [string, Uint8Array, Uint8Array][] = [
      ['r zero', word(0n), s],
      ['s zero', r, word(0n)],
      ['r = n', word(N), s],
      ['s = n', r, word(N)],
      ['r = n + 1', word(N + 1n), s],
      ['s = n - 1', r, word(N - 1n)],
      ['r = p - 1', word(P - 1n), s],
      ['r = 2^256 - 1', word((1n << 256n) - 1n), s],
      ['s = 2^256 - 1', r, word((1n << 256n) - 1n)],
      ['r = 1, s = 1', word(1n), word(1n)],
      ['empty r and s', new Uint8Array(0), new Uint8Array(0)],
      ['r of 33 bytes', new Uint8Array(33).fill(1), s],
      ['s of 33 bytes', r, new Uint8Array(33).fill(1)],
    ];
    for (let i = 0; i < 40; i++) cases.push([`random r ${i} (x not on the curve half the time)`, new Uint8Array(randomBytes(32)), s]);
    const zero = new Uint8Array(32);
    for (const [name, cr, cs] of cases) {
      for (const m of [msg, zero]) {
        const got = answer(m, 0n, cr, cs);
        const want = cr.length > 32 || cs.length > 32 ? 'error: invalid signature component length' : packageAnswer(m, 0, cr, cs);
        assert.equal(got, want, name);
      }
    }
    assert.equal(answer(msg, 29n, r, s), 'error: invalid signature v value');
    assert.equal(answer(msg, 37n, r, s, 9000n), 'error: invalid signature v value');
    assert.equal(answer(msg.subarray(0, 31), 0n, r, s), `error: ${packageAnswer(msg.subarray(0, 31), 0, r, s).slice(7)}`);
  });

  it('the addon recovers with recovery ids 2 and 3 (x = r + n) as the package and @noble/curves do', { skip: skipNative }, () => {
    const out = new Uint8Array(64);
    let recovered = 0;
    for (let i = 0; i < 200; i++) {
      const msg = new Uint8Array(randomBytes(32));
      // r below p - n (about 2^128) for half the cases, so r + n can be an x coordinate
      const rv = i % 2 === 0 ? BigInt('0x' + hex(randomBytes(16))) + 1n : BigInt('0x' + hex(randomBytes(32))) % N;
      const sv = (BigInt('0x' + hex(randomBytes(32))) % (N - 1n)) + 1n;
      const sig = new Uint8Array(64);
      sig.set(word(rv), 0);
      sig.set(word(sv), 32);
      for (const recid of [0, 1, 2, 3]) {
        const status = nativeRecover!(msg, sig, recid, out);
        const pkg = packageAnswer(msg, recid, word(rv), word(sv));
        const mine = status === 0 ? hex(out) : status === 1 ? 'error: Signature could not be parsed' : 'error: Public key could not be recover';
        assert.equal(mine, pkg, `case ${i}, recid ${recid}`);
        assert.equal(status === 0 ? hex(out) : 'none', nobleKey(msg, recid, rv, sv), `case ${i}, recid ${recid}, noble`);
        if (status === 0 && recid >= 2) recovered++;
      }
    }
    assert.ok(recovered > 0, 'some signature recovered with recovery id 2 or 3');
    assert.throws(() => nativeRecover!(new Uint8Array(32), new Uint8Array(64), 4, out), /recovery id above 3/);
    assert.throws(() => nativeRecover!(new Uint8Array(31), new Uint8Array(64), 0, out), /expected a 32-byte hash/);
  });
});
