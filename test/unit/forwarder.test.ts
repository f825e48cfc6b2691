/**
 * The forward queue of eth_sendRawTransaction under CometBFT (src/abci/forwarder.ts) against a stand-in
 * of CometBFT's RPC: batches of `broadcast_tx_sync` in submission order, one in flight at a time, within
 * the batch bound; a refused broadcast dropped (`already known` is not a refusal); no answer retried a
 * bounded number of times, then dropped, `unreachable` set until a probe gets an answer; the queue bound.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TxForwarder, MAX_FORWARD_BATCH } from '../../src/abci/forwarder.js';

type Req = { jsonrpc: string; id: number; method: string; params: { tx?: string } };
/** what the stand-in answers one broadcast of tx byte `n` */
type Answer = (n: number) => unknown;

describe('TxForwarder (src/abci/forwarder.ts)', () => {
  let server: Server;
  let url: string;
  /** each request's broadcasts: the first byte of each tx */
  let batches: number[][];
  let inFlight = 0;
  let maxInFlight = 0;
  let delayMs = 0;
  let cut = false;
  let answer: Answer;
  const ok: Answer = () => ({ code: 0, log: '', hash: 'AB' });

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (cut) return req.socket.destroy();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Req | Req[];
        const list = Array.isArray(body) ? body : [body];
        if (list[0]!.method === 'health') return res.end(JSON.stringify({ jsonrpc: '2.0', id: list[0]!.id, result: {} }));
        const txs = list.map((r) => Buffer.from(r.params.tx!, 'base64')[0]!);
        batches.push(txs);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const answers = list.map((r, i) => {
          const a = answer(txs[i]!);
          return { jsonrpc: '2.0', id: r.id, ...(a && typeof a === 'object' && 'error' in a ? a : { result: a }) };
        });
        setTimeout(() => {
          inFlight--;
          // as CometBFT: a batch of one is answered with a bare object
          res.end(JSON.stringify(answers.length === 1 ? answers[0] : answers));
        }, delayMs);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  beforeEach(() => {
    batches = [];
    inFlight = 0;
    maxInFlight = 0;
    delayMs = 0;
    cut = false;
    answer = ok;
  });

  const tx = (n: number, size = 4) => ({ n, native: Uint8Array.from({ length: size }, (_, i) => (i === 0 ? n : 7)) });

  function forwarder(opts: { maxQueue?: number; maxBatchBytes?: number; retries?: number } = {}, at = url) {
    const forwarded: number[] = [];
    const dropped: Array<[number, string]> = [];
    const f = new TxForwarder<{ n: number; native: Uint8Array }>(at, {
      onForwarded: (item) => forwarded.push(item.n),
      onDrop: (item, why) => dropped.push([item.n, why]),
      retryMs: 1,
      ...opts,
    });
    return { f, forwarded, dropped };
  }

  it('sends batches of at most MAX_FORWARD_BATCH, in submission order, one batch in flight at a time', async () => {
    delayMs = 5;
    const { f, forwarded, dropped } = forwarder();
    for (let n = 0; n < 25; n++) f.push(tx(n));
    await f.idle();
    assert.equal(MAX_FORWARD_BATCH, 10);
    // the first tx leaves at once, alone; the others queue behind it and go MAX_FORWARD_BATCH at a time
    assert.deepEqual(batches.map((b) => b.length), [1, 10, 10, 4]);
    assert.deepEqual(batches.flat(), [...Array(25).keys()]);
    assert.equal(maxInFlight, 1);
    assert.deepEqual(forwarded, [...Array(25).keys()]);
    assert.deepEqual(dropped, []);
    assert.equal(f.size, 0);
  });

  it('keeps a batch within MAX_FORWARD_BATCH_BYTES of base64 (a larger tx goes alone)', async () => {
    const { f } = forwarder({ maxBatchBytes: 40 });
    // 12 bytes → 16 base64 characters: two fit in 40, a third does not; a 60-byte tx goes alone
    for (const t of [tx(0, 12), tx(1, 12), tx(2, 12), tx(3, 12), tx(4, 60), tx(5, 12)]) f.push(t);
    await f.idle();
    assert.deepEqual(batches, [[0], [1, 2], [3], [4], [5]]);
  });

  it('drops the txs CometBFT refuses, with its reason; `already known` (its cache) counts as forwarded', async () => {
    answer = (n) =>
      n === 1
        ? { error: { code: -32603, message: 'Internal error', data: 'mempool is full: number of txs 5000 (max: 5000)' } }
        : n === 2
          ? { error: { code: -32603, message: 'Internal error', data: 'tx already exists in cache' } }
          : n === 3
            ? { code: 5, log: 'insufficient funds for gas * price + value', hash: 'AB' }
            : ok(n);
    const { f, forwarded, dropped } = forwarder();
    for (let n = 0; n < 5; n++) f.push(tx(n));
    await f.idle();
    assert.deepEqual(forwarded, [0, 2, 4]);
    assert.deepEqual(dropped, [
      [1, 'txpool is full'],
      [3, 'insufficient funds for gas * price + value'],
    ]);
    assert.equal(f.unreachable, undefined);
  });

  it('retries a batch that got no answer, then drops it; `unreachable` until a probe is answered', async () => {
    cut = true;
    const { f, forwarded, dropped } = forwarder({ retries: 3 });
    f.push(tx(1));
    f.push(tx(2));
    await f.idle();
    assert.equal(batches.length, 0);
    assert.deepEqual(forwarded, []);
    assert.deepEqual(dropped.map(([n]) => n), [1, 2]);
    assert.match(dropped[0]![1], /^cannot reach CometBFT at http:\/\/127\.0\.0\.1:\d+: .* \(after 3 retries\)$/);
    assert.match(f.unreachable ?? '', /^cannot reach CometBFT at /);
    // CometBFT back: a probe clears it
    await f.probe();
    assert.match(f.unreachable ?? '', /^cannot reach CometBFT at /, 'still cut: still unreachable');
    cut = false;
    await f.probe();
    assert.equal(f.unreachable, undefined);
    f.push(tx(3));
    await f.idle();
    assert.deepEqual(forwarded, [3]);
  });

  it('counts the attempts: the first and `retries` more, against a port nobody listens on', async () => {
    const attempts: number[] = [];
    const dropped: number[] = [];
    const f = new TxForwarder<{ n: number; native: Uint8Array }>(url, {
      send: async () => {
        attempts.push(attempts.length);
        const { CometUnreachable } = await import('../../src/abci/cometclient.js');
        throw new CometUnreachable('cannot reach CometBFT at test: ECONNREFUSED');
      },
      onDrop: (item) => dropped.push(item.n),
      retries: 2,
      retryMs: 1,
    });
    f.push(tx(9));
    await f.idle();
    assert.equal(attempts.length, 3);
    assert.deepEqual(dropped, [9]);
  });

  it('holds at most maxQueue txs waiting or in flight; one more is refused', async () => {
    delayMs = 50;
    const { f, forwarded } = forwarder({ maxQueue: 3 });
    f.push(tx(1));
    f.push(tx(2));
    f.push(tx(3));
    assert.equal(f.full, true);
    assert.throws(() => f.push(tx(4)), /forward queue full/);
    await f.idle();
    assert.equal(f.full, false);
    assert.deepEqual(forwarded, [1, 2, 3]);
  });
});
