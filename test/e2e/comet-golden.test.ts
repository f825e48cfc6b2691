/**
 * Golden transcripts of Surface B (test/golden/comet-*.json): the same calls in URI, JSON-RPC and
 * WebSocket form, and CometBFT's error envelopes and texts. Each file may start ferry with its own
 * arguments (`cometArgs`, e.g. small limits). Its cases are under `comet`; `cases` stays empty, so
 * the Surface A golden runner (which reads every file in test/golden) runs nothing for it.
 *
 * Case fields: name; transport `uri` | `jsonrpc` | `ws`;
 * - uri: `path` (with the query string), optional `httpMethod`;
 * - jsonrpc: `request` (JSON) or `rawRequest` (text);
 * - ws: `requests` (JSON values or strings, sent in order) and `responses` (the first messages the
 *   server sends, in order);
 * and `status` (HTTP, default 200), `response` (JSON) or `responseText` (exact body text),
 * `contentType` (a prefix, default application/json for JSON answers).
 *
 * Values may be patterns for what differs per run (keys, hashes, times): `$int` (a decimal string),
 * `$hex:N` (N bytes as upper-case hex), `$b64` (base64), `$time` (RFC3339 UTC), `$any`, and
 * `$re:<regex>` (the whole string).
 *
 * FERRY_WRITE_GOLDEN=1 rewrites each case's `status`, `response`, `responseText` or `responses` from
 * the live answer where it differs, keeping the patterns that still match (helpers/golden.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { GoldenRecorder, WRITE_GOLDEN, refresh } from '../helpers/golden.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { GOLDEN_DIR } from '../helpers/paths.js';
import { waitFor } from '../helpers/rpc.js';

interface CometCase {
  name: string;
  transport: 'uri' | 'jsonrpc' | 'ws';
  path?: string;
  httpMethod?: string;
  request?: unknown;
  rawRequest?: string;
  requests?: unknown[];
  responses?: unknown[];
  status?: number;
  response?: unknown;
  responseText?: string;
  contentType?: string;
}

interface CometGoldenFile {
  description: string;
  /** ferry's arguments for this file (not `args`, which the Surface A runner reads) */
  cometArgs?: string[];
  /** wait until the chain has at least this height before the cases run */
  minHeight?: number;
  comet: CometCase[];
}

const WS_TIMEOUT_MS = 15_000;

const files = readdirSync(GOLDEN_DIR)
  .filter((f) => /^comet.*\.json$/.test(f))
  .sort()
  .map((f) => ({ file: f, golden: JSON.parse(readFileSync(join(GOLDEN_DIR, f), 'utf8')) as CometGoldenFile }));

/** Deep match with the patterns described above; returns the path of the first mismatch. */
function mismatch(got: unknown, want: unknown, path = '$'): string | undefined {
  if (typeof want === 'string' && want.startsWith('$')) {
    if (want === '$any') return got === undefined ? `${path}: missing` : undefined;
    if (typeof got !== 'string') return `${path}: want a string for ${want}, got ${JSON.stringify(got)}`;
    let ok: boolean;
    if (want === '$int') ok = /^-?\d+$/.test(got);
    else if (want === '$b64') ok = /^[A-Za-z0-9+/]+={0,2}$/.test(got) && got.length % 4 === 0;
    else if (want === '$time') ok = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/.test(got);
    else if (want.startsWith('$hex:')) ok = new RegExp(`^[0-9A-F]{${Number(want.slice(5)) * 2}}$`).test(got);
    else if (want.startsWith('$re:')) ok = new RegExp(`^(?:${want.slice(4)})$`).test(got);
    else ok = got === want;
    return ok ? undefined : `${path}: ${JSON.stringify(got)} does not match ${want}`;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path}: want an array, got ${JSON.stringify(got)}`;
    if (got.length !== want.length) return `${path}: want ${want.length} items, got ${got.length}`;
    for (let i = 0; i < want.length; i++) {
      const m = mismatch(got[i], want[i], `${path}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return `${path}: want an object, got ${JSON.stringify(got)}`;
    const g = got as Record<string, unknown>;
    const w = want as Record<string, unknown>;
    const extra = Object.keys(g).filter((k) => !(k in w));
    if (extra.length > 0) return `${path}: unexpected keys ${extra.join(', ')}`;
    for (const k of Object.keys(w)) {
      if (!(k in g)) return `${path}.${k}: missing`;
      const m = mismatch(g[k], w[k], `${path}.${k}`);
      if (m) return m;
    }
    return undefined;
  }
  return Object.is(got, want) ? undefined : `${path}: ${JSON.stringify(got)} !== ${JSON.stringify(want)}`;
}

