/**
 * Blocks fed straight to an application (no engine, no CometBFT) and the domain error a reader call
 * refuses with: the unit tests that compare two stores fed the same blocks (pruning, state sync).
 */
import type { EvmApp } from '../../src/chain/app.js';
import { ChainReader, type ReaderOptions } from '../../src/chain/reader.js';
import { DomainError } from '../../src/lib/errors.js';
import { Store } from '../../src/store/store.js';

/** block h is made at GENESIS_MS + h seconds */
export const GENESIS_MS = Date.parse('2026-01-01T00:00:00Z');

/** FinalizeBlock + Commit of `txs` at `height` (its hash: 32 bytes of the height's low byte), as a driver would. */
export async function commitBlock(n: { store: Store; app: EvmApp }, height: bigint, txs: Uint8Array[]): Promise<void> {
  await n.app.finalizeBlock({ height, timeMs: GENESIS_MS + Number(height) * 1000, hash: new Uint8Array(32).fill(Number(height) & 0xff), proposerAddress: new Uint8Array(20), txs });
  n.store.transaction(() => n.app.commit());
  await n.app.afterCommit();
}

/** The DomainError `fn` throws (undefined when it returns); any other error is thrown on. */
export function thrown(fn: () => unknown): DomainError | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  return undefined;
}

/** A reader (the RPC thread's view) over its own read-only connection to the database at `dbPath`: no simulator, no submissions. */
export function openReader(dbPath: string): Promise<ChainReader> {
  const opts: ReaderOptions = {
    chainId: 9000n,
    hardfork: 'prague',
    gasCap: 0n,
    logsCap: 0,
    coinbase: new Uint8Array(20),
    simulator: undefined as never,
    submit: () => Promise.reject(new Error('no submissions in this test')),
  };
  return ChainReader.create(new Store(dbPath, { reader: true }), opts);
}
