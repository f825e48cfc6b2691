/**
 * Lazy state of a fork (docs/fork-mode.md "What is cached where"): an account, its code, a storage slot
 * is asked of the origin at the fork block the first time any thread touches it, and written to the
 * home's fork cache (data/fork-cache.db, SQLite) so that no thread and no later run asks again. The flat
 * state layer (store/flatstate.ts) falls through to this source only for keys the local chain never
 * wrote: local writes shadow the origin.
 *
 * The account RLP handed to the flat layer carries the EMPTY storage root, not the origin's: the local
 * trie holds only what the fork wrote (a partial trie, enough for the state root of a single dev node);
 * docs/fork-mode.md says what that means for eth_getProof.
 */
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { Account, KECCAK256_NULL, KECCAK256_RLP, createAccountFromRLP } from '@ethereumjs/util';
import { corrupt } from '../lib/errors.js';
import { SyncOrigin } from './syncorigin.js';
import { FetchProgress } from './progress.js';
import { originData, originQuantity, type OriginStats, type RpcCall } from './origin.js';

export const FORK_RECORD_FILE = 'fork.json';
export const FORK_CACHE_FILE = 'fork-cache.db';
/** How long a thread waits for another thread's write lock on the fork cache. */
export const FORK_CACHE_BUSY_MS = 10_000;

/** What a fork home records (data/fork.json; the genesis carries the same origin, app_state.fork). */
export interface ForkRecord {
  url: string;
  blockNumber: bigint;
  /** 0x, as the origin reports it */
  blockHash: string;
  chainId: bigint;
  retries?: number;
  timeoutMs?: number;
  computeUnitsPerSecond?: number;
  /** --fork-chain-id was given: a re-fork keeps the chain id (node/refork.ts) */
  chainIdPinned?: boolean;
}

export function renderForkRecord(r: ForkRecord): string {
  return (
    JSON.stringify(
      { ...r, blockNumber: r.blockNumber.toString(), chainId: r.chainId.toString() },
      null,
      2,
    ) + '\n'
  );
}

