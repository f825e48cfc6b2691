/**
 * History before the fork (docs/fork-mode.md "Numbering and history"): blocks, transactions, receipts,
 * logs and traces at or below the fork block are the origin's, asked of it as the client asked (the same
 * method and params, the answer as the origin gives it: nothing re-hashed) and kept in a bounded cache —
 * at or below the fork block nothing changes any more, so an answer is final once given. Each request is
 * added to the home's origin totals (the fork metrics, fork/lazystate.ts).
 */
import { ORIGIN_BACKOFF_MS, OriginClient, originQuantity, type OriginStats } from './origin.js';
import type { ForkRecord } from './lazystate.js';

/** Origin answers the history cache keeps at most (each at most MAX_FORK_HISTORY_ENTRY_BYTES of JSON). */
export const MAX_FORK_HISTORY_ENTRIES = 1024;
/** A bigger origin answer (a large block's traces) is passed on but not kept. */
export const MAX_FORK_HISTORY_ENTRY_BYTES = 256 * 1024;

type Totals = Pick<OriginStats, 'requests' | 'retries' | 'errors'>;

export class OriginHistory {
  readonly forkBlock: bigint;
  readonly label: string;
  readonly retryBackoffMs = ORIGIN_BACKOFF_MS;
  private readonly client: OriginClient;
  /** key → answer, oldest first (a Map keeps insertion order: a hit moves its entry to the end) */
  private readonly cache = new Map<string, unknown>();
  private reported: Totals = { requests: 0, retries: 0, errors: 0 };

  constructor(
    readonly record: ForkRecord,
    /** adds what a request cost to the home's totals */
    private readonly addTotals: (d: Totals) => void = () => {},
  ) {
    this.forkBlock = record.blockNumber;
    this.client = new OriginClient({
      url: record.url,
      ...(record.retries !== undefined ? { retries: record.retries } : {}),
      ...(record.timeoutMs !== undefined ? { timeoutMs: record.timeoutMs } : {}),
      ...(record.computeUnitsPerSecond !== undefined ? { computeUnitsPerSecond: record.computeUnitsPerSecond } : {}),
    });
    this.label = this.client.label;
  }

  /** entries in the cache (tests) */
  get size(): number {
    return this.cache.size;
  }

  /** The origin's answer to `method(params)`; a null answer is not kept (the origin may not have it yet). */
  async ask(method: string, params: readonly unknown[]): Promise<unknown> {
    const key = `${method} ${JSON.stringify(params)}`;
    if (this.cache.has(key)) {
      const v = this.cache.get(key);
      this.cache.delete(key);
      this.cache.set(key, v);
      return v;
    }
    const answer = await this.counted(() => this.client.call(method, [...params]));
    if (answer !== null && answer !== undefined && JSON.stringify(answer).length <= MAX_FORK_HISTORY_ENTRY_BYTES) {
      this.cache.set(key, answer);
      if (this.cache.size > MAX_FORK_HISTORY_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    }
    return answer;
  }

  /** The origin's latest block number, asked now (anvil_reset with a URL and no block number). */
  async latest(): Promise<bigint> {
    return originQuantity(await this.counted(() => this.client.call('eth_blockNumber', [])), 'eth_blockNumber', this.label);
  }

  /** `ask` counted in the home's origin totals (asks overlap: each request is reported once). */
  private async counted<T>(ask: () => Promise<T>): Promise<T> {
    try {
      return await ask();
    } finally {
      const s = this.client.stats;
      const r = this.reported;
      this.addTotals({ requests: s.requests - r.requests, retries: s.retries - r.retries, errors: s.errors - r.errors });
      this.reported = { requests: s.requests, retries: s.retries, errors: s.errors };
    }
  }
}
