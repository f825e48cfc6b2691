/**
 * Surface B's listener cleans paths as Go's net/http ServeMux (src/server/gopath.ts,
 * docs/cometbft-rpc.md): `//status` and friends are redirected (307, Location the cleaned path,
 * query kept), never routed. The expected answers are the ones CometBFT v0.38.26 (built with Go
 * 1.26) gave to the same requests.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { CometHttpRequest } from '../../src/jsonrpc/transport.js';
import type { Logger } from '../../src/lib/log.js';
import { startCometServer, type CometServerHandle } from '../../src/server/comet.js';
import { goCleanPath, goPathClean } from '../../src/server/gopath.js';

const log: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };

/** [request-target, Location] as CometBFT v0.38.26 answered them (curl --path-as-is) */
const OBSERVED: [string, string][] = [
  ['//status', '/status'],
  ['//status?x=1', '/status?x=1'],
  ['/./status', '/status'],
  ['/a/../status', '/status'],
  ['/status/.', '/status'],
  ['/status/..', '/'],
  ['//', '/'],
  ['/..', '/'],
  ['/x/./', '/x/'],
  ['/x//', '/x/'],
  ['//x?', '/x'],
  ['//a%20b', '/a%2520b'],
  ['//a!b(c)', '/a%21b%28c%29'],
  ["//a'b*", '/a%27b%2A'],
  ['//st~a_t-u.s$&+,:;=@x', '/st~a_t-u.s$&+,:;=@x'],
  ['/a/./b?q=%2F', '/a/b?q=%2F'],
];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(port: number, method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{"jsonrpc":"2.0","id":1,"method":"health"}' : undefined);
  });
}

describe("Surface B cleans paths as Go's ServeMux", () => {
  let server: CometServerHandle;
  const routed: string[] = [];

  before(async () => {
    server = await startCometServer({
      host: '127.0.0.1',
      port: 0,
      handler: {
        http: async (req: CometHttpRequest) => {
          routed.push(req.path);
          return { status: 200, contentType: 'application/json', body: `{"path":${JSON.stringify(req.path)}}`, cacheable: false };
        },
        websocket: () => {
          throw new Error('no WebSocket here');
        },
      },
      maxBodyBytes: 1 << 20,
      maxHeaderBytes: 1 << 20,
      websocketMaxQueueBytes: 1 << 20,
      websocketMaxTotalQueueBytes: 1 << 22,
      maxOpenConnections: 0,
      corsAllowedOrigins: [],
      log,
    });
  });

  after(async () => {
    await server?.close();
  });

  it('path.Clean and cleanPath as Go', () => {
    assert.deepEqual(['', 'a/../..', 'a//b/', '/../a', '/a/b/../../..', './', 'a/./b'].map(goPathClean), ['.', '..', 'a/b', '/a', '/', '.', 'a/b']);
    assert.deepEqual(['', 'status', '/status/', '/a/./', '//'].map(goCleanPath), ['/', '/status', '/status/', '/a/', '/']);
  });

  it('GET of an unclean path: 307 to the cleaned path, the handler never sees it', async () => {
    routed.length = 0;
    for (const [target, location] of OBSERVED) {
      const a = await send(server.port, 'GET', target);
      assert.equal(a.status, 307, target);
      assert.equal(a.headers.location, location, target);
      assert.equal(a.headers['content-type'], 'text/html; charset=utf-8', target);
      assert.match(String(a.headers['x-server-time']), /^\d+$/, target);
      assert.equal(a.body, `<a href="${location.replace(/&/g, '&amp;')}">Temporary Redirect</a>.\n\n`, target);
    }
    assert.deepEqual(routed, []);
  });

  it('the body escapes HTML as Go; POST and HEAD get no body', async () => {
    const q = await send(server.port, 'GET', '//x?a=<b>&c="d"');
    assert.equal(q.headers.location, '/x?a=<b>&c="d"');
    assert.equal(q.body, '<a href="/x?a=&lt;b&gt;&amp;c=&#34;d&#34;">Temporary Redirect</a>.\n\n');
    const post = await send(server.port, 'POST', '//');
    assert.deepEqual([post.status, post.headers.location, post.headers['content-type'], post.headers['content-length'], post.body], [307, '/', undefined, '0', '']);
    const head = await send(server.port, 'HEAD', '//status');
    assert.deepEqual([head.status, head.headers.location, head.headers['content-type'], head.body], [307, '/status', 'text/html; charset=utf-8', '']);
  });

  it('clean paths are routed as before', async () => {
    routed.length = 0;
    for (const target of ['/status', '/', '/status/', '/%2Fstatus', '/status?height=5']) {
      const a = await send(server.port, 'GET', target);
      assert.equal(a.status, 200, target);
    }
    assert.deepEqual(routed, ['/status', '/', '/status/', '/%2Fstatus', '/status']);
  });

  it('a WebSocket upgrade to an unclean path gets the same redirect', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = connect(server.port, '127.0.0.1', () => {
        sock.write('GET ///websocket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
      });
      let got = '';
      sock.setEncoding('utf8');
      sock.on('data', (c: string) => (got += c));
      sock.on('end', () => resolve(got));
      sock.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 307 Temporary Redirect\r\n/);
    assert.match(answer, /\r\nLocation: \/websocket\r\n/);
    assert.ok(answer.endsWith('\r\n\r\n<a href="/websocket">Temporary Redirect</a>.\n\n'));
  });
});
