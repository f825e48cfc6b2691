import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { orderedTrieRoot } from '../../src/evm/orderedtrie.js';
import { EMPTY_TRIE_ROOT } from '../../src/evm/orderedtrie.js';

test('ordered trie root equals ethereumjs MPT for many sizes and value lengths', async () => {
  for (const n of [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 130, 300, 1000]) {
    const values = Array.from({ length: n }, (_, i) => new Uint8Array(Buffer.alloc((i * 7) % 90 + 1, i % 251)));
    const trie = new MerklePatriciaTrie();
    for (let i = 0; i < n; i++) await trie.put(RLP.encode(i), values[i]!);
    assert.deepEqual(Buffer.from(orderedTrieRoot(values)).toString('hex'), Buffer.from(trie.root()).toString('hex'), `n=${n}`);
  }
});

test('empty ordered trie root is the empty trie root', () => {
  assert.deepEqual(orderedTrieRoot([]), EMPTY_TRIE_ROOT);
});
