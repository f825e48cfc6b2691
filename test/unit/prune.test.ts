/**
 * Pruning (store/prune.ts, docs/abci.md "Pruning"): two EvmApps over their own stores are fed the same
 * blocks, one an archive and one with pruning = "custom" and min-retain-blocks. The pruned store keeps
 * a bounded number of state versions and blocks, answers every retained height exactly as the archive
 * does, and refuses pruned heights with geth's errors (state: "historical state <root> is not
 * available", history: "pruned history unavailable", 4444); Commit's retain_height follows
 * min-retain-blocks. Also the app.toml keys and Cosmos SDK's checks of a custom strategy.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, keccak256 } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import type { ChainReader } from '../../src/chain/reader.js';
import { loadOptions } from '../../src/config/load.js';
import { pruningPlan } from '../../src/config/options.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { mapDomainError } from '../../src/lib/errors.js';
import type { Logger } from '../../src/lib/log.js';
import { MAX_PRUNE_EVENT_ROWS_PER_STEP, Pruner, type PrunePlan } from '../../src/store/prune.js';
import { EventIndex } from '../../src/store/eventindex.js';
import { FlatState } from '../../src/store/flatstate.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';
import { commitBlock, openReader, thrown } from '../helpers/appblocks.js';
import { chainGenesis } from '../helpers/chaingen.js';
import { walkStoredTrie } from '../helpers/triewalk.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const MEMPOOL = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const BLOCKS = 150;
const KEEP_RECENT = 5;
const INTERVAL = 10;
const MIN_RETAIN = 30;
/** recipients the transfers rotate over, so some accounts change every block and some rarely */
const RECIPIENTS = Array.from({ length: 7 }, (_, i) => bytes('0x' + (0x30 + i).toString(16).repeat(20)));

interface Node {
  store: Store;
  app: EvmApp;
  reader: ChainReader;
}

async function openNode(dir: string, pruning: PrunePlan | undefined): Promise<Node> {
  const store = new Store(join(dir, 'ferry.db'));
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice: 0n, mempool: MEMPOOL, pruning }, silent, { onPoolChange() {} });
  await app.initChain();
  return { store, app, reader: await openReader(join(dir, 'ferry.db')) };
}

const count = (s: Store, sql: string) => (s.db.prepare(sql).get() as { n: number }).n;

