/**
 * Surface A over WebSocket against a real ferry, with a raw `ws` client so every frame is seen:
 * newHeads (exact header fields of eth_getBlockByNumber, every block once, in order; with
 * includeTransactions), logs criteria (address, list, positional/any-of/null topics), pending txs on
 * mempool entry (hash and full object), syncing, unsubscribe, per-connection state, the reply before
 * the first notification (also behind a slow call in a batch), ids, plain methods over WS; then the
 * limits: subscriptions per connection, connections, message size, origins, a client too slow to
 * read (disconnected with a reason while another client and block production go on).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, Interface, Transaction, Wallet, id, zeroPadValue } from 'ethers';
import WebSocket from 'ws';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { readGauge, rpcMetricsEndpoint, waitForGauge } from '../helpers/prometheus.js';
import { call, rpc, waitFor, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const ID_FORMAT = /^0x[1-9a-f][0-9a-f]{31}$/;
const TRANSFER = id('Transfer(address,address,uint256)');
const APPROVAL = id('Approval(address,address,uint256)');
const WAIT_MS = 30_000;
/** fields of eth_getBlockByNumber that are not header fields (absent from newHeads) */
const NON_HEADER = ['size', 'totalDifficulty', 'transactions', 'uncles'];
/** runtime code `JUMPDEST PUSH1 0 JUMP`: loops until out of gas (a slow eth_call) */
const LOOP_CODE = '0x5b600056';

type Json = any;

