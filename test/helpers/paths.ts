/** Locations inside the repository, found from this file whether it runs from test/ or dist/test/. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'ferry.js'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('repository root (package.json + bin/ferry.js) not found');
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot();
export const FERRY_BIN = join(REPO_ROOT, 'bin', 'ferry.js');
export const CONTRACTS_DIR = join(REPO_ROOT, 'test', 'contracts');
export const GOLDEN_DIR = join(REPO_ROOT, 'test', 'golden');
