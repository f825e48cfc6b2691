import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Address, setLengthLeft } from '@ethereumjs/util';
import { makeCommon } from '../../src/evm/common.js';
import { proofStateManager } from '../../src/evm/statetrie.js';
import { FlatState } from '../../src/store/flatstate.js';
import { Store } from '../../src/store/store.js';
import { TrieDB } from '../../src/store/triedb.js';
import { chainApp, DESTROYER_ADDR, generateBlocks, prng, REVERTER_ADDR, runBlock, STORE_ADDR } from '../helpers/chaingen.js';

const common = makeCommon(9000n);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

for (const seed of [7, 2024]) {
  test(`flat reads equal trie reads at every height of a random chain (seed ${seed})`, async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ferry-flat-')), 'db');
    const store = new Store(path);
    const app = await chainApp(store);
    const blocks = await generateBlocks(seed, 40);
    const addrs = new Set([STORE_ADDR, REVERTER_ADDR, DESTROYER_ADDR].map((a) => a.slice(2)));
    for (let i = 0; i < blocks.length; i++) {
      await runBlock(app, store, BigInt(i + 1), blocks[i]!);
      for (const t of store.evmBlock(BigInt(i + 1))!.transactions) {
        addrs.add(hex(t.from));
        if (t.to) addrs.add(hex(t.to));
        const c = store.txLocation(t.hash)!.receipt.contractAddress;
        if (c) addrs.add(hex(c));
      }
    }
    const top = store.latestHeight()!;
    // a reader connection, visiting heights in random order (its cache follows and falls back)
    const reader = new Store(path, { reader: true });
    const flat = new FlatState(reader);
    const db = new TrieDB(reader);
    const rnd = prng(seed);
    const heights = Array.from({ length: Number(top) + 1 }, (_, h) => h).sort(() => rnd() - 0.5);
    const slots = Array.from({ length: 6 }, (_, i) => setLengthLeft(Uint8Array.of(i), 32));
    let compared = 0;
    for (const h of heights) {
      const sm = proofStateManager(common, db, store.evmBlock(BigInt(h))!.header.stateRoot);
      for (const a of addrs) {
        const addr = Uint8Array.from(Buffer.from(a, 'hex'));
        const trieAcct = await sm.getAccount(new Address(addr));
        const rlp = flat.account(addr, h);
        assert.equal(rlp === undefined ? undefined : hex(rlp), trieAcct ? hex(trieAcct.serialize()) : undefined, `account ${a} at ${h}`);
        if (!trieAcct) continue;
        if (trieAcct.isContract()) assert.equal(hex(flat.code(trieAcct.codeHash)!), hex(await sm.getCode(new Address(addr))), `code ${a} at ${h}`);
        for (const s of slots) {
          assert.equal(hex(flat.storage(addr, s, h)), hex(await sm.getStorage(new Address(addr), s)), `slot ${hex(s)} of ${a} at ${h}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 1000, `compared ${compared} slots`);
    reader.close();
    store.close();
  });
}
