/** The TypeScript sources under src/, for tests that check rules over the whole tree. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './paths.js';

export const SRC_DIR = join(REPO_ROOT, 'src');

/** Every `.ts` file under `dir` (default src/): path relative to src/ with `/` separators → source text. */
export function sourceFiles(dir: string = SRC_DIR, acc = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, acc);
    else if (entry.name.endsWith('.ts')) acc.set(relative(SRC_DIR, full).split(sep).join('/'), readFileSync(full, 'utf8'));
  }
  return acc;
}

/** The text of a TypeScript source without its comments (parsed, then printed without them). */
export function withoutComments(text: string): string {
  const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(file);
}

/** `file: match` for every match, in the code of each file (comments left out), of the patterns `patternsFor(file)` names. */
export function findInCode(files: ReadonlyMap<string, string>, patternsFor: (file: string) => readonly RegExp[]): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const patterns = patternsFor(file);
    if (patterns.length === 0) continue;
    const code = withoutComments(text);
    for (const re of patterns) {
      for (const m of code.matchAll(re)) out.push(`${file}: ${m[0]}`);
    }
  }
  return out;
}

/** The comments of a TypeScript source (each `//` or `/* … *\/` text once, in order), found by the parser, so strings and regexes are never taken for comments. */
export function commentsOf(text: string): string[] {
  const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const seen = new Map<number, string>();
  const take = (ranges: readonly ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node): void => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(file);
  take(ts.getLeadingCommentRanges(text, file.endOfFileToken.pos));
  return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}
