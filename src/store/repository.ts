/**
 * A typed repository of one record kind keyed by height: its own table (`height INTEGER PRIMARY KEY,
 * rec BLOB`), the storage codec (lib/serial.ts), and the decoded records kept in a byte-weighed cache
 * (`DecodedByHeight`, which the store's EVM blocks are read through too).
 * One repository per table, so no use site handles an opaque record (the shape of lodestar's
 * packages/db/src/abstractRepository.ts: a typed get/put over one bucket). The table itself is created
 * by the store's schema (store.ts); writes run inside the store's block transaction.
 */
import type Database from 'better-sqlite3';
import { Lru } from '../lib/lru.js';
import { decodeValue, encodeValue } from '../lib/serial.js';

/**
 * Records read by height and kept decoded, weighed by their stored bytes (immutable once committed;
 * dropped together after a dev revert). `read` fetches the stored bytes of a height.
 */
export class DecodedByHeight<T> {
  private readonly cache: Lru<bigint, { value: T; bytes: number }>;

  constructor(
    private readonly read: (height: number) => Buffer | undefined,
    cacheBytes: number,
    private readonly decode: (bytes: Uint8Array) => T = decodeValue<T>,
  ) {
    this.cache = new Lru(cacheBytes, (_h, e) => e.bytes);
  }

  get(height: bigint): T | undefined {
    const hit = this.cache.get(height);
    if (hit) return hit.value;
    const bytes = this.read(Number(height));
    if (bytes === undefined) return undefined;
    const value = this.decode(bytes);
    this.cache.set(height, { value, bytes: bytes.length });
    return value;
  }

  clear(): void {
    this.cache.clear();
  }

  /** entries held and their weight in stored bytes */
  stats(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cache.weight };
  }
}

export class HeightRepository<T> {
  private readonly stmts;
  private readonly decoded: DecodedByHeight<T>;

  /**
   * `table` is one of the store's own table names (never user input); `cacheBytes` bounds the decoded
   * cache; `codec`: the record's own stored form (default: the storage codec)
   */
  constructor(
    db: Database.Database,
    table: string,
    cacheBytes: number,
    private readonly codec: { encode: (value: T) => Buffer; decode: (bytes: Uint8Array) => T } = { encode: encodeValue, decode: decodeValue<T> },
  ) {
    this.stmts = {
      get: db.prepare<[number], { rec: Buffer }>(`SELECT rec FROM ${table} WHERE height = ?`),
      put: db.prepare(`INSERT INTO ${table} (height, rec) VALUES (?, ?)`),
      latest: db.prepare<[], { h: number | null }>(`SELECT max(height) AS h FROM ${table}`),
      lowest: db.prepare<[], { h: number | null }>(`SELECT min(height) AS h FROM ${table}`),
      deleteAbove: db.prepare(`DELETE FROM ${table} WHERE height > ?`),
    };
    this.decoded = new DecodedByHeight<T>((h) => this.stmts.get.get(h)?.rec, cacheBytes, codec.decode);
  }

  get(height: bigint): T | undefined {
    return this.decoded.get(height);
  }

  /** Writes the record of a new height (a height is written once). */
  put(height: bigint, value: T): void {
    this.stmts.put.run(Number(height), this.codec.encode(value));
  }

  /** the highest height with a record */
  latestHeight(): bigint | undefined {
    const h = this.stmts.latest.get()?.h;
    return h === null || h === undefined ? undefined : BigInt(h);
  }

  /** the lowest height with a record (above the first after pruning, store/prune.ts) */
  lowestHeight(): bigint | undefined {
    const h = this.stmts.lowest.get()?.h;
    return h === null || h === undefined ? undefined : BigInt(h);
  }

  /** Dev revert: deletes the records above `height` (inside the rewinding transaction); then forgetCache(). */
  deleteAbove(height: bigint): void {
    this.stmts.deleteAbove.run(Number(height));
  }

  /** drops the decoded records this connection keeps (after a dev revert) */
  forgetCache(): void {
    this.decoded.clear();
  }
}
