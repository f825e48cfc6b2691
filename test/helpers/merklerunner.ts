/**
 * A runner that reads and writes state through the Merkle trie at a root (ethereumjs'
 * MerkleStateManager), as ferry executed before the flat layer (docs/architecture.md "The flat state
 * layer"). Only tests use it: to check the flat runner's roots and gas against the trie's.
 */
import type { Common } from '@ethereumjs/common';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, Address, setLengthLeft } from '@ethereumjs/util';
import type { GenesisAccount } from '../../src/evm/flatstate.js';
import { EvmRunner, type At, type BlockHashLookup, type CommittedState, type RunnerState } from '../../src/evm/runner.js';
import { stateTrie } from '../../src/evm/statetrie.js';
import type { TrieDB } from '../../src/store/triedb.js';

class MerkleRunnerState implements RunnerState<MerkleStateManager> {
  readonly sm: MerkleStateManager;
  /** the root the state manager is on (tracked here: asking the state manager flushes its caches) */
  private root: Uint8Array | undefined;

  constructor(common: Common, private readonly db: TrieDB, root?: Uint8Array) {
    this.sm = new MerkleStateManager({ trie: stateTrie(db, common, root), common, caches: new Caches() });
  }

  async moveTo(at: At): Promise<void> {
    const root = at instanceof Uint8Array ? at : at.root;
    if (this.root !== undefined && Buffer.compare(this.root, root) === 0) return;
    await this.sm.setStateRoot(root, true);
    this.db.rootMoved();
    this.root = root;
  }

  async reset(at: At): Promise<void> {
    const root = at instanceof Uint8Array ? at : at.root;
    this.sm.clearCaches();
    await this.sm.setStateRoot(root, true);
    this.db.rootMoved();
    this.root = root;
  }

  beginBlock(parent: At): Promise<void> {
    return this.moveTo(parent);
  }

  async endBlock(): Promise<CommittedState> {
    this.root = await this.sm.getStateRoot();
    return { root: this.root, change: undefined };
  }

  async applyGenesis(alloc: Map<string, GenesisAccount>): Promise<CommittedState> {
    for (const [addrHex, acc] of alloc) {
      const addr = new Address(Uint8Array.from(Buffer.from(addrHex.slice(2), 'hex')));
      await this.sm.putAccount(addr, new Account(acc.nonce, acc.balance));
      if (acc.code && acc.code.length > 0) await this.sm.putCode(addr, acc.code);
      if (acc.storage) {
        for (const [slot, value] of acc.storage) {
          await this.sm.putStorage(addr, setLengthLeft(Buffer.from(slot.slice(2), 'hex'), 32), value);
        }
      }
    }
    await this.sm.checkpoint();
    await this.sm.commit();
    this.root = await this.sm.getStateRoot();
    return { root: this.root, change: undefined };
  }
}

/** A runner over the Merkle trie in `db`, at `root` (the empty state without one). */
export function createMerkleRunner(common: Common, db: TrieDB, hashOf: BlockHashLookup, root?: Uint8Array): Promise<EvmRunner<MerkleStateManager>> {
  return EvmRunner.over(common, new MerkleRunnerState(common, db, root), hashOf);
}

