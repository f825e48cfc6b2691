/**
 * Config keys that change behaviour, each shown through the real ferry process against a node with
 * the key set and (where the default differs visibly) one without it:
 * mempool.max_tx_bytes, json-rpc.call-workers, json-rpc.evm-timeout (a looping contract),
 * json-rpc.allow-unprotected-txs = true, rpc.unsafe, rpc.cors_allowed_origins (Surface B),
 * rpc.timeout_broadcast_tx_commit (expiry), rpc.experimental_close_on_slow_client = true.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Transaction } from 'ethers';
import WebSocket from 'ws';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitFor, waitForReceipt } from '../helpers/rpc.js';

/** runtime code `JUMPDEST PUSH1 0 JUMP`: loops until out of gas */
const LOOP_CODE = '0x5b600056';
const LOOP_ADDR = '0x' + '77'.repeat(20);
const GWEI = 10n ** 9n;
const ALLOWED_ORIGIN = 'http://allowed.example';

/** the node with every key under test set */
const SET_ARGS = [
  '--consensus.timeout_commit', '300ms',
  // long enough for the loop below to run out of gas on a loaded machine
  '--json-rpc.evm-timeout', '60s',
  '--mempool.max_tx_bytes', '400',
  '--json-rpc.call-workers', '2',
  '--json-rpc.allow-unprotected-txs', 'true',
  '--rpc.unsafe', 'true',
  '--rpc.cors_allowed_origins', ALLOWED_ORIGIN,
  '--rpc.timeout_broadcast_tx_commit', '500ms',
  '--rpc.experimental_close_on_slow_client', 'true',
  '--rpc.experimental_websocket_write_buffer_size', '1',
];
/** defaults, except the same long evm-timeout and small write buffer (closing is what differs) */
const DEFAULT_ARGS = ['--consensus.timeout_commit', '300ms', '--json-rpc.evm-timeout', '60s', '--rpc.experimental_websocket_write_buffer_size', '1'];
/** a short evm-timeout, on one call worker, with no gas cap (so a call can be given hours of gas) */
const SHORT_TIMEOUT_ARGS = ['--json-rpc.evm-timeout', '300ms', '--json-rpc.call-workers', '1', '--json-rpc.gas-cap', '0'];

/** A signed EIP-1559 transfer from dev account `i` with `data` of `dataBytes` bytes. */
async function transfer(i: number, nonce: number, dataBytes = 0): Promise<string> {
  return devWallet(i).signTransaction({
    type: 2, chainId: EVM_CHAIN_ID, nonce, to: devWallet(9).address, value: 1n,
    data: '0x' + '01'.repeat(dataBytes), gasLimit: 100_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI,
  });
}

const nonceOf = async (url: string, i: number): Promise<number> =>
  Number(await call(url, 'eth_getTransactionCount', [devWallet(i).address, 'pending']));

