/**
 * The genesis state built in one pass (genesisState) is the state ethereumjs' MPT builds from the
 * same allocation: same root, and its nodes alone serve every account and slot.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeCommon } from '../../src/evm/common.js';
import { genesisState, type GenesisAccount } from '../../src/evm/flatstate.js';
import { Store } from '../../src/store/store.js';
import { TrieDB } from '../../src/store/triedb.js';
import { createMerkleRunner } from '../helpers/merklerunner.js';

const common = makeCommon(9000n);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** a deterministic pseudo-random allocation: plain accounts, contracts with code and storage (some values zero or short) */
function allocation(n: number): Map<string, GenesisAccount> {
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const alloc = new Map<string, GenesisAccount>();
  for (let i = 0; i < n; i++) {
    const addr = '0x' + rnd().toString(16).padStart(8, '0') + i.toString(16).padStart(32, '0');
    const acc: GenesisAccount = { balance: BigInt(rnd()) * 10n ** 9n, nonce: BigInt(i % 3) };
    if (i % 7 === 0) {
      acc.code = Uint8Array.from([0x60, i & 0xff, 0x60, 0x00, 0x55, 0x00]);
      acc.storage = new Map();
      for (let j = 0; j < (i % 5) * 9; j++) {
        const v = new Uint8Array(32);
        if (j % 4 !== 0) v[31 - (j % 32)] = rnd() & 0xff; // every 4th value stays zero
        acc.storage.set('0x' + (rnd() * 7919 + j).toString(16).padStart(64, '0'), v);
      }
    }
    alloc.set(addr, acc);
  }
  return alloc;
}

test('genesisState: the same root as the MPT for the same allocation, and its nodes serve every account and slot', async () => {
  for (const n of [1, 2, 17, 400]) {
    const alloc = allocation(n);
    const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-genesis-')), 'db'));
    const mpt = await createMerkleRunner(common, new TrieDB(store), () => new Uint8Array(32));
    const expected = await mpt.applyGenesis(alloc);

    const nodes = new TrieDB(new Store(join(mkdtempSync(join(tmpdir(), 'ferry-genesis-')), 'db')));
    const { root, change, codes } = genesisState(alloc, (h, enc) => void nodes.put(hex(h), enc));
    for (const [k, v] of codes) await nodes.put(hex(k), v);
    assert.equal(hex(root), hex(expected), `${n} accounts: same state root`);
    assert.equal(change.accounts.length, n);

    // read everything back through the MPT over the one-pass nodes only
    const reader = await createMerkleRunner(common, nodes, () => new Uint8Array(32));
    for (const [addrHex, acc] of alloc) {
      const addr = Buffer.from(addrHex.slice(2), 'hex');
      const a = await reader.account(root, addr);
      assert.equal(a?.balance, acc.balance);
      assert.equal(a?.nonce, acc.nonce);
      for (const [slot, v] of acc.storage ?? []) {
        const got = await reader.storage(root, addr, Buffer.from(slot.slice(2), 'hex'));
        assert.equal(BigInt('0x' + (hex(got) || '0')), BigInt('0x' + hex(v)));
      }
    }
  }
});
