/**
 * The `ferry` CLI as a user runs it: `node bin/ferry.js …` (bin/ferry.js loads dist/, so build first:
 * `npm test` does).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { parseGenesis } from '../../src/config/genesis.js';
import { loadOptions } from '../../src/config/load.js';

/** dist/test/e2e → package root */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'ferry.js');
const RUN_TIMEOUT_MS = 20_000;

const tmpRoot = mkdtempSync(join(tmpdir(), 'ferry-cli-test-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));

function ferry(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
    // a HOME inside the temp dir, so nothing can touch the real ~/.ferry
    env: { ...process.env, HOME: tmpRoot },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const LAYOUT = [
  'config/app.toml',
  'config/config.toml',
  'config/genesis.json',
  'config/priv_validator_key.json',
  'config/node_key.json',
  'data',
];

describe('ferry CLI', () => {
  it('version prints the client version', () => {
    const r = ferry('version');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^ferry\/0\.1\.0\+([0-9a-f]{4,40}|unknown)\/[a-z0-9]+-[a-z0-9]+\/node\d+\.\d+\.\d+$/);
  });

  it('--help on the root and on each subcommand', () => {
    const root = ferry('--help');
    assert.equal(root.code, 0);
    for (const cmd of ['init', 'start', 'version']) assert.ok(root.stdout.includes(cmd), cmd);
    const init = ferry('init', '--help');
    assert.equal(init.code, 0);
    assert.ok(init.stdout.includes('--overwrite') && init.stdout.includes('--chain-id') && init.stdout.includes('--home'));
    const start = ferry('start', '--help');
    assert.equal(start.code, 0);
    for (const flag of [
      '--json-rpc.enable', '--json-rpc.address', '--json-rpc.ws-address', '--json-rpc.api', '--json-rpc.gas-cap',
      '--json-rpc.evm-timeout', '--json-rpc.http-body-limit', '--rpc.laddr', '--minimum-gas-prices',
      '--consensus.timeout_commit', '--consensus.block_on_tx', '--log_level', '--home',
    ]) {
      assert.ok(start.stdout.includes(flag), flag);
    }
    const version = ferry('version', '--help');
    assert.equal(version.code, 0);
    assert.ok(version.stdout.includes('Usage: ferry version'));
  });

  it('init creates the home layout with a dev genesis and private key files', () => {
    const home = join(tmpRoot, 'init');
    const r = ferry('init', '--home', home, '--chain-id', 'devnet_4242-1');
    assert.equal(r.code, 0, r.stderr);
    for (const f of LAYOUT) assert.ok(existsSync(join(home, f)), f);
    for (const key of ['config/priv_validator_key.json', 'config/node_key.json']) {
      assert.equal(statSync(join(home, key)).mode & 0o777, 0o600, key);
    }
    const genesis = parseGenesis(readFileSync(join(home, 'config/genesis.json'), 'utf8'));
    assert.equal(genesis.chainId, 'devnet_4242-1');
    assert.equal(genesis.evmChainId, 4242n);
    // the 10 dev accounts and the 3 predeploys (docs/configuration.md "Predeploys")
    assert.equal(genesis.evm.alloc.size, 13);
    assert.ok(genesis.evm.alloc.has('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'));
    for (const a of ['0x4e59b44847b379578588920ca78fbf26c0b4956c', '0xca11bde05977b3631167028862be2a173976ca11', '0x0000f90827f1c53a10cb7a02335b175320002935']) {
      assert.ok((genesis.evm.alloc.get(a)?.code?.length ?? 0) > 0, a);
    }
    const validatorKey = JSON.parse(readFileSync(join(home, 'config/priv_validator_key.json'), 'utf8'));
    assert.equal(validatorKey.address, Buffer.from(genesis.validators[0]!.address).toString('hex').toUpperCase());
    assert.equal(validatorKey.pub_key.value, Buffer.from(genesis.validators[0]!.pubKey).toString('base64'));
    const opts = loadOptions(home, {});
    assert.equal(opts.jsonRpc.enable, true);
    assert.ok(readFileSync(join(home, 'config/app.toml'), 'utf8').includes('[json-rpc]\n'));
  });

  it('init refuses to overwrite an existing home unless --overwrite', () => {
    const home = join(tmpRoot, 'again');
    assert.equal(ferry('init', '--home', home).code, 0);
    const before = readFileSync(join(home, 'config/priv_validator_key.json'), 'utf8');
    const genesisBefore = readFileSync(join(home, 'config/genesis.json'), 'utf8');

    const refused = ferry('init', '--home', home);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: .*already exists.*--overwrite/);
    assert.equal(readFileSync(join(home, 'config/priv_validator_key.json'), 'utf8'), before);
    assert.equal(readFileSync(join(home, 'config/genesis.json'), 'utf8'), genesisBefore);

    writeFileSync(join(home, 'data', 'stale.db'), 'old chain');
    const replaced = ferry('init', '--home', home, '--overwrite');
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.notEqual(readFileSync(join(home, 'config/priv_validator_key.json'), 'utf8'), before);
    assert.ok(!existsSync(join(home, 'data', 'stale.db')));
  });

  it('init with a malformed chain id fails and writes nothing', () => {
    const home = join(tmpRoot, 'badchain');
    const r = ferry('init', '--home', home, '--chain-id', 'ferry-1');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: .*"ferry-1"/);
    assert.ok(!existsSync(join(home, 'config', 'genesis.json')));
  });

  it('start with a bad flag exits non-zero naming the key', () => {
    const home = join(tmpRoot, 'badflag');
    const cases: [string[], string][] = [
      [['--json-rpc.api', 'eth,foo'], 'json-rpc.api: unknown namespace "foo"'],
      [['--json-rpc.address', 'x'], 'json-rpc.address: malformed address "x"'],
      [['--json-rpc.logs-cap=-1'], 'json-rpc.logs-cap cannot be negative'],
      [['--consensus.timeout_commit', '1 second'], 'consensus.timeout_commit'],
      [['--log_level', 'loud'], 'log_level'],
      [['--minimum-gas-prices', '5uatom'], 'minimum-gas-prices'],
    ];
    for (const [args, text] of cases) {
      const r = ferry('start', '--home', home, ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.ok(r.stderr.startsWith('error: ') && r.stderr.includes(text), `${args.join(' ')}: ${r.stderr}`);
    }
    // the empty home was made into a dev home before the options were checked
    assert.ok(existsSync(join(home, 'config', 'genesis.json')));
  });

  it('start with a bad app.toml value exits non-zero naming the key', () => {
    const home = join(tmpRoot, 'badfile');
    assert.equal(ferry('init', '--home', home).code, 0);
    const appToml = join(home, 'config', 'app.toml');
    writeFileSync(appToml, readFileSync(appToml, 'utf8').replace('block-range-cap = 10000', 'block-range-cap = -1'));
    const r = ferry('start', '--home', home);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes('json-rpc.block-range-cap cannot be negative'), r.stderr);
  });

  it('start on an empty home prints the banner and exits 0 on SIGINT', async () => {
    const home = join(tmpRoot, 'start');
    const child = spawn(
      process.execPath,
      [BIN, 'start', '--home', home, '--json-rpc.address', '127.0.0.1:0', '--json-rpc.ws-address', '127.0.0.1:0', '--rpc.laddr', 'tcp://127.0.0.1:0'],
      { cwd: ROOT, env: { ...process.env, HOME: tmpRoot }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<string>((res) => child.on('exit', (code, signal) => res(`${code ?? signal}`)));
    const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    try {
      await new Promise<void>((res, rej) => {
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes('Derivation path')) res();
        });
        void exited.then((code) => rej(new Error(`exited ${code} before the banner: ${stderr}`)));
      });
      assert.ok(stdout.includes('Chain ID:       ferry_9000-1'));
      assert.ok(stdout.includes('EVM chain ID:   9000'));
      assert.match(stdout, /JSON-RPC HTTP:  http:\/\/127\.0\.0\.1:\d+/);
      assert.ok(stdout.includes('(0) 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (10000 ETH)'));
      assert.ok(stdout.includes('(0) 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'));
      assert.ok(stdout.includes('test test test test test test test test test test test junk'));
      for (const f of LAYOUT) assert.ok(existsSync(join(home, f)), f);
      child.kill('SIGINT');
      assert.equal(await exited, '0', stderr);
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('an unknown flag is rejected', () => {
    const r = ferry('start', '--home', join(tmpRoot, 'unknown'), '--json-rpc.bogus', '1');
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes("unknown option '--json-rpc.bogus'"), r.stderr);
  });
});
