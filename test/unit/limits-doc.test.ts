/**
 * Keeps docs/limits.md true: every row names a constant defined exactly once in src/, in the file the
 * row names as its owner, with the value the row shows; and every exported constant named like a
 * limit has a row, unless it is listed below as not a limit.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/paths.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs', 'limits.md'), 'utf8');
const SRC = join(REPO_ROOT, 'src');

/** names that look like limits but are sizes of a format, units or defaults documented elsewhere */
const NOT_LIMITS: ReadonlySet<string> = new Set([
  'ED25519_SEED_SIZE',
  'ED25519_PUBKEY_SIZE',
  'ED25519_PRIVKEY_SIZE',
  'ED25519_SIGNATURE_SIZE',
  'HASH_SIZE',
  'ADDRESS_SIZE',
  'BLOCK_PART_SIZE_BYTES',
  // genesis defaults: docs/configuration.md's genesis section
  'DEFAULT_BLOCK_MAX_BYTES',
  'DEFAULT_BLOCK_MAX_GAS',
  'EVENT_LOOP_MONITORING_PRECISION_MS',
  'FORMAT_CACHE_SIZES',
]);

/** an exported constant named like a limit */
const LIMIT_NAME = /^(MAX_[A-Z0-9_]+|[A-Z0-9_]+_(MAX|LIMIT|CAP|MS|BYTES|SIZE|SIZES|ROWS|PER_WORKER|PER_PAGE|DEPTH|SECONDS|FILES|REQUESTS))$/;
const DEFINITION = /^(export )?const ([A-Z][A-Z0-9_]*)(?:: [^=]+)? = (.+?);?$/;

interface Definition {
  file: string;
  exported: boolean;
  value: string;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** every top-level upper-case constant of src/ → its definitions */
function definitions(): Map<string, Definition[]> {
  const out = new Map<string, Definition[]>();
  for (const path of sources(SRC)) {
    const file = relative(REPO_ROOT, path).split('\\').join('/');
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const m = DEFINITION.exec(line.trimEnd());
      if (!m) continue;
      const list = out.get(m[2]!) ?? [];
      list.push({ file, exported: m[1] !== undefined, value: m[3]! });
      out.set(m[2]!, list);
    }
  }
  return out;
}

interface Row {
  name: string;
  value: string;
  owner: string;
}

function rows(): Row[] {
  const out: Row[] = [];
  for (const line of DOC.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)` \| `([^`]+)` \| `([^`]+)` \|/.exec(line);
    if (m) out.push({ name: m[1]!, value: m[2]!, owner: m[3]! });
  }
  return out;
}

const normal = (v: string) => v.replace(/\s+/g, '');

describe('docs/limits.md', () => {
  const defs = definitions();
  const table = rows();

  it('names each limit once, with its one owner and its value', () => {
    assert.ok(table.length > 50, `only ${table.length} rows found`);
    const seen = new Set<string>();
    for (const row of table) {
      assert.ok(!seen.has(row.name), `${row.name} has two rows`);
      seen.add(row.name);
      const found = defs.get(row.name) ?? [];
      assert.deepEqual(found.map((d) => d.file), [row.owner], `${row.name}: defined in ${found.map((d) => d.file).join(', ') || 'no file'}, not only in ${row.owner}`);
      assert.equal(normal(found[0]!.value), normal(row.value), `${row.name}: the source says ${found[0]!.value}`);
    }
  });

  it('lists every exported limit constant', () => {
    const listed = new Set(table.map((r) => r.name));
    const missing = [...defs]
      .filter(([name, ds]) => LIMIT_NAME.test(name) && ds.some((d) => d.exported) && !NOT_LIMITS.has(name) && !listed.has(name))
      .map(([name, ds]) => `${name} (${ds.map((d) => d.file).join(', ')})`);
    assert.deepEqual(missing, []);
  });
});
