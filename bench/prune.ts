/**
 * `node dist/bench/prune.js [--blocks 10000] [--every 1000]` — disk use of a long run with pruning
 * (docs/abci.md "Pruning"): an archive EvmApp and one with pruning = "everything" and
 * min-retain-blocks 100 are fed the same blocks (one transfer each, to rotating recipients), and the
 * rows and bytes of each store's tables are printed every `--every` blocks. At the end every retained
 * height's balances are compared between the two. Also the time each node spent on its blocks
 * (FinalizeBlock, Commit and the pruning step after it): an archive counts no trie-node references.
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Wallet } from 'ethers';
import { EvmApp } from '../src/chain/app.js';
import { wrapEthereumTx } from '../src/chain/nativetx.js';
import { ChainReader } from '../src/chain/reader.js';
import { EVERYTHING_PRUNING_KEEP_RECENT, DEFAULT_PRUNING_INTERVAL } from '../src/config/options.js';
import type { Logger } from '../src/lib/log.js';
import type { PrunePlan } from '../src/store/prune.js';
import { Store } from '../src/store/store.js';
import { devKeys } from '../test/helpers/accounts.js';
import { chainGenesis } from '../test/helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const MIN_RETAIN = 100;
const RECIPIENTS = 50;
const GWEI = 10n ** 9n;

const { values } = parseArgs({ options: { blocks: { type: 'string', default: '10000' }, every: { type: 'string', default: '1000' } } });
const BLOCKS = Number(values.blocks);
const EVERY = Number(values.every);
/** blocks fed so far (for the per-block time) */
const EVERY_DONE = { blocks: 1 };

interface Node {
  /** ms spent executing, committing and pruning this node's blocks */
  ms: number;
  dir: string;
  store: Store;
  app: EvmApp;
}

async function open(dir: string, pruning: PrunePlan | undefined): Promise<Node> {
  const store = new Store(join(dir, 'ferry.db'));
  const mempool = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice: 0n, mempool, pruning }, silent, { onPoolChange() {} });
  await app.initChain();
  return { ms: 0, dir, store, app };
}

function diskBytes(n: Node): number {
  n.store.db.pragma('wal_checkpoint(TRUNCATE)');
  const file = join(n.dir, 'ferry.db');
  return statSync(file).size + (existsSync(file + '-wal') ? statSync(file + '-wal').size : 0);
}

function rows(n: Node): string {
  const count = (t: string) => (n.store.db.prepare(`SELECT count(*) AS c FROM ${t}`).get() as { c: number }).c;
  const has = (t: string) => n.store.db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(t) !== undefined;
  const tables = ['blocks', 'txs', 'state_accounts', 'state_changes', 'trie', 'trie_refs'].filter(has);
  return tables.map((t) => `${t}=${count(t)}`).join(' ') + ` ${(n.ms / EVERY_DONE.blocks).toFixed(2)} ms/block`;
}

/** a distinct 32-byte block hash per height (the EVM block hash is the consensus header hash) */
function blockHash(h: number): Uint8Array {
  const out = new Uint8Array(32);
  new DataView(out.buffer).setUint32(28, h);
  return out;
}

const root = mkdtempSync(join(tmpdir(), 'ferry-bench-prune-'));
try {
  const archive = await open(join(root, 'archive'), undefined);
  const pruned = await open(join(root, 'pruned'), {
    keepRecent: EVERYTHING_PRUNING_KEEP_RECENT,
    interval: DEFAULT_PRUNING_INTERVAL,
    minRetainBlocks: MIN_RETAIN,
  });
  const wallet = new Wallet(devKeys()[0]!);
  const sender = Uint8Array.from(Buffer.from(wallet.address.slice(2), 'hex'));
  const recipient = (i: number) => '0x' + (i % RECIPIENTS).toString(16).padStart(40, '0').replace(/^0/, 'a');
  const start = performance.now();
  for (let h = 1; h <= BLOCKS; h++) {
    const fee = 100n * GWEI;
    const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: h - 1, to: recipient(h), value: 1n, gasLimit: 21_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI });
    const native = wrapEthereumTx(Uint8Array.from(Buffer.from(raw.slice(2), 'hex')), sender, 21_000n, fee);
    EVERY_DONE.blocks = h;
    for (const n of [archive, pruned]) {
      const t0 = performance.now();
      await n.app.finalizeBlock({ height: BigInt(h), timeMs: Date.parse('2026-01-01T00:00:00Z') + h * 1000, hash: blockHash(h), proposerAddress: new Uint8Array(20), txs: [native] });
      n.store.transaction(() => n.app.commit());
      await n.app.afterCommit();
      n.ms += performance.now() - t0;
    }
    if (h % EVERY === 0 || h === BLOCKS) {
      const s = ((performance.now() - start) / 1000).toFixed(0);
      console.log(`height ${h} (${s}s): archive ${(diskBytes(archive) / 1e6).toFixed(2)} MB [${rows(archive)}]`);
      console.log(`${' '.repeat(String(h).length + 8 + s.length + 4)}  pruned  ${(diskBytes(pruned) / 1e6).toFixed(2)} MB [${rows(pruned)}]`);
    }
  }
  // every retained height answers as the archive does
  const readerOpts = { chainId: 9000n, hardfork: 'prague', gasCap: 0n, logsCap: 0, coinbase: new Uint8Array(20), simulator: undefined as never, submit: () => Promise.reject(new Error('no submissions')) };
  const ra = await ChainReader.create(new Store(join(archive.dir, 'ferry.db'), { reader: true }), readerOpts);
  const rp = await ChainReader.create(new Store(join(pruned.dir, 'ferry.db'), { reader: true }), readerOpts);
  let compared = 0;
  for (let n = BigInt(BLOCKS - EVERYTHING_PRUNING_KEEP_RECENT); n <= BigInt(BLOCKS); n++) {
    rp.checkState(n);
    for (const addr of [sender, ...Array.from({ length: RECIPIENTS }, (_, i) => Uint8Array.from(Buffer.from(recipient(i).slice(2), 'hex')))]) {
      if ((await ra.balance(addr, n)) !== (await rp.balance(addr, n))) throw new Error(`balance differs at ${n}`);
      compared++;
    }
  }
  for (let n = BigInt(BLOCKS - MIN_RETAIN); n <= BigInt(BLOCKS); n++) {
    if (JSON.stringify(ra.blockByNumber(n)?.header.hash) !== JSON.stringify(rp.blockByNumber(n)?.header.hash)) throw new Error(`block ${n} differs`);
  }
  console.log(`retained heights agree with the archive (${compared} balances, ${MIN_RETAIN + 1} blocks)`);
  archive.store.close();
  pruned.store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
