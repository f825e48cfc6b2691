/**
 * A bounded least-recently-used map (Map keeps insertion order: a hit re-inserts the key at the end,
 * and the first key is the oldest). Every cache in ferry is one of these: each has a bound. The bound
 * counts entries, or, given a `weigh` function, whatever it measures (e.g. bytes).
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  private used = 0;
  /**
   * Where eviction goes on in the map's insertion order. A Map keeps a deleted entry's slot until its
   * table is rebuilt, so a fresh `entries()` walks every slot evicted since then before it reaches a
   * live one: with one eviction per set that cost grew with the cache (7 µs a set in a full trie-node
   * cache of ~9,000 entries, docs/benchmarks.md "The fixed cost of a dev block"). Everything before this
   * iterator's position is deleted (keys are only appended, and it only passes the oldest live key).
   * It is dropped after `map.size` other operations without an eviction, so it never holds on to more
   * than a table rebuild or two that it has not walked into yet.
   */
  private oldest: MapIterator<[K, V]> | undefined;
  private sinceEviction = 0;
  /** get() calls that found / did not find their key (for cache metrics) */
  hits = 0;
  misses = 0;
  /** entries dropped to stay within the bound */
  evictions = 0;

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
      this.hits++;
      this.map.delete(key);
      this.map.set(key, v);
      this.sinceEviction++;
    } else {
      this.misses++;
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
    this.oldest = undefined;
  }

  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.used -= this.weigh(key, old);
      this.map.delete(key);
    }
    this.map.set(key, value);
    this.used += this.weigh(key, value);
    if (++this.sinceEviction > this.map.size) this.oldest = undefined;
    // the newest entry stays even when it alone is over the bound
    while (this.used > this.capacity && this.map.size > 1) {
      let next = (this.oldest ??= this.map.entries()).next();
      if (next.done) next = (this.oldest = this.map.entries()).next();
      const [oldestKey, oldestValue] = next.value as [K, V];
      this.map.delete(oldestKey);
      this.used -= this.weigh(oldestKey, oldestValue);
      this.evictions++;
      this.sinceEviction = 0;
    }
  }
}

/**
 * An approximate LRU for hot read paths: two generations of Maps. A hit in the young generation costs
 * one Map lookup (Lru.get re-inserts the key on every hit, several times dearer); a hit in the old one
 * moves the entry to the young one. When the young generation's weight passes half the bound it
 * becomes the old one and the previous old generation is dropped whole. Bounded like Lru: the sum of
 * weights never passes `capacity` (an entry heavier than half of it stays alone in its generation).
 */
export class GenerationalCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngWeight = 0;
  private oldWeight = 0;

  constructor(
    readonly capacity: number,
    private readonly weigh: (key: K, value: V) => number = () => 1,
  ) {
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError(`GenerationalCache: bad capacity ${capacity}`);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  get weight(): number {
    return this.youngWeight + this.oldWeight;
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o === undefined) return undefined;
    this.old.delete(key);
    this.oldWeight -= this.weigh(key, o);
    this.put(key, o);
    return o;
  }

  set(key: K, value: V): void {
    this.delete(key);
    this.put(key, value);
  }

  private put(key: K, value: V): void {
    const w = this.weigh(key, value);
    // each generation holds at most half the bound (a single larger entry stays alone in its generation)
    if (this.young.size > 0 && this.youngWeight + w > this.capacity / 2) {
      this.old = this.young;
      this.oldWeight = this.youngWeight;
      this.young = new Map();
      this.youngWeight = 0;
    }
    this.young.set(key, value);
    this.youngWeight += w;
  }

  delete(key: K): void {
    const y = this.young.get(key);
    if (y !== undefined) {
      this.young.delete(key);
      this.youngWeight -= this.weigh(key, y);
    }
    const o = this.old.get(key);
    if (o !== undefined) {
      this.old.delete(key);
      this.oldWeight -= this.weigh(key, o);
    }
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngWeight = 0;
    this.oldWeight = 0;
  }
}
