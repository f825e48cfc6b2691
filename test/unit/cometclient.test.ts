/**
 * The local CometBFT RPC client of eth_sendRawTransaction under CometBFT (src/abci/cometclient.ts),
 * against a stand-in HTTP server: the JSON-RPC call it makes, CheckTx's answer, CometBFT's mempool
 * errors mapped to geth's texts, and what it refuses (an oversized answer, none at all).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { broadcastTxSync, CometRpcError, MAX_BROADCAST_RESPONSE_BYTES } from '../../src/abci/cometclient.js';
import { DomainError } from '../../src/lib/errors.js';

type Handler = (body: string, res: ServerResponse) => void;

describe('broadcastTxSync (src/abci/cometclient.ts)', () => {
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

  it('POSTs broadcast_tx_sync with the tx in base64 and returns CheckTx\'s code, log and hash', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1, result: { code: 0, log: '', hash: 'AB12', data: '' } });
    const tx = Uint8Array.from([0, 1, 2, 250, 251, 252]);
    const r = await broadcastTxSync(url, tx);
    assert.deepEqual(r, { code: 0, log: '', hash: 'AB12' });
    const sent = requests.at(-1)!;
    assert.equal(sent.method, 'POST');
    assert.equal(sent.contentType, 'application/json');
    assert.deepEqual(JSON.parse(sent.body), { jsonrpc: '2.0', id: 1, method: 'broadcast_tx_sync', params: { tx: Buffer.from(tx).toString('base64') } });
  });

  it('a tx that is a view into a larger buffer sends only its own bytes', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1, result: { code: 5, log: 'nonce too low', hash: 'CD' } });
    const big = Uint8Array.from([9, 9, 7, 8, 9, 9]);
    const r = await broadcastTxSync(url, big.subarray(2, 4));
    assert.deepEqual(r, { code: 5, log: 'nonce too low', hash: 'CD' });
    assert.equal(JSON.parse(requests.at(-1)!.body).params.tx, Buffer.from([7, 8]).toString('base64'));
  });

  it('CometBFT\'s mempool errors become geth\'s refusals; any other error is a CometRpcError', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error', data: 'tx already exists in cache' } });
    await assert.rejects(broadcastTxSync(url, Uint8Array.from([1])), (e: unknown) => e instanceof DomainError && e.message === 'already known');
    handler = answer({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error', data: 'mempool is full: number of txs 5000 (max: 5000)' } });
    await assert.rejects(broadcastTxSync(url, Uint8Array.from([1])), (e: unknown) => e instanceof DomainError && e.message === 'txpool is full');
    handler = answer({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error', data: 'something else' } });
    await assert.rejects(broadcastTxSync(url, Uint8Array.from([1])), (e: unknown) => e instanceof CometRpcError && e.message === 'something else');
  });

  it('many broadcasts at once all get their own answers (kept-alive connections reused)', async () => {
    handler = (body, res) => res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { code: 0, log: JSON.parse(body).params.tx, hash: '00' } }));
    const txs = Array.from({ length: 40 }, (_, i) => Uint8Array.from([i, i + 1]));
    const rs = await Promise.all(txs.map((t) => broadcastTxSync(url, t)));
    rs.forEach((r, i) => assert.equal(r.log, Buffer.from(txs[i]!).toString('base64')));
  });

  it('an answer larger than MAX_BROADCAST_RESPONSE_BYTES is refused, not read whole', async () => {
    handler = (_b, res) => {
      res.write('{"jsonrpc":"2.0","id":1,"result":{"code":0,"hash":"00","log":"');
      res.end('x'.repeat(MAX_BROADCAST_RESPONSE_BYTES + 1) + '"}}');
    };
    await assert.rejects(broadcastTxSync(url, Uint8Array.from([1])), (e: unknown) => e instanceof CometRpcError && /larger than/.test(e.message));
  });

  it('no JSON-RPC result nor error, or nobody listening: CometRpcError', async () => {
    handler = answer({ jsonrpc: '2.0', id: 1 });
    await assert.rejects(broadcastTxSync(url, Uint8Array.from([1])), (e: unknown) => e instanceof CometRpcError && /neither result nor error/.test(e.message));
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(broadcastTxSync(`http://127.0.0.1:${port}`, Uint8Array.from([1])), (e: unknown) => e instanceof CometRpcError && /cannot reach CometBFT/.test(e.message));
  });
});