describe('pruning: a custom-pruned node next to an archive node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-prune-'));
  let archive: Node;
  let pruned: Node;
  const wallet = new Wallet(devKeys()[0]!);
  const sender = bytes(wallet.address);
  const txHashes: string[] = [];

  before(async () => {
    archive = await openNode(join(dir, 'archive'), undefined);
    pruned = await openNode(join(dir, 'pruned'), { keepRecent: KEEP_RECENT, interval: INTERVAL, minRetainBlocks: MIN_RETAIN });
    for (let h = 1; h <= BLOCKS; h++) {
      const to = RECIPIENTS[h % RECIPIENTS.length]!;
      const fee = 100n * GWEI;
      const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: h - 1, to: '0x' + Buffer.from(to).toString('hex'), value: BigInt(h), gasLimit: 21_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI });
      txHashes.push(keccak256(raw));
      const native = wrapEthereumTx(bytes(raw), sender, 21_000n, fee);
      await commitBlock(archive, BigInt(h), [native]);
      await commitBlock(pruned, BigInt(h), [native]);
    }
    for (const n of [archive, pruned]) n.reader.onCommitted(BigInt(BLOCKS));
  });
  after(() => {
    for (const n of [archive, pruned]) {
      n.store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a bounded number of state versions and blocks', () => {
    // state: the flat layer answers from the last interval's floor on (Cosmos SDK GetPruningHeight)
    const stateLow = pruned.store.db.prepare('SELECT min(height) AS n FROM state_changes').get() as { n: number };
    assert.equal(stateLow.n, BLOCKS - KEEP_RECENT);
    assert.ok(count(pruned.store, 'SELECT count(*) AS n FROM state_changes') <= KEEP_RECENT + INTERVAL + 1);
    // the sender changes every block: the archive has a row per block, the pruned store only the kept ones
    const senderRows = (s: Store) => (s.db.prepare('SELECT count(*) AS n FROM state_accounts WHERE addr = ?').get(Buffer.from(sender)) as { n: number }).n;
    assert.ok(senderRows(archive.store) > BLOCKS);
    assert.ok(senderRows(pruned.store) <= KEEP_RECENT + INTERVAL + 1, `sender rows ${senderRows(pruned.store)}`);
    // history: blocks, txs and logs below retain_height are gone
    assert.equal(pruned.store.lowestBlockHeight(), BigInt(BLOCKS - MIN_RETAIN));
    // the genesis block stays (InitChain at the next start finds it)
    assert.equal(count(pruned.store, 'SELECT count(*) AS n FROM blocks'), MIN_RETAIN + 2);
    assert.ok(pruned.reader.blockByNumber(0n));
    assert.equal(count(pruned.store, 'SELECT count(*) AS n FROM txs'), MIN_RETAIN + 1);
    assert.equal(count(archive.store, 'SELECT count(*) AS n FROM txs'), BLOCKS);
  });

  it('collects the trie nodes only pruned heights reached, and every retained root stays whole', () => {
    const seen = new Set<string>();
    for (let n = BigInt(BLOCKS - KEEP_RECENT); n <= BigInt(BLOCKS); n++) {
      const root = pruned.store.evmBlock(n)!.header.stateRoot;
      assert.deepEqual(root, archive.store.evmBlock(n)!.header.stateRoot, `state root at ${n}`);
      walkStoredTrie(pruned.store, root, seen);
    }
    const nodes = (s: Store) => count(s, 'SELECT count(*) AS n FROM trie WHERE length(k) = 32');
    assert.equal(nodes(pruned.store), seen.size, 'the pruned store keeps exactly the nodes its retained roots reach');
    assert.ok(nodes(archive.store) > 4 * seen.size, `archive ${nodes(archive.store)} nodes, pruned ${seen.size}`);
    assert.equal(count(archive.store, "SELECT count(*) AS n FROM sqlite_master WHERE name = 'trie_refs'"), 0, 'an archive counts nothing');
  });

  it("returns min-retain-blocks as Commit's retain_height (0 below it and for an archive)", () => {
    assert.equal(pruned.app.retainHeight(BigInt(BLOCKS)), BigInt(BLOCKS - MIN_RETAIN));
    assert.equal(pruned.app.retainHeight(BigInt(MIN_RETAIN)), 0n);
    assert.equal(archive.app.retainHeight(BigInt(BLOCKS)), 0n);
  });

  it('answers every retained height exactly as the archive does', async () => {
    const p = pruned.reader;
    const a = archive.reader;
    for (let n = BigInt(BLOCKS - KEEP_RECENT); n <= BigInt(BLOCKS); n++) {
      assert.equal(thrown(() => p.checkState(n)), undefined);
      for (const addr of [sender, ...RECIPIENTS]) {
        assert.equal(await p.balance(addr, n), await a.balance(addr, n), `balance at ${n}`);
        assert.equal(await p.nonce(addr, n), await a.nonce(addr, n), `nonce at ${n}`);
      }
    }
    for (let n = BigInt(BLOCKS - MIN_RETAIN); n <= BigInt(BLOCKS); n++) {
      assert.deepEqual(p.blockByNumber(n), a.blockByNumber(n), `block ${n}`);
      assert.equal(p.resolveBlock({ kind: 'number', number: n }), n);
    }
    const kept = txHashes[BLOCKS - 1]!;
    assert.deepEqual(p.receipt(bytes(kept)), a.receipt(bytes(kept)));
  });

  it("refuses pruned state with geth's historical-state error and pruned blocks with 4444", () => {
    const p = pruned.reader;
    const n = BigInt(BLOCKS - KEEP_RECENT - 1);
    const stateErr = thrown(() => p.checkState(n));
    const root = Buffer.from(p.blockByNumber(n)!.header.stateRoot).toString('hex');
    assert.deepEqual(stateErr && mapDomainError(evmErrors, stateErr), { code: -32000, message: `historical state ${root} is not available` });
    const old = BigInt(BLOCKS - MIN_RETAIN - 1);
    for (const fn of [() => p.resolveBlock({ kind: 'number', number: old }), () => p.checkState(old)]) {
      const e = thrown(fn);
      assert.deepEqual(e && mapDomainError(evmErrors, e), { code: 4444, message: 'pruned history unavailable' });
    }
    assert.equal(p.receipt(bytes(txHashes[0]!)), undefined);
    // the archive answers the same heights
    assert.equal(thrown(() => archive.reader.checkState(0n)), undefined);
  });
});

