import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { Wallet } from 'ethers';
import { makeCommon } from '../../src/evm/common.js';
import type { BlockContext, EvmRunner } from '../../src/evm/runner.js';
import { decodeTx } from '../../src/evm/tx.js';
import { Store } from '../../src/store/store.js';
import { TrieDB } from '../../src/store/triedb.js';
import { devKeys } from '../helpers/accounts.js';
import { createMerkleRunner } from '../helpers/merklerunner.js';

// runtime code: SSTORE(0, CALLDATALOAD(0)); STOP
const SETTER = Uint8Array.from(Buffer.from('600035600055' + '00', 'hex'));
const SETTER_ADDR = '0x' + '5e'.repeat(20);
const common = makeCommon(9000n);
const wallet = new Wallet(devKeys()[0]!);

async function runner(): Promise<{ r: EvmRunner<MerkleStateManager>; root: Uint8Array }> {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-exec-')), 'db'));
  const r = await createMerkleRunner(common, new TrieDB(store), () => new Uint8Array(32));
  const alloc = new Map([
    [wallet.address.toLowerCase(), { balance: 10n ** 21n, nonce: 0n }],
    [SETTER_ADDR, { balance: 0n, nonce: 0n, code: SETTER }],
  ]);
  return { r, root: await r.applyGenesis(alloc) };
}

const ctx = (n: bigint): BlockContext => ({
  number: n,
  timestamp: 1_700_000_000n + n,
  coinbase: new Uint8Array(20),
  gasLimit: 30_000_000n,
  baseFee: 1n,
  mixHash: new Uint8Array(32),
});

async function setTx(nonce: number, value: number) {
  const raw = await wallet.signTransaction({
    type: 2, chainId: 9000, nonce, to: SETTER_ADDR, gasLimit: 100_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n,
    data: '0x' + value.toString(16).padStart(64, '0'),
  });
  return decodeTx(Buffer.from(raw.slice(2), 'hex'), common);
}

/**
 * Gas of a setTx by hand (Cancun): intrinsic 21000 + calldata (4 per zero byte, 16 per non-zero;
 * the value is one non-zero byte in 32), then PUSH1 + CALLDATALOAD + PUSH1 (3 each) and the SSTORE of
 * a cold slot (EIP-2929: 2100) that sets it from zero (20000) or changes a non-zero original (EIP-2200
 * reset 5000, less the cold surcharge already counted: 2900).
 */
const INTRINSIC = 21_000 + 31 * 4 + 16;
const OPS = 3 + 3 + 3;
const GAS_SET_FROM_ZERO = INTRINSIC + OPS + 2_100 + 20_000;
const GAS_RESET_NONZERO = INTRINSIC + OPS + 2_100 + 2_900;

test('SSTORE gas matches EIP-2929/2200 by hand; a second write in ONE block costs what it costs in a separate block (original value per tx)', async () => {
  const [t1, t2] = [await setTx(0, 1), await setTx(1, 2)];
  const one = await runner();
  const together = await one.r.executeBlock(one.root, ctx(1n), [t1, t2]);
  const two = await runner();
  const first = await two.r.executeBlock(two.root, ctx(1n), [t1]);
  const second = await two.r.executeBlock(first.stateRoot, ctx(2n), [t2]);
  assert.equal(together.txs.length, 2);
  assert.equal(first.txs[0]!.gasUsed, BigInt(GAS_SET_FROM_ZERO), '0 → 1: cold slot, set');
  assert.equal(second.txs[0]!.gasUsed, BigInt(GAS_RESET_NONZERO), '1 → 2 in the next block: cold slot, reset');
  assert.equal(together.txs[1]!.gasUsed, BigInt(GAS_RESET_NONZERO), '1 → 2 in the same block: original value is 1 again');
  assert.equal(together.txs[1]!.gasUsed, second.txs[0]!.gasUsed, 'second write: original value is the previous tx result');
  assert.equal(together.txs[0]!.gasUsed, first.txs[0]!.gasUsed);
  assert.deepEqual(together.stateRoot, second.stateRoot, 'same final state');
});

test('a block stores one final state, not every intermediate one', async () => {
  const txs = [];
  for (let i = 0; i < 20; i++) txs.push(await setTx(i, i + 1));
  const a = await runner();
  const out = await a.r.executeBlock(a.root, ctx(1n), txs);
  assert.equal(out.txs.length, 20);
  assert.ok(out.txs.every((t) => t.status === 1));
  // reading the state back at the final root gives the last value
  const v = await a.r.storage(out.stateRoot, Buffer.from(SETTER_ADDR.slice(2), 'hex'), new Uint8Array(32));
  assert.equal(BigInt('0x' + Buffer.from(v).toString('hex')), 20n);
});

test('a read-only runner keeps nothing in its scratch overlay as it follows new roots (no growth per block)', async () => {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-exec-')), 'db'));
  const db = new TrieDB(store);
  const writer = await createMerkleRunner(common, db, () => new Uint8Array(32));
  let root = await writer.applyGenesis(new Map([
    [wallet.address.toLowerCase(), { balance: 10n ** 21n, nonce: 0n }],
    [SETTER_ADDR, { balance: 0n, nonce: 0n, code: SETTER }],
  ]));
  const commit = () => {
    db.flushInto(store);
    db.afterCommit();
  };
  commit();
  const scratch = db.view();
  const reader = await createMerkleRunner(common, scratch, () => new Uint8Array(32));
  const from = Buffer.from(wallet.address.slice(2), 'hex');
  const setter = Buffer.from(SETTER_ADDR.slice(2), 'hex');
  for (let i = 0; i < 5; i++) {
    root = (await writer.executeBlock(root, ctx(BigInt(i + 1)), [await setTx(i, i + 7)])).stateRoot;
    commit();
    assert.equal((await reader.account(root, from))?.nonce, BigInt(i + 1));
    assert.equal(BigInt('0x' + Buffer.from(await reader.storage(root, setter, new Uint8Array(32))).toString('hex')), BigInt(i + 7));
    // the state manager re-wrote the accounts it had read when it left the previous root: dropped
    assert.equal(scratch.pending, 0, `block ${i + 1}`);
  }
  assert.equal(db.pending, 0, 'the writer drained its overlay at each commit');
});
