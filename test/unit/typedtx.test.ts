/**
 * The type-1/2 tx object built without @ethereumjs/tx's constructor (src/evm/typedtx.ts): for random
 * envelope fields, valid and broken in every way the library checks, it is built only where the
 * library builds one, and then it is the library's object — prototype, own properties in order, their
 * values, and what its methods answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Mainnet, createCustomCommon, type Common } from '@ethereumjs/common';
import { createAccessList2930TxFromBytesArray, create1559FeeMarketTxFromBytesArray, type TypedTransaction } from '@ethereumjs/tx';
import { encode } from '@ethereumjs/rlp';
import { makeCommon } from '../../src/evm/common.js';
import { canonicalListView } from '../../src/evm/rlpcanonical.js';
import { typedTxOf } from '../../src/evm/typedtx.js';
import type { RlpItem } from '../../src/evm/rlpwrite.js';
import { xorshift32 as rng } from '../helpers/rng.js';

const CHAIN_ID = 9000n;
const commons: Array<[string, Common]> = [
  ['cancun', makeCommon(CHAIN_ID, 'cancun')],
  ['prague', makeCommon(CHAIN_ID, 'prague')],
  ['osaka', makeCommon(CHAIN_ID, 'osaka')],
  // a Common without ferry's own copy(): the library copies it into each tx
  ['plain osaka', createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: 'osaka' })],
];

const bytes = (n: number, r: () => number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
/** a minimal big-endian integer of `n` bytes (no leading zero) */
const int = (n: number, r: () => number): Uint8Array => {
  const b = bytes(n, r);
  if (n > 0 && b[0] === 0) b[0] = 1 + Math.floor(r() * 255);
  return b;
};
const be = (v: bigint): Uint8Array => (v === 0n ? new Uint8Array(0) : Uint8Array.from(Buffer.from(v.toString(16).padStart(Math.ceil(v.toString(16).length / 2) * 2, '0'), 'hex')));
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** a valid signed field list of `type`, then (often) one field broken in a way the library checks */
function fields(type: 1 | 2, r: () => number): { fields: RlpItem[]; broken: string | undefined } {
  const create = r() < 0.15;
  const accessList: RlpItem = Array.from({ length: pick(r, [0, 0, 1, 2, 3]) }, () => [bytes(20, r), Array.from({ length: pick(r, [0, 1, 2]) }, () => bytes(32, r))]);
  const fee = () => int(pick(r, [0, 1, 4, 8, 16, 32]), r);
  const f: RlpItem[] = [
    be(CHAIN_ID),
    int(pick(r, [0, 1, 2, 8]), r), // nonce (8 bytes may be 2^64 - 1 or more only when broken below)
    ...(type === 2 ? [new Uint8Array(0), new Uint8Array(0)] : [new Uint8Array(0)]), // fees, set below
    be(BigInt(21_000 + Math.floor(r() * 2_000_000))), // gasLimit
    create ? new Uint8Array(0) : bytes(20, r), // to
    int(pick(r, [0, 1, 12, 32]), r), // value
    bytes(pick(r, [0, 4, 68, 300]), r), // data
    accessList,
    pick(r, [new Uint8Array(0), Uint8Array.of(1)]), // y-parity
    int(32, r), // r
    be(1n + BigInt(Math.floor(r() * 2 ** 48)) * (HALF_N / 2n ** 48n)), // s, low
  ];
  const at = type === 2 ? { gasLimit: 4, to: 5, value: 6, data: 7, accessList: 8 } : { gasLimit: 3, to: 4, value: 5, data: 6, accessList: 7 };
  // fees: type 2 max fee at least the tip
  if (type === 2) {
    const [a, b] = [fee(), fee()];
    const big = (x: Uint8Array) => (x.length === 0 ? 0n : BigInt('0x' + Buffer.from(x).toString('hex')));
    [f[2], f[3]] = big(a) <= big(b) ? [a, b] : [b, a];
  } else f[2] = fee();
  // a fee of up to 32 bytes times the gas limit may pass 2^256 - 1 (refused): keep valid ones under it
  const feeIdx = type === 2 ? 3 : 2;
  if ((f[feeIdx] as Uint8Array).length === 32) (f[feeIdx] as Uint8Array)[0] = 1;
  if (r() < 0.4) return { fields: f, broken: undefined };
  const n = f.length;
  const ints = type === 2 ? [0, 1, 2, 3, 4, 6, 9, 10, 11] : [0, 1, 2, 3, 5, 8, 9, 10];
  const how = pick(r, [
    'leading zero', 'oversized int', 'list for a byte string', 'byte string for the access list', 'short list', 'long list', 'empty r', 'empty s',
    'y-parity 2', 'y-parity 0x00', 'high s', 'other chain', 'fee cap below tip', 'huge gas limit', 'nonce 2^64-1', 'to of 19 bytes',
    'access address of 19 bytes', 'access slot of 31 bytes', 'access entry of 3', 'access slots as bytes', 'huge init code', 'fee overflow', 'gas over EIP-7825',
  ] as const);
  const i = pick(r, ints);
  switch (how) {
    case 'leading zero':
      f[i] = Uint8Array.of(0, ...(f[i] as Uint8Array));
      break;
    case 'oversized int':
      f[i] = int(33, r);
      break;
    case 'list for a byte string':
      f[pick(r, [...ints, at.to, at.data])] = [bytes(1, r)];
      break;
    case 'byte string for the access list':
      f[at.accessList] = bytes(20, r);
      break;
    case 'short list':
      return { fields: f.slice(0, pick(r, [n - 3, n - 1])), broken: how };
    case 'long list':
      return { fields: [...f, new Uint8Array(0)], broken: how };
    case 'empty r':
      f[n - 2] = new Uint8Array(0);
      break;
    case 'empty s':
      f[n - 1] = new Uint8Array(0);
      break;
    case 'y-parity 2':
      f[n - 3] = Uint8Array.of(2);
      break;
    case 'y-parity 0x00':
      f[n - 3] = Uint8Array.of(0);
      break;
    case 'high s':
      f[n - 1] = be(HALF_N + 1n + BigInt(Math.floor(r() * 1000)));
      break;
    case 'other chain':
      f[0] = be(pick(r, [0n, 1n, CHAIN_ID + 1n]));
      break;
    case 'fee cap below tip':
      if (type === 2) [f[2], f[3]] = [be(10n), be(9n)];
      break;
    case 'huge gas limit':
      f[at.gasLimit] = int(9, r);
      break;
    case 'nonce 2^64-1':
      f[1] = be(2n ** 64n - 1n);
      break;
    case 'to of 19 bytes':
      f[at.to] = bytes(19, r);
      break;
    case 'access address of 19 bytes':
      f[at.accessList] = [[bytes(19, r), []]];
      break;
    case 'access slot of 31 bytes':
      f[at.accessList] = [[bytes(20, r), [bytes(31, r)]]];
      break;
    case 'access entry of 3':
      f[at.accessList] = [[bytes(20, r), [], []]];
      break;
    case 'access slots as bytes':
      f[at.accessList] = [[bytes(20, r), bytes(32, r)]];
      break;
    case 'huge init code':
      f[at.to] = new Uint8Array(0);
      f[at.data] = bytes(pick(r, [49_153, 131_073]), r);
      break;
    case 'fee overflow':
      f[feeIdx] = Uint8Array.of(0xff, ...bytes(31, r));
      if (type === 2) f[2] = new Uint8Array(0);
      break;
    case 'gas over EIP-7825':
      f[at.gasLimit] = be(16_777_217n);
      break;
  }
  return { fields: f, broken: how };
}

