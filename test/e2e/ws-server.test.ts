/**
 * In-process checks of the pieces behind Surface A's WebSocket, where the real process cannot
 * show them deterministically: the listener's ping/pong keep-alive and origin rules
 * (src/server/ws.ts), and the subscription service's ordering and cleanup with a scripted event
 * source (src/evmrpc/subscriptions.ts, feed.ts): notifications held until the subscribe reply is
 * queued, every block delivered once even when heights arrive with gaps, subscriptions dropped
 * with their connection, a throwing listener never silencing the feed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import WebSocket from 'ws';
import { EvmFeed, newId, type EvmEventSource, type FeedBackend, type PoolChange } from '../../src/evmrpc/feed.js';
import { createSubscriptionMethods } from '../../src/evmrpc/subscriptions.js';
import type { Dispatcher } from '../../src/jsonrpc/core.js';
import type { CallContext } from '../../src/jsonrpc/types.js';
import { silentLogger } from '../../src/lib/log.js';
import { originAllowed, startWsServer, type WsServerHandle } from '../../src/server/ws.js';
import type { EvmBlock, EvmLog, EvmReceipt } from '../../src/types/chain.js';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

/** A committed block n with `logs` log entries from address 0xaa…. */
function makeBlock(n: bigint, logs: number): { block: EvmBlock; receipts: EvmReceipt[] } {
  const hash = bytes(32, Number(n % 250n) + 1);
  const header = {
    number: n, hash, parentHash: bytes(32, 0), stateRoot: bytes(32, 2), transactionsRoot: bytes(32, 3),
    receiptsRoot: bytes(32, 4), logsBloom: bytes(256, 0), miner: bytes(20, 5), gasLimit: 30_000_000n,
    gasUsed: 21_000n, timestamp: 1_700_000_000n + n, extraData: new Uint8Array(0), baseFeePerGas: 7n,
    mixHash: bytes(32, 0), size: 600n,
  };
  const txHash = bytes(32, 9);
  const evmLogs: EvmLog[] = Array.from({ length: logs }, (_, i) => ({
    address: bytes(20, 0xaa), topics: [bytes(32, 0x11)], data: new Uint8Array([i]), blockNumber: n, blockHash: hash,
    transactionHash: txHash, transactionIndex: 0, logIndex: i,
  }));
  const receipt = { logs: evmLogs } as unknown as EvmReceipt;
  return { block: { header, transactions: [] }, receipts: logs > 0 ? [receipt] : [] };
}

/** A scripted chain: commit(n) makes blocks up to n readable and (optionally) reports the height. */
class FakeChain implements FeedBackend, EvmEventSource {
  private latest = 0n;
  private readonly blocks = new Map<bigint, ReturnType<typeof makeBlock>>();
  private readonly blockListeners = new Set<(h: bigint) => void>();
  private readonly poolListeners = new Set<(c: PoolChange) => void>();
  logsPerBlock = 0;

  latestNumber = (): bigint => this.latest;
  blockByNumber = (n: bigint): EvmBlock | undefined => this.blocks.get(n)?.block;
  blockReceipts = (n: bigint): EvmReceipt[] | undefined => this.blocks.get(n)?.receipts;
  onBlock(l: (h: bigint) => void): () => void {
    this.blockListeners.add(l);
    return () => this.blockListeners.delete(l);
  }
  onPool(l: (c: PoolChange) => void): () => void {
    this.poolListeners.add(l);
    return () => this.poolListeners.delete(l);
  }
  commit(n: bigint, report = true): void {
    for (let h = this.latest + 1n; h <= n; h++) this.blocks.set(h, makeBlock(h, this.logsPerBlock));
    this.latest = n;
    if (report) for (const l of this.blockListeners) l(n);
  }
}

/** A fake WebSocket connection context that records what is sent and runs afterReply on demand. */
function fakeConnection(id: string) {
  const sent: any[] = [];
  const closeHooks: (() => void)[] = [];
  let afterReply: (() => void)[] = [];
  const ctx: CallContext = {
    transport: 'ws',
    authenticated: false,
    connectionId: id,
    sendText: (t) => (sent.push(JSON.parse(t)), true),
    onClose: (fn) => closeHooks.push(fn),
    afterReply: (fn) => afterReply.push(fn),
  };
  return {
    ctx,
    sent,
    replied() {
      const fns = afterReply;
      afterReply = [];
      for (const f of fns) f();
    },
    close() {
      for (const f of closeHooks) f();
    },
  };
}

