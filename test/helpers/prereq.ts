/**
 * Tests that need something outside the repository (a browser, the npm registry): without it they are
 * skipped, each test counted as skipped in the runner's summary and a loud line on stderr — except under
 * CI=true, where a missing prerequisite fails the run (.ci/run exports CI=true and installs them).
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const UNDER_CI = process.env.CI === 'true';

/**
 * The reason to skip for a missing prerequisite `what` (printed loudly), or throws under CI=true.
 * Give the reason to each test (`it(name, { skip }, …)`), not to its `describe`: node:test counts
 * the tests of a skipped suite nowhere.
 */
export function missingPrerequisite(what: string, why: string): string {
  const msg = `${what}: ${why}`;
  if (UNDER_CI) throw new Error(`${msg} — required under CI`);
  process.stderr.write(`\n!!!!!!!!!! SKIPPING ${msg} !!!!!!!!!!\n\n`);
  return msg;
}

/** `name` on PATH, as the shell's `command -v` finds it (.ci/run uses that lookup too) */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}
