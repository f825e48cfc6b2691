/**
 * The address index's build for a home written before the index existed (store/addrindex.ts,
 * docs/architecture.md "The address index"): each block not yet indexed is executed again on its
 * parent's state (the flat layer answers any kept height) with the touched-address collector on, and
 * its rows are written in batches of ADDRESS_INDEX_BUILD_BATCH blocks, each with the build marker
 * moved up in the same transaction, so a build cut short resumes where it stopped. A block whose
 * parent state was pruned gets its txs' own ends only (sender, recipient or created contract).
 */
import { decodeTx } from '../evm/tx.js';
import { ADDRESS_INDEX_BUILD_KEY, txEnds, type IndexBuild } from '../store/addrindex.js';
import { appliedCheats, CheatOverlay } from './cheats.js';
import type { MigrationDeps } from './migration.js';

/** Blocks the build writes per store transaction (the marker moves with them). */
export const ADDRESS_INDEX_BUILD_BATCH = 64;
/** The build logs its progress every this many blocks. */
const PROGRESS_EVERY = 1_000;

/** what the build reads and writes: the flat-state migration's parts without the genesis (chain/migration.ts) */
export type AddressBuildDeps = Pick<MigrationDeps, 'store' | 'flat' | 'trieDb' | 'runner' | 'log'>;

/** The touched sets of block `h`'s txs: replayed when its parent state is kept, else the txs' own ends. */
async function touchedOf(d: AddressBuildDeps, h: bigint): Promise<Uint8Array[][]> {
  const { store, runner, flat } = d;
  const block = store.evmBlock(h);
  if (block === undefined || block.transactions.length === 0) return [];
  const ends = () => block.transactions.map((t) => txEnds(t, store.txLocation(t.hash)?.receipt.contractAddress));
  const low = flat.low();
  const parent = store.evmBlock(h - 1n)?.header;
  if (parent === undefined || low === undefined || BigInt(low) > h - 1n) return ends();
  const hd = block.header;
  const txs = block.transactions.map((t) => decodeTx(t.raw, runner.forks.commonAt(hd.timestamp), t.from, t.hash));
  const ctx = { number: h, timestamp: hd.timestamp, coinbase: hd.miner, gasLimit: hd.gasLimit, baseFee: hd.baseFeePerGas, mixHash: hd.mixHash };
  const prelude = CheatOverlay.prelude(appliedCheats(store, Number(h)));
  const exec = await runner.executeBlock({ height: parent.number, root: parent.stateRoot }, ctx, txs, prelude);
  d.trieDb.discard();
  const same = exec.txs.length === txs.length && exec.txs.every((t, i) => Buffer.compare(t.tx.hash, block.transactions[i]!.hash) === 0);
  if (!same || Buffer.compare(exec.stateRoot, hd.stateRoot) !== 0) {
    d.log.warn({ height: Number(h) }, 'address index: the block replays differently; indexing its txs by sender and recipient only');
    return ends();
  }
  return exec.txs.map((t) => t.touched ?? txEnds(t.tx, t.createdAddress));
}

/** Indexes blocks build.done+1…build.top; the runner is left at the head's state. */
export async function buildAddressIndex(d: AddressBuildDeps, build: IndexBuild): Promise<void> {
  const { store, runner } = d;
  const started = Date.now();
  d.log.info({ from: build.done + 1, to: build.top }, 'building the address index from the stored blocks (one-time migration)');
  for (let h = build.done + 1; h <= build.top; ) {
    const end = Math.min(build.top, h + ADDRESS_INDEX_BUILD_BATCH - 1);
    const batch: [number, Uint8Array[][]][] = [];
    for (let k = h; k <= end; k++) batch.push([k, await touchedOf(d, BigInt(k))]);
    store.transaction(() => {
      for (const [k, touched] of batch) store.addrs.indexBlock(k, touched);
      store.putMeta(ADDRESS_INDEX_BUILD_KEY, Buffer.from(`${end}:${build.top}`));
    });
    if (Math.floor(end / PROGRESS_EVERY) > Math.floor((h - 1) / PROGRESS_EVERY)) d.log.info({ height: end, of: build.top }, 'building the address index');
    h = end + 1;
  }
  const head = store.evmBlock(BigInt(build.top))?.header;
  if (head !== undefined) await runner.reset({ height: head.number, root: head.stateRoot });
  d.log.info({ blocks: build.top - build.done, ms: Date.now() - started }, 'address index built');
}
