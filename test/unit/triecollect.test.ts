/**
 * `ferry prune` on an archive home switched to pruning (node/prunecmd.ts, store/triecollect.ts;
 * docs/abci.md "Pruning"): an archive, a home pruning from genesis and two more archives are fed the
 * same random blocks (chaingen.ts). The two archives are then pruned by pruneStore, one of them cut
 * short twice (as by a crash) and run again. Both end with exactly the trie nodes their retained roots
 * reach (the pruning-from-genesis home's count) on about its disk, answer every retained height as the
 * archive does (balances, nonces, storage, eth_getProof), and go on collecting as a pruning home when
 * more blocks come.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import type { ChainReader } from '../../src/chain/reader.js';
import type { Logger } from '../../src/lib/log.js';
import { pruneStore, type PruneReport } from '../../src/node/prunecmd.js';
import type { PrunePlan } from '../../src/store/prune.js';
import { Store } from '../../src/store/store.js';
import { collectionNeeded, TRIE_COLLECT_META_KEY } from '../../src/store/triecollect.js';
import { devKeys } from '../helpers/accounts.js';
import { commitBlock, openReader } from '../helpers/appblocks.js';
import { chainGenesis, generateBlocks, STORE_ADDR } from '../helpers/chaingen.js';
import { walkStoredTrie } from '../helpers/triewalk.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const MEMPOOL = { size: 10_000, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const PLAN: PrunePlan = { keepRecent: 5, interval: 10, minRetainBlocks: 20 };
const BLOCKS = 120;
const MORE = 30;
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const ADDRS = [
  ...devKeys().slice(0, 5).map((k) => bytes(new Wallet(k).address)),
  ...Array.from({ length: 12 }, (_, i) => bytes((0xa0 + i).toString(16).repeat(20))),
  bytes(STORE_ADDR),
];
const SLOTS = [0, 1, 2, 3, 7].map((n) => bytes(n.toString(16).padStart(64, '0')));

interface Node {
  dir: string;
  store: Store;
  app: EvmApp;
}

async function openNode(dir: string, pruning: PrunePlan | undefined): Promise<Node> {
  const store = new Store(join(dir, 'ferry.db'));
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice: 0n, mempool: MEMPOOL, pruning }, silent, { onPoolChange() {} });
  await app.initChain();
  return { dir, store, app };
}

const trieNodes = (s: Store) => (s.db.prepare('SELECT count(*) AS n FROM trie WHERE length(k) = 32').get() as { n: number }).n;
const fileBytes = (n: Node) => {
  n.store.db.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(join(n.dir, 'ferry.db')).size;
};

/** the nodes the roots of heights floor…head reach */
function reached(s: Store, floor: number, head: number): Set<string> {
  const seen = new Set<string>();
  for (let h = floor; h <= head; h++) walkStoredTrie(s, s.evmBlock(BigInt(h))!.header.stateRoot, seen);
  return seen;
}

async function sameAnswers(a: ChainReader, b: ChainReader, floor: number, head: number): Promise<void> {
  for (let h = BigInt(floor); h <= BigInt(head); h++) {
    for (const addr of ADDRS) {
      assert.equal(await b.balance(addr, h), await a.balance(addr, h), `balance at ${h}`);
      assert.equal(await b.nonce(addr, h), await a.nonce(addr, h), `nonce at ${h}`);
    }
    for (const slot of SLOTS) assert.deepEqual(await b.storageAt(bytes(STORE_ADDR), slot, h), await a.storageAt(bytes(STORE_ADDR), slot, h));
    assert.deepEqual(await b.proof(ADDRS[0]!, [], h), await a.proof(ADDRS[0]!, [], h), `account proof at ${h}`);
    assert.deepEqual(await b.proof(bytes(STORE_ADDR), SLOTS, h), await a.proof(bytes(STORE_ADDR), SLOTS, h), `storage proof at ${h}`);
  }
}

