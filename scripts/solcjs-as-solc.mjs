#!/usr/bin/env node
/**
 * The npm `solc` package (solcjs 0.8.28, WebAssembly) behind native solc's command line, for Foundry:
 * `forge build|test --use scripts/solcjs-as-solc.mjs --offline` (or `solc = "<path>"` in foundry.toml)
 * compiles with it instead of downloading a solc binary (docs/fork-mode.md "With Foundry").
 *
 * foundry-compilers (crates/compilers/src/compilers/solc/compiler.rs) calls solc two ways:
 * - `solc --version`: it takes the last non-empty line of stdout, strips `Version: ` and parses the rest
 *   as semver (version_from_output);
 * - `solc [--allow-paths a,b] [--include-path p]... [--base-path p] --standard-json` in the base path,
 *   the standard-JSON input on stdin (every source with its content), the output JSON on stdout, and a
 *   non-zero exit only when solc itself failed (configure_cmd, compile_output).
 * Anything else is refused with a message on stderr and exit code 2. Imports not in the input are read
 * only from under the base, include and allowed paths, as native solc's file reader does.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, relative, resolve } from 'node:path';

const USAGE = 'usage: solcjs-as-solc.mjs --version | [--allow-paths a,b] [--include-path p]... [--base-path p] --standard-json';

function fail(message) {
  process.stderr.write(`solcjs-as-solc: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { version: false, standardJson: false, basePath: undefined, includePaths: [], allowPaths: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v === '') fail(`${a} needs a value`);
      return v;
    };
    if (a === '--version') opts.version = true;
    else if (a === '--standard-json') opts.standardJson = true;
    else if (a === '--base-path') opts.basePath = value();
    else if (a === '--include-path') opts.includePaths.push(value());
    else if (a === '--allow-paths') opts.allowPaths.push(...value().split(',').filter((p) => p !== ''));
    else fail(`unsupported argument ${JSON.stringify(a)}`);
  }
  if (opts.version === opts.standardJson) fail('exactly one of --version and --standard-json');
  return opts;
}

function loadSolc() {
  return createRequire(import.meta.url)('solc');
}

const inside = (dir, file) => {
  const r = relative(dir, file);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};

/** solcjs's import callback: a path not given in the input, read from under the roots only. */
function importReader(opts) {
  const base = resolve(opts.basePath ?? process.cwd());
  const roots = [base, ...opts.includePaths.map((p) => resolve(base, p))];
  const allowed = [...roots, ...opts.allowPaths.map((p) => resolve(base, p))];
  return (path) => {
    for (const root of roots) {
      const file = resolve(root, path);
      if (!allowed.some((dir) => inside(dir, file))) continue;
      try {
        return { contents: readFileSync(file, 'utf8') };
      } catch {
        // not under this root; try the next
      }
    }
    return { error: `File not found inside the base path or any of the include paths: ${path}` };
  };
}

function readStdin() {
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    return fail(`cannot read standard input: ${err.message}`);
  }
}

const opts = parseArgs(process.argv.slice(2));
const solc = loadSolc();
if (opts.version) {
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${solc.version()}\n`);
} else {
  const input = readStdin();
  process.stdout.write(solc.compile(input, { import: importReader(opts) }));
}
