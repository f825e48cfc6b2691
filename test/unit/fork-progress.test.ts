/**
 * The fork's progress line (src/fork/progress.ts, docs/fork-mode.md "Progress"): quiet for a short burst of
 * fetches, then one line per interval at most, counting what the burst fetched; a pause starts a new burst.
 * The clock is the test's own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORK_BURST_GAP_MS, FORK_PROGRESS_INTERVAL_MS, FetchProgress } from '../../src/fork/progress.js';

function setUp() {
  const lines: string[] = [];
  let t = 1_000_000;
  const p = new FetchProgress('http://origin:8545', (l) => lines.push(l), () => t);
  return { lines, p, advance: (ms: number) => (t += ms) };
}

describe('fork progress line', () => {
  it('a short burst prints nothing', () => {
    const { lines, p, advance } = setUp();
    for (let i = 0; i < 50; i++) {
      p.fetched(i % 2 === 0 ? 'account' : 'slot');
      advance(10);
    }
    assert.deepEqual(lines, []);
  });

  it('a long burst prints at most one line per interval, with its counts', () => {
    const { lines, p, advance } = setUp();
    const step = 50;
    const fetches = (4 * FORK_PROGRESS_INTERVAL_MS) / step;
    for (let i = 0; i <= fetches; i++) {
      p.fetched(i % 4 === 0 ? 'account' : 'slot');
      advance(step);
    }
    assert.equal(lines.length, 4);
    assert.equal(lines[0], `fork: fetching state from http://origin:8545: 11 accounts, 30 storage slots in 2.0 s`);
    assert.match(lines[3]!, /: 41 accounts, 120 storage slots in 8\.0 s$/);
  });

  it('a pause ends the burst: the counts start again', () => {
    const { lines, p, advance } = setUp();
    for (let i = 0; i < 30; i++) {
      p.fetched('account');
      advance(100);
    }
    assert.equal(lines.length, 1);
    advance(FORK_BURST_GAP_MS);
    for (let i = 0; i < 20; i++) {
      p.fetched('slot');
      advance(100);
    }
    assert.equal(lines.length, 1, 'the new burst is 1.9 s long');
    p.fetched('slot');
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /: 0 accounts, 21 storage slots in 2\.0 s$/);
  });
});
