/**
 * Prometheus text format 0.0.4 for the tests: a strict reader of the exposition format (one scan per
 * line: `# HELP`, `# TYPE`, samples with escaped label values, Go float values), grouping samples into
 * families by the `_bucket`/`_sum`/`_count` suffixes of histograms and summaries.
 *
 * npm's parse-prometheus-text-format (1.1.1) is used as a second reader: it agrees on every family's
 * name, type and help and on every gauge and counter sample, but it drops the labels, sums and counts
 * of labelled histograms and summaries (its `flattenMetrics` keeps unlabelled ones only), which the
 * CometBFT metrics all are (`chain_id`). `crossCheck` compares the two.
 */
import { createRequire } from 'node:module';
import { freePort } from './node.js';
import { waitFor } from './rpc.js';

export type Labels = Record<string, string>;
export interface Sample {
  /** the sample's own name (`x_bucket`, `x_sum`, `x_count`, or the family name) */
  name: string;
  labels: Labels;
  value: number;
}
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const GAUGE_READ_TIMEOUT_MS = 5_000;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;

/** A Go float (strconv.ParseFloat, which Prometheus uses): special values in any case (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf' || special === '+infinity' || special === 'infinity') return Infinity;
  if (special === '-inf' || special === '-infinity') return -Infinity;
  if (special === 'nan') return NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`bad value ${JSON.stringify(text)} in ${JSON.stringify(line)}`);
  return v;
}

/** One sample line: name{label="value",...} value [timestamp] */
function parseSample(line: string): Sample {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at column ${i} of ${JSON.stringify(line)}`);
  };
  if (!NAME_START.test(line[0] ?? '')) fail('metric name expected');
  while (i < line.length && NAME_CHAR.test(line[i]!)) i++;
  const name = line.slice(0, i);
  const labels: Labels = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const start = i;
      if (!NAME_START.test(line[i] ?? '') || line[i] === ':') fail('label name expected');
      while (i < line.length && /[a-zA-Z0-9_]/.test(line[i]!)) i++;
      const label = line.slice(start, i);
      if (line[i++] !== '=') fail('`=` expected');
      if (line[i++] !== '"') fail('`"` expected');
      let value = '';
      for (;;) {
        const c = line[i++];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else fail('bad escape');
        } else value += c;
      }
      if (label in labels) fail(`label ${label} repeated`);
      labels[label] = value;
      while (line[i] === ' ') i++;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') fail('`,` or `}` expected');
    }
  }
  if (line[i] !== ' ') fail('space before the value expected');
  const rest = line.slice(i + 1).trim().split(/\s+/);
  if (rest.length > 2) fail('trailing text');
  return { name, labels, value: parseValue(rest[0]!, line) };
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, help: '', type: 'untyped', samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const parts = line.split(' ');
      if (parts[1] === 'HELP') family(parts[2]!).help = parts.slice(3).join(' ').replaceAll('\\n', '\n').replaceAll('\\\\', '\\');
      else if (parts[1] === 'TYPE') {
        if (!TYPES.has(parts[3]!)) throw new Error(`unknown type in ${JSON.stringify(line)}`);
        const f = family(parts[2]!);
        if (f.samples.length > 0) throw new Error(`TYPE after samples: ${line}`);
        f.type = parts[3] as Family['type'];
      }
      continue;
    }
    const s = parseSample(line);
    let owner: Family | undefined;
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (!s.name.endsWith(suffix)) continue;
      const base = families.get(s.name.slice(0, -suffix.length));
      if (base && (base.type === 'histogram' || base.type === 'summary')) owner = base;
    }
    (owner ?? family(s.name)).samples.push(s);
  }
  return families;
}

/** the label names of a family's series, without histogram `le` / summary `quantile`, sorted, joined */
export function labelSets(f: Family): Set<string> {
  const out = new Set<string>();
  for (const s of f.samples) {
    out.add(
      Object.keys(s.labels)
        .filter((k) => !(f.type === 'histogram' && k === 'le') && !(f.type === 'summary' && k === 'quantile'))
        .sort()
        .join(','),
    );
  }
  return out;
}

/** The value of the sample `name` (default: the family's own) whose labels include `labels`. */
export function valueOf(families: Map<string, Family>, family: string, labels: Labels = {}, sample = family): number | undefined {
  const f = families.get(family);
  const s = f?.samples.find((x) => x.name === sample && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}

interface LibFamily {
  name: string;
  help: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Labels }>;
}

/** Throws when parse-prometheus-text-format reads `text` differently from parsePrometheus. */
export function crossCheck(text: string, mine: Map<string, Family>): void {
  const lib = createRequire(import.meta.url)('parse-prometheus-text-format') as (t: string) => LibFamily[];
  const theirs = lib(text);
  if (theirs.length !== mine.size) throw new Error(`parse-prometheus-text-format sees ${theirs.length} families, this reader ${mine.size}`);
  for (const t of theirs) {
    const m = mine.get(t.name);
    if (!m) throw new Error(`family ${t.name} missing`);
    if (m.type.toUpperCase() !== t.type) throw new Error(`${t.name}: type ${t.type} vs ${m.type}`);
    if (m.help !== t.help) throw new Error(`${t.name}: help differs`);
    if (m.type !== 'gauge' && m.type !== 'counter') continue;
    if (t.metrics.length !== m.samples.length) throw new Error(`${t.name}: ${t.metrics.length} vs ${m.samples.length} samples`);
    t.metrics.forEach((x, i) => {
      const s = m.samples[i]!;
      const theirs = parseValue(x.value!, t.name);
      if (theirs !== s.value && !(Number.isNaN(s.value) && Number.isNaN(theirs))) throw new Error(`${t.name}: value differs`);
      if (JSON.stringify(x.labels ?? {}) !== JSON.stringify(s.labels)) throw new Error(`${t.name}: labels differ`);
    });
  }
}

/**
 * Surface A's metrics endpoint for a test node: the flags that turn it on at a free port, and its URL
 * (docs/observability.md: `--metrics`, `--json-rpc.metrics-address`, path /debug/metrics/prometheus).
 */
export async function rpcMetricsEndpoint(): Promise<{ args: string[]; url: string }> {
  const port = await freePort();
  return {
    args: ['--metrics', '--json-rpc.metrics-address', `127.0.0.1:${port}`],
    url: `http://127.0.0.1:${port}/debug/metrics/prometheus`,
  };
}

/** An unlabelled gauge's value now (throws when the endpoint does not have it). */
export async function readGauge(url: string, name: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(GAUGE_READ_TIMEOUT_MS) });
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  const v = valueOf(parsePrometheus(await res.text()), name);
  if (v === undefined) throw new Error(`${url}: no ${name}`);
  return v;
}

/** Polls until the gauge reads `want`; throws with the last value read when it does not in time. */
export async function waitForGauge(url: string, name: string, want: number, timeoutMs = 30_000): Promise<void> {
  let last = NaN;
  try {
    await waitFor(`${name} = ${want}`, async () => ((last = await readGauge(url, name)) === want ? true : null), timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message} (last read ${last})`);
  }
}
