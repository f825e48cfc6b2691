/**
 * Surface B defects (issue 10, items 3, 4, 8, 9, 10) against the real ferry process, with CosmJS's
 * Comet38Client where it has the call, else fetch / ws / a raw socket:
 * - block_search with `begin_block.<type> EXISTS` / `end_block.<type> EXISTS` finds the blocks the
 *   attribute form and a subscription with the same condition find;
 * - dump_consensus_state's last_commit is a vote set (votes, votes_bit_array, peer_maj_23s) made of
 *   the last commit's signatures, and votes holds round 0;
 * - WebSocket clients that never read are closed with 1008 and a reason, per client
 *   (`rpc.websocket_max_queue_bytes`) and for all clients together
 *   (`rpc.websocket_max_total_queue_bytes`), while a client that reads is served;
 * - nesting 5,000 deep (and past encoding/json's 10,000) is answered with a JSON-RPC error over
 *   JSON-RPC, URI and WebSocket (Surface A too);
 * - a declared Content-Length over max_body_bytes is refused with 413 before any body byte is sent.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectComet, isComet38Client, type Comet38Client } from '@cosmjs/tendermint-rpc';
import WebSocket from 'ws';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { waitFor } from '../helpers/rpc.js';

type Json = any;
const WAIT_MS = 60_000;
const DEPTH = 5_000;
/** one past encoding/json's maxNestingDepth */
const TOO_DEEP = 10_001;
const nestedArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** A raw JSON-RPC WebSocket client keeping every message and the close code/reason. */
class RawWs {
  readonly messages: Json[] = [];
  closed: { code: number; reason: string } | undefined;
  /** emits 'change' on every message and on close */
  private readonly changes = new EventEmitter();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)));
      this.changes.emit('change');
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.changes.emit('change');
    });
  }

  static open(url: string): Promise<RawWs> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.on('error', reject);
      ws.once('open', () => resolve(new RawWs(ws)));
    });
  }

  /** the server's name for this connection (`IP:port` of our end) */
  get remoteAddr(): string {
    return `127.0.0.1:${(this.ws as unknown as { _socket: { localPort: number } })._socket.localPort}`;
  }

  /** resolves once `test` holds, checked after every message and the close */
  async until(what: string, test: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      while (!test()) await once(this.changes, 'change', { signal });
    } catch (e) {
      throw signal.aborted ? new Error(`timed out waiting for ${what}`) : e;
    }
  }

  /** sends raw text; resolves with the next message answering `id` */
  async send(text: string, id: unknown): Promise<Json> {
    const seen = this.messages.length;
    this.ws.send(text);
    await this.until(`the answer to ${String(id).slice(0, 40)}`, () => this.messages.slice(seen).some((m) => m.id === id || (id === undefined && m.error)));
    return this.messages.slice(seen).find((m) => m.id === id || (id === undefined && m.error));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.ws.close();
    return this.until('close', () => this.closed !== undefined);
  }
}

async function cometJson(node: FerryNode, body: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(node.cometUrl + '/', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, body: await res.json() };
}

/** Waits until ferry's log has the "too slow: disconnected" line for this client; returns it. */
function waitForDisconnectLog(node: FerryNode, client: RawWs): Promise<Json> {
  const addr = client.remoteAddr;
  return waitFor(`ferry to disconnect ${addr}`, async () =>
    readFileSync(node.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('websocket client too slow') && l.includes(`"${addr}"`))
      .map((l) => JSON.parse(l))[0],
    WAIT_MS,
  );
}

/** Sends `count` requests whose answers (~150 kB each: the id is echoed) the paused client never reads. */
function flood(client: RawWs, count: number): void {
  client.ws.pause();
  const big = 'x'.repeat(150_000);
  for (let i = 0; i < count; i++) client.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `${big}${i}`, method: 'health', params: {} }));
}

