/**
 * Each Store keeps decoded blocks up to BLOCK_CACHE_BYTES of their stored bytes, not a number of
 * blocks: a run of large blocks (thousands of txs each) is not all held in memory by every thread.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BLOCK_CACHE_BYTES, Store } from '../../src/store/store.js';

const fill = (n: number, byte: number): Uint8Array => new Uint8Array(n).fill(byte);
/** each block's extra data: big enough that a few blocks pass the cache's bound */
const EXTRA_BYTES = 512 * 1024;
const BLOCKS = 12;

test('the decoded-block cache is bounded by the stored bytes of its blocks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-block-cache-'));
  const store = new Store(join(dir, 'ferry.db'));
  try {
    for (let n = 1; n <= BLOCKS; n++) {
      const header = {
        number: BigInt(n), hash: fill(32, n), parentHash: fill(32, n - 1), stateRoot: fill(32, 0), transactionsRoot: fill(32, 0),
        receiptsRoot: fill(32, 0), logsBloom: new Uint8Array(256), miner: fill(20, 0), gasLimit: 30_000_000n, gasUsed: 0n,
        timestamp: BigInt(n), extraData: fill(EXTRA_BYTES, n), baseFeePerGas: 0n, mixHash: fill(32, 0), size: 0n,
      };
      store.transaction(() => store.putBlock({ height: BigInt(n), hash: header.hash, evm: { header, transactions: [] }, receipts: [], nativeHashes: [] }));
    }
    for (let n = 1; n <= BLOCKS; n++) {
      const b = store.evmBlock(BigInt(n));
      assert.equal(b?.header.number, BigInt(n));
      assert.equal(b?.header.extraData.length, EXTRA_BYTES);
    }
    const { entries, bytes } = store.blockCacheStats();
    assert.ok(bytes <= BLOCK_CACHE_BYTES, `cache weight ${bytes} within ${BLOCK_CACHE_BYTES}`);
    assert.ok(bytes >= EXTRA_BYTES, 'the weight is the blocks\' stored bytes');
    assert.ok(entries >= 1 && entries < BLOCKS, `${entries} of ${BLOCKS} large blocks kept`);
    // an evicted block is read again from the database, the same
    assert.equal(store.evmBlock(1n)?.header.extraData[0], 1);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