describe('ferry prune: an archive home switched to pruning collects its trie nodes once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-triecollect-'));
  let blocks: Uint8Array[][];
  let archive: Node;
  let fromGenesis: Node;
  let switched: Node;
  let cut: Node;
  let report: PruneReport;
  const archiveBytes: number[] = [];

  before(async () => {
    blocks = await generateBlocks(7, BLOCKS + MORE);
    archive = await openNode(join(dir, 'archive'), undefined);
    fromGenesis = await openNode(join(dir, 'genesis'), PLAN);
    switched = await openNode(join(dir, 'switched'), undefined);
    cut = await openNode(join(dir, 'cut'), undefined);
    for (let h = 1; h <= BLOCKS; h++) for (const n of [archive, fromGenesis, switched, cut]) await commitBlock(n, BigInt(h), blocks[h - 1]!);
    archiveBytes.push(fileBytes(switched));
    report = pruneStore(switched.store, PLAN);
  });
  after(() => {
    for (const n of [archive, fromGenesis, switched, cut]) n.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps exactly the nodes the retained roots reach, as a home pruning from genesis does, on about its disk', () => {
    const floor = BLOCKS - PLAN.keepRecent;
    assert.equal(report.stateFloor, floor);
    assert.ok(report.collected && report.collected.deleted > 0 && !report.collected.resumed);
    const seen = reached(switched.store, floor, BLOCKS);
    assert.equal(trieNodes(switched.store), seen.size, 'only the retained roots\' nodes are left');
    assert.equal(trieNodes(fromGenesis.store), seen.size, 'the pruning-from-genesis home holds the same nodes');
    assert.ok(trieNodes(archive.store) > 3 * seen.size, `archive ${trieNodes(archive.store)} nodes, kept ${seen.size}`);
    assert.equal(collectionNeeded(switched.store.db), false);
    const [before] = archiveBytes;
    const now = fileBytes(switched);
    const genesisBytes = fileBytes(fromGenesis);
    assert.ok(now < before! / 3, `${before} bytes -> ${now}`);
    assert.ok(now <= genesisBytes * 1.25, `switched ${now} bytes, pruning from genesis ${genesisBytes}`);
  });

  it('answers every retained height as the archive does', async () => {
    const a = await openReader(join(archive.dir, 'ferry.db'));
    const s = await openReader(join(switched.dir, 'ferry.db'));
    for (const r of [a, s]) r.onCommitted(BigInt(BLOCKS));
    await sameAnswers(a, s, BLOCKS - PLAN.keepRecent, BLOCKS);
  });

  it('goes on from where a run cut short stopped', () => {
    for (const phase of ['mark', 'sweep']) {
      assert.throws(
        () =>
          pruneStore(cut.store, PLAN, (p) => {
            if (p.phase === phase) throw new Error(`cut at ${phase}`);
          }),
        new RegExp(`cut at ${phase}`),
      );
      const saved = cut.store.db.prepare('SELECT v FROM meta WHERE k = ?').get(TRIE_COLLECT_META_KEY) as { v: Buffer };
      assert.equal(JSON.parse(saved.v.toString()).phase, phase);
      assert.ok(collectionNeeded(cut.store.db));
    }
    const r = pruneStore(cut.store, PLAN);
    assert.equal(r.collected?.resumed, true);
    assert.equal(trieNodes(cut.store), trieNodes(switched.store));
    assert.equal(reached(cut.store, BLOCKS - PLAN.keepRecent, BLOCKS).size, trieNodes(cut.store));
  });

  it('then collects as a pruning home when more blocks come', async () => {
    switched.store.close();
    switched = await openNode(switched.dir, PLAN);
    assert.ok(switched.store.trieRefs, 'the store counts its nodes now');
    for (let h = BLOCKS + 1; h <= BLOCKS + MORE; h++) for (const n of [archive, fromGenesis, switched]) await commitBlock(n, BigInt(h), blocks[h - 1]!);
    const head = BLOCKS + MORE;
    const seen = reached(switched.store, head - PLAN.keepRecent, head);
    assert.equal(trieNodes(switched.store), seen.size);
    assert.equal(trieNodes(fromGenesis.store), seen.size);
    const a = await openReader(join(archive.dir, 'ferry.db'));
    const s = await openReader(join(switched.dir, 'ferry.db'));
    for (const r of [a, s]) r.onCommitted(BigInt(head));
    await sameAnswers(a, s, head - PLAN.keepRecent, head);
  });
});