describe('subscriptions with a scripted chain', () => {
  it('holds notifications until the reply is queued, then delivers every block once, in order, gaps filled', () => {
    const chain = new FakeChain();
    const feed = new EvmFeed(chain, chain, silentLogger);
    const subs = createSubscriptionMethods(feed, { maxPerConnection: 10 }, silentLogger);
    const conn = fakeConnection('c1');
    const id = subs.table.eth_subscribe!.handler(['newHeads', undefined], conn.ctx) as string;
    chain.commit(1n);
    chain.commit(2n);
    assert.equal(conn.sent.length, 0, 'nothing before the reply');
    conn.replied();
    assert.deepEqual(conn.sent.map((m) => Number(m.params.result.number)), [1, 2]);
    // the source reports only height 5: blocks 3 and 4 are delivered too, in order
    chain.commit(4n, false);
    chain.commit(5n);
    assert.deepEqual(conn.sent.map((m) => Number(m.params.result.number)), [1, 2, 3, 4, 5]);
    for (const m of conn.sent) {
      assert.equal(m.method, 'eth_subscription');
      assert.equal(m.params.subscription, id);
      assert.equal(m.params.result.gasLimit, '0x1c9c380');
      assert.equal(m.params.result.size, undefined);
    }
    subs.close();
    feed.close();
  });

  it('subscriptions die with their connection', () => {
    const chain = new FakeChain();
    chain.logsPerBlock = 2;
    const feed = new EvmFeed(chain, chain, silentLogger);
    const subs = createSubscriptionMethods(feed, { maxPerConnection: 10 }, silentLogger);
    const a = fakeConnection('a');
    const b = fakeConnection('b');
    subs.table.eth_subscribe!.handler(['newHeads', undefined], a.ctx);
    subs.table.eth_subscribe!.handler(['logs', { address: '0x' + 'aa'.repeat(20) }], a.ctx);
    subs.table.eth_subscribe!.handler(['newHeads', undefined], b.ctx);
    a.replied();
    b.replied();
    assert.equal(subs.count(), 3);
    chain.commit(1n);
    assert.equal(a.sent.length, 3, 'a head and two logs');
    a.close();
    assert.equal(subs.count(), 1);
    chain.commit(2n);
    assert.equal(a.sent.length, 3, 'nothing after the close');
    assert.equal(b.sent.length, 2);
    subs.close();
    feed.close();
  });

  it('a subscribe that runs after its connection closed registers nothing', () => {
    const chain = new FakeChain();
    const feed = new EvmFeed(chain, chain, silentLogger);
    const subs = createSubscriptionMethods(feed, { maxPerConnection: 10 }, silentLogger);
    const sent: string[] = [];
    // a closed connection runs close hooks at once
    const ctx: CallContext = { transport: 'ws', authenticated: false, connectionId: 'gone', sendText: (t) => (sent.push(t), false), onClose: (fn) => fn() };
    subs.table.eth_subscribe!.handler(['newHeads', undefined], ctx);
    assert.equal(subs.count(), 0);
    chain.commit(1n);
    assert.deepEqual(sent, []);
    subs.close();
    feed.close();
  });

  it('a listener that throws is reported and the others still get every block', () => {
    const chain = new FakeChain();
    const errors: unknown[] = [];
    const log = { ...silentLogger, error: (o: unknown) => errors.push(o), warn: () => {}, debug: () => {}, info: () => {}, child: () => log };
    const feed = new EvmFeed(chain, chain, log as never);
    let calls = 0;
    feed.onBlock(() => {
      calls++;
      throw new Error('boom');
    });
    const got: bigint[] = [];
    feed.onBlock((b) => got.push(b.number));
    chain.commit(3n);
    assert.deepEqual(got, [1n, 2n, 3n]);
    assert.equal(calls, 3, 'the throwing listener stays subscribed');
    assert.equal(errors.length, 3);
    feed.close();
  });

  it('ids are 0x + 32 hex digits with a non-zero first digit', () => {
    for (let i = 0; i < 2000; i++) assert.match(newId(), /^0x[1-9a-f][0-9a-f]{31}$/);
  });
});

describe('origin rules (geth ruleAllowsOrigin)', () => {
  const cases: [readonly string[], string | undefined, boolean][] = [
    [['127.0.0.1', 'localhost'], undefined, true],
    [['127.0.0.1', 'localhost'], 'http://localhost:5173', true],
    [['127.0.0.1', 'localhost'], 'https://127.0.0.1', true],
    [['127.0.0.1', 'localhost'], 'http://evil.example', false],
    [['127.0.0.1', 'localhost'], 'http://localhost.evil.example', false],
    [['http://app.example'], 'http://app.example', true],
    [['http://app.example'], 'https://app.example', false],
    [['http://app.example'], 'http://app.example:8080', true],
    [['app.example:8080'], 'http://app.example:8080', true],
    [['app.example:8080'], 'http://app.example:9090', false],
    [['*'], 'http://anything.example', true],
    [[], 'http://localhost', false],
    [[], undefined, true],
    [['localhost'], 'null', false],
  ];
  for (const [rules, origin, ok] of cases) {
    it(`${JSON.stringify(rules)} ${origin ?? '(no Origin)'} → ${ok}`, () => assert.equal(originAllowed(rules, origin), ok));
  }
});

describe('WebSocket listener keep-alive', () => {
  let server: WsServerHandle;
  const dispatcher: Dispatcher = { handle: async (body) => body };
  after(async () => server?.close());

  it('cuts a connection that stops answering pings; keeps one that answers', async () => {
    server = await startWsServer({
      host: '127.0.0.1',
      port: 0,
      dispatcher,
      limits: { maxMessageSize: 1024, maxConnections: 10, maxQueueBytes: 1 << 20, pingIntervalMs: 100 },
      origins: [],
      log: silentLogger,
    });
    const url = `ws://127.0.0.1:${server.port}`;
    const open = (autoPong: boolean) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, { autoPong });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const deaf = await open(false);
    const live = await open(true);
    const closed = new Promise<number>((r) => deaf.once('close', (code) => r(code)));
    assert.equal(await closed, 1006, 'terminated without a close frame');
    // three more pings to the live one: three more chances for the server to cut it
    await new Promise<void>((resolve) => {
      let pings = 0;
      const onPing = () => {
        if (++pings < 3) return;
        live.off('ping', onPing);
        resolve();
      };
      live.on('ping', onPing);
    });
    assert.equal(live.readyState, WebSocket.OPEN);
    assert.equal(server.connections(), 1);
    const echo = new Promise<string>((r) => live.once('message', (d) => r(String(d))));
    live.send('{"hello":1}');
    assert.equal(await echo, '{"hello":1}');
    live.close();
  });
});
