/**
 * `npm run build:bundle`: the files `ferry` runs (docs/architecture.md, "Cold start"). esbuild joins
 * the compiled modules of dist/src (tsc's output) into one file per thread entry — the CLI, the chain
 * worker, the call worker, and each module that runs itself as a worker (`new Worker(new
 * URL(import.meta.url))`, e.g. the trace worker) — plus shared chunks (code split: a thread loads only
 * the chunks its entry reaches; the modules `ferry start` imports later, node/run.js and the tracers,
 * are chunks of their own), in dist/src/bundle/. Loading a few large files instead of several hundred
 * small ones is what cuts the ESM loader's cost at start.
 *
 * Left to Node's own loading (external):
 *   - native addons (better-sqlite3, keccak, secp256k1): they find their .node files from their package;
 *   - quickjs-emscripten: it loads its WebAssembly from its package directory (and only for JS tracers).
 *
 * Some modules of src/evm patch files of the installed @ethereumjs/evm that the package does not export
 * (its Interpreter, ...): they find them at run time, `const entry = import.meta.resolve('@ethereumjs/evm')`
 * then `await import(new URL('./interpreter.js', entry).href)`. Inside the bundle that would load a
 * second copy, not the one the bundled EVM runs, so each such import is pointed at the bundled file
 * (one copy, checked below). A run-time lookup of another shape fails the build, as does a module that
 * refers to a file beside itself (`new URL('./x.js', import.meta.url)`, e.g. a new worker) that the
 * bundle does not have.
 *
 * The bundle sits two levels under the repository root, as dist/src/<folder>/ does, so the paths
 * the modules resolve from import.meta.url (dist/web/, bin/ferry.js, package.json) stay the same.
 * Source maps chain back to the TypeScript sources (`node --enable-source-maps`). The git commit
 * `web3_clientVersion` reports is read here, once, as config/version.ts reads it (a start spawns no git).
 */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const { COMMIT } = await import('../dist/src/config/version.js');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'dist', 'src');
const outdir = join(src, 'bundle');

/** `const <name> = import.meta.resolve('<package>')` */
const RESOLVED_PACKAGE = /\b(\w+) = import\.meta\.resolve\((['"])([^'"]+)\2\)/g;
/** `import(new URL('<relative path>', <name>).href)` */
const IMPORT_BESIDE = /import\(new URL\((['"])(\.\/[^'"]+)\1, (\w+)\)\.href\)/g;
const SPECIFIER_PREFIX = 'ferry-bundle:';
/** a module that runs itself in a worker thread */
const SELF_WORKER = /new Worker\(new URL\(import\.meta\.url\)/;
/** a file found beside the module at run time */
const FILE_BESIDE = /new URL\((['"])(\.{1,2}\/[^'"]+)\1, import\.meta\.url\)/g;

/** the files of installed packages the bundle points run-time imports at */
const pointed = new Set();

/** The run-time imports of files of an installed package become imports of the bundled ones. */
const runtimeImports = {
  name: 'runtime-imports',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.resolve(')) return undefined;
      const packages = new Map([...text.matchAll(RESOLVED_PACKAGE)].map((m) => [m[1], m[3]]));
      const out = text.replace(IMPORT_BESIDE, (whole, _q, rel, name) => {
        const pkg = packages.get(name);
        if (pkg === undefined) return whole;
        const file = join(dirname(fileURLToPath(import.meta.resolve(pkg))), rel);
        pointed.add(file);
        return `import(${JSON.stringify(SPECIFIER_PREFIX + file)})`;
      });
      // every file found from a resolved package's location must have been one of those imports
      const left = [...packages.keys()].filter((name) => new RegExp(`new URL\\([^)]*\\b${name}\\b`).test(out));
      if (left.length > 0 || packages.size === 0) {
        throw new Error(`${args.path} resolves a module at run time in a way scripts/bundle.mjs does not know (import.meta.resolve): in the bundle it would get a second copy; teach scripts/bundle.mjs about it`);
      }
      return { contents: out, loader: 'js', resolveDir: dirname(args.path) };
    });
    b.onResolve({ filter: /^ferry-bundle:/ }, (args) => ({ path: args.path.slice(SPECIFIER_PREFIX.length) }));
  },
};

/** The compiled modules that run themselves as workers, each an entry of its own. */
function selfWorkers(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== outdir) found.push(...selfWorkers(path));
    } else if (entry.name.endsWith('.js') && SELF_WORKER.test(readFileSync(path, 'utf8'))) {
      found.push(path);
    }
  }
  return found;
}

rmSync(outdir, { recursive: true, force: true });
const entryPoints = {
  ferry: join(src, 'bin', 'ferry.js'),
  chainworker: join(src, 'node', 'chainworker.js'),
  callworker: join(src, 'node', 'callworker.js'),
};
for (const file of selfWorkers(src)) entryPoints['worker-' + relative(src, file).replace(/\.js$/, '').replace(/[\\/]/g, '-')] = file;

const result = await build({
  absWorkingDir: root,
  entryPoints,
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
  plugins: [runtimeImports],
  metafile: true,
  // the CommonJS dependencies inside the bundle call require() for Node's built-in modules
  banner: { js: "import { createRequire as __ferryCreateRequire } from 'node:module'; const require = __ferryCreateRequire(import.meta.url);" },
});

// one copy of each pointed-at file: no other build (cjs/esm) of the same path in the bundle
const inputs = Object.keys(result.metafile.inputs).map((f) => resolve(root, f));
for (const file of pointed) {
  const tail = file.replace(/^.*node_modules[\\/]/, '').replace(/[\\/]dist[\\/][^\\/]+[\\/]/, '/dist/*/');
  const copies = inputs.filter((f) => f.replace(/^.*node_modules[\\/]/, '').replace(/[\\/]dist[\\/][^\\/]+[\\/]/, '/dist/*/') === tail);
  if (copies.length !== 1 || copies[0] !== file) throw new Error(`the bundle holds ${copies.length} copies of ${tail}: ${copies.join(', ')}`);
}
// the files the bundled modules expect beside themselves are there
for (const out of Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'))) {
  const path = resolve(root, out);
  for (const m of readFileSync(path, 'utf8').matchAll(FILE_BESIDE)) {
    if (!existsSync(resolve(dirname(path), m[2]))) {
      throw new Error(`${out} refers to ${m[2]} beside itself, which the bundle does not have (a new worker file? add it to the entries of scripts/bundle.mjs)`);
    }
  }
}
