/**
 * The import rule of docs/architecture.md ("Layers and the import rule"): a folder of src/ imports only from its own
 * folder or from folders of a LOWER layer — never sideways, never upwards — and the RPC surfaces
 * (evmrpc/, cometrpc/) never import chain/ or consensus/. Every import form
 * counts (static and type-only `import … from`, `export … from`, side-effect `import '…'`,
 * dynamic `import('…')`, `import x = require('…')`); TypeScript's own pre-processor finds them, so
 * comments and strings are not mistaken for imports.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { SRC_DIR, sourceFiles } from '../helpers/sources.js';

/** folder under src/ → layer (keep in step with docs/architecture.md) */
const LAYERS: Readonly<Record<string, number>> = {
  lib: 0,
  types: 1,
  config: 1,
  metrics: 1,
  fork: 1,
  store: 2,
  eventquery: 2,
  jsonrpc: 2,
  evm: 3,
  keystore: 3,
  consensus: 3,
  abci: 3,
  chain: 4,
  evmrpc: 5,
  cometrpc: 5,
  server: 5,
  node: 6,
  bin: 7,
};

/**
 * Downward imports docs/architecture.md also forbids: the RPC surfaces reach the chain and the engine only
 * through the ports they declare (node/ wires the implementations).
 */
const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  evmrpc: ['chain', 'consensus'],
  cometrpc: ['chain', 'consensus'],
};

/**
 * The wire error maps (what a domain error kind means on a surface: docs/architecture.md "Errors").
 * Code below the surfaces throws domain kinds and never picks a wire shape, so these folders may not
 * import a map, whatever its layer.
 */
const WIRE_ERROR_MAPS: readonly string[] = ['evmrpc/errors', 'cometrpc/errors', 'jsonrpc/errors'];
const NO_WIRE_MAPS: readonly string[] = ['evm', 'chain', 'consensus', 'store', 'config'];

const SRC = SRC_DIR;

/** Top folder under src/ of a path relative to src/ ('' for files directly in src/). */
function folderOf(relPath: string): string {
  const parts = relPath.split(/[\\/]/);
  return parts.length > 1 ? parts[0]! : '';
}

/**
 * Violations of the rule for a set of files, given as paths relative to src/ → source text.
 * Only relative specifiers are checked; packages and `node:` builtins are always allowed.
 */
function violations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const from = folderOf(file);
    const fromLayer = LAYERS[from];
    if (fromLayer === undefined) {
      out.push(`${file}: folder "${from || '(src root)'}" is not in the layer table`);
      continue;
    }
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!spec.startsWith('.')) continue;
      const target = relative('.', join(dirname(file), spec));
      if (target.startsWith('..')) {
        out.push(`${file}: imports "${spec}" from outside src/`);
        continue;
      }
      const to = folderOf(target);
      const module = target.split(sep).join('/').replace(/\.[jt]s$/, '');
      if (NO_WIRE_MAPS.includes(from) && WIRE_ERROR_MAPS.includes(module)) {
        out.push(`${file} (${from}) imports "${spec}", a wire error map: throw a domain error kind (src/lib/errors.ts) instead`);
        continue;
      }
      if (to === from) continue;
      const toLayer = LAYERS[to];
      if (toLayer === undefined) out.push(`${file}: imports "${spec}" from unknown folder "${to || '(src root)'}"`);
      else if (toLayer >= fromLayer) {
        const how = toLayer === fromLayer ? 'same layer (sideways)' : 'higher layer';
        out.push(`${file} (${from}, layer ${fromLayer}) imports "${spec}" from ${to} (layer ${toLayer}): ${how}`);
      } else if (FORBIDDEN[from]?.includes(to)) {
        out.push(`${file} (${from}) imports "${spec}" from ${to}: surfaces use their ports, never ${to}/ directly`);
      }
    }
  }
  return out;
}

/**
 * Surface A is assembled in one place (docs/architecture.md "Surface A's assembly"): a namespace
 * group's table factory (`create*Methods` of src/evmrpc/) is called only by `evmrpc/api.ts`'s
 * `createEvmApi`. The two factories that make a service the node keeps (it closes them and reads
 * their gauges) may also be called from node/, which hands the services to the bag.
 */
