/**
 * The CometBFT records and Surface B's answers stay typed (docs/architecture.md "Storage" and
 * "Surface B's layout"): no code casts a stored record to CometBlockRecord or writes one `as never`
 * (the store's typed repository, src/store/repository.ts, gives the type), and Surface B builds its
 * answers from the named JSON shapes of src/cometrpc/jsontypes.ts, not from the untyped `Json` —
 * which only the genesis document, passed through unchanged (routes/status.ts), may be.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findInCode, sourceFiles } from '../helpers/sources.js';

/** cometrpc files that may name `Json`: where it is defined, and the genesis route */
const JSON_ALLOWED: readonly string[] = ['cometrpc/jsontypes.ts', 'cometrpc/routes/status.ts'];

const RECORD_CAST = /\bas\s+unknown\s+as\s+CometBlockRecord\b/g;
const UNTYPED_WRITE = /\bcomet\.put\([^;]*\bas\s+never\b/g;
const JSON_LEAF = /\bJson\b/g;

/** `file: match` for every untyped record or answer in the given files (path relative to src/ → source). */
function untyped(files: ReadonlyMap<string, string>): string[] {
  return findInCode(files, (file) =>
    file.startsWith('cometrpc/') && !JSON_ALLOWED.includes(file) ? [RECORD_CAST, UNTYPED_WRITE, JSON_LEAF] : [RECORD_CAST, UNTYPED_WRITE],
  );
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
