/**
 * The engine signs its precommit on libuv's pool while the block executes (consensus/engine.ts produce(),
 * docs/benchmarks.md "newHeads, part 1"): signCommitAsync must
 * give the CommitSig signCommit gives, and a signature that verifies.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ed25519KeyFromSeed,
  signCommit,
  signCommitAsync,
  timestampFromMillis,
  verifyCommitSig,
  type BlockID,
} from '../../src/consensus/cometbft/index.js';

const key = ed25519KeyFromSeed(new Uint8Array(32).fill(7));
const blockId: BlockID = { hash: new Uint8Array(32).fill(0xab), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(0xcd) } };

describe('signCommitAsync', () => {
  it('gives the same CommitSig as signCommit, for several heights, rounds and times', async () => {
    for (const [height, round, ms] of [[1n, 0, 1_700_000_000_001], [2n, 0, 1_700_000_000_002], [41n, 3, 1_800_000_123_456]] as const) {
      const timestamp = timestampFromMillis(ms);
      const sync = signCommit('ferry-test', height, round, blockId, timestamp, key.privKey);
      const async = await signCommitAsync('ferry-test', height, round, blockId, timestamp, key.privKey);
      assert.deepEqual(async, sync);
      assert.ok(verifyCommitSig('ferry-test', height, round, blockId, async, key.pubKey));
    }
  });

  it('signs many at once, each for its own vote', async () => {
    const heights = Array.from({ length: 16 }, (_, i) => BigInt(i + 1));
    const sigs = await Promise.all(heights.map((h) => signCommitAsync('ferry-test', h, 0, blockId, timestampFromMillis(1_700_000_000_000 + Number(h)), key.privKey)));
    sigs.forEach((sig, i) => assert.ok(verifyCommitSig('ferry-test', heights[i]!, 0, blockId, sig, key.pubKey)));
  });
});