describe('Surface B defects (issue 10)', () => {
  let node: FerryNode;
  let client: Comet38Client;

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '300ms'] });
    const c = await connectComet(node.cometUrl);
    assert.ok(isComet38Client(c));
    client = c;
  });

  after(async () => {
    client?.disconnect();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('block_search: `begin_block.<type> EXISTS` / `end_block.<type> EXISTS` find what the attribute form and a subscription find', async () => {
    // a subscription with the documented condition sees a block...
    const sub = await RawWs.open(node.cometUrl.replace('http:', 'ws:') + '/websocket');
    const query = "tm.event='NewBlockEvents' AND end_block.block_bloom EXISTS";
    await sub.send(JSON.stringify({ jsonrpc: '2.0', id: 'sub', method: 'subscribe', params: { query } }), 'sub');
    await sub.until('a NewBlockEvents notification', () => sub.messages.some((m) => m.id === 'sub' && m.result?.data));
    const seen = Number(sub.messages.find((m) => m.id === 'sub' && m.result?.data).result.data.value.height);
    await sub.close();
    // ...and block_search with the same condition finds it (CosmJS decodes the answer)
    const bloom = await client.blockSearchAll({ query: `end_block.block_bloom EXISTS AND block.height <= ${seen}` });
    assert.ok(bloom.blocks.some((b) => b.block.header.height === seen), `block ${seen} found by end_block.block_bloom EXISTS`);
    assert.equal(bloom.totalCount, seen, 'every block so far has an EndBlock block_bloom event');

    for (const [typeForm, attrForm] of [
      ['begin_block.evm_fee_market EXISTS', 'begin_block.evm_fee_market.base_fee EXISTS'],
      ['end_block.block_bloom EXISTS', 'end_block.block_bloom.bloom EXISTS'],
      ['evm_fee_market EXISTS', 'evm_fee_market.base_fee EXISTS'],
    ]) {
      const bounded = (q: string) => `${q} AND block.height <= ${seen}`;
      const byType = await client.blockSearchAll({ query: bounded(typeForm!) });
      const byAttr = await client.blockSearchAll({ query: bounded(attrForm!) });
      assert.ok(byType.totalCount > 0, `${typeForm} finds blocks`);
      assert.deepEqual(byType.blocks.map((b) => b.block.header.height), byAttr.blocks.map((b) => b.block.header.height), `${typeForm} = ${attrForm}`);
    }
    // the phase still selects: block_bloom is an EndBlock event, evm_fee_market a BeginBlock one
    assert.equal((await client.blockSearch({ query: 'begin_block.block_bloom EXISTS' })).totalCount, 0);
    assert.equal((await client.blockSearch({ query: 'end_block.evm_fee_market EXISTS' })).totalCount, 0);
  });

  it('dump_consensus_state: last_commit is the vote set of the last commit; votes holds round 0', async () => {
    const dump = ((await (await fetch(`${node.cometUrl}/dump_consensus_state`)).json()) as Json).result;
    const rs = dump.round_state;
    const last = Number(rs.height) - 1;
    const commit = ((await (await fetch(`${node.cometUrl}/commit?height=${last}`)).json()) as Json).result.signed_header.commit;
    const vals = ((await (await fetch(`${node.cometUrl}/validators?height=${last}`)).json()) as Json).result.validators;
    const fp = (hexText: string) => hexText.slice(0, 12).toUpperCase().padEnd(12, '0');
    const b64fp = (b: string) => fp(Buffer.from(b, 'base64').toString('hex'));

    assert.deepEqual(Object.keys(rs.last_commit), ['votes', 'votes_bit_array', 'peer_maj_23s']);
    assert.deepEqual(rs.last_commit.peer_maj_23s, {});
    assert.equal(rs.last_commit.votes.length, vals.length);
    commit.signatures.forEach((sig: Json, i: number) => {
      const round = String(commit.round).padStart(2, '0');
      const want =
        `Vote{${i}:${fp(sig.validator_address)} ${last}/${round}/SIGNED_MSG_TYPE_PRECOMMIT(Precommit) ` +
        `${fp(commit.block_id.hash)} ${b64fp(sig.signature)} 000000000000 @ ${sig.timestamp}}`;
      assert.equal(rs.last_commit.votes[i], want);
    });
    const power = vals.reduce((s: bigint, v: Json) => s + BigInt(v.voting_power), 0n);
    assert.equal(rs.last_commit.votes_bit_array, `BA{${vals.length}:${'x'.repeat(vals.length)}} ${power}/${power} = 1.00`);

    // votes: HeightVoteSet with round 0, the same shape consensus_state gives as height_vote_set
    assert.ok(Array.isArray(rs.votes) && rs.votes.length === 1);
    assert.deepEqual(Object.keys(rs.votes[0]), ['round', 'prevotes', 'prevotes_bit_array', 'precommits', 'precommits_bit_array']);
    assert.equal(rs.votes[0].round, 0);
    const cs = ((await (await fetch(`${node.cometUrl}/consensus_state`)).json()) as Json).result.round_state;
    assert.deepEqual(rs.votes, cs.height_vote_set);
  });

  it('5,000-deep params: a JSON-RPC error over JSON-RPC, URI and WebSocket; past 10,000 a parse error', async () => {
    const deep = nestedArray(DEPTH);
    const byJson = await cometJson(node, `{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":${deep}}}`);
    assert.equal(byJson.status, 200);
    assert.equal(byJson.body.id, 1);
    assert.equal(byJson.body.error.code, -32602);
    assert.equal(byJson.body.error.message, 'Invalid params');
    assert.equal(byJson.body.error.data, `error converting json params to arguments: invalid 64-bit integer encoding ${JSON.stringify(deep)}, expected string`);

    const positional = await cometJson(node, `{"jsonrpc":"2.0","id":2,"method":"status","params":[${deep}]}`);
    assert.equal(positional.body.error.code, -32602);
    assert.match(positional.body.error.data, /^error converting json params to arguments: expected 0 parameters \(\[\]\), got 1/);

    const deepId = await cometJson(node, `{"jsonrpc":"2.0","id":${deep},"method":"health","params":{}}`);
    assert.equal(deepId.status, 500);
    assert.equal(deepId.body.error.code, -32700);
    assert.equal(deepId.body.error.data, `error unmarshaling request: json-rpc ID (${deep}) is of unknown type ([]interface {})`);

    const byUri = await fetch(`${node.cometUrl}/block?height=${encodeURIComponent(deep)}`);
    assert.equal(byUri.status, 500);
    const uriBody = (await byUri.json()) as Json;
    assert.equal(uriBody.id, -1);
    assert.equal(uriBody.error.code, -32602);
    assert.equal(uriBody.error.data, `error converting http params to arguments: invalid 64-bit integer encoding ${JSON.stringify(deep)}, expected string`);

    const ws = await RawWs.open(node.cometUrl.replace('http:', 'ws:') + '/websocket');
    const byWs = await ws.send(`{"jsonrpc":"2.0","id":"deep","method":"block","params":{"height":${deep}}}`, 'deep');
    assert.equal(byWs.error.code, -32603, 'WebSocket param errors are -32603 in CometBFT');
    assert.match(byWs.error.data, /^error converting json params to arguments: invalid 64-bit integer encoding "\[\[\[/);

    const tooDeep = `{"jsonrpc":"2.0","id":3,"method":"block","params":{"height":${nestedArray(TOO_DEEP)}}}`;
    const overJson = await cometJson(node, tooDeep);
    assert.equal(overJson.status, 500);
    assert.deepEqual(overJson.body, {
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error. Invalid JSON', data: "error unmarshaling request: invalid character '[' exceeded max depth" },
    });
    const overWs = await ws.send(tooDeep, undefined);
    assert.deepEqual(overWs.error, { code: -32700, message: 'Parse error. Invalid JSON', data: "error unmarshaling request: invalid character '[' exceeded max depth" });
    // the connection is still served
    assert.deepEqual((await ws.send('{"jsonrpc":"2.0","id":"after","method":"health","params":{}}', 'after')).result, {});
    await ws.close();
    // CosmJS still works on the same node
    assert.ok((await client.status()).syncInfo.latestBlockHeight > 0);
  });

  it('Surface A answers deeply nested params with a JSON-RPC error (HTTP and WebSocket)', async () => {
    const body = `{"jsonrpc":"2.0","id":7,"method":"eth_getBlockByNumber","params":[${nestedArray(DEPTH)},false]}`;
    const res = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const answer = (await res.json()) as Json;
    assert.equal(answer.id, 7);
    assert.equal(answer.error.code, -32602);
    const ws = await RawWs.open(node.wsUrl);
    const overWs = await ws.send(body, 7);
    assert.equal(overWs.error.code, -32602);
    await ws.close();
  });

  it('a declared Content-Length over max_body_bytes is refused with 413 before any body byte arrives', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(node.cometUrl).port), '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: ferry\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n');
      });
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = answer.split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 413 /);
    assert.match(head!, /\r\nConnection: close\r\n/i);
    assert.deepEqual(JSON.parse(body!), {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request', data: 'error reading request body: http: request body too large' },
    });
  });
});