/** A raw JSON-RPC WebSocket client that keeps every message in arrival order. */
class RawWs {
  readonly messages: Json[] = [];
  private readonly waiters = new Map<unknown, (m: Json) => void>();
  private readonly changed = new Set<() => void>();
  private nextId = 1;
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      this.messages.push(msg);
      const key = Array.isArray(msg) ? msg[0]?.id : msg.id;
      const w = key === undefined ? undefined : this.waiters.get(key);
      if (w) {
        this.waiters.delete(key);
        w(msg);
      }
      for (const f of this.changed) f();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const f of this.changed) f();
    });
  }

  static open(url: string, headers?: Record<string, string>): Promise<RawWs> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      // errors after the open (or after a refusal) settle nothing: kept so none goes unhandled
      ws.on('error', reject);
      ws.once('open', () => resolve(new RawWs(ws)));
      ws.once('unexpected-response', (req, res) => {
        reject(new Error(`HTTP ${res.statusCode}`));
        res.resume();
        req.destroy();
      });
    });
  }

  /** Sends a request (or a batch: the answer is keyed by its first id); resolves with the answer. */
  send(msg: Json): Promise<Json> {
    const key = Array.isArray(msg) ? msg[0].id : msg.id;
    const p = new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(msg).slice(0, 100)}`)), WAIT_MS);
      this.waiters.set(key, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
    this.ws.send(JSON.stringify(msg));
    return p;
  }

  request(method: string, params: unknown[] = []): Json {
    return { jsonrpc: '2.0', id: this.nextId++, method, params };
  }

  async call(method: string, params: unknown[] = []): Promise<Json> {
    const answer = await this.send(this.request(method, params));
    if (answer.error) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
    return answer.result;
  }

  subscribe(...params: unknown[]): Promise<string> {
    return this.call('eth_subscribe', params);
  }

  /** results of the notifications of subscription `sub`, in order */
  results(sub: string): Json[] {
    return this.messages.filter((m) => m.method === 'eth_subscription' && m.params.subscription === sub).map((m) => m.params.result);
  }

  /** waits until `test` holds (checked on every message) */
  until(what: string, test: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (test()) {
          this.changed.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.changed.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.changed.add(check);
    });
  }

  /** waits for at least n notifications of `sub` */
  async take(sub: string, n: number): Promise<Json[]> {
    await this.until(`${n} notifications of ${sub}`, () => this.results(sub).length >= n);
    return this.results(sub);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

/** The header fields of eth_getBlockByNumber(n, fullTx), i.e. what newHeads must carry. */
async function headerOf(url: string, n: number | string, fullTx = false): Promise<Json> {
  const block = await call(url, 'eth_getBlockByNumber', [typeof n === 'number' ? `0x${n.toString(16)}` : n, fullTx]);
  const out = { ...block };
  for (const k of NON_HEADER) delete out[k];
  if (fullTx) out.transactions = block.transactions;
  return out;
}

/** Signs and sends an EIP-1559 tx over HTTP; returns its hash. */
async function send(url: string, w: Wallet, f: { to: string; data?: string; nonce?: number; value?: bigint; gasLimit?: bigint }): Promise<string> {
  const nonce = f.nonce ?? Number(await call(url, 'eth_getTransactionCount', [w.address, 'pending']));
  const gasPrice = BigInt(await call(url, 'eth_gasPrice'));
  const tx = Transaction.from({
    type: 2,
    chainId: EVM_CHAIN_ID,
    nonce,
    to: f.to,
    data: f.data ?? '0x',
    value: f.value ?? 0n,
    gasLimit: f.gasLimit ?? 200_000n,
    maxFeePerGas: gasPrice * 2n,
    maxPriorityFeePerGas: gasPrice / 4n,
  });
  const raw = await w.signTransaction(tx);
  return call(url, 'eth_sendRawTransaction', [raw]);
}

async function deployToken(url: string, owner: Wallet): Promise<string> {
  const c = compileToken();
  const args = AbiCoder.defaultAbiCoder().encode(['string', 'string', 'uint256'], ['WS Token', 'WST', 10n ** 24n]);
  const nonce = Number(await call(url, 'eth_getTransactionCount', [owner.address, 'pending']));
  const gasPrice = BigInt(await call(url, 'eth_gasPrice'));
  const tx = Transaction.from({
    type: 2, chainId: EVM_CHAIN_ID, nonce, data: c.bytecode + args.slice(2), gasLimit: 3_000_000n,
    maxFeePerGas: gasPrice * 2n, maxPriorityFeePerGas: gasPrice / 4n,
  });
  const hash = await call(url, 'eth_sendRawTransaction', [await owner.signTransaction(tx)]);
  const receipt = await waitForReceipt(url, hash);
  assert.equal(receipt.status, '0x1');
  return receipt.contractAddress;
}

const topicOf = (addr: string) => zeroPadValue(addr, 32).toLowerCase();

describe('Surface A over WebSocket', () => {
  let node: FerryNode;
  let token: string;
  const iface = new Interface(compileToken().abi);
  const owner = devWallet(0);
  const alice = devWallet(1);
  const bob = devWallet(2);
  const carol = devWallet(3);
  const clients: RawWs[] = [];
  const open = async (): Promise<RawWs> => {
    const c = await RawWs.open(node.wsUrl);
    clients.push(c);
    return c;
  };

  /** Surface A's Prometheus endpoint (the subscription and connection gauges) */
  let metricsUrl: string;

  before(async () => {
    const metrics = await rpcMetricsEndpoint();
    metricsUrl = metrics.url;
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms', ...metrics.args] });
    token = (await deployToken(node.url, owner)).toLowerCase();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    if (node) assert.equal(await node.stop(), 0);
  });

  it('newHeads: every block once, in order, each exactly the header fields of eth_getBlockByNumber', async () => {
    const c = await open();
    const sub = await c.subscribe('newHeads');
    assert.match(sub, ID_FORMAT);
    // a block with gas used and a non-empty bloom among them
    const hash = await send(node.url, owner, { to: token, data: iface.encodeFunctionData('transfer', [bob.address, 5n]) });
    const receipt = await waitForReceipt(node.url, hash);
    const txBlock = Number(receipt.blockNumber);
    await c.until('head after the tx block', () => c.results(sub).some((h) => Number(h.number) > txBlock + 1));
    const heads = c.results(sub);
    const first = Number(heads[0].number);
    heads.forEach((h, i) => assert.equal(Number(h.number), first + i, 'consecutive, none missed or repeated'));
    for (const h of heads) {
      assert.deepEqual(h, await headerOf(node.url, Number(h.number)), `block ${Number(h.number)}`);
      assert.notEqual(h.gasLimit, '0x0');
    }
    const withTx = heads.find((h) => Number(h.number) === txBlock);
    assert.ok(withTx, 'the tx block was notified');
    assert.equal(withTx.gasUsed, receipt.gasUsed);
    assert.notEqual(BigInt(withTx.logsBloom), 0n);
    assert.equal(withTx.hash, receipt.blockHash);
  });

  it('newHeads with includeTransactions: the full transaction objects of eth_getBlockByNumber(n, true)', async () => {
    const c = await open();
    const sub = await c.subscribe('newHeads', { includeTransactions: true });
    const plain = await c.subscribe('newHeads', { includeTransactions: false });
    const hash = await send(node.url, alice, { to: carol.address, value: 12345n });
    const receipt = await waitForReceipt(node.url, hash);
    const n = Number(receipt.blockNumber);
    await c.until('the tx block', () => c.results(sub).some((h) => Number(h.number) === n) && c.results(plain).some((h) => Number(h.number) === n));
    const head = c.results(sub).find((h) => Number(h.number) === n);
    assert.deepEqual(head, await headerOf(node.url, n, true));
    assert.equal(head.transactions.length, 1);
    assert.equal(head.transactions[0].hash, hash);
    const plainHead = c.results(plain).find((h) => Number(h.number) === n);
    assert.equal(plainHead.transactions, undefined);
  });

  it('logs: address and topic criteria each get exactly the matching logs, in order', async () => {
    const c = await open();
    const heads = await c.subscribe('newHeads');
    const other = '0x' + '42'.repeat(20);
    const subs = {
      all: await c.subscribe('logs'),
      empty: await c.subscribe('logs', {}),
      address: await c.subscribe('logs', { address: token }),
      list: await c.subscribe('logs', { address: [other, token] }),
      toBob: await c.subscribe('logs', { topics: [TRANSFER, null, topicOf(bob.address)] }),
      fromAliceOrCarol: await c.subscribe('logs', { address: token, topics: [TRANSFER, [topicOf(alice.address), topicOf(carol.address)]] }),
      approvals: await c.subscribe('logs', { topics: [[APPROVAL]] }),
      nobody: await c.subscribe('logs', { address: other }),
      fourTopics: await c.subscribe('logs', { topics: [TRANSFER, null, null, null] }),
    };
    const encode = (fn: string, args: unknown[]) => iface.encodeFunctionData(fn, args);
    const hashes = [
      await send(node.url, owner, { to: token, data: encode('transfer', [alice.address, 100n]) }),
      await send(node.url, owner, { to: token, data: encode('transfer', [bob.address, 200n]) }),
      await send(node.url, owner, { to: token, data: encode('approve', [bob.address, 7n]) }),
    ];
    await waitForReceipt(node.url, hashes[0]!);
    hashes.push(await send(node.url, alice, { to: token, data: encode('transfer', [carol.address, 30n]) }));
    hashes.push(await send(node.url, alice, { to: token, data: encode('transfer', [bob.address, 40n]) }));
    const receipts = [];
    for (const h of hashes) receipts.push(await waitForReceipt(node.url, h));
    const last = Math.max(...receipts.map((r) => Number(r.blockNumber)));
    // logs of block N are sent right after its head: once head N+1 is in, everything of N is
    await c.until('head after the last tx', () => c.results(heads).some((h) => Number(h.number) > last));
    const logs = receipts.flatMap((r) => r.logs).sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
    assert.equal(logs.length, 5);
    const pick = (f: (l: Json) => boolean) => logs.filter(f);
    const t = (l: Json, i: number) => l.topics[i];
    assert.deepEqual(c.results(subs.all), logs);
    assert.deepEqual(c.results(subs.empty), logs);
    assert.deepEqual(c.results(subs.address), logs);
    assert.deepEqual(c.results(subs.list), logs);
    assert.deepEqual(c.results(subs.toBob), pick((l) => t(l, 0) === TRANSFER && t(l, 2) === topicOf(bob.address)));
    assert.equal(c.results(subs.toBob).length, 2);
    assert.deepEqual(c.results(subs.fromAliceOrCarol), pick((l) => t(l, 0) === TRANSFER && t(l, 1) === topicOf(alice.address)));
    assert.equal(c.results(subs.fromAliceOrCarol).length, 2);
    assert.deepEqual(c.results(subs.approvals), pick((l) => t(l, 0) === APPROVAL));
    assert.equal(c.results(subs.approvals).length, 1);
    assert.deepEqual(c.results(subs.nobody), []);
    // a trailing wildcard position beyond the log's topics still matches (eth_getLogs does the same)
    assert.deepEqual(c.results(subs.fourTopics), pick((l) => t(l, 0) === TRANSFER));
    for (const l of c.results(subs.all)) assert.equal(l.removed, false);
    // the same logs as eth_getLogs over the range
    const range = await call(node.url, 'eth_getLogs', [{ fromBlock: receipts[0].blockNumber, toBlock: `0x${last.toString(16)}`, address: token }]);
    assert.deepEqual(c.results(subs.address), range);
  });

  it('logs: fromBlock/toBlock bound the blocks whose logs are sent', async () => {
    const c = await open();
    const heads = await c.subscribe('newHeads');
    const now = Number(await call(node.url, 'eth_blockNumber'));
    // a range that ended in the past: never fires; one that starts far ahead: not yet
    const past = await c.subscribe('logs', { fromBlock: '0x1', toBlock: `0x${now.toString(16)}` });
    const future = await c.subscribe('logs', { fromBlock: `0x${(now + 100_000).toString(16)}` });
    const open_ = await c.subscribe('logs', { fromBlock: `0x${now.toString(16)}`, toBlock: 'latest', address: token });
    const hash = await send(node.url, owner, { to: token, data: iface.encodeFunctionData('transfer', [carol.address, 1n]) });
    const r = await waitForReceipt(node.url, hash);
    await c.until('head after the tx', () => c.results(heads).some((h) => Number(h.number) > Number(r.blockNumber)));
    assert.deepEqual(c.results(past), []);
    assert.deepEqual(c.results(future), []);
    assert.deepEqual(c.results(open_), r.logs);
  });

  it('newPendingTransactions fires when a tx enters the mempool, not at commit; `true` gives full objects', async () => {
    const c = await open();
    const hashes = await c.subscribe('newPendingTransactions');
    const full = await c.subscribe('newPendingTransactions', true);
    const sender = devWallet(4);
    const next = Number(await call(node.url, 'eth_getTransactionCount', [sender.address, 'pending']));
    // nonce gap: the tx waits in the mempool and cannot be committed
    const gapped = await send(node.url, sender, { to: carol.address, value: 1n, nonce: next + 1 });
    const [first] = await c.take(hashes, 1);
    assert.equal(first, gapped);
    const [obj] = await c.take(full, 1);
    assert.equal((await rpc(node.url, 'eth_getTransactionReceipt', [gapped])).result, null, 'notified before any commit');
    assert.equal(obj.hash, gapped);
    assert.equal(obj.blockHash, null);
    assert.equal(obj.blockNumber, null);
    assert.deepEqual(obj, await call(node.url, 'eth_getTransactionByHash', [gapped]));
    const filler = await send(node.url, sender, { to: carol.address, value: 1n, nonce: next });
    await waitForReceipt(node.url, gapped);
    await c.take(hashes, 2);
    await c.take(full, 2);
    assert.deepEqual(c.results(hashes), [gapped, filler]);
    assert.deepEqual(c.results(full).map((t) => t.hash), [gapped, filler]);
  });

  it('syncing: one notification `false`', async () => {
    const c = await open();
    const sub = await c.subscribe('syncing');
    assert.deepEqual(await c.take(sub, 1), [false]);
    // notifications of one connection arrive in order: two heads on a later subscription mean any
    // second syncing notification would have come by now
    const heads = await c.subscribe('newHeads');
    await c.take(heads, 2);
    assert.deepEqual(c.results(sub), [false]);
  });

  it('eth_unsubscribe stops notifications; subscriptions belong to their connection', async () => {
    const a = await open();
    const b = await open();
    const sub = await a.subscribe('newHeads');
    await a.take(sub, 1);
    assert.equal(await b.call('eth_unsubscribe', [sub]), false, 'another connection cannot cancel it');
    await a.take(sub, 2);
    assert.equal(await a.call('eth_unsubscribe', [sub]), true);
    const count = a.results(sub).length;
    // a fresh subscription on the same connection: its heads come in order after anything the old
    // one would still get for the same blocks
    const later = await a.subscribe('newHeads');
    const laterHeads = await a.take(later, 3);
    assert.equal(a.results(sub).length, count, 'nothing after the unsubscribe reply');
    assert.ok(laterHeads.every((h) => a.results(sub).every((old) => Number(old.number) < Number(h.number))), 'the old subscription got none of the later blocks');
    // b still has its own subscriptions; a's is gone for it too
    const bHeads = await b.subscribe('newHeads');
    await b.take(bHeads, 1);
    assert.equal(await a.call('eth_unsubscribe', [sub]), false);
  });

  it('subscriptions die with their connection', async () => {
    // the other tests' connections stay open until the end: these are this test's base
    const subsBase = await readGauge(metricsUrl, 'ferry_rpc_subscriptions');
    const connsBase = await readGauge(metricsUrl, 'ferry_rpc_ws_connections');
    const a = await open();
    const sub = await a.subscribe('newHeads');
    await a.subscribe('logs', {});
    await a.take(sub, 1);
    assert.equal(await readGauge(metricsUrl, 'ferry_rpc_subscriptions'), subsBase + 2);
    assert.equal(await readGauge(metricsUrl, 'ferry_rpc_ws_connections'), connsBase + 1);
    await a.close();
    // the server sees the close a moment later: both gauges come back to their base (docs/observability.md)
    await waitForGauge(metricsUrl, 'ferry_rpc_ws_connections', connsBase);
    await waitForGauge(metricsUrl, 'ferry_rpc_subscriptions', subsBase);
    // a new connection cannot reach it, and the node goes on serving
    const b = await open();
    assert.equal(await b.call('eth_unsubscribe', [sub]), false);
    const heads = await b.subscribe('newHeads');
    await b.take(heads, 2);
  });

  it('the subscribe reply comes before the first notification, even behind a slow call in the same batch', async () => {
    const c = await open();
    const loop = '0x' + '77'.repeat(20);
    const before = Number(await call(node.url, 'eth_blockNumber'));
    const batch = [
      c.request('eth_subscribe', ['newHeads']),
      // runs until out of gas: blocks commit meanwhile
      c.request('eth_call', [{ to: loop, gas: '0x1312d00' }, 'latest', { [loop]: { code: LOOP_CODE } }]),
    ];
    const started = c.messages.length;
    const answer = await c.send(batch);
    // the subscription existed when the reply was sent: every block after this read is notified
    const headAtReply = Number(await call(node.url, 'eth_blockNumber'));
    assert.ok(Array.isArray(answer));
    const sub = answer[0].result;
    assert.match(sub, ID_FORMAT);
    // geth answers an eth_call that runs out of gas with the VM error (internal/ethapi/api.go Call: result.Err)
    assert.deepEqual(answer[1].error, { code: -32000, message: 'out of gas' }, 'the loop ends out of gas');
    const first = c.messages.slice(started).findIndex((m) => m.method === 'eth_subscription');
    const reply = c.messages.slice(started).indexOf(answer);
    await c.take(sub, 1);
    assert.ok(reply >= 0 && (first === -1 || first > reply), 'reply first');
    const heads = await c.take(sub, 3);
    const n0 = Number(heads[0].number);
    heads.forEach((h, i) => assert.equal(Number(h.number), n0 + i));
    // no block from before the subscription, and none missed after the reply
    assert.ok(n0 > before, `the first head ${n0} is after the head ${before} read before subscribing`);
    assert.ok(n0 <= headAtReply + 1, `the first head ${n0} is at most the block after ${headAtReply}, the head read after the reply`);
  });

  it('subscription ids: 0x + 32 hex digits, first digit non-zero, all distinct', async () => {
    const c = await open();
    const ids = await Promise.all(Array.from({ length: 40 }, () => c.subscribe('syncing')));
    for (const i of ids) assert.match(i, ID_FORMAT);
    assert.equal(new Set(ids).size, ids.length);
    const filterIds = await Promise.all(Array.from({ length: 10 }, () => c.call('eth_newBlockFilter')));
    for (const i of filterIds) assert.match(i, ID_FORMAT);
    for (const i of filterIds) assert.equal(await c.call('eth_uninstallFilter', [i]), true);
  });

  it('plain Surface A methods answer over WebSocket exactly as over HTTP', async () => {
    const c = await open();
    const n = Number(await call(node.url, 'eth_blockNumber')) - 1;
    const tag = `0x${n.toString(16)}`;
    for (const [method, params] of [
      ['eth_getBlockByNumber', [tag, true]],
      ['eth_getBalance', [owner.address, tag]],
      ['eth_call', [{ to: token, data: iface.encodeFunctionData('balanceOf', [bob.address]) }, tag]],
      ['eth_getLogs', [{ fromBlock: '0x1', toBlock: tag, address: token }]],
      ['eth_chainId', []],
      ['eth_getBlockByNumber', ['0xzz', false]],
    ] as const) {
      assert.deepEqual(await c.send(c.request(method, [...params])).then((a) => ({ ...a, id: 0 })), { ...(await rpc(node.url, method, [...params])), id: 0 }, method);
    }
    const hash = await c.call('eth_sendRawTransaction', [
      await devWallet(5).signTransaction(
        Transaction.from({ type: 2, chainId: EVM_CHAIN_ID, nonce: 0, to: carol.address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n }),
      ),
    ]);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
  });
});

describe('WebSocket limits', () => {
  let node: FerryNode;
  const MAX_MESSAGE = 200_000;
  const MAX_CONNECTIONS = 4;
  const MAX_QUEUE = 1024 * 1024;

  before(async () => {
    node = await startFerry({
      args: [
        '--consensus.timeout_commit', '200ms',
        '--json-rpc.ws-max-subscriptions', '2',
        '--json-rpc.ws-max-connections', String(MAX_CONNECTIONS),
        '--json-rpc.ws-max-message-size', String(MAX_MESSAGE),
        '--json-rpc.ws-max-queue-bytes', String(MAX_QUEUE),
        '--json-rpc.ws-origins', 'http://allowed.example,localhost',
      ],
    });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  /**
   * Opens a connection, retrying while the server refuses it for the connection cap: the server
   * counts a closed connection until its side of the close handshake ends, a moment after the
   * client's close event.
   */
  const openFree = (headers?: Record<string, string>): Promise<RawWs> =>
    waitFor('a free connection slot', () =>
      RawWs.open(node.wsUrl, headers).catch((e: Error) => {
        if (/HTTP 503/.test(e.message)) return undefined;
        throw e;
      }),
    );

  it('subscriptions per connection are capped', async () => {
    const c = await openFree();
    const a = await c.subscribe('newHeads');
    await c.subscribe('syncing');
    const over = await c.send(c.request('eth_subscribe', ['newHeads']));
    assert.deepEqual(over.error, { code: -32000, message: 'too many subscriptions on this connection (limit 2)' });
    assert.equal(await c.call('eth_unsubscribe', [a]), true);
    assert.match(await c.subscribe('newPendingTransactions'), ID_FORMAT);
    // the cap is per connection
    const d = await openFree();
    assert.match(await d.subscribe('newHeads'), ID_FORMAT);
    await Promise.all([c.close(), d.close()]);
  });

  it('connections are capped: the next upgrade is refused with 503', async () => {
    const conns: RawWs[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) conns.push(await openFree());
    await assert.rejects(RawWs.open(node.wsUrl), /HTTP 503/);
    await conns[0]!.close();
    // the freed slot is usable again (once the server has seen the close)
    const again = await openFree();
    assert.equal(await again.call('eth_chainId'), '0x2328');
    await assert.rejects(RawWs.open(node.wsUrl), /HTTP 503/, 'and the cap holds again');
    await Promise.all([again.close(), ...conns.map((c) => c.close())]);
  });

  it('a message over ws-max-message-size closes the connection with 1009', async () => {
    const c = await openFree();
    const pad = 'a'.repeat(MAX_MESSAGE);
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [], pad }));
    await c.until('close', () => c.closed !== undefined);
    assert.equal(c.closed!.code, 1009);
    // one just under the limit is answered
    const d = await openFree();
    const body = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [], pad: '' };
    body.pad = 'a'.repeat(MAX_MESSAGE - JSON.stringify(body).length);
    assert.equal((await d.send(body)).result, '0x2328');
    await d.close();
  });

  it('origins: allowed rules pass, others are refused with 403, clients without Origin pass', async () => {
    await assert.rejects(RawWs.open(node.wsUrl, { Origin: 'http://evil.example' }), /HTTP 403/);
    await assert.rejects(RawWs.open(node.wsUrl, { Origin: 'https://allowed.example' }), /HTTP 403/, 'the rule names a scheme');
    for (const origin of ['http://allowed.example', 'http://localhost:3000', 'https://localhost']) {
      const c = await openFree({ Origin: origin });
      assert.equal(await c.call('eth_chainId'), '0x2328', origin);
      await c.close();
    }
    const c = await openFree();
    assert.equal(await c.call('eth_chainId'), '0x2328');
    await c.close();
  });

  it('a plain HTTP request to the WebSocket port is answered 426', async () => {
    const res = await fetch(node.wsUrl.replace('ws:', 'http:'));
    assert.equal(res.status, 426);
    assert.equal(res.headers.get('upgrade'), 'websocket');
  });

  it('a client that stops reading is disconnected with a reason; other clients and blocks go on', async () => {
    const healthy = await openFree();
    const heads = await healthy.subscribe('newHeads');
    const slow = await openFree();
    await slow.subscribe('newHeads', { includeTransactions: true });
    const startHeight = Number(await call(node.url, 'eth_blockNumber'));
    slow.ws.pause();
    // replies echo the id: ~150 kB each (one fits the 1 MiB queue), 15 MB in all: far more than
    // the kernel's socket buffers plus the queue
    const big = 'x'.repeat(150_000);
    for (let i = 0; i < 100; i++) slow.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `${big}${i}`, method: 'eth_chainId', params: [] }));
    await waitFor('blocks to go on', async () => (Number(await call(node.url, 'eth_blockNumber')) >= startHeight + 10 ? true : null));
    slow.ws.resume();
    await slow.until('the slow client is closed', () => slow.closed !== undefined);
    assert.equal(slow.closed!.code, 1008);
    assert.equal(slow.closed!.reason, 'outgoing queue full: client too slow to read its messages');
    const got = await healthy.take(heads, 10);
    const n0 = Number(got[0].number);
    got.forEach((h, i) => assert.equal(Number(h.number), n0 + i, 'the healthy client missed nothing'));
    await healthy.close();
  });
});
