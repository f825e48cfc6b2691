/**
 * The ceiling for the request-rate workloads: a bare node:http server that reads each request body
 * in full, parses it as JSON and answers with the request's own id (a batch gets one answer per
 * item), result "0x1" — what any JSON-RPC server on Node's `http` must do at least, and nothing more.
 * Run as its own process by run.ts:
 *   node dist/bench/bare-server.js PORT
 * It prints "listening PORT" once bound (loopback only). A body that is not JSON gets HTTP 400.
 */
import http from 'node:http';

/** bodies past this are refused (413), so a stray client cannot grow the buffer without bound */
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const port = Number(process.argv[2] ?? 0);

const reply = (req: unknown): unknown => ({ jsonrpc: '2.0', id: (req as { id?: unknown } | null)?.id ?? null, result: '0x1' });

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MAX_BODY_BYTES) chunks.push(c);
  });
  req.on('end', () => {
    let out: string;
    let status = 200;
    if (size > MAX_BODY_BYTES) {
      status = 413;
      out = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'body too large' } });
    } else {
      try {
        const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        out = JSON.stringify(Array.isArray(msg) ? msg.map(reply) : reply(msg));
      } catch {
        status = 400;
        out = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
      }
    }
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 120_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`listening ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
