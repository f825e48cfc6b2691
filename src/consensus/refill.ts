/**
 * Automine refill (docs/dev-mode.md "Automine"): after an automine block answered several held sends at
 * once, their senders send their next txs as soon as they have their answers. Started with the first of
 * those to arrive, the next block held one tx and the others took a block of their own (a block's fixed
 * cost paid per one or two txs: docs/benchmarks.md "Automine blocks refilled"). So the next block waits
 * for as many txs as the last one answered, at most AUTOMINE_REFILL_WAIT_MS. A lone sender (one answer)
 * never waits.
 */

/** how long, at most, the next automine block waits for its refill before it starts with what it has */
export const AUTOMINE_REFILL_WAIT_MS = 5;

export class AutomineRefill {
  /** the txs the next block waits for, and until when (performance.now()) */
  private want: { txs: number; until: number } | undefined;

  /** A committed block answered `txs` held sends: the next block waits up to `withinMs` for that many txs. */
  expect(txs: number, withinMs = AUTOMINE_REFILL_WAIT_MS): void {
    this.want = txs > 1 ? { txs, until: performance.now() + withinMs } : undefined;
  }

  /** Milliseconds the next block still waits with `pending` txs in the mempool; 0: start it now (the wait is over). */
  wait(pending: number): number {
    if (this.want === undefined) return 0;
    const left = this.want.until - performance.now();
    if (left <= 0 || pending >= this.want.txs) {
      this.want = undefined;
      return 0;
    }
    return left;
  }

  /** A block started: whatever it waited for is over. */
  clear(): void {
    this.want = undefined;
  }
}