/** The fork record of a data directory (undefined: not a fork home). */
export function readForkRecord(dataDir: string): ForkRecord | undefined {
  const path = join(dataDir, FORK_RECORD_FILE);
  if (!existsSync(path)) return undefined;
  const j = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  if (typeof j.url !== 'string' || typeof j.blockHash !== 'string') throw corrupt(`${path}: expected url and blockHash`);
  return {
    url: j.url,
    blockNumber: BigInt(j.blockNumber as string),
    blockHash: j.blockHash,
    chainId: BigInt(j.chainId as string),
    ...(typeof j.retries === 'number' ? { retries: j.retries } : {}),
    ...(typeof j.timeoutMs === 'number' ? { timeoutMs: j.timeoutMs } : {}),
    ...(typeof j.computeUnitsPerSecond === 'number' ? { computeUnitsPerSecond: j.computeUnitsPerSecond } : {}),
    ...(j.chainIdPinned === true ? { chainIdPinned: true } : {}),
  };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (addr BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS slots (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS codes (hash BLOB PRIMARY KEY, code BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS origin_stats (name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
`;

/** What every thread of a fork home asked of its origin since the home was made (metrics). */
export interface ForkTotals {
  /** HTTP requests (a batch is one), retries included */
  requests: number;
  retries: number;
  /** requests that failed for good */
  errors: number;
  /** bytes of the fork cache on disk */
  cacheBytes: number;
}

const TOTALS = ['requests', 'retries', 'errors'] as const;

/** The totals of a fork home's cache (undefined: not a fork home, or no cache yet); opens it read-only. */
export function readForkTotals(dataDir: string): ForkTotals | undefined {
  const path = join(dataDir, FORK_CACHE_FILE);
  if (!existsSync(path)) return undefined;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const t: ForkTotals = { requests: 0, retries: 0, errors: 0, cacheBytes: 0 };
    for (const r of db.prepare<[], { name: string; n: number }>('SELECT name, n FROM origin_stats').all()) {
      if ((TOTALS as readonly string[]).includes(r.name)) t[r.name as (typeof TOTALS)[number]] = r.n;
    }
    t.cacheBytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    return t;
  } finally {
    db.close();
  }
}

const EMPTY = new Uint8Array(0);
const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const hex0x = (b: Uint8Array): string => '0x' + buf(b).toString('hex');

function strip(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

export class ForkState {
  private readonly db: Database.Database;
  private readonly stmts;
  readonly origin: SyncOrigin;
  private readonly block: string;
  /** state entries fetched from the origin by this thread (tests, metrics) */
  fetched = 0;
  /** the console line while a large call fetches (fork/progress.ts) */
  private readonly progress: FetchProgress;

  constructor(
    dataDir: string,
    readonly record: ForkRecord,
  ) {
    this.db = new Database(join(dataDir, FORK_CACHE_FILE));
    // every thread opens the cache at start: wait for the one switching it to WAL, not fail
    this.db.pragma(`busy_timeout = ${FORK_CACHE_BUSY_MS}`);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(SCHEMA);
    this.stmts = {
      acct: this.db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM accounts WHERE addr = ?'),
      slot: this.db.prepare<[Buffer], { v: Buffer }>('SELECT v FROM slots WHERE k = ?'),
      code: this.db.prepare<[Buffer], { code: Buffer }>('SELECT code FROM codes WHERE hash = ?'),
      putAcct: this.db.prepare('INSERT OR IGNORE INTO accounts (addr, v) VALUES (?, ?)'),
      putSlot: this.db.prepare('INSERT OR IGNORE INTO slots (k, v) VALUES (?, ?)'),
      putCode: this.db.prepare('INSERT OR IGNORE INTO codes (hash, code) VALUES (?, ?)'),
      addStat: this.db.prepare('INSERT INTO origin_stats (name, n) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET n = n + excluded.n'),
      size: this.db.prepare<[], { n: number }>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()'),
    };
    this.origin = new SyncOrigin({
      url: record.url,
      ...(record.retries !== undefined ? { retries: record.retries } : {}),
      ...(record.timeoutMs !== undefined ? { timeoutMs: record.timeoutMs } : {}),
      ...(record.computeUnitsPerSecond !== undefined ? { computeUnitsPerSecond: record.computeUnitsPerSecond } : {}),
    });
    this.block = '0x' + record.blockNumber.toString(16);
    this.progress = new FetchProgress(this.origin.label);
  }

  get stats(): OriginStats {
    return this.origin.stats;
  }

  /** bytes of the fork cache on disk */
  cacheBytes(): number {
    return this.stmts.size.get()?.n ?? 0;
  }

  /** One batch to the origin; what it cost is added to the home's totals (readForkTotals). */
  private ask(calls: RpcCall[]): unknown[] {
    const before = { ...this.origin.stats };
    try {
      return this.origin.batch(calls);
    } finally {
      const after = this.origin.stats;
      for (const name of TOTALS) {
        const d = after[name] - before[name];
        if (d > 0) this.stmts.addStat.run(name, d);
      }
    }
  }

  /** Adds requests made elsewhere on this thread (fork/history.ts) to the home's totals. */
  addTotals(d: { requests: number; retries: number; errors: number }): void {
    for (const name of TOTALS) if (d[name] > 0) this.stmts.addStat.run(name, d[name]);
  }

  /** The account's RLP at the fork block (undefined: no account at the origin). */
  account(addr: Uint8Array): Uint8Array | undefined {
    const row = this.stmts.acct.get(buf(addr));
    if (row !== undefined) return row.v.length === 0 ? undefined : row.v;
    const a = hex0x(addr);
    const label = this.origin.label;
    const [bal, nonce, code] = this.ask([
      { method: 'eth_getBalance', params: [a, this.block] },
      { method: 'eth_getTransactionCount', params: [a, this.block] },
      { method: 'eth_getCode', params: [a, this.block] },
    ]);
    const balance = originQuantity(bal, 'eth_getBalance', label);
    const n = originQuantity(nonce, 'eth_getTransactionCount', label);
    const bytecode = originData(code, 'eth_getCode', label);
    this.fetched++;
    this.progress.fetched('account');
    const codeHash = bytecode.length === 0 ? KECCAK256_NULL : keccak_256(bytecode);
    const exists = balance !== 0n || n !== 0n || bytecode.length > 0;
    const rlp = exists ? new Account(n, balance, KECCAK256_RLP, codeHash).serialize() : EMPTY;
    const write = this.db.transaction(() => {
      if (bytecode.length > 0) this.stmts.putCode.run(buf(codeHash), buf(bytecode));
      this.stmts.putAcct.run(buf(addr), buf(rlp));
    });
    write();
    return exists ? rlp : undefined;
  }

  /** True when the origin's account has code at the fork block. */
  hasCode(addr: Uint8Array): boolean {
    const rlp = this.account(addr);
    if (rlp === undefined) return false;
    return createAccountFromRLP(rlp).isContract();
  }

  /** The slot's value at the fork block, leading zeros stripped (empty: zero). */
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    const k = new Uint8Array(52);
    k.set(addr, 0);
    k.set(slot, 20);
    const row = this.stmts.slot.get(buf(k));
    if (row !== undefined) return row.v;
    const [v] = this.ask([{ method: 'eth_getStorageAt', params: [hex0x(addr), hex0x(slot), this.block] }]);
    const value = strip(originData(v, 'eth_getStorageAt', this.origin.label));
    this.fetched++;
    this.progress.fetched('slot');
    this.stmts.putSlot.run(buf(k), buf(value));
    return value;
  }

  /** Code fetched with an account, by hash. */
  code(hash: Uint8Array): Uint8Array | undefined {
    return this.stmts.code.get(buf(hash))?.code;
  }

  close(): void {
    this.origin.close();
    if (this.db.open) this.db.close();
  }
}
