/**
 * The address index (store/addrindex.ts, evm/touched.ts, docs/architecture.md "The address index"):
 * blocks executed by the real application index each tx under its sender, its recipient and the
 * addresses its internal calls reach (a CALL's target, a created contract, a SELFDESTRUCT's
 * beneficiary); a page holds whole blocks; a dev revert (EvmApp.rewindStore, the path evm_revert and
 * anvil_rollback take) and history pruning remove the rows; a home without the index gets it built at
 * start (chain/addrmigration.ts). Also the search pages' flags against what Anvil 1.7.1 answered.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, getCreateAddress } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import type { Logger } from '../../src/lib/log.js';
import { ADDRESS_INDEX_BUILD_KEY } from '../../src/store/addrindex.js';
import { Pruner } from '../../src/store/prune.js';
import { Store } from '../../src/store/store.js';
import { pageFlags, searchRange } from '../../src/evmrpc/otssearch.js';
import { devKeys } from '../helpers/accounts.js';
import { chainGenesis } from '../helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const GENESIS_MS = Date.parse('2026-01-01T00:00:00Z');
const MEMPOOL = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));

const TARGET = '0x' + 'a7'.repeat(20);
const BENEFICIARY = '0x' + 'be'.repeat(20);
const CALLER = '0x' + 'c1'.repeat(20);
const DESTROYER = '0x' + 'd5'.repeat(20);
const CREATOR = '0x' + 'c5'.repeat(20);
// CALL(gas, TARGET, CALLVALUE, 0, 0, 0, 0); STOP
const CALLER_RUNTIME = '6000600060006000' + '34' + '73' + TARGET.slice(2) + '5a' + 'f1' + '00';
// SELFDESTRUCT(BENEFICIARY)
const DESTROYER_RUNTIME = '73' + BENEFICIARY.slice(2) + 'ff';
// CREATE(0, 0, 0); STOP — an empty contract at the creator's nonce 1
const CREATOR_RUNTIME = '600060006000' + 'f0' + '00';

function genesis() {
  const g = chainGenesis();
  for (const [a, code] of [[CALLER, CALLER_RUNTIME], [DESTROYER, DESTROYER_RUNTIME], [CREATOR, CREATOR_RUNTIME]] as const) {
    g.evm.alloc.set(a, { balance: 1n, nonce: 1n, code: bytes(code), storage: new Map() });
  }
  return g;
}

describe('address index: written with each block, removed by a revert and by pruning, built for an older home', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-addrindex-'));
  const path = join(dir, 'ferry.db');
  const wallet = new Wallet(devKeys()[0]!);
  const sender = wallet.address.toLowerCase();
  const created = getCreateAddress({ from: CREATOR, nonce: 1 }).toLowerCase();
  let store: Store;
  let app: EvmApp;
  let nonce = 0;

  const open = async () => {
    store = new Store(path);
    app = await EvmApp.create(store, genesis(), { minGasPrice: 0n, mempool: MEMPOOL }, silent, { onPoolChange() {} });
    await app.initChain();
  };
  const tx = async (to: string, value: bigint) => {
    const fee = 100n * GWEI;
    const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: nonce++, to, value, gasLimit: 200_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI });
    return wrapEthereumTx(bytes(raw), bytes(sender), 200_000n, fee);
  };
  const commit = async (height: bigint, txs: Uint8Array[]) => {
    await app.finalizeBlock({ height, timeMs: GENESIS_MS + Number(height) * 1000, hash: new Uint8Array(32).fill(Number(height)), proposerAddress: new Uint8Array(20), txs });
    store.transaction(() => app.commit());
    await app.afterCommit();
  };
  /** (height, index) of every tx touching `a`, newest first */
  const history = (a: string) => store.addrs.positions(bytes(a), 1, 1_000, true, 1_000, 1_000).map((r) => `${r.height}:${r.idx}`);

  before(async () => {
    await open();
    // block 1: a plain transfer and the three contracts called; block 2: transfers; block 3: the caller again
    await commit(1n, [await tx(BENEFICIARY.replace('be', 'bf'), 1n), await tx(CALLER, 5n), await tx(DESTROYER, 0n), await tx(CREATOR, 0n)]);
    await commit(2n, [await tx(CALLER, 1n), await tx(TARGET, 1n)]);
    await commit(3n, [await tx(CALLER, 2n)]);
  });
  after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes sender, recipient and the addresses internal calls reach', () => {
    assert.deepEqual(history(sender), ['3:0', '2:1', '2:0', '1:3', '1:2', '1:1', '1:0']);
    assert.deepEqual(history(CALLER), ['3:0', '2:0', '1:1']);
    assert.deepEqual(history(TARGET), ['3:0', '2:1', '2:0', '1:1'], 'the CALL target, and a tx sent to it');
    assert.deepEqual(history(BENEFICIARY), ['1:2'], "the SELFDESTRUCT's beneficiary");
    assert.deepEqual(history(created), ['1:3'], 'the contract a contract created');
    assert.deepEqual(history('0x' + '99'.repeat(20)), []);
  });

  it('pages hold whole blocks, newest or oldest first', () => {
    const page = (desc: boolean, count: number) => store.addrs.positions(bytes(sender), 1, 3, desc, count, 1_000).map((r) => `${r.height}:${r.idx}`);
    assert.deepEqual(page(true, 2), ['3:0', '2:1', '2:0'], 'the rest of block 2');
    assert.deepEqual(page(false, 2), ['1:0', '1:1', '1:2', '1:3'], 'the rest of block 1');
    assert.deepEqual(page(false, 5), ['1:0', '1:1', '1:2', '1:3', '2:0', '2:1']);
    assert.equal(store.addrs.positions(bytes(sender), 1, 3, true, 2, 2).length, 3, 'cap + 1 tells a page over its bound');
    assert.deepEqual(store.addrs.heights(bytes(TARGET), 1, 3, 2), [1, 2]);
  });

  it('a dev revert removes the rows of the blocks above its height', () => {
    store.transaction(() => app.rewindStore(2n));
    assert.deepEqual(history(CALLER), ['2:0', '1:1']);
    assert.deepEqual(history(TARGET), ['2:1', '2:0', '1:1']);
    assert.equal((store.db.prepare('SELECT count(*) AS n FROM addr_blocks WHERE height > 2').get() as { n: number }).n, 0);
  });

  it('is built at start for a home written before it existed', async () => {
    const before = { sender: history(sender), target: history(TARGET), beneficiary: history(BENEFICIARY), created: history(created) };
    store.db.exec('DROP TABLE addr_txs; DROP TABLE addr_blocks');
    store.close();
    await open();
    assert.equal(store.getMeta(ADDRESS_INDEX_BUILD_KEY)?.toString(), '2:2', 'the build marker reached the head');
    assert.deepEqual({ sender: history(sender), target: history(TARGET), beneficiary: history(BENEFICIARY), created: history(created) }, before);
  });

  it('history pruning removes the rows below the retain height', async () => {
    nonce = 6; // block 3 was reverted: the sender's next nonce is block 2's again
    await commit(3n, [await tx(TARGET, 3n)]);
    const pruner = new Pruner(store, { keepRecent: 0, interval: 0, minRetainBlocks: 1 });
    pruner.afterCommit(3);
    assert.deepEqual(history(TARGET), ['3:0', '2:1', '2:0']);
    assert.deepEqual(history(BENEFICIARY), []);
    assert.equal((store.db.prepare('SELECT count(*) AS n FROM addr_blocks WHERE height < 2').get() as { n: number }).n, 0);
  });
});

