/**
 * Cooperative time slicing of long computations that share one thread (the EVM runs of a call
 * worker). A task runs only while it holds the thread; it calls `pass()` often (the EVM does at every
 * JUMP/JUMPI, which every loop passes), and once its slice of SLICE_MS is used up, `pass()` returns
 * a promise: the task is parked, the event loop gets a turn (new requests and cancellations are
 * read), and the thread goes to the waiting task that has had the least time so far ("least attained
 * service"). So a short task that arrives while long ones run gets the thread within one slice and
 * finishes first; long tasks share what is left equally. A task that is cancelled or past its
 * deadline is resumed first, so it can stop and free what it holds.
 *
 * A task that ends hands the thread straight to the next one while the current turn of the event
 * loop has lasted less than SLICE_MS (short tasks, e.g. a run of eth_calls, then finish several to a
 * turn and their answers leave together); after that the next task starts on the next turn.
 */

/** how long a task keeps the thread before it gives way, milliseconds */
export const SLICE_MS = 10;

/**
 * One turn of the event loop (setImmediate): the I/O and the messages waiting on the thread's port
 * (a CheckTx sent by the RPC thread) are handled before the caller goes on.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise<void>((r) => setImmediate(r));

/** Thrown out of `pass()` of a cancelled task. */
export class TaskCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

export interface Task {
  /** epoch ms after which the task is doomed (it is resumed first, to stop) */
  readonly deadline: number;
  /** milliseconds the task has held the thread */
  readonly attained: number;
  readonly cancelled: boolean;
  /** undefined while the slice lasts; else a promise settled when the task holds the thread again */
  pass(): Promise<void> | undefined;
  /** the task ends (settled or failed): the thread goes to the next one */
  leave(): void;
  /** the owner gave up on the task: its next `pass()` throws TaskCancelled */
  cancel(): void;
}

class Slot implements Task {
  attained = 0;
  cancelled = false;
  sliceStart = 0;
  resume: (() => void) | undefined;
  done = false;

  constructor(
    private readonly sched: SliceScheduler,
    readonly deadline: number,
    readonly seq: number,
  ) {}

  pass(): Promise<void> | undefined {
    if (this.cancelled) throw new TaskCancelled();
    if (performance.now() - this.sliceStart < SLICE_MS) return undefined;
    return this.sched.park(this);
  }

  leave(): void {
    if (this.done) return;
    this.done = true;
    this.sched.release(this);
  }

  cancel(): void {
    this.cancelled = true;
  }

  get doomed(): boolean {
    return this.doomedAt(Date.now());
  }

  /** @internal doomed at `now` (epoch ms): the scheduler reads the clock once per choice */
  doomedAt(now: number): boolean {
    return this.cancelled || now > this.deadline;
  }
}

export class SliceScheduler {
  private running: Slot | undefined;
  private readonly ready: Slot[] = [];
  private seq = 0;
  private dispatchQueued = false;
  /** when the thread was last handed out from the event loop (the start of the current turn) */
  private turnStart = 0;

  /** A new task; resolves when it holds the thread. */
  enter(deadline: number): Promise<Task> {
    const slot = new Slot(this, deadline, this.seq++);
    if (this.running === undefined && this.ready.length === 0) this.turnStart = performance.now();
    return new Promise<Task>((resolve) => {
      slot.resume = () => resolve(slot);
      this.ready.push(slot);
      this.dispatch();
    });
  }

  /** @internal the running task's slice is over: wait for the next turn, after the event loop had one */
  park(slot: Slot): Promise<void> {
    if (this.running === slot) {
      slot.attained += performance.now() - slot.sliceStart;
      this.running = undefined;
    }
    return new Promise<void>((resolve) => {
      slot.resume = resolve;
      this.ready.push(slot);
      this.queueDispatch();
    });
  }

  /** @internal */
  release(slot: Slot): void {
    if (this.running === slot) {
      this.running = undefined;
      if (performance.now() - this.turnStart < SLICE_MS) this.dispatch();
      else this.queueDispatch();
      return;
    }
    const i = this.ready.indexOf(slot);
    if (i >= 0) this.ready.splice(i, 1);
  }

  private queueDispatch(): void {
    if (this.dispatchQueued) return;
    this.dispatchQueued = true;
    setImmediate(() => {
      this.dispatchQueued = false;
      this.turnStart = performance.now();
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.running || this.ready.length === 0) return;
    const now = Date.now();
    let best = 0;
    let bd = this.ready[0]!.doomedAt(now);
    for (let i = 1; i < this.ready.length; i++) {
      const a = this.ready[i]!;
      const b = this.ready[best]!;
      const ad = a.doomedAt(now);
      if (ad !== bd ? ad : a.attained < b.attained || (a.attained === b.attained && a.seq < b.seq)) {
        best = i;
        bd = ad;
      }
    }
    const slot = this.ready.splice(best, 1)[0]!;
    this.running = slot;
    slot.sliceStart = performance.now();
    const resume = slot.resume!;
    slot.resume = undefined;
    resume();
  }
}
