/**
 * The console line a fork prints while a large call fetches state from the origin (docs/fork-mode.md
 * "Progress"): once fetching has gone on for FORK_PROGRESS_INTERVAL_MS without a pause, one line per
 * interval at most, with what this thread fetched so far in that burst. A pause of FORK_BURST_GAP_MS
 * ends the burst; a burst that ends sooner prints nothing (a call touching a few accounts stays quiet).
 */

/** Fetching this long prints a progress line; no two lines of one thread come closer together. */
export const FORK_PROGRESS_INTERVAL_MS = 2_000;
/** A pause in fetching this long ends a burst. */
export const FORK_BURST_GAP_MS = 1_000;

export class FetchProgress {
  private start = 0;
  private last = -Infinity;
  private lastLine = -Infinity;
  private accounts = 0;
  private slots = 0;

  constructor(
    private readonly origin: string,
    private readonly sink: (line: string) => void = (line) => void process.stderr.write(line + '\n'),
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Counts one fetch; prints when the burst is long enough and the last line old enough. */
  fetched(kind: 'account' | 'slot'): void {
    const t = this.now();
    if (t - this.last >= FORK_BURST_GAP_MS) {
      this.start = t;
      this.accounts = 0;
      this.slots = 0;
    }
    this.last = t;
    if (kind === 'account') this.accounts++;
    else this.slots++;
    if (t - this.start >= FORK_PROGRESS_INTERVAL_MS && t - this.lastLine >= FORK_PROGRESS_INTERVAL_MS) {
      this.lastLine = t;
      const secs = ((t - this.start) / 1000).toFixed(1);
      this.sink(`fork: fetching state from ${this.origin}: ${this.accounts} accounts, ${this.slots} storage slots in ${secs} s`);
    }
  }
}