describe('ots search pages: firstPage and lastPage as Anvil 1.7.1 answers', () => {
  // what Anvil answered for an address with txs in blocks 1, 2, 3, 4, 5 (two) and 6, the head
  const blocks = [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0], [5, 1], [6, 0]].map(([h, i]) => ({ height: BigInt(h!), index: i! }));
  const run = (dir: 'before' | 'after', n: bigint, size: number) => {
    const r = searchRange(dir, n, 6n);
    const inRange = blocks.filter((b) => b.height >= r.lo && b.height <= r.hi);
    const ordered = r.desc ? [...inRange].reverse() : inRange;
    const out = [];
    for (const b of ordered) {
      if (out.length >= size && b.height !== out[out.length - 1]!.height) break;
      out.push(b);
    }
    const f = pageFlags(dir, r, 6n, out, size);
    return [out.map((b) => Number(b.height)), f.firstPage, f.lastPage];
  };
  it('before', () => {
    assert.deepEqual(run('before', 0n, 2), [[6, 5, 5], true, false]);
    assert.deepEqual(run('before', 5n, 2), [[4, 3], false, false]);
    assert.deepEqual(run('before', 3n, 10), [[2, 1], false, true]);
    assert.deepEqual(run('before', 0n, 1), [[6], true, false]);
  });
  it('after', () => {
    assert.deepEqual(run('after', 0n, 2), [[1, 2], false, true]);
    assert.deepEqual(run('after', 2n, 2), [[3, 4], false, false]);
    assert.deepEqual(run('after', 5n, 10), [[6], true, false]);
  });
});
