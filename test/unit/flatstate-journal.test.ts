/**
 * The flat state manager's journal (evm/flatstate.ts) against ethereumjs' MerkleStateManager: the same
 * puts — one account put several times in a block, as runTx does (nonce and fee, value, refund), a
 * reverted checkpoint, storage writes — give the same state root, and the flat change set carries the
 * accounts as the trie serializes them (the journal keeps put accounts as fields and encodes them at
 * block end: docs/benchmarks.md "ERC-20 execution on the chain thread").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, Address, KECCAK256_RLP, setLengthLeft } from '@ethereumjs/util';
import { FlatStateManager } from '../../src/evm/flatstate.js';
import type { FlatState } from '../../src/store/flatstate.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const addr = (n: number) => new Address(new Uint8Array(20).fill(n));
const slot = (n: number) => setLengthLeft(Uint8Array.of(n), 32);

/** the state before genesis: nothing stored */
const emptyFlat = {
  account: () => undefined,
  storage: () => new Uint8Array(0),
  slotsOf: () => [],
  code: () => undefined,
} as unknown as FlatState;

type Sm = Pick<MerkleStateManager, 'putAccount' | 'getAccount' | 'putStorage' | 'checkpoint' | 'commit' | 'revert'>;

async function block(sm: Sm): Promise<void> {
  const [a, b, c, d] = [addr(1), addr(2), addr(3), addr(4)];
  await sm.checkpoint();
  await sm.putAccount(a, new Account(1n, 10n ** 18n));
  await sm.putAccount(b, new Account(0n, 5n));
  // one account put again and again within the block, read back between the puts
  for (let i = 0; i < 3; i++) {
    const acct = (await sm.getAccount(a))!;
    acct.nonce += 1n;
    acct.balance -= 21_000n * 7n;
    await sm.putAccount(a, acct);
    const coinbase = (await sm.getAccount(b))!;
    coinbase.balance += 21_000n;
    await sm.putAccount(b, coinbase);
  }
  // a tx whose changes are reverted
  await sm.checkpoint();
  await sm.putAccount(a, new Account(99n, 1n));
  await sm.putAccount(c, new Account(0n, 1n));
  await sm.revert();
  // a contract's storage, written twice
  await sm.putAccount(d, new Account(1n, 0n));
  await sm.putStorage(d, slot(1), Uint8Array.of(5));
  await sm.putStorage(d, slot(1), Uint8Array.of(7));
  await sm.putStorage(d, slot(2), Uint8Array.of(1));
  const contract = (await sm.getAccount(d))!;
  contract.balance = 3n;
  await sm.putAccount(d, contract);
  await sm.commit();
}

test('the flat journal gives the Merkle state root and the accounts as the trie serializes them', async () => {
  const merkle = new MerkleStateManager();
  await block(merkle);
  const expectedRoot = await merkle.getStateRoot();

  const flat = new FlatStateManager(emptyFlat);
  flat.at(0);
  await block(flat);
  const nodes = { node: () => undefined, putNode() {} };
  const { root, change } = flat.commitToTrie(nodes, KECCAK256_RLP);
  assert.equal(hex(root), hex(expectedRoot));
  assert.deepEqual(
    change.accounts.map(([k, v]) => [hex(k), hex(v)]),
    await Promise.all(
      [addr(1), addr(2), addr(4)].map(async (a) => [hex(a.bytes), hex((await merkle.getAccount(a))!.serialize())]),
    ),
  );
  assert.equal(await flat.getAccount(addr(3)), undefined);
  assert.equal((await flat.getAccount(addr(1)))!.nonce, 4n);
});