/** the library's tx of these fields, or undefined when it refuses them */
function reference(type: 1 | 2, f: RlpItem[], common: Common): TypedTransaction | undefined {
  const make = type === 2 ? create1559FeeMarketTxFromBytesArray : createAccessList2930TxFromBytesArray;
  try {
    return make(f as never, { common, freeze: false });
  } catch {
    return undefined;
  }
}

/** the same object: prototype, own properties in order and their values, what its methods answer */
function assertSameTx(mine: TypedTransaction, ref: TypedTransaction, ferryCommon: boolean): void {
  assert.equal(Object.getPrototypeOf(mine), Object.getPrototypeOf(ref));
  assert.deepEqual(Object.keys(mine), Object.keys(ref));
  for (const k of Object.keys(ref) as Array<keyof TypedTransaction>) {
    if (k === 'common') {
      if (ferryCommon) assert.equal(mine.common, ref.common);
      assert.equal(mine.common.hardfork(), ref.common.hardfork());
      assert.equal(mine.common.chainId(), ref.common.chainId());
      assert.equal(mine.common.param('maxInitCodeSize'), ref.common.param('maxInitCodeSize'));
    } else if (k === 'txOptions') {
      assert.equal(mine.txOptions.common, ref.txOptions.common);
      assert.deepEqual({ ...mine.txOptions, common: undefined }, { ...ref.txOptions, common: undefined });
    } else assert.deepStrictEqual(mine[k], ref[k], `property ${String(k)}`);
  }
  // `to` and `data` are copies, not views of the envelope (as the library's toBytes makes them)
  for (const b of [mine.data, mine.to?.bytes ?? new Uint8Array(0)]) assert.equal(b.buffer.byteLength, b.length);
  assert.equal(mine.isSigned(), ref.isSigned());
  assert.deepEqual(mine.raw(), ref.raw());
  assert.deepEqual(mine.serialize(), ref.serialize());
  assert.deepEqual(mine.hash(), ref.hash());
  assert.deepEqual(mine.getMessageToSign(), ref.getMessageToSign());
  assert.equal(mine.getIntrinsicGas(), ref.getIntrinsicGas());
  assert.equal(mine.getUpfrontCost(7n), ref.getUpfrontCost(7n));
  assert.deepEqual(mine.toJSON(), ref.toJSON());
  for (const c of [155, 1559, 2718, 2930, 7702]) assert.equal(mine.supports(c as never), ref.supports(c as never));
}

describe('typedTxOf', () => {
  for (const type of [1, 2] as const) {
    for (const [name, common] of commons) {
      it(`type ${type} under ${name}: built only where the library builds, and then as the library builds`, () => {
        const r = rng(type * 7919 + name.length * 104729);
        let built = 0;
        let valid = 0;
        let refused = 0;
        for (let n = 0; n < 600; n++) {
          const { fields: made, broken } = fields(type, r);
          // read back from an envelope as decodeTx reads it: views of its bytes
          const body = encode(made as never);
          const envelope = new Uint8Array(1 + body.length);
          envelope[0] = type;
          envelope.set(body, 1);
          const f = canonicalListView(envelope, 1)!;
          const ref = reference(type, f, common);
          const mine = typedTxOf(type, f, common);
          const tag = `case ${n} (${broken ?? 'valid'})`;
          if (ref === undefined) {
            refused++;
            assert.equal(mine, undefined, `${tag}: the library refuses these fields`);
            continue;
          }
          if (broken === undefined) {
            valid++;
            assert.ok(mine !== undefined, `${tag}: a valid canonical tx takes the fast path`);
          }
          if (mine === undefined) continue;
          built++;
          assertSameTx(mine, ref, name !== 'plain osaka');
        }
        assert.ok(valid > 100 && built >= valid && refused > 100, `valid ${valid}, built ${built}, refused ${refused}`);
      });
    }
  }
});
