/**
 * A bounded least-recently-used map (Map keeps insertion order: a hit re-inserts the key at the end,
 * and the first key is the oldest). Every cache in ferry is one of these: each has a bound. The bound
 * counts entries, or, given a `weigh` function, whatever it measures (e.g. bytes).
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  private used = 0;

  constructor(
    readonly capacity: number,
    private readonly weigh: (key: K, value: V) => number = () => 1,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`Lru: bad capacity ${capacity}`);
  }

  get size(): number {
    return this.map.size;
  }

  /** the sum of the entries' weights (their number when there is no `weigh`) */
  get weight(): number {
    return this.used;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  delete(key: K): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.used -= this.weigh(key, old);
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.used -= this.weigh(key, old);
      this.map.delete(key);
    }
    this.map.set(key, value);
    this.used += this.weigh(key, value);
    // the newest entry stays even when it alone is over the bound
    while (this.used > this.capacity && this.map.size > 1) {
      const [oldestKey, oldestValue] = this.map.entries().next().value as [K, V];
      this.map.delete(oldestKey);
      this.used -= this.weigh(oldestKey, oldestValue);
    }
  }
}
