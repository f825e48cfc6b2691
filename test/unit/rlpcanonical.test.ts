/**
 * Strict RLP reading of tx envelopes (src/evm/rlpcanonical.ts) and decodeTx's use of it
 * (src/evm/tx.ts): a canonical type-1/2 envelope is read as views and built by the same
 * @ethereumjs/tx constructor createTxFromRLP uses, with the same fields, serialization and hash;
 * bytes that are not one canonical list go to createTxFromRLP and are refused with its words.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode, encode } from '@ethereumjs/rlp';
import { createTxFromRLP } from '@ethereumjs/tx';
import { Wallet } from 'ethers';
import { canonicalListView } from '../../src/evm/rlpcanonical.js';
import { decodeTx } from '../../src/evm/tx.js';
import { devKeys } from '../helpers/accounts.js';
import { ACCESS, DEAD, GWEI, envelopeCommon, unhex } from '../helpers/envelopes.js';

const common = envelopeCommon;
const wallet = new Wallet(devKeys()[2]!);

async function envelopes(): Promise<Uint8Array[]> {
  const raws = await Promise.all([
    wallet.signTransaction({ to: DEAD, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 }),
    // data of 40, 300 and 70,000 bytes: the short, one- and three-byte long length forms
    wallet.signTransaction({ to: DEAD, value: 0n, nonce: 7, gasLimit: 900_000, maxFeePerGas: 3n, maxPriorityFeePerGas: 0n, chainId: 9000, type: 2, data: '0x' + 'ab'.repeat(40), accessList: ACCESS }),
    wallet.signTransaction({ nonce: 1, gasLimit: 1_000_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2, data: '0x' + '60'.repeat(300) }),
    wallet.signTransaction({ to: DEAD, nonce: 1, gasLimit: 2_000_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2, data: '0x' + '01'.repeat(70_000) }),
    wallet.signTransaction({ to: DEAD, value: 5n, nonce: 2, gasLimit: 30_000, gasPrice: GWEI, chainId: 9000, type: 1, accessList: ACCESS }),
  ]);
  return raws.map(unhex);
}

/** what decodeTx answers: the tx's fields and serialization, or the refusal's message */
function outcome(raw: Uint8Array): unknown {
  try {
    const { tx, evm } = decodeTx(raw, common);
    return { serialized: Buffer.from(tx.serialize()).toString('hex'), hash: Buffer.from(evm.hash).toString('hex'), json: tx.toJSON(), from: Buffer.from(evm.from).toString('hex') };
  } catch (e) {
    return { refused: e instanceof Error ? e.message : String(e) };
  }
}

/** the same, through createTxFromRLP alone (the library's own decoding) */
function libraryOutcome(raw: Uint8Array): unknown {
  try {
    const tx = createTxFromRLP(raw, { common });
    return { serialized: Buffer.from(tx.serialize()).toString('hex'), hash: Buffer.from(tx.hash()).toString('hex'), json: tx.toJSON(), from: Buffer.from(tx.getSenderAddress().bytes).toString('hex') };
  } catch {
    return 'refused';
  }
}

describe('canonical RLP envelopes', () => {
  it('reads a canonical envelope as views with the items RLP.decode finds', async () => {
    for (const raw of await envelopes()) {
      const items = canonicalListView(raw, 1);
      assert.ok(items !== undefined);
      assert.deepEqual(items.map((x) => (x instanceof Uint8Array ? new Uint8Array(x) : x)), decode(raw.subarray(1)));
      const first = items[0] as Uint8Array;
      assert.equal(first.buffer, raw.buffer, 'a view of the envelope, not a copy');
    }
  });

  it('decodeTx gives the fields, serialization, hash and sender createTxFromRLP gives', async () => {
    for (const raw of await envelopes()) assert.deepEqual({ ...(outcome(raw) as object) }, libraryOutcome(raw));
  });

  it('bytes that are not one canonical list are decoded and refused by createTxFromRLP, as before', async () => {
    const [good] = await envelopes();
    const items = decode(good!.subarray(1)) as Uint8Array[];
    const list = (body: Uint8Array) => new Uint8Array([0x02, ...(body.length >= 56 ? [0xf8, body.length] : [0xc0 + body.length]), ...body]);
    const swap = (i: number, enc: Uint8Array) => list(Buffer.concat(items.map((x, k) => (k === i ? enc : encode(x)))));
    const cases = [
      ['bytes after the list', new Uint8Array([...good!, 0x01])],
      ['a byte below 0x80 behind a string prefix', swap(1, new Uint8Array([0x81, 0x00 + 5]))],
      ['a short string in the long form', swap(5, new Uint8Array([0xb8, 20, ...items[5]!]))],
      ['the list cut short', good!.subarray(0, good!.length - 2)],
    ] as const;
    for (const [what, raw] of cases) {
      assert.equal(canonicalListView(raw, 1), undefined, what);
      const got = outcome(raw) as { refused?: string };
      assert.ok(got.refused !== undefined, `${what}: refused`);
      assert.match(got.refused, /^rlp: |invalid/, what);
      assert.equal(libraryOutcome(raw), 'refused', what);
    }
  });
});
