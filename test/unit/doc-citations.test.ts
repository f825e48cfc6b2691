/**
 * Code comments cite the repository's own docs (docs/*.md) or upstream sources (geth, Evmos,
 * CometBFT files), never the design notes and specification kept outside the repository: a reader of
 * the code cannot open those. This scans every comment of src/, test/ and web/ (TypeScript, found by
 * the parser, so strings and regexes are left alone) for such a file name.
 */
import assert from 'node:assert/strict';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/paths.js';
import { commentsOf, sourceFiles } from '../helpers/sources.js';

/** file names outside the repository; built from parts so this file's own text does not match */
const OUTSIDE = new RegExp(`\\b(?:${['SP', 'EC'].join('')}|${['DES', 'IGN'].join('')})\\.md\\b|\\.\\./shared/`, 'g');

/** the folders scanned, relative to the repository (test/vendor, golden, fixtures, contracts hold no TypeScript of ours) */
const SCANNED = ['src', 'test/helpers', 'test/unit', 'test/e2e', 'web'];


/** `file: match` for every citation of an outside file in a comment (path relative to the repository → source). */
function outsideCitations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    for (const comment of commentsOf(text)) {
      for (const m of comment.matchAll(OUTSIDE)) out.push(`${file}: ${m[0]}`);
    }
  }
  return out;
}

function repoFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of SCANNED) {
    const abs = join(REPO_ROOT, dir);
    // sourceFiles names files relative to src/; name them relative to the repository instead
    for (const [rel, text] of sourceFiles(abs)) files.set(relative(REPO_ROOT, join(REPO_ROOT, 'src', rel)).split(sep).join('/'), text);
  }
  return files;
}

describe('comments cite docs/ or upstream, not files outside the repository', () => {
  const spec = ['SP', 'EC'].join('') + '.md';
  const design = ['DES', 'IGN'].join('') + '.md';
  it('the scan finds the names in line and block comments, not in strings or regexes', () => {
    const found = outsideCitations(
      new Map([
        ['src/a.ts', `const x = 1; // as ${spec} says\n/** ${design}: bounded */ const y = '${spec}';`],
        ['src/b.ts', `const re = /${spec}/; const s = \`../shared/${design}\`; /* see ../shared/notes */`],
        ['src/c.ts', `// docs/compatibility.md\nconst z = 2;`],
      ]),
    );
    assert.deepEqual(found, [`src/a.ts: ${spec}`, `src/a.ts: ${design}`, 'src/b.ts: ../shared/']);
  });
  it('no comment in src/, test/ or web/ cites them', () => {
    const files = repoFiles();
    assert.ok(files.size > 100, `the scan read ${files.size} files`);
    assert.deepEqual(outsideCitations(files), []);
  });
});
