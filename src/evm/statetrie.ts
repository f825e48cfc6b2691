/**
 * The Merkle-Patricia state trie over the store's trie nodes (a secure trie: keys hashed with keccak),
 * read at a root. Block execution never walks it (the flat layer, docs/architecture.md "The flat state
 * layer"); it serves the proofs: eth_getProof and abci_query.
 */
import type { Common } from '@ethereumjs/common';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { ValueEncoding } from '@ethereumjs/util';
import type { TrieDB } from '../store/triedb.js';
import { keccak256 } from './common.js';

/** The state trie at `root` (the empty trie without one). */
export function stateTrie(db: TrieDB, common: Common, root?: Uint8Array): MerklePatriciaTrie {
  return new MerklePatriciaTrie({
    db,
    valueEncoding: ValueEncoding.Bytes,
    useKeyHashing: true,
    useKeyHashingFunction: keccak256,
    common,
    root,
  });
}

/** A state manager over the trie at `root`, for proofs (eth_getProof) and nothing else. */
export function proofStateManager(common: Common, db: TrieDB, root: Uint8Array): MerkleStateManager {
  return new MerkleStateManager({ trie: stateTrie(db, common, root), common });
}
