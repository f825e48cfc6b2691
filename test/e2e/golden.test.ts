/**
 * Golden transcripts over HTTP: each case in test/golden/*.json is a request body and the exact
 * response (parsed JSON compared deeply, or the trimmed text for non-JSON answers). Cases too big for
 * a file (the 1000-item batch, an over-limit body) are generated here.
 *
 * Case fields: name; request (JSON value) or rawRequest (string); httpMethod (default POST);
 * contentType (default application/json, null = no header); status (default 200);
 * response (exact JSON) or responseText (exact trimmed text); setup (requests sent first, each of
 * which must answer without a JSON-RPC error: the state the case reads, made by the case itself).
 *
 * Each case is a test of its own on a node shared with the file's other cases (and with other files
 * of the same `args`), so a case must not read what another case did. A file whose cases are the
 * steps of one story about state (a mempool filling up, a tx replaced) says `"scenario": true`: it
 * gets a fresh node of its own and runs as ONE test, its steps in order.
 *
 * FERRY_WRITE_GOLDEN=1 rewrites each case's `status`, `response` or `responseText` from the live
 * answer instead of checking it (helpers/golden.ts); review the result with `git diff test/golden`.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GoldenRecorder, WRITE_GOLDEN } from '../helpers/golden.js';
import { nodePool, startFerry, type FerryNode } from '../helpers/node.js';
import { GOLDEN_DIR } from '../helpers/paths.js';

interface GoldenCase {
  name: string;
  request?: unknown;
  rawRequest?: string;
  httpMethod?: string;
  contentType?: string | null;
  status?: number;
  response?: unknown;
  responseText?: string;
  setup?: unknown[];
}

interface GoldenFile {
  description: string;
  args?: string[];
  /** the cases are ordered steps of one story: own node, one test */
  scenario?: boolean;
  cases: GoldenCase[];
}

/** geth's default body limit (Evmos `http-body-limit`) */
const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
/** Evmos/cosmos-evm default `batch-request-limit` */
const DEFAULT_BATCH_LIMIT = 1000;
const EVM_CHAIN_ID_HEX = '0x2328';
const OVER_LIMIT_TEXT = `content length too large (${DEFAULT_BODY_LIMIT + 1}>${DEFAULT_BODY_LIMIT})`;
/** the plain-client 413 check is repeated: a server that resets the connection fails it only sometimes */
const OVER_LIMIT_TRIES = 3;

// Surface B's transcripts (comet-*.json) have their own runner: test/e2e/comet-golden.test.ts
const goldenFiles = readdirSync(GOLDEN_DIR)
  .filter((f) => f.endsWith('.json') && !f.startsWith('comet-'))
  .sort()
  .map((f) => ({ file: f, golden: JSON.parse(readFileSync(join(GOLDEN_DIR, f), 'utf8')) as GoldenFile }));

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function send(url: string, c: Pick<GoldenCase, 'request' | 'rawRequest' | 'httpMethod' | 'contentType'>): Promise<Answer> {
  const method = c.httpMethod ?? 'POST';
  const headers: Record<string, string> = {};
  const contentType = c.contentType === undefined ? 'application/json' : c.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  let body: string | undefined;
  if (c.rawRequest !== undefined) body = c.rawRequest;
  else if (c.request !== undefined) body = JSON.stringify(c.request);
  const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/**
 * POSTs a JSON body one byte over the default limit with node:http, reading the answer as soon as
 * it comes (a transport error after the answer arrived is ignored; one before it is the answer).
 */
function postOverLimit(url: string, expectContinue: boolean): Promise<Answer> {
  const head = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["';
  const tail = '"]}';
  const body = Buffer.from(head + 'a'.repeat(DEFAULT_BODY_LIMIT + 1 - head.length - tail.length) + tail);
  assert.equal(body.length, DEFAULT_BODY_LIMIT + 1);
  const { hostname, port } = new URL(url);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
  if (expectContinue) headers.expect = '100-continue';
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest({ host: hostname, port, method: 'POST', path: '/', headers }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      const done = () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? null, text });
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (e) => {
      if (!answered) reject(new Error(`no HTTP answer, the connection failed first: ${e.message}`));
    });
    if (expectContinue) req.on('continue', () => req.end(body));
    else req.end(body);
  });
}

function check(c: GoldenCase, got: Answer): void {
  const where = `${c.name}: got HTTP ${got.status} ${got.text.slice(0, 500)}`;
  assert.equal(got.status, c.status ?? 200, where);
  if (c.response !== undefined) {
    assert.match(got.contentType ?? '', /^application\/json/, `${c.name}: content-type`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(got.text);
    } catch {
      assert.fail(`${where}: not JSON`);
    }
    assert.deepEqual(parsed, c.response, c.name);
  }
  if (c.responseText !== undefined) assert.equal(got.text.trim(), c.responseText, where);
}

