/**
 * The native (Cosmos SDK TxRaw) wrapping of an EVM tx, written into one buffer (src/chain/nativetx.ts
 * wrapEthereumTx): the same bytes as the message encoded field by field with ProtoWriter, as cosmos/evm
 * encodes TxRaw{body{[Any(MsgEthereumTx{from, raw})], ext [Any(ExtensionOptionsEthereumTx)]},
 * auth_info{fee{[coin], gas_limit}}} (zero and empty fields omitted), across the varint length boundaries.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { EVM_DENOM, EXT_OPTION_ETHEREUM_TX_URL, MSG_ETHEREUM_TX_URL, nativeHash, unwrapEthereumTx, wrapEthereumTx } from '../../src/chain/nativetx.js';
import { ProtoWriter } from '../../src/lib/protobuf.js';

/** the wrapping written message by message with the general writer */
function reference(raw: Uint8Array, from: Uint8Array, gasLimit: bigint, feeCap: bigint): Uint8Array {
  const any = (url: string, value: Uint8Array) => new ProtoWriter().string(1, url).bytes(2, value).finish();
  const msg = new ProtoWriter().bytes(5, from).bytes(6, raw).finish();
  const body = new ProtoWriter().lengthDelimited(1, any(MSG_ETHEREUM_TX_URL, msg)).lengthDelimited(1023, any(EXT_OPTION_ETHEREUM_TX_URL, new Uint8Array())).finish();
  const fee = feeCap * gasLimit;
  const feeMsg = new ProtoWriter();
  if (fee > 0n) feeMsg.lengthDelimited(1, new ProtoWriter().string(1, EVM_DENOM).string(2, fee.toString()).finish());
  feeMsg.uint(2, gasLimit);
  const authInfo = new ProtoWriter().lengthDelimited(2, feeMsg.finish()).finish();
  return new ProtoWriter().bytes(1, body).bytes(2, authInfo).finish();
}

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('wrapEthereumTx', () => {
  it('writes the bytes ProtoWriter writes, across lengths, gas limits and fees', () => {
    // raw lengths around the 1-, 2- and 3-byte varints of every enclosing length
    const rawLengths = [1, 2, 60, 63, 64, 70, 110, 127, 128, 129, 200, 16_250, 16_383, 16_384, 16_500, 70_000];
    const gasLimits = [0n, 1n, 21_000n, 127n, 128n, 30_000_000n, (1n << 63n) + 5n, (1n << 64n) - 1n];
    const feeCaps = [0n, 1n, 7n, 10n ** 9n, 10n ** 30n];
    let cases = 0;
    for (const len of rawLengths) {
      for (const gasLimit of gasLimits) {
        for (const feeCap of feeCaps) {
          for (const from of [bytes(20, len), new Uint8Array()]) {
            const raw = bytes(len, Number(gasLimit % 251n));
            assert.deepEqual(wrapEthereumTx(raw, from, gasLimit, feeCap), reference(raw, from, gasLimit, feeCap), `raw ${len} B, gas ${gasLimit}, fee cap ${feeCap}, from ${from.length} B`);
            cases++;
          }
        }
      }
    }
    assert.equal(cases, rawLengths.length * gasLimits.length * feeCaps.length * 2);
  });

  it('writes the fee amount for fees of every digit count a fee cap and gas limit can make', () => {
    // the amount is the fee's decimal string (cosmos-sdk types/coin.go Coin.Amount, an Int as text), written
    // char by char: fees of 1 to 97 digits (fee cap up to 2^256 - 1, gas limit up to 2^64 - 1)
    const raw = bytes(110, 5);
    const from = bytes(20, 2);
    for (let d = 1; d <= 97; d++) {
      const low = 10n ** BigInt(d - 1);
      for (const [gasLimit, feeCap] of [[1n, low], [1n, low * 10n - 1n], [1n, low + 123_456_789n % low], [3n, low * 3n + 1n]] as const) {
        const digits = (gasLimit * feeCap).toString().length;
        if (digits !== d) continue;
        assert.deepEqual(wrapEthereumTx(raw, from, gasLimit, feeCap), reference(raw, from, gasLimit, feeCap), `fee ${gasLimit * feeCap}`);
      }
    }
    const most = ((1n << 256n) - 1n) * ((1n << 64n) - 1n);
    assert.equal(most.toString().length, 97);
    assert.deepEqual(wrapEthereumTx(raw, from, (1n << 64n) - 1n, (1n << 256n) - 1n), reference(raw, from, (1n << 64n) - 1n, (1n << 256n) - 1n));
  });

  it('unwraps to the envelope and sender it wrapped', () => {
    const raw = bytes(130, 3);
    const from = bytes(20, 9);
    assert.deepEqual(unwrapEthereumTx(wrapEthereumTx(raw, from, 21_000n, 10n ** 9n)), { raw, from });
  });

  it('refuses a gas limit past 64 bits, as the writer does', () => {
    assert.throws(() => wrapEthereumTx(bytes(10, 1), bytes(20, 1), 1n << 64n, 1n), RangeError);
    assert.throws(() => reference(bytes(10, 1), bytes(20, 1), 1n << 64n, 1n), RangeError);
  });

  it('hashes native bytes with SHA-256 (CometBFT tmhash), as createHash does', () => {
    assert.equal(Buffer.from(nativeHash(new TextEncoder().encode('abc'))).toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const len of [0, 1, 55, 56, 64, 230, 70_000]) {
      const b = bytes(len, len);
      assert.deepEqual(new Uint8Array(nativeHash(b)), new Uint8Array(createHash('sha256').update(b).digest()), `${len} B`);
    }
  });
});
