import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { Wallet, SigningKey, keccak256 as ethersKeccak } from 'ethers';
import { NATIVE_CRYPTO, ecrecover, ecdsaSign, keccak256, privateKeyToAddress } from '../../src/evm/common.js';

test('native keccak and secp256k1 are loaded (the hot path must not fall back to JS)', () => {
  assert.equal(NATIVE_CRYPTO, true);
});

test('keccak256 equals @noble/hashes for lengths around the rate boundary', () => {
  for (const n of [0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 532, 4096]) {
    const b = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
    assert.equal(Buffer.from(keccak256(b)).toString('hex'), Buffer.from(keccak_256(b)).toString('hex'), `length ${n}`);
  }
});

test('keccak256 hashes in a row are independent (one native sponge, reset per hash)', () => {
  const msgs = [new Uint8Array(0), Uint8Array.of(1), new Uint8Array(200).fill(7), new Uint8Array(136).fill(9), Uint8Array.of(1)];
  const outs = msgs.map((m) => keccak256(m));
  msgs.forEach((m, i) => assert.equal(Buffer.from(outs[i]!).toString('hex'), Buffer.from(keccak_256(m)).toString('hex'), `message ${i}`));
  assert.notEqual(outs[1]!.buffer, outs[4]!.buffer, 'each hash has its own bytes');
});

test('ecrecover recovers the signer of an ethers signature; ecdsaSign round-trips', () => {
  const w = Wallet.createRandom();
  const digest = ethersKeccak(Buffer.from('ferry'));
  const sig = new SigningKey(w.privateKey).sign(digest);
  const msg = Buffer.from(digest.slice(2), 'hex');
  const pub = ecrecover(msg, BigInt(sig.v), Buffer.from(sig.r.slice(2), 'hex'), Buffer.from(sig.s.slice(2), 'hex'));
  assert.equal('0x' + Buffer.from(keccak256(pub).slice(12)).toString('hex'), w.address.toLowerCase());
  const key = Buffer.from(w.privateKey.slice(2), 'hex');
  const mine = ecdsaSign(msg, key);
  const pub2 = ecrecover(msg, BigInt(mine.recovery), mine.r, mine.s);
  assert.deepEqual(keccak256(pub2).slice(12), privateKeyToAddress(key));
});
