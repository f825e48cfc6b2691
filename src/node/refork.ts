/**
 * anvil_reset / hardhat_reset with `forking` naming another block or origin (docs/fork-mode.md "Reset";
 * foundry crates/anvil/src/eth/api.rs anvil_reset → reset_fork): the new fork is identified first (a bad
 * URL, an unreachable origin, a block above the origin's head: refused, nothing changed); then the home's
 * chain data is replaced by a new fork's — data/ staged beside it (fork record, fresh validator state),
 * swapped in, and the genesis rewritten (initial_height = the new fork block + 1, the new origin's chain
 * id unless --fork-chain-id pinned it) — so a restart of the home continues the newest fork.
 */
import { readFileSync, renameSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIV_VALIDATOR_STATE_FILE, initialPrivValidatorState, privValidatorStateJson, readValidatorKey } from '../consensus/cometbft/index.js';
import { devGenesis, parseGenesis, renderGenesis, type Genesis } from '../config/genesis.js';
import { identifyFork } from '../fork/identify.js';
import { FORK_RECORD_FILE, renderForkRecord, type ForkRecord } from '../fork/lazystate.js';
import { originLabel } from '../fork/origin.js';
import { DomainError, invalidArgument, unavailable } from '../lib/errors.js';
import { writeFileAtomic } from '../lib/fs.js';
import type { ResetTarget } from '../evmrpc/devmethods.js';
import { homePaths } from './home.js';

/**
 * The fork `t` names, asked of its origin now (undefined: the same origin and block as `current`, a plain
 * reset). Every failure is a DomainError naming the origin; nothing is written.
 */
export async function identifyRefork(current: ForkRecord, t: ResetTarget): Promise<ForkRecord | undefined> {
  const url = t.url ?? current.url;
  const sameOrigin = new URL(url).href === new URL(current.url).href;
  if (sameOrigin && t.blockNumber === current.blockNumber) return undefined;
  let next: ForkRecord;
  try {
    next = await identifyFork({
      url,
      ...(t.blockNumber !== undefined ? { blockNumber: t.blockNumber } : {}),
      // --fork-chain-id given at the start stays the fork's chain id
      ...(current.chainIdPinned === true ? { chainId: current.chainId } : {}),
      ...(current.retries !== undefined ? { retries: current.retries } : {}),
      ...(current.timeoutMs !== undefined ? { timeoutMs: current.timeoutMs } : {}),
      ...(current.computeUnitsPerSecond !== undefined ? { computeUnitsPerSecond: current.computeUnitsPerSecond } : {}),
    });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const msg = `cannot re-fork to ${originLabel(url)}${t.blockNumber !== undefined ? ` at block ${t.blockNumber}` : ''}: ${why}; the fork of ${originLabel(current.url)} at block ${current.blockNumber} is unchanged`;
    throw e instanceof DomainError && e.kind === 'unavailable' ? unavailable(msg) : invalidArgument(`invalid argument 0: ${msg}`);
  }
  if (sameOrigin && next.blockNumber === current.blockNumber) return undefined;
  return current.chainIdPinned === true ? { ...next, chainIdPinned: true } : next;
}

/**
 * Replaces the home's chain data with a new fork's (every thread on the old data has stopped). Returns the
 * new genesis. data/ is staged as data.refork/ and renamed into place; the old data is deleted after.
 */
export function switchForkHome(home: string, next: ForkRecord, old: Genesis): Genesis {
  const paths = homePaths(home);
  const staged = `${paths.dataDir}.refork`;
  const retired = `${paths.dataDir}.old`;
  rmSync(staged, { recursive: true, force: true });
  rmSync(retired, { recursive: true, force: true });
  mkdirSync(staged, { recursive: true, mode: 0o700 });
  writeFileSync(join(staged, FORK_RECORD_FILE), renderForkRecord(next), { mode: 0o600 });
  writeFileSync(join(staged, PRIV_VALIDATOR_STATE_FILE), privValidatorStateJson(initialPrivValidatorState()) + '\n', { mode: 0o600 });
  const validator = readValidatorKey(readFileSync(paths.privValidatorKey, 'utf8'));
  // the same rules as the old fork's genesis; the chain continues the new origin's numbers (docs/fork-mode.md)
  const genesis = devGenesis({
    chainId: `ferry_${next.chainId}-1`,
    validatorPubKey: validator.pubKey,
    hardfork: old.evm.hardfork,
    ...(old.evm.forkTimes !== undefined ? { forkTimes: old.evm.forkTimes } : {}),
    initialHeight: next.blockNumber + 1n,
  });
  const text = renderGenesis(genesis);
  renameSync(paths.dataDir, retired);
  renameSync(staged, paths.dataDir);
  writeFileAtomic(paths.genesis, text, 0o644);
  rmSync(retired, { recursive: true, force: true });
  return parseGenesis(text);
}