describe('Surface B WebSocket: a client that never reads (per client)', () => {
  let node: FerryNode;
  const MAX_QUEUE = 1024 * 1024;

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '300ms', '--rpc.websocket_max_queue_bytes', String(MAX_QUEUE)] });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('is closed with 1008 and a reason at rpc.websocket_max_queue_bytes; a client that reads is served', async () => {
    const url = node.cometUrl.replace('http:', 'ws:') + '/websocket';
    const healthy = await RawWs.open(url);
    const slow = await RawWs.open(url);
    // 100 answers of ~150 kB: 15 MB, far more than the kernel's socket buffers plus the queue
    flood(slow, 100);
    const line = await waitForDisconnectLog(node, slow);
    assert.ok(line.queued >= MAX_QUEUE, `held ${line.queued} bytes when closed`);
    assert.deepEqual((await healthy.send('{"jsonrpc":"2.0","id":"h","method":"health","params":{}}', 'h')).result, {});
    slow.ws.resume();
    await slow.until('the slow client is closed', () => slow.closed !== undefined);
    assert.deepEqual(slow.closed, { code: 1008, reason: 'outgoing queue full: client too slow to read its messages' });
    assert.ok(slow.messages.length < 100, 'not every answer was queued');
    await healthy.close();
  });
});

