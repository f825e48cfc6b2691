/** Version of this build, read once when the module loads. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'ferry';
const GIT_TIMEOUT_MS = 2_000;

/** The directory of ferry's package.json, searched upwards from this file (src/ or dist/src/). */
function packageDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${PACKAGE_NAME}: package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function readCommit(dir: string): string {
  // only the package's own repository: an install inside another repo must not report that repo's commit
  if (!existsSync(join(dir, '.git'))) return 'unknown';
  try {
    const out = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: GIT_TIMEOUT_MS,
    }).trim();
    return /^[0-9a-f]{4,40}$/.test(out) ? out : 'unknown';
  } catch {
    return 'unknown';
  }
}

const PACKAGE_DIR = packageDir();

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
/**
 * The commit the bundle was built from (scripts/bundle.mjs sets it with esbuild's `define`, so a start
 * spawns no git); absent when the unbundled modules run (the tests), which ask git themselves.
 */
declare const FERRY_BUILD_COMMIT: string | undefined;

/** short git commit of the package directory, `unknown` outside a git checkout */
export const COMMIT: string = typeof FERRY_BUILD_COMMIT === 'string' ? FERRY_BUILD_COMMIT : readCommit(PACKAGE_DIR);

/**
 * web3_clientVersion: `ferry/<version>+<commit>/<os>-<arch>/node<version>`, e.g. `ferry/0.1.0+abc1234/linux-x64/node20.20.2`;
 * with `json-rpc.client-version-prefix` (e.g. `anvil`) that name and a `/` come first.
 */
export function clientVersion(prefix = ''): string {
  return `${prefix === '' ? '' : prefix + '/'}${PACKAGE_NAME}/${VERSION}+${COMMIT}/${process.platform}-${process.arch}/node${process.versions.node}`;
}
