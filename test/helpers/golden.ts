/**
 * Regenerating golden transcripts (geth's WRITE_TEST_FILES): with FERRY_WRITE_GOLDEN=1 the golden
 * runners (golden, ws-golden, comet-golden) record each live answer instead of asserting it, and
 * rewrite only the answers that differ, in place, keeping the rest of the file byte-identical (its
 * layout, its hand-written patterns such as "$id:NAME" or "$hex:20" wherever the live value still
 * matches them). The change is then reviewed in `git diff test/golden` like any other.
 *
 * `npm run golden:write` builds and runs the three runners in this mode.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

/**
 * Whether the golden runners rewrite test/golden/*.json from the live answers (FERRY_WRITE_GOLDEN=1).
 * Never under CI=true: a CI run that recorded would pass by writing whatever it got, so it throws.
 */
export function writeGoldenMode(env: NodeJS.ProcessEnv): boolean {
  const write = env.FERRY_WRITE_GOLDEN === '1';
  if (write && env.CI === 'true') throw new Error('FERRY_WRITE_GOLDEN=1 under CI=true: golden transcripts are checked in CI, never recorded');
  return write;
}

/** true when the golden runners should rewrite test/golden/*.json from the live answers */
export const WRITE_GOLDEN = writeGoldenMode(process.env);

export type JsonPath = readonly (string | number)[];

interface Span {
  start: number;
  end: number;
}

/** The text span of every value in a JSON document, keyed by its path (JSON.stringify of the path). */
export function jsonSpans(text: string): Map<string, Span> {
  const spans = new Map<string, Span>();
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  /** the members of an object or array: `item(n)` reads the n-th, then a comma or `close` */
  const members = (close: string, item: (n: number) => void): void => {
    i++;
    ws();
    for (let n = 0; text[i] !== close; n++) {
      item(n);
      ws();
      if (text[i] === ',') i++;
      ws();
    }
    i++;
  };
  const value = (path: (string | number)[]): void => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      members('}', () => {
        const key = str();
        ws();
        i++; // ':'
        value([...path, key]);
      });
    } else if (c === '[') {
      members(']', (n) => value([...path, n]));
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !',]} \t\r\n'.includes(text[i]!)) i++;
    }
    spans.set(JSON.stringify(path), { start, end: i });
  };
  value([]);
  return spans;
}

/** One line, `{ "a": 1, "b": [1, 2] }`: the form of the hand-laid-out transcripts. */
function inline(v: unknown): string {
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${v.map(inline).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`).join(', ')} }`;
  }
  return JSON.stringify(v);
}

/**
 * `text` with the value at each path replaced: a value that was on one line stays on one line, one
 * laid out over lines is laid out over lines (2-space indent, from the original line's indent).
 * Every other byte is kept.
 */
export function rewriteJson(text: string, edits: readonly { path: JsonPath; value: unknown }[]): string {
  const spans = jsonSpans(text);
  const located = edits.map((e) => {
    const span = spans.get(JSON.stringify(e.path));
    if (span === undefined) throw new Error(`golden: no value at ${JSON.stringify(e.path)}`);
    return { ...span, value: e.value };
  });
  located.sort((a, b) => b.start - a.start);
  let out = text;
  for (const { start, end, value } of located) {
    const old = out.slice(start, end);
    let rendered: string;
    if (old.includes('\n')) {
      const lineStart = out.lastIndexOf('\n', start) + 1;
      const indent = /^[ \t]*/.exec(out.slice(lineStart, start))![0];
      rendered = JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
    } else {
      rendered = inline(value);
    }
    out = out.slice(0, start) + rendered + out.slice(end);
  }
  return out;
}

/**
 * The value to write for a live answer `got` where the transcript expected `want`: `got`, except that
 * a string of `want` is kept where `keep(want, got)` says it still matches (a pattern such as "$int"
 * or "$id:NAME"), so regenerating does not turn patterns into one run's values.
 */
export function refresh(want: unknown, got: unknown, keep: (want: string, got: unknown) => boolean): unknown {
  if (typeof want === 'string' && keep(want, got)) return want;
  if (Array.isArray(want) && Array.isArray(got)) return got.map((x, i) => (i < want.length ? refresh(want[i], x, keep) : x));
  if (want !== null && typeof want === 'object' && !Array.isArray(want) && got !== null && typeof got === 'object' && !Array.isArray(got)) {
    const w = want as Record<string, unknown>;
    return Object.fromEntries(Object.entries(got).map(([k, x]) => [k, k in w ? refresh(w[k], x, keep) : x]));
  }
  return got;
}

/** Collects the changed answers of one golden file and writes them back (only when something changed). */
export class GoldenRecorder {
  private readonly text: string;
  private readonly doc: unknown;
  private readonly edits: { path: JsonPath; value: unknown }[] = [];

  constructor(private readonly file: string) {
    this.text = readFileSync(file, 'utf8');
    this.doc = JSON.parse(this.text) as unknown;
  }

  /** Records the live value at `path` (a value already present in the file); nothing when unchanged. */
  record(path: JsonPath, value: unknown): void {
    let cur: unknown = this.doc;
    for (const k of path) cur = (cur as Record<string | number, unknown> | undefined)?.[k];
    if (!isDeepStrictEqual(cur, value)) this.edits.push({ path, value });
  }

  /** Writes the file when an answer changed; returns the number of values rewritten. */
  flush(): number {
    if (this.edits.length === 0) return 0;
    writeFileSync(this.file, rewriteJson(this.text, this.edits));
    return this.edits.length;
  }
}
