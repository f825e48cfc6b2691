/**
 * `ferry dev --fork-url`: a fork home (docs/fork-mode.md). A new home asks the origin which block it forks
 * from, takes the origin's chain id (or --fork-chain-id) for its genesis, and records the origin in
 * data/fork.json, which every thread's store opens (store/store.ts) so that state the fork never wrote is
 * read from the origin at that block. A restart of the same home continues the same fork; --fork-url on a
 * home that is not a fork home is refused (its chain data would mix with the origin's).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDuration } from '../config/duration.js';
import { badConfig } from '../lib/errors.js';
import { identifyFork } from '../fork/identify.js';
import { FORK_RECORD_FILE, readForkRecord, renderForkRecord, type ForkRecord } from '../fork/lazystate.js';
import { originLabel } from '../fork/origin.js';
import type { ForkChoice } from '../config/genesis.js';
import { ensureHome, homeExists, homePaths } from './home.js';

export interface ForkFlags {
  forkUrl?: string;
  forkBlockNumber?: string;
  forkTransactionHash?: string;
  forkChainId?: string;
  forkRetries?: string;
  forkTimeout?: string;
  forkComputeUnitsPerSecond?: string;
}

function count(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw badConfig(flag, `${flag}: expected a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** Anvil's --fork-timeout is milliseconds; a Go duration ("30s") is taken too. */
function timeout(v: string): number {
  let ms: number;
  try {
    ms = /^\d+$/.test(v) ? Number(v) : parseDuration(v);
  } catch (e) {
    throw badConfig('fork-timeout', `--fork-timeout: ${(e as Error).message}`);
  }
  if (!(ms > 0)) throw badConfig('fork-timeout', `--fork-timeout: must be above 0, got ${JSON.stringify(v)}`);
  return ms;
}

/** Makes or checks the fork home; returns its record (undefined: no --fork-url and not a fork home). */
export async function prepareForkHome(home: string, f: ForkFlags, forks?: ForkChoice): Promise<ForkRecord | undefined> {
  const dataDir = homePaths(home).dataDir;
  const existing = homeExists(home) ? readForkRecord(dataDir) : undefined;
  const others = [f.forkBlockNumber, f.forkTransactionHash, f.forkChainId, f.forkRetries, f.forkTimeout, f.forkComputeUnitsPerSecond];
  if (f.forkUrl === undefined) {
    if (others.some((o) => o !== undefined)) throw badConfig('fork-url', 'the --fork-* flags need --fork-url');
    return existing;
  }
  if (existing !== undefined) {
    if (originLabel(existing.url) !== originLabel(f.forkUrl)) {
      throw badConfig('fork-url', `${home} is a fork of ${originLabel(existing.url)}, not ${originLabel(f.forkUrl)}; use a new --home`);
    }
    return existing;
  }
  if (homeExists(home)) throw badConfig('fork-url', `${home} holds a chain that is not a fork; --fork-url needs a new --home`);
  if (f.forkBlockNumber !== undefined && !/^-?\d+$/.test(f.forkBlockNumber)) {
    throw badConfig('fork-block-number', `--fork-block-number: expected a block number, got ${JSON.stringify(f.forkBlockNumber)}`);
  }
  if (f.forkChainId !== undefined && !/^\d+$/.test(f.forkChainId)) {
    throw badConfig('fork-chain-id', `--fork-chain-id: expected a chain id, got ${JSON.stringify(f.forkChainId)}`);
  }
  const cups = count(f.forkComputeUnitsPerSecond, 'fork-compute-units-per-second');
  const retries = count(f.forkRetries, 'fork-retries');
  const record = await identifyFork({
    url: f.forkUrl,
    ...(f.forkBlockNumber !== undefined ? { blockNumber: BigInt(f.forkBlockNumber) } : {}),
    ...(f.forkTransactionHash !== undefined ? { transactionHash: f.forkTransactionHash } : {}),
    ...(f.forkChainId !== undefined ? { chainId: BigInt(f.forkChainId) } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...(f.forkTimeout !== undefined ? { timeoutMs: timeout(f.forkTimeout) } : {}),
    ...(cups !== undefined ? { computeUnitsPerSecond: cups } : {}),
  });
  if (f.forkChainId !== undefined) record.chainIdPinned = true;
  // written before the genesis (which makes the home a home): a home is a fork home from its first start on
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, FORK_RECORD_FILE), renderForkRecord(record), { mode: 0o600 });
  // the genesis runs the rules --hardfork / --<fork>-time ask for, as any new home's; the chain continues the
  // origin's numbers: its first block is the fork block + 1 (CometBFT initial_height), whose parent is the
  // fork block (chain/genesisblock.ts writes the stand-in for it)
  ensureHome(home, { chainId: `ferry_${record.chainId}-1`, forks, initialHeight: record.blockNumber + 1n });
  return record;
}
