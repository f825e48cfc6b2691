/**
 * The local CometBFT RPC client of the forward queue under CometBFT (src/abci/cometclient.ts), against a
 * stand-in HTTP server: the JSON-RPC batch it makes, each broadcast's answer matched by id, CometBFT's
 * mempool errors mapped to geth's texts, and what it refuses (an oversized answer, none at all).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { broadcastTxBatch, cometHealth, CometRpcError, CometUnreachable, MAX_BROADCAST_RESPONSE_BYTES } from '../../src/abci/cometclient.js';

type Handler = (body: string, res: ServerResponse) => void;

describe('broadcastTxBatch and cometHealth (src/abci/cometclient.ts)', () => {
  let server: Server;
  let url: string;
  let handler: Handler = () => {};
  const requests: { method?: string; contentType?: string; body: string }[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        requests.push({ method: req.method, contentType: req.headers['content-type'], body });
        handler(body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const answer = (o: unknown): Handler => (_b, res) => res.end(JSON.stringify(o));
  /** answers each request of a batch with `result(request)`, in reverse order (ids must match, not positions) */
  const perRequest = (result: (req: { id: number; params: { tx: string } }) => unknown): Handler => (body, res) => {
    const reqs = JSON.parse(body) as { id: number; params: { tx: string } }[];
    res.end(JSON.stringify(reqs.map((r) => ({ jsonrpc: '2.0', id: r.id, ...(result(r) as object) })).reverse()));
  };

  it('POSTs one batch of broadcast_tx_async, the txs in base64 in order, and returns each answer by id', async () => {
    handler = perRequest((r) => ({ result: { code: 0, log: r.params.tx, hash: 'AB12', data: '' } }));
    const txs = [Uint8Array.from([0, 1, 2, 250, 251, 252]), Uint8Array.from([7])];
    const rs = await broadcastTxBatch(url, txs);
    assert.deepEqual(rs, txs.map((t) => ({ code: 0, log: Buffer.from(t).toString('base64') })));
    const sent = requests.at(-1)!;
    assert.equal(sent.method, 'POST');
    assert.equal(sent.contentType, 'application/json');
    assert.deepEqual(
      JSON.parse(sent.body),
      txs.map((t, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'broadcast_tx_async', params: { tx: Buffer.from(t).toString('base64') } })),
    );
  });

  it('a tx that is a view into a larger buffer sends only its own bytes; a batch of one answered with a bare object', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1, result: { code: 5, log: 'nonce too low', hash: 'CD' } });
    const big = Uint8Array.from([9, 9, 7, 8, 9, 9]);
    assert.deepEqual(await broadcastTxBatch(url, [big.subarray(2, 4)]), [{ code: 5, log: 'nonce too low' }]);
    assert.equal(JSON.parse(requests.at(-1)!.body)[0].params.tx, Buffer.from([7, 8]).toString('base64'));
  });

  it("CometBFT's mempool errors become geth's refusals; any other error is that broadcast's error; a missing answer says so", async () => {
    const data = ['tx already exists in cache', 'mempool is full: number of txs 5000 (max: 5000)', 'something else'];
    handler = (body, res) => {
      const reqs = JSON.parse(body) as { id: number }[];
      // the fourth request gets no answer
      res.end(JSON.stringify(reqs.slice(0, 3).map((r, i) => ({ jsonrpc: '2.0', id: r.id, error: { code: -32603, message: 'Internal error', data: data[i] } }))));
    };
    const [known, full, other, missing] = await broadcastTxBatch(url, [1, 2, 3, 4].map((b) => Uint8Array.from([b])));
    assert.ok(known && 'rejected' in known && known.rejected.message === 'already known' && known.rejected.detail.reason === 'known');
    assert.ok(full && 'rejected' in full && full.rejected.message === 'txpool is full');
    assert.deepEqual(other, { error: 'something else' });
    assert.ok(missing && 'error' in missing && /did not answer/.test(missing.error));
  });

  it('a batch CometBFT refuses as a whole (an error without an id) is a CometRpcError', async () => {
    handler = answer({ jsonrpc: '2.0', id: -1, error: { code: -32600, message: 'Invalid Request', data: 'batch request exceeds maximum (10) allowed number of requests' } });
    await assert.rejects(broadcastTxBatch(url, [Uint8Array.from([1]), Uint8Array.from([2])]), (e: unknown) => e instanceof CometRpcError && /refused the batch: batch request exceeds/.test(e.message));
  });

  it('many batches at once all get their own answers (kept-alive connections reused)', async () => {
    handler = perRequest((r) => ({ result: { code: 0, log: r.params.tx, hash: '00' } }));
    const txs = Array.from({ length: 40 }, (_, i) => Uint8Array.from([i, i + 1]));
    const rs = await Promise.all(txs.map((t) => broadcastTxBatch(url, [t])));
    rs.forEach((r, i) => assert.deepEqual(r, [{ code: 0, log: Buffer.from(txs[i]!).toString('base64') }]));
  });

  it('an answer larger than MAX_BROADCAST_RESPONSE_BYTES is refused, not read whole', async () => {
    handler = (_b, res) => {
      res.write('[{"jsonrpc":"2.0","id":1,"result":{"code":0,"hash":"00","log":"');
      res.end('x'.repeat(MAX_BROADCAST_RESPONSE_BYTES + 1) + '"}}]');
    };
    await assert.rejects(broadcastTxBatch(url, [Uint8Array.from([1])]), (e: unknown) => e instanceof CometUnreachable && /larger than/.test(e.message));
  });

  it('no JSON-RPC result nor error is that broadcast\'s error; nobody listening: CometUnreachable, for health too', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1 });
    const [r] = await broadcastTxBatch(url, [Uint8Array.from([1])]);
    assert.ok(r && 'error' in r && /neither result nor error/.test(r.error));
    handler = answer({ jsonrpc: '2.0', id: 1, result: {} });
    await cometHealth(url);
    assert.equal(JSON.parse(requests.at(-1)!.body).method, 'health');
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((res) => closed.close(() => res()));
    const down = `http://127.0.0.1:${port}`;
    await assert.rejects(broadcastTxBatch(down, [Uint8Array.from([1])]), (e: unknown) => e instanceof CometUnreachable && /cannot reach CometBFT/.test(e.message));
    await assert.rejects(cometHealth(down), (e: unknown) => e instanceof CometUnreachable && /cannot reach CometBFT/.test(e.message));
  });
});