const SURFACE_A_ASSEMBLY = 'evmrpc/api.ts';
const SURFACE_A_SERVICE_FACTORIES: readonly string[] = ['createFilterMethods', 'createSubscriptionMethods'];

/** Table factories of src/evmrpc/ imported anywhere but the one assembly (value imports; type-only ones build nothing). */
function assemblyViolations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    if (file === SURFACE_A_ASSEMBLY) continue;
    const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    for (const stmt of src.statements) {
      if (!ts.isImportDeclaration(stmt) && !ts.isExportDeclaration(stmt)) continue;
      const spec = stmt.moduleSpecifier;
      if (spec === undefined || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
      const target = relative('.', join(dirname(file), spec.text)).split(sep).join('/');
      if (folderOf(target) !== 'evmrpc') continue;
      const names: string[] = [];
      if (ts.isImportDeclaration(stmt)) {
        const bindings = stmt.importClause?.isTypeOnly ? undefined : stmt.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) if (!el.isTypeOnly) names.push((el.propertyName ?? el.name).text);
        if (bindings && ts.isNamespaceImport(bindings)) names.push('* as ' + bindings.name.text);
      } else if (!stmt.isTypeOnly) {
        if (stmt.exportClause && ts.isNamedExports(stmt.exportClause)) for (const el of stmt.exportClause.elements) names.push((el.propertyName ?? el.name).text);
        else names.push('*');
      }
      for (const name of names) {
        const factory = /^create\w*Methods$/.test(name);
        const whole = name.startsWith('*') && folderOf(file) !== 'evmrpc';
        if (!factory && !whole) continue;
        if (factory && folderOf(file) === 'node' && SURFACE_A_SERVICE_FACTORIES.includes(name)) continue;
        out.push(`${file} imports ${name} from "${spec.text}": Surface A's tables are built only in ${SURFACE_A_ASSEMBLY} (createEvmApi)`);
      }
    }
  }
  return out;
}


describe('layer rule checker', () => {
  const check = (files: Record<string, string>) => violations(new Map(Object.entries(files)));

  it('allows own folder, lower layers, packages and builtins', () => {
    assert.deepEqual(
      check({
        'server/http.ts': [
          "import { a } from './util.js';",
          "import { b } from '../jsonrpc/core.js';",
          "import type { C } from '../lib/errors.js';",
          "import { createServer } from 'node:http';",
          "import WebSocket from 'ws';",
          "export * from '../chain/x.js';",
        ].join('\n'),
        'chain/deep/nested/a.ts': "import { x } from '../../b.js'; import { y } from '../../../evm/vm.js';",
      }),
      [],
    );
  });
  it('catches sideways and upward imports in every form', () => {
    const found = check({
      'evmrpc/a.ts': "import { x } from '../cometrpc/b.js';",
      'evmrpc/b.ts': "import type { T } from '../chain/types.js';",
      'consensus/c.ts': "export { y } from '../chain/app.js';",
      'lib/d.ts': "export * from '../types/chain.js';",
      'jsonrpc/e.ts': "const m = await import('../server/http.js');",
      'store/f.ts': "import '../evm/side.js';",
      'types/g.ts': "import x = require('../config/options.js');",
      'cometrpc/h.ts': "import { Engine } from '../consensus/engine.js';",
      'evm/i.ts': "import { State } from '../node/state.js';",
    });
    assert.equal(found.length, 9, found.join('\n'));
    assert.match(found[7]!, /cometrpc\/h\.ts .*from consensus: surfaces use their ports/);
    assert.match(found[8]!, /evm\/i\.ts .*node \(layer 6\): higher layer/);
    assert.match(found[0]!, /evmrpc\/a\.ts .*cometrpc.*sideways/);
    assert.match(found[1]!, /evmrpc\/b\.ts \(evmrpc\) imports .*from chain: surfaces use their ports/);
    assert.match(found[3]!, /lib\/d\.ts .*types \(layer 1\)/);
    assert.match(found[6]!, /types\/g\.ts .*config.*sideways/);
  });
  it('keeps the wire error maps out of evm/, chain/, consensus/, store/ and config/', () => {
    const found = check({
      'chain/a.ts': "import { toJsonRpcError } from '../jsonrpc/errors.js';",
      'evm/b.ts': "import type { JsonRpcError } from '../jsonrpc/errors';",
      'consensus/c.ts': "export { x } from '../jsonrpc/errors.js';",
      'store/d.ts': "import { y } from '../jsonrpc/errors.js';",
      'config/e.ts': "import { z } from '../jsonrpc/errors.js';",
      'chain/deep/f.ts': "import { evmErrors } from '../../evmrpc/errors.js';",
      'evmrpc/g.ts': "import { toJsonRpcError } from '../jsonrpc/errors.js';",
      'chain/h.ts': "import { CheckCode } from './checkcodes.js'; import { txRejected } from '../lib/errors.js';",
    });
    assert.equal(found.length, 6, found.join('\n'));
    for (const line of found) assert.match(line, /a wire error map: throw a domain error kind/);
  });
  it('ignores imports in comments and strings', () => {
    assert.deepEqual(
      check({
        'lib/a.ts': "// import { x } from '../node/x.js';\n/* export * from '../bin/y.js' */\nconst s = \"import z from '../chain/z.js'\";",
      }),
      [],
    );
  });
  it('fails on unknown folders, files in the src root and imports leaving src/', () => {
    const found = check({
      'widgets/a.ts': "import { x } from '../lib/x.js';",
      'index.ts': "import { x } from './lib/x.js';",
      'lib/b.ts': "import { y } from '../gadgets/y.js';",
      'server/c.ts': "import { z } from '../../test/helpers.js';",
    });
    assert.equal(found.length, 4, found.join('\n'));
    assert.match(found[0]!, /widgets\/a\.ts: folder "widgets" is not in the layer table/);
    assert.match(found[1]!, /index\.ts: folder "\(src root\)"/);
    assert.match(found[2]!, /unknown folder "gadgets"/);
    assert.match(found[3]!, /outside src/);
  });
});

