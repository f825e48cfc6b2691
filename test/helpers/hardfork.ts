/**
 * A ferry home made by `ferry init --hardfork <name>`, started with the given flags: the way to run
 * ferry under given rules (Prague for EIP-7702 and the rest).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
  const init = spawnSync(process.execPath, [FERRY_BIN, 'init', '--home', home, '--hardfork', hardfork], { encoding: 'utf8', timeout: INIT_TIMEOUT_MS });
  if (init.status !== 0) throw new Error(`ferry init failed: ${init.stderr}`);
  return home;
}

/** ferry on a fresh home under `hardfork`. */
export function startFerryOn(hardfork: string, args: string[]): Promise<FerryNode> {
  return startFerry({ home: initHome(hardfork), args });
}