describe('pruning the tx_search/block_search event index', () => {
  it('removes the rows below retain_height, in bounded steps, and keeps the rest', () => {
    const store = new Store(':memory:');
    const index = new EventIndex(store.db, { writer: true });
    new FlatState(store); // the state tables the pruner reads
    const pruner = new Pruner(store, { keepRecent: 0, interval: 0, minRetainBlocks: MIN_RETAIN });
    // enough rows that one step cannot remove them all (MAX_PRUNE_EVENT_ROWS_PER_STEP)
    const attrs = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: 'v', index: true }));
    const event = { type: 'transfer', attributes: attrs };
    store.transaction(() => {
      for (let h = 1; h <= BLOCKS; h++) {
        const txs = [Uint8Array.of(h & 0xff, h >> 8), Uint8Array.of(h & 0xff, h >> 8, 1)];
        index.indexBlock(BigInt(h), txs.map((t) => bytes(keccak256(t))), txs, txs.map(() => ({ code: 0, events: [event] })), [event]);
      }
      // the rows still waiting in recent_events (eventindex.ts MAX_RECENT_EVENT_BLOCKS) enter the indexes
      index.flushRecent();
    });
    const rows = (table: string, where: string) => count(store, `SELECT count(*) AS n FROM ${table} WHERE ${where}`);
    const keptTx = rows('tx_events', `height >= ${BLOCKS - MIN_RETAIN}`);
    const keptBlock = rows('block_events', `height >= ${BLOCKS - MIN_RETAIN}`);
    assert.ok(rows('tx_events', 'height > 0') > 2 * MAX_PRUNE_EVENT_ROWS_PER_STEP);
    const first = pruner.afterCommit(BLOCKS);
    assert.equal(first.eventRows, 2 * MAX_PRUNE_EVENT_ROWS_PER_STEP, 'one step removes at most its bound per table');
    for (let i = 0; i < 20 && pruner.afterCommit(BLOCKS).eventRows > 0; i++);
    for (const table of ['tx_events', 'block_events']) assert.equal(rows(table, `height < ${BLOCKS - MIN_RETAIN}`), 0, table);
    assert.equal(rows('tx_events', 'height > 0'), keptTx);
    assert.equal(rows('block_events', 'height > 0'), keptBlock);
    assert.ok(keptTx > 0 && keptBlock > 0);
    store.close();
  });
});

describe("pruning keys in app.toml (Cosmos SDK's names and checks)", () => {
  const home = mkdtempSync(join(tmpdir(), 'ferry-prune-cfg-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const withAppToml = (text: string) => {
    mkdirSync(join(home, 'config'), { recursive: true });
    writeFileSync(join(home, 'config', 'app.toml'), text);
  };

  it('reads the strategy, keep-recent, interval (strings as Cosmos SDK writes them) and min-retain-blocks', () => {
    withAppToml('pruning = "custom"\npruning-keep-recent = "100"\npruning-interval = "10"\nmin-retain-blocks = 50\n');
    const o = loadOptions(home, {});
    assert.deepEqual(o.pruning, { strategy: 'custom', keepRecent: 100, interval: 10, minRetainBlocks: 50 });
    assert.deepEqual(pruningPlan(o.pruning), { keepRecent: 100, interval: 10 });
    assert.deepEqual(pruningPlan({ ...o.pruning, strategy: 'everything' }), { keepRecent: 2, interval: 10 });
    assert.deepEqual(pruningPlan({ ...o.pruning, strategy: 'default' }), { keepRecent: 362880, interval: 10 });
    assert.deepEqual(pruningPlan({ ...o.pruning, strategy: 'nothing' }), { keepRecent: 0, interval: 0 });
    // the dev preset is an archive whatever the file says
    assert.equal(loadOptions(home, {}, { dev: true }).pruning.strategy, 'nothing');
  });

  it('refuses an unknown strategy and a custom interval or keep-recent Cosmos SDK refuses', () => {
    withAppToml('pruning = "sometimes"\n');
    assert.throws(() => loadOptions(home, {}), /unknown pruning strategy "sometimes"/);
    withAppToml('pruning = "custom"\npruning-keep-recent = "100"\npruning-interval = "0"\n');
    assert.throws(() => loadOptions(home, {}), /'pruning-interval' must not be 0/);
    withAppToml('pruning = "custom"\npruning-keep-recent = "100"\npruning-interval = "5"\n');
    assert.throws(() => loadOptions(home, {}), /'pruning-interval' must not be less than 10/);
    withAppToml('pruning = "custom"\npruning-keep-recent = "1"\npruning-interval = "10"\n');
    assert.throws(() => loadOptions(home, {}), /'pruning-keep-recent' must not be less than 2/);
  });
});
