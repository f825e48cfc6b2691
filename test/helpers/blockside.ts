/**
 * One side of a test that runs the same blocks on two runners (test/unit/fast-transfer.test.ts,
 * test/unit/revm-block.test.ts): a runner over a fresh store, what it committed, how many txs it ran
 * through ethereumjs' runTx, and the commit of a block as Commit does it (chain/app.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Common, StateManagerInterface } from '@ethereumjs/common';
import type { ExecutedBlock } from '../../src/evm/blockexec.js';
import type { GenesisAccount } from '../../src/evm/flatstate.js';
import { EvmRunner, type At } from '../../src/evm/runner.js';
import { FlatState, type FlatChange } from '../../src/store/flatstate.js';
import { Store } from '../../src/store/store.js';
import { TrieDB } from '../../src/store/triedb.js';
import { createMerkleRunner } from './merklerunner.js';

export interface BlockSide {
  r: EvmRunner<StateManagerInterface>;
  parent: At;
  /** the txs run through runTx so far (a CALL inside runs through runCall with its message, not counted) */
  runCalls: () => number;
  /** writes what a flat runner's block changed, as Commit does (chain/app.ts) */
  commit: (height: bigint, b: ExecutedBlock) => void;
}

/** A runner over the flat layer (what the node runs) or over the Merkle trie, set up by `setup`, then given `alloc`. */
export async function blockSide(kind: 'flat' | 'merkle', common: Common, alloc: Map<string, GenesisAccount>, setup: (r: EvmRunner<StateManagerInterface>) => void): Promise<BlockSide> {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-blockside-')), 'db'));
  const trieDb = new TrieDB(store);
  const hashOf = (n: bigint) => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
  const flat = new FlatState(store);
  const r: EvmRunner<StateManagerInterface> = kind === 'flat' ? await EvmRunner.createFlat(common, flat, trieDb, hashOf) : await createMerkleRunner(common, trieDb, hashOf);
  const commit = (height: bigint, change: FlatChange | undefined, root: Uint8Array): At => {
    if (change === undefined) return root;
    store.transaction(() => {
      trieDb.flushInto(store);
      flat.write(Number(height), change);
    });
    trieDb.afterCommit();
    flat.applied(Number(height), change);
    return { height, root };
  };
  setup(r);
  let calls = 0;
  const evm = r.vm.evm as unknown as { runCall: (o: unknown) => Promise<unknown> };
  const inner = evm.runCall.bind(evm);
  evm.runCall = (o) => {
    if ((o as { message?: unknown }).message === undefined) calls++;
    return inner(o);
  };
  const genesis = await r.state.applyGenesis(alloc);
  const side: BlockSide = {
    r,
    parent: commit(0n, genesis.change, genesis.root),
    runCalls: () => calls,
    commit: (height, b) => {
      side.parent = commit(height, b.flatChange, b.stateRoot);
    },
  };
  return side;
}
