/**
 * BLOCKHASH of blocks a node does not hold (store/hashwindow.ts, docs/abci.md "State sync" and
 * "Pruning"): an archive, a node pruning history with min-retain-blocks below 256, and a node
 * state-synced from a snapshot are fed the same blocks. A contract returns and stores
 * BLOCKHASH(NUMBER - k); in block execution every node stores the archive's hash (else the state roots
 * differ: a chain split), and in eth_call (ethereumjs and revm) every node answers it. The pruned node's
 * snapshot is the archive's, byte for byte (it carries the 256 hashes whatever the node keeps).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, getCreateAddress } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { Simulator } from '../../src/chain/simulator.js';
import { StateSync } from '../../src/chain/statesync.js';
import type { Logger } from '../../src/lib/log.js';
import type { PrunePlan } from '../../src/store/prune.js';
import { SnapshotDir } from '../../src/store/snapshot.js';
import { writeSnapshot } from '../../src/store/snapshotwrite.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';
import { commitBlock } from '../helpers/appblocks.js';
import { chainGenesis } from '../helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const MEMPOOL = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
/** runtime: h = BLOCKHASH(NUMBER - CALLDATALOAD(0)); SSTORE(NUMBER, h); RETURN h */
const RUNTIME = '6000354303' + '40' + '80435' + '5' + '600052' + '60206000f3';
/** init code: returns RUNTIME (17 bytes, PUSH17) as the contract's code */
const INIT = '0x70' + RUNTIME + '600052' + '6011600ff3';
const SNAP = 40n;
const MIN_RETAIN = 5;

interface Node {
  dir: string;
  store: Store;
  app: EvmApp;
}

async function openNode(dir: string, pruning?: PrunePlan): Promise<Node> {
  const store = new Store(join(dir, 'ferry.db'));
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice: 0n, mempool: MEMPOOL, pruning }, silent, { onPoolChange() {} });
  await app.initChain();
  return { dir, store, app };
}

/** the hash commitBlock gives block h (appblocks.ts) */
const hashOf = (h: number) => Buffer.alloc(32, h & 0xff).toString('hex');
const word = (k: number) => Uint8Array.from(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'));

describe('BLOCKHASH of blocks a pruned or state-synced node does not hold', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-blockhash-'));
  const wallet = new Wallet(devKeys()[0]!);
  const sender = bytes(wallet.address);
  const contract = bytes(getCreateAddress({ from: wallet.address, nonce: 0 }));
  let archive: Node;
  let pruned: Node;
  let nonce = 0;

  const tx = async (to: Uint8Array | undefined, data: string): Promise<Uint8Array> => {
    const fee = 100n * GWEI;
    const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: nonce++, to: to && '0x' + Buffer.from(to).toString('hex'), data, gasLimit: 200_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI });
    return wrapEthereumTx(bytes(raw), sender, 200_000n, fee);
  };
  const stored = (n: Node, height: number) => {
    const key = Buffer.concat([Buffer.from(contract), Buffer.from(word(height))]);
    const row = n.store.db.prepare('SELECT v FROM state_slots WHERE k = ? ORDER BY height DESC LIMIT 1').get(key) as { v: Buffer } | undefined;
    return row?.v.toString('hex').padStart(64, '0');
  };

  before(async () => {
    archive = await openNode(join(dir, 'archive'));
    pruned = await openNode(join(dir, 'pruned'), { keepRecent: 2, interval: 10, minRetainBlocks: MIN_RETAIN });
    for (let h = 1; h <= Number(SNAP); h++) {
      // block 1 deploys; block SNAP asks for the hash of block SNAP - 30, long pruned on the pruned node
      const txs = h === 1 ? [await tx(undefined, INIT)] : h === Number(SNAP) ? [await tx(contract, '0x' + Buffer.from(word(30)).toString('hex'))] : [];
      for (const n of [archive, pruned]) await commitBlock(n, BigInt(h), txs);
    }
  });
  after(() => {
    for (const n of [archive, pruned]) n.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('executes BLOCKHASH of a pruned block as the archive does (same state root)', () => {
    assert.equal(pruned.store.lowestBlockHeight(), SNAP - BigInt(MIN_RETAIN), 'block 10 is pruned');
    assert.equal(stored(archive, Number(SNAP)), hashOf(Number(SNAP) - 30));
    assert.equal(stored(pruned, Number(SNAP)), hashOf(Number(SNAP) - 30));
    assert.deepEqual(pruned.store.evmBlock(SNAP)!.header.stateRoot, archive.store.evmBlock(SNAP)!.header.stateRoot);
  });

  it('makes the same snapshot bytes as the archive (the 256 hashes below it)', () => {
    const snap = (n: Node) => writeSnapshot({ dbPath: join(n.dir, 'ferry.db'), snapshotsDir: join(n.dir, 'snapshots'), height: SNAP, chainId: chainGenesis().chainId });
    assert.equal(Buffer.from(snap(pruned).hash).toString('hex'), Buffer.from(snap(archive).hash).toString('hex'));
  });

  it('answers BLOCKHASH in eth_call (ethereumjs and revm) and in the next block on a state-synced node', async () => {
    const synced = await openNode(join(dir, 'synced'));
    const sync = new StateSync(
      synced.store,
      synced.app,
      { interval: 0, keepRecent: 2, dbPath: join(synced.dir, 'ferry.db'), snapshotsDir: join(synced.dir, 'snapshots'), chainId: chainGenesis().chainId },
      silent,
      () => {},
    );
    const source = new SnapshotDir(join(archive.dir, 'snapshots'));
    const info = source.list().find((s) => s.height === SNAP)!;
    assert.equal(sync.offerSnapshot(info, archive.store.evmBlock(SNAP)!.header.stateRoot), 'accept');
    for (let i = 0; i < info.chunks; i++) assert.deepEqual(await sync.applySnapshotChunk(i, source.chunk(SNAP, info.format, i)!, 'peer'), { result: 'accept' });
    assert.equal(synced.store.latestHeight(), SNAP);
    assert.equal(synced.store.evmBlock(SNAP - 10n), undefined, 'no block below the snapshot');

    // eth_call at SNAP: BLOCKHASH(SNAP - k) for blocks below the snapshot, on every node and engine
    for (const callEngine of ['ethereumjs', 'revm'] as const) {
      for (const n of [archive, pruned, synced]) {
        const sim = await Simulator.create(new Store(join(n.dir, 'ferry.db'), { reader: true }), { chainId: 9000n, hardfork: 'prague', gasCap: 25_000_000n, evmTimeoutMs: 0, callEngine });
        for (const k of [1, 10, 39]) {
          const got = Buffer.from(await sim.call({ to: contract, data: word(k) }, SNAP, undefined)).toString('hex');
          assert.equal(got, hashOf(Number(SNAP) - k), `${callEngine} on ${n.dir}: BLOCKHASH(${SNAP} - ${k})`);
        }
      }
    }

    // block SNAP + 1 on the synced node and the archive: BLOCKHASH of block SNAP - 20
    const next = [await tx(contract, '0x' + Buffer.from(word(21)).toString('hex'))];
    for (const n of [archive, synced]) await commitBlock(n, SNAP + 1n, next);
    assert.equal(stored(synced, Number(SNAP) + 1), hashOf(Number(SNAP) - 20));
    assert.deepEqual(synced.store.evmBlock(SNAP + 1n)!.header.stateRoot, archive.store.evmBlock(SNAP + 1n)!.header.stateRoot);
    synced.store.close();
  });
});
