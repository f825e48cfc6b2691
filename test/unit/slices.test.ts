/**
 * lib/slices.ts: tasks that share one thread take turns, the least-served first; a cancelled task
 * stops at its next pass().
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SLICE_MS, SliceScheduler, TaskCancelled, type Task } from '../../src/lib/slices.js';

/** holds the thread for `ms` of CPU, calling pass() as an EVM does at its jumps */
async function work(task: Task, ms: number): Promise<void> {
  let spent = 0;
  while (spent < ms) {
    const t = performance.now();
    while (performance.now() - t < 1) {
      // busy: one "millisecond of opcodes"
    }
    spent += 1;
    const parked = task.pass();
    if (parked) await parked;
  }
}

describe('SliceScheduler', () => {
  it('a short task that arrives while long ones run finishes first', async () => {
    const sched = new SliceScheduler();
    const done: string[] = [];
    const long = (name: string) =>
      sched.enter(Infinity).then(async (t) => {
        await work(t, SLICE_MS * 20);
        done.push(name);
        t.leave();
      });
    const a = long('long-a');
    const b = long('long-b');
    // arrives after both (FIFO would finish it last)
    const short = sched.enter(Infinity).then(async (t) => {
      await work(t, 2);
      done.push('short');
      t.leave();
    });
    await Promise.all([a, b, short]);
    assert.equal(done[0], 'short');
    assert.deepEqual(done.slice(1).sort(), ['long-a', 'long-b']);
  });

  it('a task past its deadline is resumed before the others (to stop), then the oldest of equals', async () => {
    const sched = new SliceScheduler();
    const order: string[] = [];
    const first = await sched.enter(Infinity);
    const wait = (name: string, deadline: number) =>
      sched.enter(deadline).then((t) => {
        order.push(name);
        t.leave();
      });
    // entered while `first` holds the thread: late is third in line, past its deadline
    const all = [wait('a', Infinity), wait('b', Infinity), wait('late', Date.now() - 1), wait('c', Infinity)];
    first.leave();
    await Promise.all(all);
    assert.deepEqual(order, ['late', 'a', 'b', 'c']);
  });

  it('a cancelled task throws TaskCancelled at its next pass and frees the thread', async () => {
    const sched = new SliceScheduler();
    const t1 = await sched.enter(Infinity);
    const running = work(t1, 10_000).finally(() => t1.leave());
    t1.cancel();
    await assert.rejects(running, TaskCancelled);
    const t2 = await sched.enter(Infinity);
    await work(t2, 1);
    t2.leave();
  });
});
