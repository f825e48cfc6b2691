/**
 * The point-evaluation precompile (0x0a) in block execution (evm/blockexec.ts) on the flat state, and a
 * tx whose execution throws out of runTx: it is excluded, the checkpoint it left open is reverted, and
 * the block (with the txs after it) still commits. Before evm/kzg.ts, every tx reaching 0x0a threw
 * "kzg not initialized" and left the EVM's message checkpoint open: the block then failed with
 * "commitToTrie with an open checkpoint" and no block could be made.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Wallet } from 'ethers';
import { RevmCalls } from '../../src/chain/revmcalls.js';
import { makeCommon } from '../../src/evm/common.js';
import { EvmRunner, type BlockContext } from '../../src/evm/runner.js';
import { decodeTx } from '../../src/evm/tx.js';
import { FlatState } from '../../src/store/flatstate.js';
import { Store } from '../../src/store/store.js';
import { TrieDB } from '../../src/store/triedb.js';
import { devKeys } from '../helpers/accounts.js';
import { POINT_EVALUATION, POINT_EVALUATION_OUTPUT } from '../e2e/kzg-vectors.js';

const CHAIN_ID = 9000;
const GWEI = 10n ** 9n;
const KZG = '0x' + '00'.repeat(19) + '0a';
const wallet = new Wallet(devKeys()[0]!);
const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));

async function setup() {
  const common = makeCommon(BigInt(CHAIN_ID), 'osaka');
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-kzg-')), 'db'));
  const trieDb = new TrieDB(store);
  const flat = new FlatState(store);
  const r = await EvmRunner.createFlat(common, flat, trieDb, (n) => hexBytes(n.toString(16).padStart(64, '0')));
  r.fastTransfers = false;
  const genesis = await r.state.applyGenesis(new Map([[wallet.address.toLowerCase(), { balance: 10n ** 22n, nonce: 0n }]]));
  store.transaction(() => {
    trieDb.flushInto(store);
    flat.write(0, genesis.change!);
  });
  trieDb.afterCommit();
  flat.applied(0, genesis.change!);
  return { r, common, flat, parent: { height: 0n, root: genesis.root } };
}

const ctx: BlockContext = { number: 1n, timestamp: 1_700_000_001n, coinbase: new Uint8Array(20), gasLimit: 30_000_000n, baseFee: 7n, mixHash: new Uint8Array(32) };

async function tx(common: ReturnType<typeof makeCommon>, nonce: number, to: string, data: string) {
  const raw = await wallet.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to, data, gasLimit: 200_000, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 1n });
  return decodeTx(hexBytes(raw), common);
}

test('0x0a: the valid vector succeeds with 50000 gas in the precompile, a bad proof fails the tx, both in the block', async () => {
  const { r, common, parent } = await setup();
  const txs = [await tx(common, 0, KZG, POINT_EVALUATION.valid), await tx(common, 1, KZG, POINT_EVALUATION.badProof)];
  const b = await r.executeBlock(parent, ctx, txs);
  assert.deepEqual(b.excluded, []);
  assert.deepEqual(b.txs.map((t) => t.status), [1, 0]);
  const calldata = [...hexBytes(POINT_EVALUATION.valid)].reduce((s, x) => s + (x === 0 ? 4n : 16n), 0n);
  assert.equal(b.txs[0]!.gasUsed, 21_000n + calldata + 50_000n);
  assert.equal(b.txs[1]!.gasUsed, 200_000n, 'a refused input uses all the gas');
});

test('a tx that throws out of runTx is excluded, its open checkpoint reverted, and the block commits with the txs after it', async () => {
  const { r, common, parent } = await setup();
  const txs = [await tx(common, 0, KZG, POINT_EVALUATION.valid), await tx(common, 0, '0x' + '11'.repeat(20), '0x')];
  // no KZG: ethereumjs' 0x0a throws "kzg not initialized" from inside the EVM's message checkpoint
  const crypto = common.customCrypto as { kzg?: unknown };
  const kzg = crypto.kzg;
  crypto.kzg = undefined;
  let b;
  try {
    b = await r.executeBlock(parent, ctx, txs);
  } finally {
    crypto.kzg = kzg;
  }
  assert.deepEqual(b.excluded.map((x) => x.reason), ['kzg not initialized']);
  assert.deepEqual(b.txs.map((t) => [t.status, t.gasUsed]), [[1, 21_000n]]);
});

test("eth_call's revm engine answers 0x0a itself (not left to ethereumjs), as the blocks do", async () => {
  const { flat } = await setup();
  const revm = RevmCalls.create(flat, () => undefined, { hardfork: 'osaka' }, BigInt(CHAIN_ID));
  assert.ok(typeof revm !== 'string', `the revm addon is built: ${String(revm)}`);
  const at = (data: string) => revm.call(0n, ctx, { from: hexBytes(wallet.address), to: hexBytes(KZG), gas: 200_000n, data: hexBytes(data) }, Infinity);
  const valid = at(POINT_EVALUATION.valid);
  assert.ok(valid !== undefined && valid.exceptionError === undefined, JSON.stringify(valid));
  assert.equal('0x' + Buffer.from(valid.returnValue).toString('hex'), POINT_EVALUATION_OUTPUT);
  for (const bad of [POINT_EVALUATION.badProof, POINT_EVALUATION.wrongHash, POINT_EVALUATION.short]) {
    const out = at(bad);
    assert.ok(out === undefined || out.exceptionError !== undefined, JSON.stringify(out));
  }
});
