/**
 * The CometBFT records and Surface B's answers stay typed (docs/architecture.md "Storage" and
 * "Surface B's layout"): no code casts a stored record to CometBlockRecord or writes one `as never`
 * (the store's typed repository, src/store/repository.ts, gives the type), and Surface B builds its
 * answers from the named JSON shapes of src/cometrpc/jsontypes.ts, not from the untyped `Json` —
 * which only the genesis document, passed through unchanged (routes/status.ts), may be.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { sourceFiles } from '../helpers/sources.js';

/** cometrpc files that may name `Json`: where it is defined, and the genesis route */
const JSON_ALLOWED: readonly string[] = ['cometrpc/jsontypes.ts', 'cometrpc/routes/status.ts'];

const RECORD_CAST = /\bas\s+unknown\s+as\s+CometBlockRecord\b/g;
const UNTYPED_WRITE = /\bcomet\.put\([^;]*\bas\s+never\b/g;
const JSON_LEAF = /\bJson\b/g;

/** The text of a TypeScript source without its comments (parsed, then printed without them). */
function withoutComments(text: string): string {
  const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(file);
}

/** `file: match` for every untyped record or answer in the given files (path relative to src/ → source). */
function untyped(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const code = withoutComments(text);
    const patterns = [RECORD_CAST, UNTYPED_WRITE];
    if (file.startsWith('cometrpc/') && !JSON_ALLOWED.includes(file)) patterns.push(JSON_LEAF);
    for (const re of patterns) {
      for (const m of code.matchAll(re)) out.push(`${file}: ${m[0]}`);
    }
  }
  return out;
}

describe('CometBFT records and Surface B answers are typed', () => {
  it('the scan finds casts, untyped writes and Json leaves in code, not in comments or where allowed', () => {
    const found = untyped(
      new Map([
        ['consensus/a.ts', 'const rec = store.comet.get(h) as unknown as CometBlockRecord; // as unknown as CometBlockRecord'],
        ['consensus/b.ts', 'this.store.comet.put(height, rec as never);'],
        ['cometrpc/format.ts', '/* Json */ export function headerJson(h: Header): Json { return {}; }'],
        ['cometrpc/jsontypes.ts', 'export type Json = null | Json[];'],
        ['cometrpc/routes/status.ts', 'genesis: Json;'],
        ['evmrpc/format.ts', 'type Json = unknown;'],
      ]),
    );
    assert.deepEqual(found, ['consensus/a.ts: as unknown as CometBlockRecord', 'consensus/b.ts: comet.put(height, rec as never', 'cometrpc/format.ts: Json']);
  });
  it('src/ casts no CometBFT record, writes none untyped, and Surface B answers in named JSON types', () => {
    const files = sourceFiles();
    assert.ok(files.size > 0);
    assert.deepEqual(untyped(files), []);
  });
});
