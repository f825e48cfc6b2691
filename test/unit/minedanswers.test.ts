/**
 * Automine answers held until the block (src/node/minedanswers.ts, docs/dev-mode.md "Automine"): the
 * ways a hold ends, and the one timer shared by all held submissions ending each hold
 * AUTOMINE_ANSWER_TIMEOUT_MS after it began, no sooner and no later, whatever was answered in between.
 * Node's mock timers stand in for setTimeout, with a clock the test moves alongside them.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { AUTOMINE_ANSWER_MAX_BLOCKS, AUTOMINE_ANSWER_TIMEOUT_MS, MAX_AUTOMINE_WAITERS, MinedAnswers } from '../../src/node/minedanswers.js';

const h = (n: number) => Uint8Array.of(n);

/** holds the txs `ns` (pooled); `done` collects those answered */
function track(answers: MinedAnswers, pooled: Set<number>, ns: number[], done = new Set<number>()) {
  for (const n of ns) {
    pooled.add(n);
    void answers.hold(h(n)).then(() => done.add(n));
  }
  return done;
}

/** lets the resolved holds' continuations run */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('MinedAnswers', () => {
  let clock = 0;
  const advance = (ms: number) => {
    clock += ms;
    mock.timers.tick(ms);
  };
  beforeEach(() => {
    clock = 1_000;
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => mock.timers.reset());

  it('answers each hold when its timeout comes, the later ones at their own time', async () => {
    const pooled = new Set<number>();
    const answers = new MinedAnswers((hash) => pooled.has(hash[0]!), () => clock);
    const done = track(answers, pooled, [1, 2]);
    advance(10_000);
    const third = track(answers, pooled, [3]);
    advance(AUTOMINE_ANSWER_TIMEOUT_MS - 10_001);
    await settle();
    assert.deepEqual([...done], [], 'no hold ends before its timeout');
    advance(1);
    await settle();
    assert.deepEqual([...done].sort(), [1, 2]);
    assert.equal(answers.size, 1);
    advance(10_000 - 1);
    await settle();
    assert.equal(third.size, 0, 'the later hold runs its own full timeout');
    advance(1);
    await settle();
    assert.deepEqual([...third], [3]);
    assert.equal(answers.size, 0);
  });

  it('answers a hold at its block, and the timer still ends the others on time', async () => {
    const pooled = new Set<number>();
    const answers = new MinedAnswers((hash) => pooled.has(hash[0]!), () => clock);
    const done = track(answers, pooled, [1]);
    advance(5_000);
    const later = track(answers, pooled, [2]);
    pooled.delete(1);
    assert.equal(answers.afterBlock(false), 1);
    await settle();
    assert.deepEqual([...done], [1]);
    // the timer armed for tx 1's deadline passes without answering tx 2
    advance(AUTOMINE_ANSWER_TIMEOUT_MS - 5_000);
    await settle();
    assert.equal(later.size, 0);
    advance(5_000);
    await settle();
    assert.deepEqual([...later], [2]);
  });

  it('answers after AUTOMINE_ANSWER_MAX_BLOCKS blocks, at idle, on a dev op and when stopping', async () => {
    const pooled = new Set<number>();
    const answers = new MinedAnswers((hash) => pooled.has(hash[0]!), () => clock);
    const done = track(answers, pooled, [1]);
    for (let b = 1; b < AUTOMINE_ANSWER_MAX_BLOCKS; b++) assert.equal(answers.afterBlock(false), 0);
    assert.equal(answers.afterBlock(false), 1);
    track(answers, pooled, [2, 3, 4, 5], done);
    assert.equal(answers.afterBlock(true), 4);
    track(answers, pooled, [6, 7, 8], done);
    pooled.delete(6);
    answers.afterDevOp(false);
    assert.equal(answers.size, 2);
    answers.afterDevOp(true);
    track(answers, pooled, [9], done);
    answers.releaseAll();
    await settle();
    assert.deepEqual([...done].sort(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(answers.size, 0);
  });

  it('answers at once past MAX_AUTOMINE_WAITERS held', async () => {
    const pooled = new Set<number>();
    const answers = new MinedAnswers(() => true, () => clock);
    for (let i = 0; i < MAX_AUTOMINE_WAITERS; i++) void answers.hold(h(i & 0xff));
    let extra = false;
    void answers.hold(h(1)).then(() => (extra = true));
    await settle();
    assert.equal(extra, true);
    assert.equal(answers.size, MAX_AUTOMINE_WAITERS);
    answers.releaseAll();
    assert.equal(pooled.size, 0);
  });
});
