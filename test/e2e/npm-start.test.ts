/**
 * `npm start` starts the node at once from the build `npm ci` made (the `prepare` script), instead of
 * recompiling the project on every start (issue 10, item 13).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../helpers/node.js';
import { REPO_ROOT } from '../helpers/paths.js';

const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 200;

const tmpRoot = mkdtempSync(join(tmpdir(), 'ferry-npm-start-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));

async function chainId(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(2_000),
    });
    return ((await res.json()) as { result?: string }).result;
  } catch {
    return undefined;
  }
}

describe('npm start', () => {
  it('builds at install time (prepare), not at start', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // checked first: an `npm start` that rebuilds would delete dist/ under the other running tests
    assert.doesNotMatch(pkg.scripts.start!, /build|tsc/, 'npm start must not compile');
    assert.match(pkg.scripts.prepare ?? '', /npm run build/, 'npm ci must build (prepare script)');
    assert.match(pkg.scripts.test!, /npm run build/, 'npm test builds the test files fresh');
  });

  it('starts the node from the existing build and serves at once', async () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.doesNotMatch(pkg.scripts.start!, /build|tsc/, 'npm start must not compile');
    const [http, ws, comet] = [await freePort(), await freePort(), await freePort()];
    const home = join(tmpRoot, 'home');
    const npmCli = process.env.npm_execpath;
    const [cmd, pre] = npmCli && npmCli.endsWith('.js') ? [process.execPath, [npmCli]] : ['npm', []];
    const args = [...pre, 'start', '--', '--home', home, '--json-rpc.address', `127.0.0.1:${http}`,
      '--json-rpc.ws-address', `127.0.0.1:${ws}`, '--rpc.laddr', `tcp://127.0.0.1:${comet}`];
    const proc = spawn(cmd, args, { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: tmpRoot } });
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<void>((r) => proc.on('exit', () => r()));
    try {
      const url = `http://127.0.0.1:${http}`;
      const until = Date.now() + READY_TIMEOUT_MS;
      let id: string | undefined;
      while ((id = await chainId(url)) === undefined) {
        assert.equal(proc.exitCode, null, `npm start exited:\n${out}`);
        assert.ok(Date.now() < until, `node not ready:\n${out}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      assert.equal(id, '0x2328');
      // npm echoes each script it runs: only `start`, no build step
      assert.match(out, /> node bin\/ferry\.js start/);
      assert.doesNotMatch(out, /> ferry@[^\n]* build|tsc -p/);
    } finally {
      // npm and the node it started: the whole process group
      if (proc.exitCode === null && proc.pid !== undefined) process.kill(-proc.pid, 'SIGTERM');
      await exited;
    }
  });
});
