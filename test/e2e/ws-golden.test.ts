/**
 * Golden transcripts of Surface A's WebSocket and filter error cases: the `transcript` of each
 * test/golden/ws*.json and test/golden/filters*.json, run step by step on ONE connection (WebSocket)
 * or one node (HTTP), in order, each answer compared exactly.
 *
 * (golden.test.ts runs the same files' static `cases` over HTTP; it ignores `transcript`.)
 *
 * Transcript fields: transport ("ws" | "http"); args (extra ferry flags: transcripts with the same
 * args share a node); steps: { name, request (JSON) or rawRequest (text), response (exact JSON) }.
 * Ids are random, so a step's expected response may hold the string "$id:NAME": the actual value
 * there must be a filter/subscription id (0x + 32 hex digits, the first non-zero), and is captured
 * as NAME. Later requests and responses may use "$NAME" inside any string. Over WebSocket,
 * subscription notifications arriving between steps are skipped.
 *
 * FERRY_WRITE_GOLDEN=1 rewrites a step's `response` from the live answer where it differs, keeping
 * "$id:NAME" and "$NAME" where they still match (helpers/golden.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { GoldenRecorder, WRITE_GOLDEN, refresh } from '../helpers/golden.js';
import { nodePool, type FerryNode } from '../helpers/node.js';
import { GOLDEN_DIR } from '../helpers/paths.js';

interface Step {
  name: string;
  request?: unknown;
  rawRequest?: string;
  response: unknown;
}

interface Transcript {
  transport: 'ws' | 'http';
  args?: string[];
  steps: Step[];
}

const ID_FORMAT = /^0x[1-9a-f][0-9a-f]{31}$/;
const ANSWER_TIMEOUT_MS = 10_000;

const files = readdirSync(GOLDEN_DIR)
  .filter((f) => /^(ws|filters).*\.json$/.test(f))
  .sort()
  .map((f) => ({ file: f, transcript: (JSON.parse(readFileSync(join(GOLDEN_DIR, f), 'utf8')) as { transcript?: Transcript }).transcript }))
  .filter((x): x is { file: string; transcript: Transcript } => x.transcript !== undefined);

/** Replaces `$NAME` in every string of v by its captured value. */
function substitute(v: unknown, captured: Map<string, string>): unknown {
  if (typeof v === 'string') {
    return v.replace(/\$([A-Za-z]\w*)/g, (whole, name: string) => captured.get(name) ?? whole);
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, captured));
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, captured)]));
  }
  return v;
}

/** The expected value with its "$id:NAME" slots filled from `actual` (checked and captured). */
function resolve(expected: unknown, actual: unknown, captured: Map<string, string>, step: string): unknown {
  if (typeof expected === 'string' && expected.startsWith('$id:')) {
    assert.ok(typeof actual === 'string' && ID_FORMAT.test(actual), `${step}: expected an id, got ${JSON.stringify(actual)}`);
    captured.set(expected.slice(4), actual);
    return actual;
  }
  if (Array.isArray(expected)) {
    return expected.map((x, i) => resolve(x, Array.isArray(actual) ? actual[i] : undefined, captured, step));
  }
  if (expected !== null && typeof expected === 'object') {
    const a = (actual ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(expected).map(([k, x]) => [k, resolve(x, a[k], captured, step)]));
  }
  return substitute(expected, captured);
}

/** A WebSocket client that hands out answers (not notifications) in order. */
class WsSession {
  private readonly answers: unknown[] = [];
  private waiting: ((v: unknown) => void) | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { method?: string };
      if (!Array.isArray(msg) && msg.method === 'eth_subscription') return;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(msg);
      } else {
        this.answers.push(msg);
      }
    });
  }

  static async open(url: string): Promise<WsSession> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolveOpen, reject) => {
      ws.once('open', () => resolveOpen());
      ws.once('error', reject);
    });
    return new WsSession(ws);
  }

  async send(text: string): Promise<unknown> {
    this.ws.send(text);
    if (this.answers.length > 0) return this.answers.shift();
    return new Promise((resolveAnswer, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
      this.waiting = (v) => {
        clearTimeout(timer);
        resolveAnswer(v);
      };
    });
  }

  close(): void {
    this.ws.close();
  }
}

async function httpSend(url: string, text: string): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
    signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
  });
  assert.equal(res.status, 200);
  return JSON.parse(await res.text());
}

const { nodeFor, stopAll } = nodePool();
const recorders: { file: string; rec: GoldenRecorder }[] = [];

after(async () => {
  for (const code of await stopAll()) assert.equal(code, 0);
  for (const { file, rec } of recorders) {
    const n = rec.flush();
    if (n > 0) console.log(`golden: rewrote ${n} answer(s) in test/golden/${file}`);
  }
});

/**
 * Write mode: the live answer with the transcript's id slots (captured, as `resolve` does) and its
 * `$NAME` strings kept where they still match.
 */
function liveResponse(want: unknown, got: unknown, captured: Map<string, string>): unknown {
  return refresh(want, got, (w, g) => {
    if (!w.startsWith('$id:')) return w.includes('$') && substitute(w, captured) === g;
    if (typeof g !== 'string' || !ID_FORMAT.test(g)) return false;
    captured.set(w.slice(4), g);
    return true;
  });
}

for (const { file, transcript } of files) {
  describe(`golden transcript ${file} (${transcript.transport})`, () => {
    let node: FerryNode;
    let session: WsSession | undefined;
    const captured = new Map<string, string>();
    const rec = WRITE_GOLDEN ? new GoldenRecorder(join(GOLDEN_DIR, file)) : undefined;
    if (rec) recorders.push({ file, rec });

    before(async () => {
      node = await nodeFor(transcript.args);
      if (transcript.transport === 'ws') session = await WsSession.open(node.wsUrl);
    });
    after(() => session?.close());

    for (const [i, step] of transcript.steps.entries()) {
      it(step.name, async () => {
        const text = step.rawRequest ?? JSON.stringify(substitute(step.request, captured));
        const got = session ? await session.send(String(substitute(text, captured))) : await httpSend(node.url, text);
        if (rec) {
          rec.record(['transcript', 'steps', i, 'response'], liveResponse(step.response, got, captured));
          return;
        }
        assert.deepEqual(got, resolve(step.response, got, captured, step.name), step.name);
      });
    }
  });
}