/** A Surface B route over HTTP (GET with query parameters); the parsed JSON-RPC answer. */
async function comet(node: FerryNode, route: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${node.cometUrl}/${route}`, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (404 page)
  }
  return { status: res.status, headers: res.headers, body };
}

/**
 * Opens Surface B's WebSocket, subscribes to NewBlock and NewBlockHeader (two events in the same
 * tick of every commit), and collects every message.
 */
async function subscribeTwice(node: FerryNode): Promise<{ ws: WebSocket; messages: any[]; closed: () => boolean }> {
  const ws = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const messages: any[] = [];
  let closed = false;
  ws.on('message', (d) => messages.push(JSON.parse(String(d))));
  ws.on('close', () => (closed = true));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'blocks', method: 'subscribe', params: { query: "tm.event='NewBlock'" } }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'headers', method: 'subscribe', params: { query: "tm.event='NewBlockHeader'" } }));
  return { ws, messages, closed: () => closed };
}

describe('config keys that change behaviour, through the real process', () => {
  let set: FerryNode;
  let plain: FerryNode;
  let short: FerryNode;

  before(async () => {
    [set, plain, short] = await Promise.all([
      startFerry({ args: SET_ARGS }),
      startFerry({ args: DEFAULT_ARGS }),
      startFerry({ args: SHORT_TIMEOUT_ARGS }),
    ]);
  });

  after(async () => {
    for (const n of [set, plain, short]) if (n) assert.equal(await n.stop(), 0);
  });

  it('mempool.max_tx_bytes: a larger transaction is refused and not pooled; the default takes it', async () => {
    const big = await transfer(1, await nonceOf(set.url, 1), 400);
    assert.ok((big.length - 2) / 2 > 400, 'the raw tx alone is over the limit');
    const r = await rpc(set.url, 'eth_sendRawTransaction', [big]);
    assert.equal(r.error?.code, -32000);
    assert.match(r.error!.message, /oversized data/);
    assert.equal(await call(set.url, 'eth_getTransactionByHash', [Transaction.from(big).hash]), null);
    // a small one from the same account still goes in
    const small = await transfer(1, await nonceOf(set.url, 1));
    assert.equal((await waitForReceipt(set.url, await call(set.url, 'eth_sendRawTransaction', [small]))).status, '0x1');
    // the default (128 KiB) accepts the big one
    const same = await transfer(1, await nonceOf(plain.url, 1), 400);
    assert.equal((await waitForReceipt(plain.url, await call(plain.url, 'eth_sendRawTransaction', [same]))).status, '0x1');
  });

  /**
   * One batch of `n` looping eth_calls (200k gas each: they end out of gas quickly). The batch's items
   * are handed to the call pool in one tick, before any can finish, so the pool holds them all at once;
   * the number refused as busy shows how many calls the node's workers can hold (256 per worker).
   */
  async function busyRefusals(url: string, n: number): Promise<number> {
    const batch = Array.from({ length: n }, (_, id) => ({
      jsonrpc: '2.0', id, method: 'eth_call',
      params: [{ to: LOOP_ADDR, gas: '0x30d40' }, 'latest', { [LOOP_ADDR]: { code: LOOP_CODE } }],
    }));
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
    const answers = (await res.json()) as { id: number; error?: { message: string } }[];
    assert.equal(answers.length, n);
    const busy = answers.filter((a) => a.error?.message === 'too many concurrent calls, try again later').length;
    // every other call ran: out of gas (or the short node's deadline), never anything else
    for (const a of answers) {
      assert.ok(a.error, `a loop cannot succeed: ${JSON.stringify(a)}`);
      assert.match(a.error.message, /^(out of gas|too many concurrent calls, try again later|execution aborted \(timeout = 300ms\))$/);
    }
    return busy;
  }

  it('json-rpc.call-workers: each worker holds 256 calls, so 2 workers take 512 at once and 1 takes 256', async () => {
    // time-slicing answers a quick call beside a long one whatever the number of workers (see
    // defects-callpool.test.ts); what the key changes is how many threads, and so how many calls, run
    assert.equal(await busyRefusals(set.url, 513), 1);
    // (one batch per node: the workers may still hold a batch's calls after their answers went out)
    assert.equal(await busyRefusals(short.url, 257), 1);
    // both serve on afterwards, once their workers have let go of the batch's calls: the short node answered
    // its calls' timeouts at the deadline while its worker still held them (each is cut at its next check),
    // so on a busy machine it may refuse as busy for a moment after the batch's answer
    for (const url of [set.url, short.url]) {
      const answer = await waitFor(`${url} to take calls again`, async () => {
        const r = await rpc(url, 'eth_call', [{ to: devWallet(9).address }, 'latest']);
        return r.error?.message === 'too many concurrent calls, try again later' ? undefined : r;
      });
      assert.deepEqual(answer.error, undefined);
      assert.equal(answer.result, '0x');
    }
  });

  it('json-rpc.evm-timeout: a looping contract is cut at the deadline with geth\'s error, and the node serves on', async () => {
    const loop = [{ to: LOOP_ADDR, gas: '0x989680' }, 'latest', { [LOOP_ADDR]: { code: LOOP_CODE } }];
    // 10^12 gas of the loop is ~8·10^10 iterations: hours on any machine, so only the deadline ends it
    const endless = [{ to: LOOP_ADDR, gas: '0xe8d4a51000' }, 'latest', { [LOOP_ADDR]: { code: LOOP_CODE } }];
    assert.deepEqual((await rpc(short.url, 'eth_call', endless)).error, { code: -32000, message: 'execution aborted (timeout = 300ms)' });
    // the one worker really stopped the loop (seconds of work left): the next call, which gets the
    // same 300 ms, is answered
    assert.equal(await call(short.url, 'eth_call', [{ to: devWallet(9).address }, 'latest']), '0x');
    assert.deepEqual((await rpc(short.url, 'eth_estimateGas', endless)).error?.message, 'execution aborted (timeout = 300ms)');
    assert.equal(await call(short.url, 'eth_call', [{ to: devWallet(9).address }, 'latest']), '0x');
    // with a longer deadline the same loop runs until it is out of gas
    assert.deepEqual((await rpc(plain.url, 'eth_call', loop)).error, { code: -32000, message: 'out of gas' });
  });

  it('json-rpc.evm-timeout: a plain call of a deployed loop (no override: the revm engine when built) is cut at the deadline too', async () => {
    // init code PUSH4 5b600056 PUSH1 224 SHL PUSH1 0 MSTORE PUSH1 4 PUSH1 0 RETURN deploys LOOP_CODE
    const deploy = await devWallet(3).signTransaction({
      type: 2, chainId: EVM_CHAIN_ID, nonce: await nonceOf(short.url, 3), data: '0x635b60005660e01b60005260046000f3',
      gasLimit: 100_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI,
    });
    const { contractAddress } = await waitForReceipt(short.url, await call(short.url, 'eth_sendRawTransaction', [deploy]));
    assert.equal(await call(short.url, 'eth_getCode', [contractAddress, 'latest']), LOOP_CODE);
    const endless = [{ to: contractAddress, gas: '0xe8d4a51000' }, 'latest'];
    assert.deepEqual((await rpc(short.url, 'eth_call', endless)).error, { code: -32000, message: 'execution aborted (timeout = 300ms)' });
    assert.equal(await call(short.url, 'eth_call', [{ to: devWallet(9).address }, 'latest']), '0x');
  });

  it('json-rpc.evm-timeout: a call cut at the deadline leaves no transient storage (EIP-1153) to the next call on the worker', async () => {
    // TSTORE slot 0 = 1, then loop: `PUSH1 1 PUSH1 0 TSTORE JUMPDEST PUSH1 5 JUMP`
    const storeThenLoop = '0x600160005d5b600556';
    // TLOAD slot 0 and return it: `PUSH1 0 TLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN`
    const load = '0x60005c60005260206000f3';
    const at = (code: string, gas: string) => [{ to: LOOP_ADDR, gas }, 'latest', { [LOOP_ADDR]: { code } }];
    assert.deepEqual((await rpc(short.url, 'eth_call', at(storeThenLoop, '0xe8d4a51000'))).error, { code: -32000, message: 'execution aborted (timeout = 300ms)' });
    // the short node has one call worker: the next call runs on the EVM the aborted one used
    for (let i = 0; i < 3; i++) assert.equal(await call(short.url, 'eth_call', at(load, '0x186a0')), '0x' + '00'.repeat(32));
  });

  it('json-rpc.allow-unprotected-txs = true: a legacy tx without EIP-155 is accepted and mined', async () => {
    const wallet = devWallet(3);
    const tx = Transaction.from({ type: 0, nonce: await nonceOf(set.url, 3), gasPrice: 100n * GWEI, gasLimit: 21_000n, to: devWallet(9).address, value: 5n });
    tx.signature = wallet.signingKey.sign(tx.unsignedHash);
    const raw = tx.serialized;
    assert.equal(Transaction.from(raw).signature!.v, 27 + Transaction.from(raw).signature!.yParity, 'v is 27/28: no chain id');
    const hash = await call<string>(set.url, 'eth_sendRawTransaction', [raw]);
    assert.equal(hash, tx.hash);
    const receipt = await waitForReceipt(set.url, hash);
    assert.equal(receipt.status, '0x1');
    // the default refuses the same kind of tx
    const other = Transaction.from({ type: 0, nonce: await nonceOf(plain.url, 3), gasPrice: 100n * GWEI, gasLimit: 21_000n, to: devWallet(9).address, value: 5n });
    other.signature = wallet.signingKey.sign(other.unsignedHash);
    const refused = await rpc(plain.url, 'eth_sendRawTransaction', [other.serialized]);
    assert.deepEqual(refused.error, { code: -32000, message: 'only replay-protected (EIP-155) transactions allowed over RPC' });
  });

  it('rpc.unsafe: the unsafe routes are served (answering what ferry cannot do, mempool untouched); without it they do not exist', async () => {
    // a tx behind a nonce gap stays in the mempool
    const gapped = await transfer(4, (await nonceOf(set.url, 4)) + 1);
    await call(set.url, 'eth_sendRawTransaction', [gapped]);
    const pooled = Number((await comet(set, 'num_unconfirmed_txs')).body.result.n_txs);
    assert.ok(pooled >= 1);
    const flush = await comet(set, 'unsafe_flush_mempool');
    assert.equal(flush.body.error?.code, -32603);
    assert.match(flush.body.error.data, /^unsafe_flush_mempool is not supported: the mempool belongs to the application/);
    assert.equal(Number((await comet(set, 'num_unconfirmed_txs')).body.result.n_txs), pooled, 'the mempool is untouched');
    for (const route of ['dial_seeds?seeds=["a@127.0.0.1:26656"]', 'dial_peers?peers=["a@127.0.0.1:26656"]']) {
      assert.match((await comet(set, route)).body.error?.data ?? '', /there is no peer to dial/, route);
    }
    for (const route of ['unsafe_flush_mempool', 'dial_seeds', 'dial_peers']) assert.equal((await comet(plain, route)).status, 404, route);
  });

  it('rpc.cors_allowed_origins: the allowed origin gets CORS headers (preflight and answer); others and the default get none', async () => {
    const preflight = await fetch(`${set.cometUrl}/status`, {
      method: 'OPTIONS',
      headers: { Origin: ALLOWED_ORIGIN, 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /GET/);
    const answer = await comet(set, 'health', { headers: { Origin: ALLOWED_ORIGIN } });
    assert.equal(answer.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    const stranger = await comet(set, 'health', { headers: { Origin: 'http://evil.example' } });
    assert.equal(stranger.headers.get('access-control-allow-origin'), null);
    const byDefault = await comet(plain, 'health', { headers: { Origin: ALLOWED_ORIGIN } });
    assert.equal(byDefault.headers.get('access-control-allow-origin'), null);
  });

  it('rpc.timeout_broadcast_tx_commit: a tx that cannot be included is answered with the timeout error once it expires', async () => {
    // behind a nonce gap: CheckTx accepts it, no block can include it
    const sender = devWallet(5);
    const signed = await transfer(5, (await nonceOf(set.url, 5)) + 1);
    const native = wrapEthereumTx(Uint8Array.from(Buffer.from(signed.slice(2), 'hex')), Uint8Array.from(Buffer.from(sender.address.slice(2), 'hex')), 100_000n, 100n * GWEI);
    const r = await comet(set, `broadcast_tx_commit?tx=0x${Buffer.from(native).toString('hex')}`);
    assert.equal(r.body.error?.code, -32603);
    assert.match(JSON.stringify(r.body.error), /timed out waiting for tx to be included in a block/);
    // the node goes on: the tx is still pooled, and the gap filled, both are mined
    const filler = await transfer(5, await nonceOf(set.url, 5));
    await call(set.url, 'eth_sendRawTransaction', [filler]);
    assert.equal((await waitForReceipt(set.url, Transaction.from(signed).hash!)).status, '0x1');
  });

  it('rpc.experimental_close_on_slow_client = true: a client whose write buffer is full loses its subscriptions with "slow client"; by default it keeps them', async () => {
    const slow = await subscribeTwice(set);
    await waitFor('the slow-client cancellation', async () =>
      slow.messages.some((m) => /slow client/.test(JSON.stringify(m.error ?? ''))) ? true : null,
    );
    const cancelled = slow.messages.filter((m) => /subscription was canceled \(reason: slow client\)/.test(JSON.stringify(m.error ?? '')));
    assert.ok(cancelled.length >= 1, JSON.stringify(slow.messages.slice(-3)));
    slow.ws.close();

    // the same buffer without the key: both subscriptions go on delivering, none is cancelled
    const kept = await subscribeTwice(plain);
    const events = (id: string) => kept.messages.filter((m) => m.id === id && m.result?.data !== undefined).length;
    await waitFor('5 blocks on both subscriptions', async () => (events('blocks') >= 5 && events('headers') >= 5 ? true : null));
    assert.deepEqual(kept.messages.filter((m) => m.error !== undefined), []);
    assert.equal(kept.closed(), false);
    kept.ws.close();
  });
});
