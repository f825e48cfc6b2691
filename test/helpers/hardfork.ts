/**
 * A ferry home made by `ferry init` whose genesis names a hardfork (`app_state.evm.hardfork`), started
 * with the given flags: the way to run ferry under Prague rules (EIP-7702 and the rest).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FERRY_BIN } from './paths.js';
import { startFerry, type FerryNode } from './node.js';

const INIT_TIMEOUT_MS = 60_000;
const homes = new Set<string>();
process.on('exit', () => {
  if (process.exitCode !== undefined && process.exitCode !== 0) return;
  if (process.env.FERRY_E2E_KEEP === '1') return;
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** A new home with the dev genesis under `hardfork`; returns its path. */
export function initHome(hardfork: string): string {
  const home = mkdtempSync(join(tmpdir(), `ferry-${hardfork}-`));
  homes.add(home);
  const init = spawnSync(process.execPath, [FERRY_BIN, 'init', '--home', home], { encoding: 'utf8', timeout: INIT_TIMEOUT_MS });
  if (init.status !== 0) throw new Error(`ferry init failed: ${init.stderr}`);
  const path = join(home, 'config', 'genesis.json');
  const genesis = JSON.parse(readFileSync(path, 'utf8'));
  genesis.app_state.evm.hardfork = hardfork;
  writeFileSync(path, JSON.stringify(genesis, null, 2));
  return home;
}

/** ferry on a fresh home under `hardfork`. */
export function startFerryOn(hardfork: string, args: string[]): Promise<FerryNode> {
  return startFerry({ home: initHome(hardfork), args });
}
