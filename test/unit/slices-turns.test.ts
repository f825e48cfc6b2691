/**
 * lib/slices.ts: a task that ends hands the thread straight to the next one while the event loop's
 * turn is shorter than SLICE_MS (so a call worker's short calls finish several to a turn and their
 * answers leave in one message), and no longer than that.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SLICE_MS, SliceScheduler } from '../../src/lib/slices.js';

/** counts turns of the event loop (check phases) while `until` is pending */
function turns(until: Promise<unknown>): { now(): number } {
  let n = 0;
  let done = false;
  void until.finally(() => (done = true));
  const tick = (): void => {
    n++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => n };
}

async function runAll(sched: SliceScheduler, count: number, busyMs: number): Promise<number[]> {
  const ended: number[] = [];
  let all!: Promise<unknown>;
  const started = new Promise<void>((r) => setImmediate(r)).then(() => {
    all = Promise.all(
      Array.from({ length: count }, () =>
        sched.enter(Infinity).then((t) => {
          const t0 = performance.now();
          while (performance.now() - t0 < busyMs) {
            // a short call's work, with no jump that could park it
          }
          ended.push(clock.now());
          t.leave();
        }),
      ),
    );
    return all;
  });
  const clock = turns(started);
  await started;
  return ended;
}

describe('SliceScheduler turns', () => {
  it('short tasks that end hand the thread on within the same turn', async () => {
    const ended = await runAll(new SliceScheduler(), 8, 0);
    assert.equal(new Set(ended).size, 1, `all 8 short tasks end in one turn of the event loop, got turns ${ended}`);
  });

  it('a turn hands the thread on for at most about SLICE_MS', async () => {
    const busy = SLICE_MS / 2 + 1;
    const ended = await runAll(new SliceScheduler(), 6, busy);
    // each task holds the thread for more than half a slice: at most two start in one turn
    const perTurn = new Map<number, number>();
    for (const t of ended) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    assert.ok(Math.max(...perTurn.values()) <= 2, `tasks per turn: ${[...perTurn.values()]}`);
    assert.ok(perTurn.size >= 3, `6 tasks of ${busy} ms each spread over turns: ${[...perTurn.values()]}`);
  });
});
