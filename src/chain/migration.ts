/**
 * The flat-state migration (docs/architecture.md, the flat state layer): a home written before the
 * flat layer existed, or whose migration was cut short, gets every height's flat rows by replaying
 * the stored blocks from genesis on the flat runner, each block's state root checked against its
 * stored header. The home is left unchanged when a block replays differently.
 */
import { decodeTx } from '../evm/tx.js';
import type { Logger } from '../lib/log.js';
import { appliedCheats, CheatOverlay } from './cheats.js';
import type { GenesisDeps } from './genesisblock.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** What the migration reads and writes: what writing block 0 touches, and a log for its progress. */
export interface MigrationDeps extends GenesisDeps {
  log: Logger;
}

/** Rebuilds the flat rows of heights 0…`top`; the runner is left at `top`'s state. */
export async function rebuildFlatState(d: MigrationDeps, top: bigint): Promise<void> {
  const { store, flat, trieDb, runner } = d;
  const started = Date.now();
  d.log.info({ blocks: Number(top) + 1 }, 'building the flat state layer from the stored blocks (one-time migration)');
  const fail = (h: bigint, why: string): never => {
    throw new Error(`cannot build the flat state layer: block ${h} ${why}; the home was not changed`);
  };
  flat.clearAll();
  const root0 = await runner.applyGenesis(d.genesis.evm.alloc);
  const g = store.evmBlock(0n)!.header;
  if (Buffer.compare(root0, g.stateRoot) !== 0) fail(0n, 'gives another state root from config/genesis.json');
  let change = runner.genesisChange!;
  store.transaction(() => flat.write(0, change));
  trieDb.discard();
  flat.applied(0, change);
  runner.genesisChange = undefined; // a large genesis's change set is not kept alive
  let parent = g;
  for (let h = 1n; h <= top; h++) {
    const block = store.evmBlock(h)!;
    const hd = block.header;
    // the senders stored with the block were recovered when it was made
    const txs = block.transactions.map((t) => decodeTx(t.raw, runner.forks.commonAt(hd.timestamp), t.from, t.hash));
    const ctx = { number: h, timestamp: hd.timestamp, coinbase: hd.miner, gasLimit: hd.gasLimit, baseFee: hd.baseFeePerGas, mixHash: hd.mixHash };
    const prelude = CheatOverlay.prelude(appliedCheats(store, Number(h)));
    const exec = await runner.executeBlock({ height: parent.number, root: parent.stateRoot }, ctx, txs, prelude);
    if (exec.excluded.length > 0) fail(h, `no longer executes tx ${hex(exec.excluded[0]!.tx.hash)} (${exec.excluded[0]!.reason})`);
    if (Buffer.compare(exec.stateRoot, hd.stateRoot) !== 0) fail(h, `replays to state root 0x${hex(exec.stateRoot)}, stored 0x${hex(hd.stateRoot)}`);
    change = exec.flatChange!;
    store.transaction(() => flat.write(Number(h), change));
    trieDb.discard();
    flat.applied(Number(h), change);
    if (h % 1000n === 0n) d.log.info({ height: Number(h), of: Number(top) }, 'building the flat state layer');
    parent = hd;
  }
  await runner.reset({ height: parent.number, root: parent.stateRoot });
  d.log.info({ blocks: Number(top) + 1, ms: Date.now() - started }, 'flat state layer built');
}
