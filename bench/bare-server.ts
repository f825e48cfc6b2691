/**
 * The ceiling for the request-rate workloads: a bare node:http server that reads each request body
 * in full and answers one constant JSON-RPC reply. Run as its own process by run.ts:
 *   node dist/bench/bare-server.js PORT
 * It prints "listening PORT" once bound (loopback only).
 */
import http from 'node:http';

const REPLY = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
const port = Number(process.argv[2] ?? 0);

const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': REPLY.length });
    res.end(REPLY);
  });
});
server.keepAliveTimeout = 120_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`listening ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
