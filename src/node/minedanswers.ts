/**
 * Automine answers (docs/dev-mode.md "Automine"): with automine on, eth_sendRawTransaction answers once
 * the block that includes the tx is committed, as Anvil and Hardhat do, so a client that asks for the
 * receipt, the block number or the nonce right after the hash sees the tx mined. (Answering at admission
 * let a block land while viem's waitForTransactionReceipt was still looking at the block before it;
 * viem then waited for a later block that an idle automine node never makes.)
 *
 * A submission is held only while its tx is executable (the sender's next nonces and the base fee); it
 * is answered after the first committed block that no longer has it in the pool (mined, or dropped
 * from it), when the node goes idle with the tx still pooled (a full block left it behind and nothing
 * else is executable), when automine is turned off, when the chain thread stops, or after
 * `AUTOMINE_ANSWER_MAX_BLOCKS` blocks or `AUTOMINE_ANSWER_TIMEOUT_MS` — whichever comes first; the
 * answer is the hash in every case (the tx was admitted).
 */

/** submissions held for their block at once; past it a submission is answered at admission */
export const MAX_AUTOMINE_WAITERS = 4096;
/** blocks a held submission waits through before it is answered anyway (a burst larger than a block) */
export const AUTOMINE_ANSWER_MAX_BLOCKS = 8;
/** how long a held submission waits for its block before it is answered anyway */
export const AUTOMINE_ANSWER_TIMEOUT_MS = 30_000;

interface Waiter {
  hash: Uint8Array;
  blocks: number;
  /** when the hold ends anyway (the clock's ms): AUTOMINE_ANSWER_TIMEOUT_MS after it began */
  deadline: number;
  resolve(): void;
}

/**
 * The held submissions, oldest first (a Set keeps insertion order, and every hold lasts as long, so the
 * oldest's deadline is the nearest). One timer for all of them, armed for the oldest's deadline, instead
 * of a timer set and cleared per held tx (docs/benchmarks.md "Small per-tx items on the chain thread"):
 * when it fires it answers every submission whose deadline has come and is armed again for the next.
 */
export class MinedAnswers {
  private readonly waiters = new Set<Waiter>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `pooled`: whether the pool still holds the tx of `hash`; `now`: a monotonic clock in ms. */
  constructor(
    private readonly pooled: (hash: Uint8Array) => boolean,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.waiters.size;
  }

  /** Resolves once the tx of `hash` is mined or the hold ends (see the file comment); at once when MAX_AUTOMINE_WAITERS are held. */
  hold(hash: Uint8Array): Promise<void> {
    if (this.waiters.size >= MAX_AUTOMINE_WAITERS) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.add({ hash, blocks: 0, deadline: this.now() + AUTOMINE_ANSWER_TIMEOUT_MS, resolve });
      if (this.timer === undefined) this.arm();
    });
  }

  /**
   * After a committed block: answers the submissions whose tx left the pool; all of them when `idle` (no
   * further block is coming). Returns how many it answered.
   */
  afterBlock(idle: boolean): number {
    let answered = 0;
    for (const w of this.waiters) {
      w.blocks++;
      if (idle || !this.pooled(w.hash) || w.blocks >= AUTOMINE_ANSWER_MAX_BLOCKS) {
        this.release(w);
        answered++;
      }
    }
    this.rearm();
    return answered;
  }

  /** After a dev operation: answers the submissions whose tx left the pool without a block (dropped, reset); all when `all` (automine off). */
  afterDevOp(all: boolean): void {
    for (const w of this.waiters) if (all || !this.pooled(w.hash)) this.release(w);
    this.rearm();
  }

  /** Answers every held submission (the chain thread stopping). */
  releaseAll(): void {
    for (const w of this.waiters) this.release(w);
    this.rearm();
  }

  /** (deleting the current entry while iterating a Set is safe: the iteration goes on with the next) */
  private release(w: Waiter): void {
    this.waiters.delete(w);
    w.resolve();
  }

  /** the timer for the oldest held submission's deadline (none while nothing is held) */
  private arm(): void {
    const oldest = this.waiters.values().next().value;
    if (oldest === undefined) return;
    this.timer = setTimeout(() => this.expire(), Math.max(0, oldest.deadline - this.now()));
  }

  /**
   * after releases: the timer stops when nothing is held; else it stays armed for a deadline no later than
   * the new oldest's (it fires, answers none whose deadline has not come, and is armed for the next)
   */
  private rearm(): void {
    if (this.waiters.size > 0 || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private expire(): void {
    this.timer = undefined;
    const now = this.now();
    for (const w of this.waiters) {
      if (w.deadline > now) break;
      this.release(w);
    }
    this.arm();
  }
}