describe('Surface A assembly checker', () => {
  it('catches a table built outside evmrpc/api.ts, and only that', () => {
    const allowed = {
      'evmrpc/api.ts': "import { createDebugMethods } from './debug.js'; import { createEvmMethods } from './methods.js';",
      'node/ethrpc.ts': "import { createEvmApi } from '../evmrpc/api.js'; import { createFilterMethods } from '../evmrpc/filters.js';",
      'node/run.ts': "import type { createDevMethods } from '../evmrpc/devmethods.js'; import { AccountSigner } from '../evmrpc/accounts.js';",
      'node/x.ts': "import { type createMinerMethods, encodeState } from '../evmrpc/devcheats.js'; import { createStore } from '../store/store.js';",
      'evmrpc/extra.ts': "import { callDefaults } from './methods.js'; import * as codecs from './codecs.js';",
    };
    const refused = {
      'node/a.ts': "import { createDevMethods } from '../evmrpc/devmethods.js';",
      'node/b.ts': "import { createDebugMethods as debug } from '../evmrpc/debug.js';",
      'evmrpc/c.ts': "import { createTxPoolMethods } from './txpool.js';",
      'server/d.ts': "import { createFilterMethods } from '../evmrpc/filters.js';",
      'node/e.ts': "import * as miner from '../evmrpc/miner.js';",
      'node/f.ts': "export { createCheatMethods } from '../evmrpc/devcheats.js';",
    };
    const found = assemblyViolations(new Map(Object.entries({ ...allowed, ...refused })));
    assert.deepEqual(
      found.map((line) => line.split(' ')[0]),
      Object.keys(refused),
    );
    assert.match(found[0]!, /node\/a\.ts imports createDevMethods .*only in evmrpc\/api\.ts/);
    assert.match(found[4]!, /node\/e\.ts imports \* as miner/);
  });
});

describe('src/ follows the layer rule', () => {
  it('has no folder outside the layer table (a table folder may not exist yet: git keeps no empty folders)', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    assert.deepEqual(folders.filter((f) => !(f in LAYERS)), []);
    assert.ok(folders.length >= Object.keys(LAYERS).length - 1, `src/ lost folders of the layer table: ${folders.join(', ')}`);
  });
  it('no file imports from the same or a higher layer', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.size > 0, 'no source files found under ' + SRC);
    assert.deepEqual(violations(files), []);
  });
  it("builds Surface A's tables in one place (evmrpc/api.ts)", () => {
    assert.deepEqual(assemblyViolations(sourceFiles(SRC)), []);
  });
});