/**
 * Write mode: records the live answer of case `index` of `file` where its transcript holds one.
 * A status the case does not name must be 200 (there is no field to rewrite).
 */
function record(file: string, index: number, c: GoldenCase, got: Answer): void {
  let rec = recorders.get(file);
  if (rec === undefined) recorders.set(file, (rec = new GoldenRecorder(join(GOLDEN_DIR, file))));
  const at = (field: string) => ['cases', index, field];
  if (c.status !== undefined) rec.record(at('status'), got.status);
  else assert.equal(got.status, 200, `${c.name}: HTTP ${got.status}, and the case names no status to rewrite`);
  if (c.response !== undefined) rec.record(at('response'), JSON.parse(got.text) as unknown);
  if (c.responseText !== undefined) rec.record(at('responseText'), got.text.trim());
}

const recorders = new Map<string, GoldenRecorder>();
const { nodeFor, stopAll } = nodePool();

after(async () => {
  for (const code of await stopAll()) assert.equal(code, 0);
  for (const [file, rec] of recorders) {
    const n = rec.flush();
    if (n > 0) console.log(`golden: rewrote ${n} answer(s) in test/golden/${file}`);
  }
});

/** Checks a case's answer, or records it in write mode. */
function checkOrRecord(file: string, index: number, c: GoldenCase, got: Answer): void {
  if (WRITE_GOLDEN) record(file, index, c, got);
  else check(c, got);
}

/** Sends a case's setup requests; each must be answered without an error. */
async function setUp(url: string, c: GoldenCase): Promise<void> {
  for (const request of c.setup ?? []) {
    const got = await send(url, { request });
    assert.equal(got.status, 200, `${c.name}: setup ${JSON.stringify(request)}`);
    const body = JSON.parse(got.text) as { error?: unknown };
    assert.equal(body.error, undefined, `${c.name}: setup ${JSON.stringify(request)} failed: ${got.text}`);
  }
}

for (const { file, golden } of goldenFiles) {
  if (golden.scenario) {
    describe(`golden ${file} (one scenario, own node)`, () => {
      let node: FerryNode;
      before(async () => {
        node = await startFerry({ args: golden.args ?? [] });
      });
      after(async () => {
        if (node) assert.equal(await node.stop(), 0);
      });
      it(`${golden.cases.length} steps in order: ${golden.cases.map((c) => c.name).join('; ')}`, async () => {
        for (const [i, c] of golden.cases.entries()) {
          await setUp(node.url, c);
          checkOrRecord(file, i, c, await send(node.url, c));
        }
      });
    });
    continue;
  }
  describe(`golden ${file}`, () => {
    let node: FerryNode;
    before(async () => {
      node = await nodeFor(golden.args);
    });
    for (const [i, c] of golden.cases.entries()) {
      it(c.name, async () => {
        await setUp(node.url, c);
        checkOrRecord(file, i, c, await send(node.url, c));
      });
    }
  });
}

describe('golden: generated cases', () => {
  let node: FerryNode;
  before(async () => {
    node = await nodeFor();
  });

  it(`a batch of ${DEFAULT_BATCH_LIMIT} items (the default limit) is answered whole, in order`, async () => {
    const request = Array.from({ length: DEFAULT_BATCH_LIMIT }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }));
    const response = request.map((r) => ({ jsonrpc: '2.0', id: r.id, result: EVM_CHAIN_ID_HEX }));
    check({ name: 'batch at limit', response }, await send(node.url, { request }));
  });

  it(`a batch of ${DEFAULT_BATCH_LIMIT + 1} items is too large`, async () => {
    const request = Array.from({ length: DEFAULT_BATCH_LIMIT + 1 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'eth_chainId', params: [] }));
    const response = [{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'batch too large' } }];
    check({ name: 'batch over limit', response }, await send(node.url, { request }));
  });

  it('a body over the limit is refused with 413 (client sends Expect: 100-continue, as curl does)', async () => {
    const got = await postOverLimit(node.url, true);
    check({ name: 'body too large', status: 413, responseText: OVER_LIMIT_TEXT }, got);
  });

  it('a body over the limit is refused with 413 that a plain client (whole body, no Expect) can read', async () => {
    // geth lets the client read the 413: it half-closes and waits before dropping the unread body
    for (let i = 0; i < OVER_LIMIT_TRIES; i++) {
      const got = await postOverLimit(node.url, false);
      check({ name: `body too large, try ${i + 1}`, status: 413, responseText: OVER_LIMIT_TEXT }, got);
    }
  });

  it('a body exactly at the limit is read (and answered)', async () => {
    const head = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":null,"pad":"';
    const tail = '"}';
    const rawRequest = head + 'a'.repeat(DEFAULT_BODY_LIMIT - head.length - tail.length) + tail;
    const got = await send(node.url, { rawRequest });
    check({ name: 'body at limit', response: { jsonrpc: '2.0', id: 1, result: EVM_CHAIN_ID_HEX } }, got);
  });
});
