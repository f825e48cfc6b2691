/**
 * scripts/solcjs-as-solc.mjs, the npm solc behind native solc's command line for forge (docs/fork-mode.md
 * "With Foundry"): `--version` parses as foundry-compilers parses it (the last non-empty line, `Version: `
 * stripped, semver: crates/compilers/src/compilers/solc/compiler.rs version_from_output); `--standard-json`
 * compiles stdin, reading an import missing from the input from the base path only; an unknown argument
 * is refused with exit code 2.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/paths.js';

const WRAPPER = join(REPO_ROOT, 'scripts', 'solcjs-as-solc.mjs');
/** semver 2.0 with build metadata, as the semver crate accepts it */
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

function wrapper(args: string[], input = '', cwd?: string) {
  // run as forge runs it: the file itself (its #! line), not `node file`
  return spawnSync(WRAPPER, args, { input, cwd, encoding: 'utf8', timeout: 120_000 });
}

describe('scripts/solcjs-as-solc.mjs', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'ferry-solcjs-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('--version: the last non-empty line is `Version: <semver>` of solc 0.8.28', () => {
    const r = wrapper(['--version']);
    assert.equal(r.status, 0, r.stderr);
    const last = r.stdout.split('\n').filter((l) => l.trim() !== '').at(-1)!;
    assert.match(last, /^Version: /);
    const version = last.slice('Version: '.length);
    assert.match(version, SEMVER);
    assert.ok(version.startsWith('0.8.28+commit.'), version);
  });

  it('--standard-json compiles stdin; an import not in the input is read from the base path, not above it', () => {
    const base = join(tmp, 'project');
    mkdirSync(join(base, 'lib'), { recursive: true });
    writeFileSync(join(base, 'lib', 'B.sol'), '// SPDX-License-Identifier: Apache-2.0\npragma solidity 0.8.28;\ncontract B { uint256 public x = 7; }\n');
    writeFileSync(join(tmp, 'Outside.sol'), '// SPDX-License-Identifier: Apache-2.0\npragma solidity 0.8.28;\ncontract Outside {}\n');
    const input = (importPath: string) =>
      JSON.stringify({
        language: 'Solidity',
        sources: { 'A.sol': { content: `// SPDX-License-Identifier: Apache-2.0\npragma solidity 0.8.28;\nimport "${importPath}";\ncontract A is B {}\n` } },
        settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      });
    const ok = wrapper(['--base-path', base, '--standard-json'], input('lib/B.sol'), base);
    assert.equal(ok.status, 0, ok.stderr);
    const out = JSON.parse(ok.stdout);
    assert.deepEqual((out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error'), []);
    assert.ok(out.contracts['A.sol'].A.evm.bytecode.object.length > 0);
    assert.ok(out.contracts['lib/B.sol'].B.abi.some((f: { name: string }) => f.name === 'x'));
    // a file above the base path is not read; the error comes back in the output, as native solc's
    // (by its absolute path: solc drops `../` above the root of a relative import before asking)
    const refused = wrapper(['--base-path', base, '--standard-json'], input(join(tmp, 'Outside.sol')), base);
    assert.equal(refused.status, 0, refused.stderr);
    const errors = (JSON.parse(refused.stdout).errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /^Source ".*Outside\.sol" not found: File not found inside the base path/);
  });

  it('refuses an argument it does not implement, and neither or both modes', () => {
    for (const args of [['--bin', 'A.sol'], [], ['--version', '--standard-json'], ['--base-path']]) {
      const r = wrapper(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, /^solcjs-as-solc: /);
    }
  });
});
