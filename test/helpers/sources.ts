/** The TypeScript sources under src/, for tests that check rules over the whole tree. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { REPO_ROOT } from './paths.js';

export const SRC_DIR = join(REPO_ROOT, 'src');

/** Every `.ts` file under `dir` (default src/): path relative to src/ with `/` separators → source text. */
export function sourceFiles(dir: string = SRC_DIR, acc = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, acc);
    else if (entry.name.endsWith('.ts')) acc.set(relative(SRC_DIR, full).split(sep).join('/'), readFileSync(full, 'utf8'));
  }
  return acc;
}
