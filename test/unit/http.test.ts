import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { quantity } from '../../src/jsonrpc/codecs.js';
import { createDispatcher } from '../../src/jsonrpc/core.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import type { CallContext, MethodTable } from '../../src/jsonrpc/types.js';
import { startHttpServer, type HttpServerHandle, type HttpServerOptions } from '../../src/server/http.js';
import type { Logger } from '../../src/lib/log.js';

const BODY_LIMIT = 1024;
const TOKEN = 'secret-token';

const table: MethodTable = {
  eth_blockNumber: { params: [], handler: () => '0x2a' },
  eth_double: { params: [quantity], handler: ([n]: [bigint]) => '0x' + (n * 2n).toString(16) },
  eth_slow: {
    params: [],
    handler: () => {
      for (const f of slowStarted.splice(0)) f();
      return new Promise((r) => setTimeout(() => r('done'), 150));
    },
  },
  personal_listAccounts: { params: [], private: true, handler: () => [] },
  // reads its signal at once and answers when it is aborted (the client went away)
  eth_watchEarly: {
    params: [],
    handler: (_args: unknown[], ctx: CallContext) => {
      const signal = ctx.signal!;
      return new Promise((r) => {
        // bounded: a signal never aborted is seen as not aborted
        const bound = setTimeout(() => r(signals.push(['early', signal.aborted])), 5_000);
        signal.addEventListener('abort', () => (clearTimeout(bound), r(signals.push(['early', signal.aborted]))));
      });
    },
  },
  // reads its signal only once the test lets it (after the client went away)
  eth_watchLate: {
    params: [],
    handler: async (_args: unknown[], ctx: CallContext) => {
      await new Promise<void>((r) => lateRead.push(r));
      signals.push(['late', ctx.signal!.aborted]);
      return 'late';
    },
  },
  // the same through onGone (no AbortController): registered at once, and after the client went away
  eth_goneEarly: {
    params: [],
    handler: (_args: unknown[], ctx: CallContext) =>
      new Promise((r) => {
        const bound = setTimeout(() => r(gones.push('early: not called')), 5_000);
        ctx.onGone!(() => (clearTimeout(bound), r(gones.push('early'))));
        // a dropped callback is not called
        ctx.onGone!(() => gones.push('dropped'))();
      }),
  },
  eth_goneLate: {
    params: [],
    handler: async (_args: unknown[], ctx: CallContext) => {
      await new Promise<void>((r) => lateRead.push(r));
      ctx.onGone!(() => gones.push('late'));
      return 'late';
    },
  },
};

/** what eth_goneEarly / eth_goneLate saw */
const gones: string[] = [];

/** what eth_watchEarly / eth_watchLate saw of their signals */
const signals: [string, boolean][] = [];
/** lets the waiting eth_watchLate read its signal */
const lateRead: (() => void)[] = [];

/** called when the next eth_slow starts running */
const slowStarted: (() => void)[] = [];
const nextSlowStart = (): Promise<void> => new Promise((r) => slowStarted.push(r));

const logged: unknown[][] = [];
const log: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (...a: unknown[]) => logged.push(a),
  error: (...a: unknown[]) => logged.push(a),
  child: () => log,
};

function start(over: Partial<HttpServerOptions> = {}): Promise<HttpServerHandle> {
  return startHttpServer({
    host: '127.0.0.1',
    port: 0,
    dispatcher: createDispatcher({
      table,
      enabledNamespaces: null,
      limits: { batchRequestLimit: 10, batchResponseMaxSize: 10_000 },
      errors: evmErrors,
      onInternalError: (err) => logged.push([err]),
    }),
    limits: { bodyLimit: BODY_LIMIT, maxOpenConnections: 0, timeoutMs: 5_000, idleTimeoutMs: 5_000 },
    authenticate: (headers) => headers.authorization === `Bearer ${TOKEN}`,
    log,
    ...over,
  });
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  port: number,
  opts: { method?: string; path?: string; headers?: Record<string, string | number>; body?: string | string[] } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: opts.method ?? 'POST',
        path: opts.path ?? '/',
        headers: opts.headers ?? { 'Content-Type': 'application/json' },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    const parts = opts.body === undefined ? [] : Array.isArray(opts.body) ? opts.body : [opts.body];
    for (const p of parts) req.write(p);
    req.end();
  });
}

const call = (id: number, method: string, params: unknown[] = []) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** Reads complete HTTP responses (Content-Length framed) from a raw socket. */
function responses(sock: Socket): { next(): Promise<string> } {
  let buf = '';
  const waiting: Array<(s: string) => void> = [];
  const pump = () => {
    while (waiting.length > 0) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /content-length: (\d+)/i.exec(buf.slice(0, end));
      const total = end + 4 + Number(m?.[1] ?? 0);
      if (buf.length < total) return;
      const one = buf.slice(0, total);
      buf = buf.slice(total);
      waiting.shift()!(one);
    }
  };
  sock.setEncoding('utf8');
  sock.on('data', (c: string) => {
    buf += c;
    pump();
  });
  return { next: () => new Promise((r) => (waiting.push(r), pump())) };
}

