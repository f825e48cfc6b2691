/**
 * The RPC thread's sender and hash of a type-1/2 envelope without ethereumjs's tx object
 * (src/chain/txsigner.ts): the same as decodeTx finds for every envelope, and nothing (the usual decode
 * instead) for an envelope that is not canonical, legacy, or does not recover.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode, encode } from '@ethereumjs/rlp';
import { createTx } from '@ethereumjs/tx';
import { Wallet } from 'ethers';
import { signedRaw } from '../../src/chain/txdecode.js';
import { typedSigned } from '../../src/chain/txsigner.js';
import { keccak256 } from '../../src/evm/common.js';
import { decodeTx, impersonationSignature } from '../../src/evm/tx.js';
import { devKeys } from '../helpers/accounts.js';
import { ACCESS, DEAD, GWEI, envelopeCommon, unhex } from '../helpers/envelopes.js';

const common = envelopeCommon;
const wallet = new Wallet(devKeys()[3]!);

/** what decodeTx (ethereumjs) finds, or undefined when it refuses the bytes */
function reference(raw: Uint8Array): { sender: Uint8Array; hash: Uint8Array } | undefined {
  try {
    const { evm } = decodeTx(raw, common);
    return { sender: evm.from, hash: evm.hash };
  } catch {
    return undefined;
  }
}

/** the envelope with item `i` of its list replaced */
function withItem(raw: Uint8Array, i: number, value: Uint8Array): Uint8Array {
  const items = decode(raw.subarray(1)) as Uint8Array[];
  items[i] = value;
  return new Uint8Array([raw[0]!, ...encode(items)]);
}

describe('typedSigned', () => {
  it('finds what decodeTx finds for canonical type-1 and type-2 envelopes', async () => {
    const raws = await Promise.all([
      wallet.signTransaction({ to: DEAD, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 }),
      wallet.signTransaction({ to: DEAD, value: 0n, nonce: 7, gasLimit: 90_000, maxFeePerGas: 3n, maxPriorityFeePerGas: 0n, chainId: 9000, type: 2, data: '0xa9059cbb00', accessList: ACCESS }),
      wallet.signTransaction({ nonce: 1, gasLimit: 100_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2, data: '0x6000' }),
      wallet.signTransaction({ to: DEAD, value: 5n, nonce: 2, gasLimit: 30_000, gasPrice: GWEI, chainId: 9000, type: 1, accessList: ACCESS }),
    ]);
    for (const hex of raws) {
      const raw = unhex(hex);
      const fast = typedSigned(raw, common);
      assert.ok(fast !== undefined, `fast path taken for type ${raw[0]}`);
      assert.deepEqual(fast, reference(raw));
      assert.deepEqual(fast.hash, keccak256(raw));
      assert.deepEqual(fast.sender, unhex(wallet.address));
      assert.deepEqual(signedRaw(raw, common), fast);
    }
  });

  it("names the dev placeholder signature's sender, as decodeTx does", () => {
    const who = unhex('0x' + 'ab'.repeat(20));
    const sig = impersonationSignature(who);
    const raw = createTx(
      { type: 2, nonce: 0n, to: DEAD, value: 1n, gasLimit: 21_000n, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n, chainId: 9000n, v: 0n, r: sig.r, s: sig.s },
      { common },
    ).serialize();
    assert.deepEqual(typedSigned(raw, common), { sender: who, hash: keccak256(raw) });
    assert.deepEqual(typedSigned(raw, common), reference(raw));
  });

  it('leaves non-canonical, legacy and unrecoverable bytes to the usual decode', async () => {
    const good = unhex(await wallet.signTransaction({ to: DEAD, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 }));
    const legacy = unhex(await wallet.signTransaction({ to: DEAD, value: 1n, nonce: 0, gasLimit: 21_000, gasPrice: GWEI, chainId: 9000, type: 0 }));
    const cases = [
      // chain id 9000 = 0x2328 written with a leading zero byte: ethereumjs hashes its own (shorter) encoding
      withItem(good, 0, new Uint8Array([0x00, 0x23, 0x28])),
      // a nonce written with a leading zero
      withItem(good, 1, new Uint8Array([0x00])),
      // r = 0: recovers no key
      withItem(good, 10, new Uint8Array()),
      legacy,
      new Uint8Array([0x02, 0xc0]),
      new Uint8Array([0x02]),
      new Uint8Array(),
    ];
    for (const raw of cases) {
      assert.equal(typedSigned(raw, common), undefined);
      // signedRaw still answers exactly what decodeTx finds
      assert.deepEqual(signedRaw(raw, common), reference(raw));
    }
    assert.ok(reference(legacy) !== undefined);
  });

  it('leaves an envelope whose RLP prefixes are not minimal to the usual decode (its fields are not encoded as ethereumjs encodes them)', async () => {
    const good = unhex(await wallet.signTransaction({ to: DEAD, value: 1n, nonce: 5, gasLimit: 21_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2, accessList: ACCESS }));
    const items = decode(good.subarray(1)) as unknown as Uint8Array[];
    const enc = (i: number) => encode(items[i]!);
    const payload = (parts: Uint8Array[]) => Buffer.concat(parts);
    // a type-2 envelope around a list payload (under 256 bytes here)
    const list = (body: Uint8Array) => new Uint8Array([0x02, ...(body.length >= 56 ? [0xf8, body.length] : [0xc0 + body.length]), ...body]);
    const all = (swap: (i: number) => Uint8Array) => payload(items.map((_, i) => swap(i)));
    assert.deepEqual(list(all(enc)), good, 'the helpers rebuild the envelope');
    const cases: Array<[string, Uint8Array]> = [
      // the nonce 5 as a one-byte string 0x81 0x05 instead of the byte itself
      ['a byte below 0x80 behind a string prefix', list(all((i) => (i === 1 ? new Uint8Array([0x81, 0x05]) : enc(i))))],
      // the 20-byte `to` in the long form (0xb8 0x14) that only lengths of 56 or more take
      ['a short string in the long form', list(all((i) => (i === 5 ? new Uint8Array([0xb8, 20, ...items[5]!]) : enc(i))))],
      // a length written with a leading zero byte
      ['a length with a leading zero', list(all((i) => (i === 5 ? new Uint8Array([0xb9, 0, 20, ...items[5]!]) : enc(i))))],
      // the access list's inner item: an address string in the long form
      ['an access-list address in the long form', list(all((i) => (i === 8 ? fixAccess(items[8] as unknown as Uint8Array[][]) : enc(i))))],
      ['bytes after the list', new Uint8Array([...good, 0x00])],
      ['the list ending early', good.subarray(0, good.length - 1)],
    ];
    for (const [what, raw] of cases) {
      assert.equal(typedSigned(raw, common), undefined, what);
      assert.deepEqual(signedRaw(raw, common), reference(raw), what);
    }
  });
});

/** the access list [[address, keys]] with the first address written in the long string form */
function fixAccess(access: Uint8Array[][]): Uint8Array {
  const [address, keys] = access[0]! as unknown as [Uint8Array, Uint8Array[]];
  const entry = Buffer.concat([new Uint8Array([0xb8, address.length, ...address]), encode(keys)]);
  const entryList = entry.length < 56 ? new Uint8Array([0xc0 + entry.length, ...entry]) : new Uint8Array([0xf8, entry.length, ...entry]);
  return entryList.length < 56 ? new Uint8Array([0xc0 + entryList.length, ...entryList]) : new Uint8Array([0xf8, entryList.length, ...entryList]);
}
