/**
 * The fork's origin client (src/fork/origin.ts) and its synchronous face (src/fork/syncorigin.ts)
 * against a loopback JSON-RPC server behind the counting, fault-injecting proxy: 429 and timeouts are
 * retried, an origin that stays down is an error naming it (never an empty answer), at most
 * MAX_ORIGIN_IN_FLIGHT requests are open at once, and batches keep call order.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MAX_ORIGIN_IN_FLIGHT, OriginClient } from '../../src/fork/origin.js';
import { SyncOrigin } from '../../src/fork/syncorigin.js';
import { DomainError } from '../../src/lib/errors.js';
import { OriginProxy } from '../helpers/originproxy.js';

/** a JSON-RPC origin in a child process: 503 for method "down", else `method:params` */
const CHILD_ORIGIN = `
const s = require('node:http').createServer((req, res) => {
  let b = '';
  req.on('data', (c) => (b += c));
  req.on('end', () => {
    const m = JSON.parse(b);
    const one = Array.isArray(m) ? m[0] : m;
    if (one.method === 'down') return res.writeHead(503).end();
    const a = (c) => ({ jsonrpc: '2.0', id: c.id, result: c.method + ':' + JSON.stringify(c.params) });
    res.writeHead(200).end(JSON.stringify(Array.isArray(m) ? m.map(a) : a(m)));
  });
});
s.listen(0, '127.0.0.1', () => console.log(s.address().port));
`;

describe('fork origin client', () => {
  let server: Server;
  let proxy: OriginProxy;
  let open = 0;
  let mostOpen = 0;

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        open++;
        mostOpen = Math.max(mostOpen, open);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string; params: unknown[] } | { id: number; method: string; params: unknown[] }[];
        const answer = (c: { id: number; method: string; params: unknown[] }) =>
          c.method === 'fail_me' ? { jsonrpc: '2.0', id: c.id, error: { code: -32000, message: 'nope' } } : { jsonrpc: '2.0', id: c.id, result: `${c.method}:${JSON.stringify(c.params)}` };
        // answer later, so that concurrent requests overlap
        setTimeout(() => {
          open--;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? body.reverse().map(answer) : answer(body)));
        }, 200);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    proxy = await new OriginProxy(`http://127.0.0.1:${(server.address() as AddressInfo).port}`).start();
  });

  after(async () => {
    await proxy.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('answers a batch in call order (the origin may reorder)', async () => {
    const c = new OriginClient({ url: proxy.url });
    assert.deepEqual(await c.batch([{ method: 'a', params: [1] }, { method: 'b', params: [] }]), ['a:[1]', 'b:[]']);
  });

  it('retries 429 and 503 with backoff, then answers', async () => {
    const c = new OriginClient({ url: proxy.url, retries: 3 });
    proxy.failNext(2, 429);
    assert.equal(await c.call('x', []), 'x:[]');
    assert.equal(c.stats.retries, 2);
    proxy.failNext(1, 503);
    assert.equal(await c.call('y', []), 'y:[]');
  });

  it('retries a request that got no answer within the timeout', async () => {
    const c = new OriginClient({ url: proxy.url, retries: 2, timeoutMs: 300 });
    proxy.hangNext(1);
    assert.equal(await c.call('z', []), 'z:[]');
    assert.equal(c.stats.retries, 1);
  });

  it('an origin that stays down is an error naming it, after the retries', async () => {
    const c = new OriginClient({ url: proxy.url, retries: 2 });
    proxy.down = true;
    try {
      await assert.rejects(c.call('eth_getBalance', []), (e: Error) => {
        assert.match(e.message, new RegExp(`^fork origin ${proxy.url.replace(/\./g, '\\.')}: HTTP 503 \\(gave up after 3 attempts\\)$`));
        return true;
      });
    } finally {
      proxy.down = false;
    }
    const closed = new OriginClient({ url: 'http://127.0.0.1:9', retries: 0 });
    await assert.rejects(closed.call('eth_chainId', []), /fork origin http:\/\/127\.0\.0\.1:9: unreachable/);
  });

  it("a JSON-RPC error of the origin is not retried and carries the origin's message", async () => {
    const c = new OriginClient({ url: proxy.url, retries: 3 });
    await assert.rejects(c.call('fail_me', []), /fork origin .*: fail_me failed: nope \(code -32000\)/);
    assert.equal(c.stats.retries, 0);
  });

  it('keeps at most MAX_ORIGIN_IN_FLIGHT requests open', async () => {
    const c = new OriginClient({ url: proxy.url });
    mostOpen = 0;
    await Promise.all(Array.from({ length: 3 * MAX_ORIGIN_IN_FLIGHT }, (_, i) => c.call('p', [i])));
    // the bound is the point; how many overlap below it depends on the machine's load
    assert.ok(mostOpen <= MAX_ORIGIN_IN_FLIGHT && mostOpen > 1, `most open at once: ${mostOpen}`);
  });

  it('the synchronous face answers, and fails as DomainError unavailable naming the origin', async () => {
    // the origin must not run on this thread: the synchronous call blocks it
    const child = spawn(process.execPath, ['-e', CHILD_ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<string>((r) => child.stdout.once('data', (d: Buffer) => r(d.toString().trim())));
      const url = `http://127.0.0.1:${port}`;
      const s = new SyncOrigin({ url, retries: 1 });
      try {
        assert.deepEqual(s.batch([{ method: 'q', params: [2] }]), ['q:[2]']);
        assert.throws(
          () => s.batch([{ method: 'down', params: [] }]),
          (e: unknown) => e instanceof DomainError && e.kind === 'unavailable' && e.message === `fork origin ${url}: HTTP 503 (gave up after 2 attempts)`,
        );
      } finally {
        s.close();
      }
    } finally {
      child.kill();
    }
  });
});
