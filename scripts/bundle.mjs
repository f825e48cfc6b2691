/**
 * `npm run build:bundle`: the files `ferry` runs (docs/architecture.md, "Cold start"). esbuild joins
 * the compiled modules of dist/src (tsc's output) into one file per thread entry — the CLI, the chain
 * worker, the call worker — plus shared chunks (code split: a thread loads only the chunks its entry
 * reaches; the modules `ferry start` imports later, node/run.js and the tracers, are chunks of their
 * own), in dist/src/bundle/. Loading a few large files instead of several hundred small ones is what
 * cuts the ESM loader's cost at start.
 *
 * Left to Node's own loading (external):
 *   - native addons (better-sqlite3, keccak, secp256k1): they find their .node files from their package;
 *   - quickjs-emscripten: it loads its WebAssembly from its package directory (and only for JS tracers).
 * src/evm/jumpdests.ts and src/evm/tracing/hook.ts patch the Interpreter of the installed
 * @ethereumjs/evm, which the package does not export: they find its file at run time
 * (import.meta.resolve + a dynamic import). Inside the bundle that would load a second copy, not the
 * one the bundled EVM runs, so the bundle points those imports at the bundled interpreter.js (one
 * copy, checked below); a module that resolves something else at run time fails the build.
 * The bundle sits two levels under the repository root, as dist/src/<folder>/ does, so the paths
 * the modules resolve from import.meta.url (dist/web/, bin/ferry.js, package.json) stay the same.
 * Source maps chain back to the TypeScript sources (`node --enable-source-maps`). The git commit
 * `web3_clientVersion` reports is read here, once, as config/version.ts reads it (a start spawns no git).
 */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const { COMMIT } = await import('../dist/src/config/version.js');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'dist', 'src');
const outdir = join(src, 'bundle');

/** the installed @ethereumjs/evm's interpreter module (ESM build), as the patching modules find it */
const EVM_INTERPRETER = join(dirname(fileURLToPath(import.meta.resolve('@ethereumjs/evm'))), 'interpreter.js');
const INTERPRETER_IMPORT = /import\(new URL\('\.\/interpreter\.js', \w+\)\.href\)/g;
const INTERPRETER_SPECIFIER = 'ferry-bundle:evm-interpreter';

/** The run-time lookups of the EVM interpreter become imports of the bundled one. */
const interpreterPlugin = {
  name: 'evm-interpreter',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.resolve(')) return undefined;
      const out = text.replace(INTERPRETER_IMPORT, `import(${JSON.stringify(INTERPRETER_SPECIFIER)})`);
      if (out === text) {
        throw new Error(`${args.path} resolves a module at run time (import.meta.resolve): in the bundle it would get a second copy; teach scripts/bundle.mjs about it`);
      }
      return { contents: out, loader: 'js', resolveDir: dirname(args.path) };
    });
    b.onResolve({ filter: /^ferry-bundle:evm-interpreter$/ }, () => ({ path: EVM_INTERPRETER }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: {
    ferry: join(src, 'bin', 'ferry.js'),
    chainworker: join(src, 'node', 'chainworker.js'),
    callworker: join(src, 'node', 'callworker.js'),
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  external: ['better-sqlite3', 'keccak', 'secp256k1', 'quickjs-emscripten', 'quickjs-emscripten-core', '@jitl/*'],
  define: { FERRY_BUILD_COMMIT: JSON.stringify(COMMIT) },
  plugins: [interpreterPlugin],
  metafile: true,
  // the CommonJS dependencies inside the bundle call require() for Node's built-in modules
  banner: { js: "import { createRequire as __ferryCreateRequire } from 'node:module'; const require = __ferryCreateRequire(import.meta.url);" },
});

// one interpreter in the bundle: the one the patches reach
const interpreters = Object.keys(result.metafile.inputs).filter((f) => /@ethereumjs[\\/]evm[\\/].*[\\/]interpreter\.js$/.test(f));
if (interpreters.length !== 1) throw new Error(`the bundle holds ${interpreters.length} copies of @ethereumjs/evm's interpreter.js: ${interpreters.join(', ')}`);
