/**
 * Polling filters against a real ferry over raw HTTP (and WebSocket): block filters return exactly
 * the hashes of the blocks committed since the previous poll, log filters exactly the matching logs
 * (and eth_getFilterLogs what eth_getLogs returns for the same criteria), pending-transaction
 * filters a tx as soon as it enters the mempool, EIP-234 blockHash filters, expiry after
 * filter-timeout without a poll (here 2 s), and filters shared by both transports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, Interface, Transaction, Wallet, id, zeroPadValue } from 'ethers';
import WebSocket from 'ws';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, sleep, toHex, waitFor, waitForBlock, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const TRANSFER = id('Transfer(address,address,uint256)');
const FILTER_TIMEOUT_MS = 2_000;

async function send(url: string, w: Wallet, f: { to?: string; data?: string; nonce?: number; value?: bigint; gasLimit?: bigint }): Promise<string> {
  const nonce = f.nonce ?? Number(await call(url, 'eth_getTransactionCount', [w.address, 'pending']));
  const gasPrice = BigInt(await call(url, 'eth_gasPrice'));
  const tx = Transaction.from({
    type: 2, chainId: EVM_CHAIN_ID, nonce, to: f.to ?? null, data: f.data ?? '0x', value: f.value ?? 0n,
    gasLimit: f.gasLimit ?? 200_000n, maxFeePerGas: gasPrice * 2n, maxPriorityFeePerGas: gasPrice / 4n,
  });
  return call(url, 'eth_sendRawTransaction', [await w.signTransaction(tx)]);
}

describe('polling filters', () => {
  let node: FerryNode;
  let token: string;
  const iface = new Interface(compileToken().abi);
  const owner = devWallet(0);
  const alice = devWallet(1);
  const bob = devWallet(2);
  const topicOf = (a: string) => zeroPadValue(a, 32).toLowerCase();
  const transfer = (to: string, amount: bigint) => iface.encodeFunctionData('transfer', [to, amount]);

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.filter-timeout', `${FILTER_TIMEOUT_MS / 1000}s`] });
    const c = compileToken();
    const args = AbiCoder.defaultAbiCoder().encode(['string', 'string', 'uint256'], ['Filter Token', 'FLT', 10n ** 24n]);
    const receipt = await waitForReceipt(node.url, await send(node.url, owner, { data: c.bytecode + args.slice(2), gasLimit: 3_000_000n }));
    assert.equal(receipt.status, '0x1');
    token = receipt.contractAddress;
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('block filter: each poll returns exactly the hashes of the blocks committed since the last one', async () => {
    const head = Number(await call(node.url, 'eth_blockNumber'));
    const f = await call(node.url, 'eth_newBlockFilter');
    const headAfterInstall = Number(await call(node.url, 'eth_blockNumber'));
    const seen: string[] = [];
    let polls = 0;
    // poll at least twice, until 8 blocks are in (blocks every 200 ms)
    while (seen.length < 8 || polls < 2) {
      if (polls > 0) await sleep(300);
      seen.push(...(await call<string[]>(node.url, 'eth_getFilterChanges', [f])));
      polls++;
    }
    // the first hash is that of the first block committed after the install: after the head read
    // before it, at most the one after the head read once it was answered; then consecutive
    // blocks, none repeated or missed
    const first = (await call(node.url, 'eth_getBlockByHash', [seen[0], false])).number;
    assert.ok(Number(first) > head && Number(first) <= headAfterInstall + 1, `first block ${Number(first)} in (${head}, ${headAfterInstall + 1}]`);
    for (let i = 0; i < seen.length; i++) {
      const b = await call(node.url, 'eth_getBlockByNumber', [toHex(Number(first) + i), false]);
      assert.equal(seen[i], b.hash, `block ${Number(first) + i}`);
    }
    assert.equal(await call(node.url, 'eth_uninstallFilter', [f]), true);
  });

  it('log filters: exactly the matching logs since the last poll; eth_getFilterLogs equals eth_getLogs', async () => {
    const all = await call(node.url, 'eth_newFilter', [{}]);
    const fromOwner = await call(node.url, 'eth_newFilter', [{ address: token, topics: [TRANSFER, topicOf(owner.address)] }]);
    const toBobOrAlice = await call(node.url, 'eth_newFilter', [{ address: [token], topics: [[TRANSFER], null, [topicOf(bob.address), topicOf(alice.address)]] }]);
    const elsewhere = await call(node.url, 'eth_newFilter', [{ address: '0x' + '12'.repeat(20) }]);
    const r1 = await waitForReceipt(node.url, await send(node.url, owner, { to: token, data: transfer(alice.address, 10n) }));
    const firstPoll = await call(node.url, 'eth_getFilterChanges', [all]);
    assert.deepEqual(firstPoll, r1.logs);
    const r2 = await waitForReceipt(node.url, await send(node.url, alice, { to: token, data: transfer(bob.address, 3n) }));
    const r3 = await waitForReceipt(node.url, await send(node.url, owner, { to: token, data: transfer(bob.address, 4n) }));
    await waitForBlock(node.url, Number(r3.blockNumber) + 1);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [all]), [...r2.logs, ...r3.logs], 'only what came since the first poll');
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [all]), []);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [fromOwner]), [...r1.logs, ...r3.logs]);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [toBobOrAlice]), [...r1.logs, ...r2.logs, ...r3.logs]);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [elsewhere]), []);

    const criteria = { fromBlock: r1.blockNumber, toBlock: r3.blockNumber, address: token, topics: [TRANSFER, null, topicOf(bob.address)] };
    const ranged = await call(node.url, 'eth_newFilter', [criteria]);
    const expected = await call(node.url, 'eth_getLogs', [criteria]);
    assert.deepEqual(expected, [...r2.logs, ...r3.logs]);
    assert.deepEqual(await call(node.url, 'eth_getFilterLogs', [ranged]), expected);
    // a range that has ended gets no new logs
    await waitForReceipt(node.url, await send(node.url, owner, { to: token, data: transfer(bob.address, 5n) }));
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [ranged]), []);
    for (const f of [all, fromOwner, toBobOrAlice, elsewhere, ranged]) assert.equal(await call(node.url, 'eth_uninstallFilter', [f]), true);
  });

  it('EIP-234 blockHash filter: eth_getFilterLogs gives that block\'s logs; no changes ever', async () => {
    const r = await waitForReceipt(node.url, await send(node.url, owner, { to: token, data: transfer(alice.address, 1n) }));
    const f = await call(node.url, 'eth_newFilter', [{ blockHash: r.blockHash }]);
    assert.deepEqual(await call(node.url, 'eth_getFilterLogs', [f]), r.logs);
    await waitForReceipt(node.url, await send(node.url, owner, { to: token, data: transfer(alice.address, 2n) }));
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [f]), []);
    const unknown = await call(node.url, 'eth_newFilter', [{ blockHash: '0x' + 'ab'.repeat(32) }]);
    assert.deepEqual((await rpc(node.url, 'eth_getFilterLogs', [unknown])).error, { code: -32000, message: 'unknown block' });
  });

  it('pending-transaction filter: a tx is there as soon as it enters the mempool; `true` gives full objects', async () => {
    const hashes = await call(node.url, 'eth_newPendingTransactionFilter');
    const full = await call(node.url, 'eth_newPendingTransactionFilter', [true]);
    const sender = devWallet(4);
    const next = Number(await call(node.url, 'eth_getTransactionCount', [sender.address, 'pending']));
    const gapped = await send(node.url, sender, { to: bob.address, value: 1n, nonce: next + 1 });
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [hashes]), [gapped]);
    assert.equal((await rpc(node.url, 'eth_getTransactionReceipt', [gapped])).result, null, 'not committed');
    const [obj] = await call(node.url, 'eth_getFilterChanges', [full]);
    assert.deepEqual(obj, await call(node.url, 'eth_getTransactionByHash', [gapped]));
    assert.equal(obj.blockNumber, null);
    const filler = await send(node.url, sender, { to: bob.address, value: 1n, nonce: next });
    await waitForReceipt(node.url, gapped);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [hashes]), [filler]);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [hashes]), []);
    assert.deepEqual((await call(node.url, 'eth_getFilterChanges', [full])).map((t: any) => t.hash), [filler]);
  });

  it(`a filter not polled for filter-timeout (${FILTER_TIMEOUT_MS} ms) is uninstalled; polling keeps it`, async () => {
    const idle = await call(node.url, 'eth_newBlockFilter');
    const polled = await call(node.url, 'eth_newBlockFilter');
    const logsPolled = await call(node.url, 'eth_newFilter', [{}]);
    const end = Date.now() + FILTER_TIMEOUT_MS * 2;
    while (Date.now() < end) {
      await sleep(FILTER_TIMEOUT_MS / 4);
      await call(node.url, 'eth_getFilterChanges', [polled]);
      await call(node.url, 'eth_getFilterLogs', [logsPolled]);
    }
    assert.deepEqual((await rpc(node.url, 'eth_getFilterChanges', [idle])).error, { code: -32000, message: `filter ${idle} not found` });
    assert.equal(await call(node.url, 'eth_uninstallFilter', [idle]), false);
    assert.ok(Array.isArray(await call(node.url, 'eth_getFilterChanges', [polled])));
    assert.ok(Array.isArray(await call(node.url, 'eth_getFilterChanges', [logsPolled])));
  });

  it('filters are shared by both transports: made over HTTP, polled over WebSocket', async () => {
    const f = await call(node.url, 'eth_newBlockFilter');
    await waitFor('a block', async () => ((await call<string[]>(node.url, 'eth_getFilterChanges', [f])).length > 0 ? true : null));
    const ws = new WebSocket(node.wsUrl);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const answer = (id: number, method: string, params: unknown[]) =>
      new Promise<any>((resolve) => {
        const onMessage = (d: WebSocket.RawData) => {
          const m = JSON.parse(String(d));
          if (m.id === id) {
            ws.off('message', onMessage);
            resolve(m);
          }
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    // a block after the HTTP poll: the WebSocket poll must return it
    const h = Number(await call(node.url, 'eth_blockNumber'));
    await waitFor('a new block', async () => (Number(await call(node.url, 'eth_blockNumber')) > h ? true : null), 10_000, 20);
    const got = await answer(1, 'eth_getFilterChanges', [f]);
    assert.ok(got.result.length >= 1);
    for (const h of got.result) assert.ok((await call(node.url, 'eth_getBlockByHash', [h, false])) !== null);
    assert.deepEqual(await answer(2, 'eth_uninstallFilter', [f]), { jsonrpc: '2.0', id: 2, result: true });
    ws.close();
  });
});
