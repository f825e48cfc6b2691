/**
 * Walks a stored state trie (the `trie` table) from its root through every account's storage trie,
 * failing on a node that is missing or not stored under its hash (tests of store/triegc.ts).
 */
import assert from 'node:assert/strict';
import { RLP } from '@ethereumjs/rlp';
import { keccak256 } from '../../src/evm/common.js';
import { EMPTY_TRIE_ROOT } from '../../src/evm/orderedtrie.js';
import type { Store } from '../../src/store/store.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** every node reachable from `root`, read from the store's trie table; fails on a missing or misfiled node */
export function walkStoredTrie(store: Store, root: Uint8Array, seen: Set<string>): void {
  const visit = (hash: Uint8Array, accountTrie: boolean) => {
    const enc = store.trieGet(Buffer.from(hash));
    assert.ok(enc !== undefined, `node ${hex(hash)} is stored`);
    assert.equal(hex(keccak256(enc)), hex(hash), 'stored under its hash');
    seen.add(hex(hash));
    items(RLP.decode(enc) as unknown[], accountTrie);
  };
  const ref = (r: unknown, accountTrie: boolean) => {
    if (r instanceof Uint8Array && r.length === 32) visit(r, accountTrie);
    else if (Array.isArray(r)) items(r, accountTrie);
  };
  const items = (node: unknown[], accountTrie: boolean) => {
    if (node.length === 17) for (let i = 0; i < 16; i++) ref(node[i], accountTrie);
    else if (((node[0] as Uint8Array)[0]! >> 4) < 2) ref(node[1], accountTrie);
    else if (accountTrie) {
      const storageRoot = (RLP.decode(node[1] as Uint8Array) as Uint8Array[])[2]!;
      if (hex(storageRoot) !== hex(EMPTY_TRIE_ROOT)) visit(storageRoot, false);
    }
  };
  visit(root, true);
}