/** Write mode: the live value with the patterns of `want` kept where they still match. */
function live(want: unknown, got: unknown): unknown {
  return refresh(want, got, (w, g) => w.startsWith('$') && mismatch(g, w) === undefined);
}

/** Write mode: the recorder of the file being run and the index of its case being run. */
interface Recording {
  rec: GoldenRecorder;
  index: number;
}

function expectJson(c: CometCase, got: unknown): void {
  const m = mismatch(got, c.response);
  assert.equal(m, undefined, `${c.name}: ${m}\n got: ${JSON.stringify(got).slice(0, 2000)}`);
}

async function http(node: FerryNode, c: CometCase, recording?: Recording): Promise<void> {
  let res: Response;
  if (c.transport === 'uri') {
    res = await fetch(node.cometUrl + c.path!, { method: c.httpMethod ?? 'GET', signal: AbortSignal.timeout(30_000) });
  } else {
    const body = c.rawRequest ?? JSON.stringify(c.request);
    res = await fetch(node.cometUrl + '/', { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) });
  }
  const text = await res.text();
  if (recording !== undefined) {
    const at = (field: string) => ['comet', recording.index, field];
    if (c.status !== undefined) recording.rec.record(at('status'), res.status);
    else assert.equal(res.status, 200, `${c.name}: HTTP ${res.status}, and the case names no status to rewrite`);
    if (c.responseText !== undefined) recording.rec.record(at('responseText'), live(c.responseText, text));
    if (c.response !== undefined) recording.rec.record(at('response'), live(c.response, JSON.parse(text)));
    return;
  }
  assert.equal(res.status, c.status ?? 200, `${c.name}: HTTP status (body ${text.slice(0, 300)})`);
  if (c.contentType !== undefined) assert.ok((res.headers.get('content-type') ?? '').startsWith(c.contentType), `${c.name}: content-type`);
  if (c.responseText !== undefined) {
    if (c.responseText.startsWith('$')) assert.equal(mismatch(text, c.responseText), undefined, `${c.name}: ${text.slice(0, 300)}`);
    else assert.equal(text, c.responseText, c.name);
  }
  if (c.response !== undefined) {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${c.name}: content-type`);
    expectJson(c, JSON.parse(text));
  }
}

async function ws(node: FerryNode, c: CometCase, recording?: Recording): Promise<void> {
  const sock = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
  const received: unknown[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      sock.once('open', () => resolve());
      sock.once('error', reject);
    });
    sock.on('message', (data) => received.push(JSON.parse(data.toString())));
    for (const r of c.requests ?? []) {
      const before = received.length;
      sock.send(typeof r === 'string' ? r : JSON.stringify(r));
      // one request at a time, so answers (and the order of subscriptions) are deterministic
      const isNotification = typeof r === 'object' && r !== null && !('id' in r);
      if (!isNotification) await waitFor(`${c.name}: an answer`, async () => (received.length > before ? true : null), WS_TIMEOUT_MS, 10);
    }
    const want = c.responses ?? [];
    await waitFor(`${c.name}: ${want.length} messages`, async () => (received.length >= want.length ? true : null), WS_TIMEOUT_MS, 20);
    if (recording !== undefined) {
      recording.rec.record(['comet', recording.index, 'responses'], live(want, received.slice(0, want.length)));
      return;
    }
    const m = mismatch(received.slice(0, want.length), want);
    assert.equal(m, undefined, `${c.name}: ${m}\n got: ${JSON.stringify(received.slice(0, want.length)).slice(0, 3000)}`);
  } finally {
    sock.terminate();
  }
}

for (const { file, golden } of files) {
  describe(`comet golden ${file}`, () => {
    let node: FerryNode;
    before(async () => {
      node = await startFerry({ args: golden.cometArgs ?? [] });
      const min = golden.minHeight ?? 2;
      await waitFor(`height ${min}`, async () => {
        const res = await fetch(`${node.cometUrl}/status`);
        const h = Number(((await res.json()) as { result: { sync_info: { latest_block_height: string } } }).result.sync_info.latest_block_height);
        return h >= min ? true : null;
      });
    });
    const rec = WRITE_GOLDEN ? new GoldenRecorder(join(GOLDEN_DIR, file)) : undefined;
    after(async () => {
      if (node) assert.equal(await node.stop(), 0);
      const n = rec?.flush() ?? 0;
      if (n > 0) console.log(`golden: rewrote ${n} answer(s) in test/golden/${file}`);
    });
    for (const [index, c] of golden.comet.entries()) {
      const recording = rec && { rec, index };
      it(`${c.transport}: ${c.name}`, () => (c.transport === 'ws' ? ws(node, c, recording) : http(node, c, recording)));
    }
  });
}
