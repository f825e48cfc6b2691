/**
 * chain/revmcalls.ts packAccount: the flat state's account RLP read as views into the revm addon's
 * layout, balance (32) ‖ nonce (8) ‖ code hash (32), equal to what decoding the list gives, for the
 * integer sizes RLP encodes differently (zero, a byte below 0x80, a byte above, many bytes, the largest).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { packAccount } from '../../src/chain/revmcalls.js';

const root = new Uint8Array(32).fill(0x56);
const codeHash = new Uint8Array(32).fill(0xc5);
const account = (nonce: bigint, balance: bigint): Uint8Array =>
  RLP.encode([bigIntToUnpaddedBytes(nonce), bigIntToUnpaddedBytes(balance), root, codeHash]);
const expected = (nonce: bigint, balance: bigint): string =>
  balance.toString(16).padStart(64, '0') + nonce.toString(16).padStart(16, '0') + Buffer.from(codeHash).toString('hex');

describe('revm account layout (packAccount)', () => {
  const values = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 10n ** 24n, 2n ** 255n + 12345n, 2n ** 256n - 1n];
  const nonces = [0n, 1n, 0x7fn, 0x80n, 0x1234n, 2n ** 64n - 1n];
  for (const nonce of nonces) {
    it(`nonce ${nonce} with every balance size`, () => {
      for (const balance of values) {
        const packed = packAccount(account(nonce, balance));
        assert.ok(packed, `balance ${balance}`);
        assert.equal(packed.toString('hex'), expected(nonce, balance), `balance ${balance}`);
      }
    });
  }

  it('answers undefined for other shapes', () => {
    const good = account(1n, 2n);
    // not a list; a list whose length is wrong; a short code hash; a nonce over 8 bytes; an item after the hash
    assert.equal(packAccount(good.subarray(1)), undefined);
    assert.equal(packAccount(good.subarray(0, good.length - 1)), undefined);
    assert.equal(packAccount(RLP.encode([new Uint8Array([1]), new Uint8Array([2]), root, codeHash.subarray(1)])), undefined);
    assert.equal(packAccount(RLP.encode([new Uint8Array(9).fill(1), new Uint8Array([2]), root, codeHash])), undefined);
    assert.equal(packAccount(RLP.encode([new Uint8Array([1]), new Uint8Array([2]), root, codeHash, new Uint8Array([3])])), undefined);
    assert.equal(packAccount(new Uint8Array(0)), undefined);
  });
});