describe('Surface B WebSocket: clients that never read (all clients together)', () => {
  let node: FerryNode;
  const MAX_TOTAL = 4 * 1024 * 1024;
  const SLOW_CLIENTS = 3;

  before(async () => {
    node = await startFerry({
      args: [
        '--consensus.timeout_commit', '300ms',
        // per client: more than a client is sent, so only the total bound can act
        '--rpc.websocket_max_queue_bytes', String(64 * 1024 * 1024),
        '--rpc.websocket_max_total_queue_bytes', String(MAX_TOTAL),
      ],
    });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('each is closed with 1008 and a reason at rpc.websocket_max_total_queue_bytes; a client that reads is still served', async () => {
    const url = node.cometUrl.replace('http:', 'ws:') + '/websocket';
    const healthy = await RawWs.open(url);
    const slow = await Promise.all(Array.from({ length: SLOW_CLIENTS }, () => RawWs.open(url)));
    for (const c of slow) flood(c, 100);
    const lines = await Promise.all(slow.map((c) => waitForDisconnectLog(node, c)));
    for (const l of lines) assert.ok(l.allClients >= MAX_TOTAL, `all clients held ${l.allClients} bytes when one was closed`);
    // the bound is full of the slow clients' bytes, and a client that keeps up is not blamed for them
    assert.deepEqual((await healthy.send('{"jsonrpc":"2.0","id":"h","method":"health","params":{}}', 'h')).result, {});
    for (const c of slow) c.ws.resume();
    for (const c of slow) {
      await c.until('the slow client is closed', () => c.closed !== undefined);
      assert.deepEqual(c.closed, { code: 1008, reason: 'outgoing queues of all clients full: client too slow to read its messages' });
    }
    assert.equal(healthy.closed, undefined);
    await healthy.close();
  });
});