function rawPost(body: string): string {
  return `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

describe('http server', () => {
  let server: HttpServerHandle;
  before(async () => {
    server = await start();
  });
  after(() => server.close());

  it('binds port 0 to a real port', () => {
    assert.ok(Number.isInteger(server.port) && server.port > 0);
  });

  it('POST / with JSON answers application/json', async () => {
    const r = await send(server.port, { body: call(1, 'eth_blockNumber') });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body, '{"jsonrpc":"2.0","id":1,"result":"0x2a"}');
    assert.equal(r.headers['content-length'], String(r.body.length));
  });

  it('accepts geth content types, with parameters and any case', async () => {
    for (const ct of ['application/json; charset=utf-8', 'application/json-rpc', 'application/jsonrequest', 'Application/JSON']) {
      const r = await send(server.port, { headers: { 'Content-Type': ct }, body: call(2, 'eth_double', ['0x4']) });
      assert.equal(r.status, 200, ct);
      assert.equal(r.body, '{"jsonrpc":"2.0","id":2,"result":"0x8"}');
    }
  });

  it('415 for other or missing content types', async () => {
    for (const headers of [{ 'Content-Type': 'text/plain' }, { 'Content-Type': 'application/jsonx' }, {}] as Record<string, string>[]) {
      const r = await send(server.port, { headers, body: call(1, 'eth_blockNumber') });
      assert.equal(r.status, 415);
      assert.equal(r.body, 'invalid content type, only application/json is supported\n');
    }
  });

  it('405 for verbs other than POST (GET too), OPTIONS without CORS', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await send(server.port, { method });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'POST');
    }
  });

  it('404 for paths other than /', async () => {
    const r = await send(server.port, { path: '/rpc', body: call(1, 'eth_blockNumber') });
    assert.equal(r.status, 404);
    assert.equal((await send(server.port, { path: '/?x=1', body: call(1, 'eth_blockNumber') })).status, 200);
  });

  it('413 when Content-Length is over the limit', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', pad: 'x'.repeat(BODY_LIMIT) });
    const r = await send(server.port, { body: big });
    assert.equal(r.status, 413);
    assert.equal(r.body, `content length too large (${big.length}>${BODY_LIMIT})\n`);
  });

  it('413 when a chunked body grows over the limit', async () => {
    const chunk = 'x'.repeat(400);
    const r = await send(server.port, {
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      body: [chunk, chunk, chunk],
    });
    assert.equal(r.status, 413);
    assert.match(r.body, /^content length too large \(1200>1024\)\n$/);
  });

  it('a body at exactly the limit is served', async () => {
    const base = call(1, 'eth_blockNumber');
    const body = base.slice(0, -1) + ',"pad":"' + 'x'.repeat(BODY_LIMIT - base.length - 9) + '"}';
    assert.equal(body.length, BODY_LIMIT);
    assert.equal((await send(server.port, { body })).status, 200);
  });

  it('JSON-RPC errors are HTTP 200; notifications get an empty 200', async () => {
    const bad = await send(server.port, { body: '{nope' });
    assert.equal(bad.status, 200);
    assert.equal(bad.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
    const note = await send(server.port, { body: '{"jsonrpc":"2.0","method":"eth_blockNumber"}' });
    assert.equal(note.status, 200);
    assert.equal(note.body, '');
    assert.equal(note.headers['content-length'], '0');
  });

  it('batches', async () => {
    const r = await send(server.port, { body: `[${call(1, 'eth_blockNumber')},${call(2, 'eth_double', ['0x1'])}]` });
    assert.deepEqual(JSON.parse(r.body), [
      { jsonrpc: '2.0', id: 1, result: '0x2a' },
      { jsonrpc: '2.0', id: 2, result: '0x2' },
    ]);
  });

  it('authenticate() decides the context of private methods', async () => {
    const anon = await send(server.port, { body: call(1, 'personal_listAccounts') });
    assert.equal(JSON.parse(anon.body).error.code, -32001);
    const authed = await send(server.port, {
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: call(1, 'personal_listAccounts'),
    });
    assert.deepEqual(JSON.parse(authed.body), { jsonrpc: '2.0', id: 1, result: [] });
  });

  it('keeps connections alive across requests', async () => {
    const sock = connect(server.port, '127.0.0.1');
    const rs = responses(sock);
    sock.write(rawPost(call(1, 'eth_blockNumber')));
    const first = await rs.next();
    assert.match(first, /^HTTP\/1\.1 200/);
    assert.match(first, /keep-alive/i);
    sock.write(rawPost(call(2, 'eth_blockNumber')));
    assert.match(await rs.next(), /"id":2,"result":"0x2a"/);
    // pipelined requests on the same socket keep their order
    sock.write(rawPost(call(3, 'eth_slow')) + rawPost(call(4, 'eth_blockNumber')));
    assert.match(await rs.next(), /"id":3,"result":"done"/);
    assert.match(await rs.next(), /"id":4,"result":"0x2a"/);
    assert.equal(sock.destroyed, false);
    sock.destroy();
  });
});

describe('http server: CORS', () => {
  it('answers preflight and sets Access-Control-Allow-Origin for allowed origins only', async () => {
    const s = await start({ cors: ['https://app.example'] });
    try {
      const pre = await send(s.port, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
      assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
      assert.equal(pre.headers['access-control-allow-headers'], 'content-type');
      const denied = await send(s.port, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
      assert.equal(denied.status, 204);
      assert.equal(denied.headers['access-control-allow-origin'], undefined);
      const post = await send(s.port, {
        headers: { 'Content-Type': 'application/json', Origin: 'https://app.example' },
        body: call(1, 'eth_blockNumber'),
      });
      assert.equal(post.headers['access-control-allow-origin'], 'https://app.example');
      const other = await send(s.port, { headers: { 'Content-Type': 'application/json', Origin: 'https://evil.example' }, body: call(1, 'eth_blockNumber') });
      assert.equal(other.status, 200);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      assert.equal((await send(s.port, { method: 'GET' })).headers.allow, 'POST, OPTIONS');
    } finally {
      await s.close();
    }
  });
  it('`*` allows any origin', async () => {
    const s = await start({ cors: ['*'] });
    try {
      const r = await send(s.port, { headers: { 'Content-Type': 'application/json', Origin: 'http://x' }, body: call(1, 'eth_blockNumber') });
      assert.equal(r.headers['access-control-allow-origin'], '*');
    } finally {
      await s.close();
    }
  });
});

describe('http server: lifecycle and limits', () => {
  it('close() ends idle keep-alive connections, resolves, and stops accepting', async () => {
    const s = await start();
    const sock = connect(s.port, '127.0.0.1');
    const rs = responses(sock);
    sock.write(rawPost(call(1, 'eth_blockNumber')));
    await rs.next();
    const closed = new Promise((r) => sock.on('close', r));
    await s.close();
    await closed;
    await assert.rejects(send(s.port, { body: call(1, 'eth_blockNumber') }), /ECONNREFUSED/);
  });

  it('close() lets a running request finish', async () => {
    const s = await start();
    const started = nextSlowStart();
    const running = send(s.port, { body: call(9, 'eth_slow') });
    await started;
    await s.close();
    const r = await running;
    assert.equal(r.body, '{"jsonrpc":"2.0","id":9,"result":"done"}');
    assert.equal(r.headers.connection, 'close');
  });

  /**
   * `earlyMethod` and `lateMethod` on two connections the client closes before their answers; the late
   * one goes on 200 ms after the close. Waits for one entry in `seen`, then a second; returns the first.
   */
  async function closeBeforeAnswers(port: number, earlyMethod: string, lateMethod: string, seen: unknown[]): Promise<unknown[]> {
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const early = connect(port, '127.0.0.1');
    const late = connect(port, '127.0.0.1');
    early.write(rawPost(call(1, earlyMethod)));
    late.write(rawPost(call(2, lateMethod)));
    while (lateRead.length === 0) await pause(10);
    late.destroy();
    early.destroy();
    while (seen.length === 0) await pause(10);
    const first = [...seen];
    // the late connection closed before the early one, whose close the server has seen: give it a moment more
    await pause(200);
    lateRead.shift()!();
    while (seen.length === 1) await pause(10);
    return first;
  }

  it("a request's onGone callbacks run once when its client closes the connection first, registered before or after the close", async () => {
    const s = await start();
    try {
      assert.deepEqual(await closeBeforeAnswers(s.port, 'eth_goneEarly', 'eth_goneLate', gones), ['early']);
      assert.deepEqual(gones, ['early', 'late']);
    } finally {
      await s.close();
    }
  });

  it("a request's signal is aborted when its client closes the connection first, read before or after the close", async () => {
    const s = await start();
    try {
      assert.deepEqual(await closeBeforeAnswers(s.port, 'eth_watchEarly', 'eth_watchLate', signals), [['early', true]]);
      assert.deepEqual(signals[1], ['late', true]);
    } finally {
      await s.close();
    }
  });

  it('maxOpenConnections drops connections over the limit', async () => {
    const s = await start({ limits: { bodyLimit: BODY_LIMIT, maxOpenConnections: 1, timeoutMs: 5_000, idleTimeoutMs: 5_000 } });
    try {
      const first = connect(s.port, '127.0.0.1');
      const rs = responses(first);
      first.write(rawPost(call(1, 'eth_blockNumber')));
      await rs.next();
      await assert.rejects(send(s.port, { body: call(2, 'eth_blockNumber') }), /ECONNRESET|socket hang up/);
      assert.ok(logged.some((a) => String(a[1]).includes('connection limit')));
      first.destroy();
      // the slot frees once the server has seen the close: retry until then
      for (;;) {
        const r = await send(s.port, { body: call(3, 'eth_blockNumber') }).catch(() => undefined);
        if (r !== undefined) {
          assert.equal(r.status, 200);
          break;
        }
      }
    } finally {
      await s.close();
    }
  });

  it('rejects when the port is taken', async () => {
    const s = await start();
    try {
      await assert.rejects(start({ port: s.port }), /EADDRINUSE/);
    } finally {
      await s.close();
    }
  });
});
