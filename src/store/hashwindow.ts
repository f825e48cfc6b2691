/**
 * The BLOCKHASH window below the stored blocks (docs/abci.md "State sync", "Pruning"): the EVM's
 * BLOCKHASH answers the hash of any of the 256 blocks below the current one (go-ethereum
 * core/vm/instructions.go opBlockhash; EIP-2935 leaves the opcode as it is), in block execution as in
 * eth_call. A node without some of those blocks must still answer their real hashes, or it computes
 * another state than an archive validator and splits from the chain:
 * - a state-synced home has no block below its snapshot height: the snapshot carries the hashes of the
 *   256 blocks below it (store/snapshot.ts HASH records), written here by the restore;
 * - a history-pruned home (min-retain-blocks below 256) deletes blocks still inside the window: the
 *   pruning step keeps the hash of each block it deletes here while it is within 256 of the head
 *   (store/prune.ts), and drops the rows that fell out.
 * The table keeps its first name (`synced_hashes`) so state-synced homes made before it stay readable.
 */
import type Database from 'better-sqlite3';
import type { Store } from './store.js';

/** Blocks below the current one whose hash BLOCKHASH answers (go-ethereum core/vm/instructions.go opBlockhash). */
export const BLOCKHASH_WINDOW = 256;

const SCHEMA = 'CREATE TABLE IF NOT EXISTS synced_hashes (height INTEGER PRIMARY KEY, hash BLOB NOT NULL)';

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** The writer's side (the chain thread's connection): the table is made when missing. */
export class HashWindow {
  private readonly s;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.s = {
      put: db.prepare<[number, Buffer]>('INSERT OR REPLACE INTO synced_hashes (height, hash) VALUES (?, ?)'),
      dropBelow: db.prepare<[number]>('DELETE FROM synced_hashes WHERE height < ?'),
      clear: db.prepare<[]>('DELETE FROM synced_hashes'),
    } satisfies Record<string, Database.Statement>;
  }

  put(height: bigint | number, hash: Uint8Array): void {
    this.s.put.run(Number(height), buf(hash));
  }

  /** rows no block after `head` can ask for (below head + 1 - BLOCKHASH_WINDOW) go */
  dropOutside(head: number): number {
    return this.s.dropBelow.run(head + 1 - BLOCKHASH_WINDOW).changes;
  }

  clear(): void {
    this.s.clear.run();
  }
}

/** whether the window table exists (a reader connection cannot make it) */
function hasWindow(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'synced_hashes'").get() !== undefined;
}

/** The window's hashes of heights in [from, to) (empty without the table; works on a read-only connection). */
export function windowHashes(db: Database.Database, from: number, to: number): { height: number; hash: Buffer }[] {
  if (!hasWindow(db)) return [];
  return db.prepare<[number, number], { height: number; hash: Buffer }>('SELECT height, hash FROM synced_hashes WHERE height >= ? AND height < ? ORDER BY height').all(from, to);
}

/**
 * BLOCKHASH's source over a store: the stored block's hash, else the window's (undefined: neither).
 * Every EVM that runs blocks or calls takes it (chain/app.ts, chain/simulator.ts, chain/trace.ts). The
 * stored hash is read from its own column, not from the decoded block: every block's EIP-2935 step reads
 * its parent's, which no cache holds yet (docs/benchmarks.md "A dev block at one tx").
 */
export function blockHashLookup(store: Store): (height: bigint) => Uint8Array | undefined {
  let stmt: Database.Statement<[number], { hash: Buffer }> | undefined;
  return (height) => {
    const stored = store.blockHash(Number(height));
    if (stored) return stored;
    if (!stmt) {
      if (!hasWindow(store.db)) return undefined;
      stmt = store.db.prepare('SELECT hash FROM synced_hashes WHERE height = ?');
    }
    const row = stmt.get(Number(height));
    return row ? new Uint8Array(row.hash) : undefined;
  };
}
