/**
 * Readiness semantics of GET /health (src/node/observe.ts): ok while the chain thread runs and a block
 * was committed within max(10 s, 10 × timeout_commit); unavailable when the chain stalls or its thread
 * stopped; with create_empty_blocks = false the block age is not judged. (The HTTP route itself is
 * exercised against the real process in test/e2e/page-browser.test.ts.)
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Genesis } from '../../src/config/genesis.js';
import { defaultOptions } from '../../src/config/load.js';
import { HEALTH_MIN_STALL_MS, HEALTH_STALL_BLOCKS, NodeObservability } from '../../src/node/observe.js';
import type { BlockStats } from '../../src/metrics/comet.js';

const genesis = { chainId: 'ferry_9000-1' } as Genesis;
const mempool = { size: 0, totalBytes: 0 };

function node(timeoutCommitMs: number, createEmptyBlocks = true): NodeObservability {
  const opts = defaultOptions('/nowhere');
  opts.consensus.timeoutCommitMs = timeoutCommitMs;
  opts.consensus.createEmptyBlocks = createEmptyBlocks;
  return new NodeObservability(opts, genesis, '/nowhere/ferry.db', mempool);
}

describe('/health readiness', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('ok after start, unavailable once no block came for the stall limit, ok again at the next block', () => {
    const o = node(1_000);
    o.started(5n);
    assert.deepEqual(o.health(), { status: 'ok', height: '5', lastBlockAgeMs: 0, maxBlockAgeMs: HEALTH_STALL_BLOCKS * 1_000, chainThread: true });
    mock.timers.tick(HEALTH_STALL_BLOCKS * 1_000);
    assert.equal(o.health().status, 'ok');
    mock.timers.tick(1);
    assert.equal(o.health().status, 'unavailable');
    o.onChainMessage({ type: 'committed', height: 6n, stats: undefined as unknown as BlockStats });
    assert.equal(o.health().status, 'ok');
    assert.equal(o.health().height, '6');
  });

  it('the stall limit is never below HEALTH_MIN_STALL_MS', () => {
    const o = node(100);
    o.started(1n);
    assert.equal(o.health().maxBlockAgeMs, HEALTH_MIN_STALL_MS);
    mock.timers.tick(HEALTH_MIN_STALL_MS + 1);
    assert.equal(o.health().status, 'unavailable');
  });

  it('without empty blocks the age is not judged; a stopped chain thread is unavailable', () => {
    const o = node(1_000, false);
    o.started(3n);
    mock.timers.tick(3_600_000);
    assert.equal(o.health().status, 'ok');
    assert.equal(o.health().maxBlockAgeMs, null);
    o.onChainMessage({ type: 'stopped' });
    assert.deepEqual({ status: o.health().status, chainThread: o.health().chainThread }, { status: 'unavailable', chainThread: false });
  });
});
