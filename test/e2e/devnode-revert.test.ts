/**
 * evm_snapshot, evm_revert and anvil_reset on a real `ferry start --dev`, driven by viem's test
 * client (anvil mode) and plain JSON-RPC: the chain, receipts, logs, tx lookups, state, the dev
 * clock, filters, `logs` subscriptions (removed: true), Surface B's blocks and index, snapshot id
 * semantics, and the rewound chain after a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseEther,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitFor } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';

const chain = VIEM_CHAIN;

const token = compileContract('Token.sol', 'Token');
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

function clients(url: string, key = 3) {
  const account = privateKeyToAccount(devKeys()[key] as Hex);
  return {
    account,
    test: createTestClient({ chain, mode: 'anvil', transport: http(url) }),
    pub: createPublicClient({ chain, transport: http(url), cacheTime: 0 }),
    wallet: createWalletClient({ chain, account, transport: http(url) }),
  };
}

type Clients = ReturnType<typeof clients>;

async function deployToken(c: Clients): Promise<Address> {
  const hash = await c.wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: ['Test', 'TST', 10n ** 24n] });
  const r = await c.pub.waitForTransactionReceipt({ hash });
  assert.equal(r.status, 'success');
  return r.contractAddress!;
}

async function transfer(c: Clients, tokenAddress: Address, to: string, amount: bigint): Promise<{ hash: Hash; blockNumber: bigint; blockHash: Hash }> {
  const hash = await c.wallet.sendTransaction({
    to: tokenAddress,
    data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, amount] }),
  });
  const r = await c.pub.waitForTransactionReceipt({ hash });
  assert.equal(r.status, 'success');
  return { hash, blockNumber: r.blockNumber, blockHash: r.blockHash };
}

async function tokenBalance(c: Clients, tokenAddress: Address, who: string, blockNumber?: bigint): Promise<bigint> {
  return (await c.pub.readContract({ address: tokenAddress, abi: token.abi, functionName: 'balanceOf', args: [who], blockNumber })) as bigint;
}

/** A WebSocket JSON-RPC client collecting eth_subscription notifications by subscription id. */
class WsClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (m: any) => void>();
  readonly notes = new Map<string, any[]>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.method === 'eth_subscription') {
        const list = this.notes.get(m.params.subscription) ?? [];
        list.push(m.params.result);
        this.notes.set(m.params.subscription, list);
      } else {
        this.waiting.get(m.id)?.(m);
        this.waiting.delete(m.id);
      }
    });
  }

  static async open(url: string): Promise<WsClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new WsClient(ws);
  }

  request(method: string, params: unknown[]): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  async subscribe(params: unknown[]): Promise<string> {
    const r = await this.request('eth_subscribe', params);
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    return r.result;
  }

  /** waits until subscription `id` has at least n notifications; returns them all */
  received(id: string, n: number): Promise<any[]> {
    return waitFor(`${n} notifications on ${id}`, async () => ((this.notes.get(id)?.length ?? 0) >= n ? this.notes.get(id)! : undefined));
  }

  close(): void {
    this.ws.close();
  }
}

async function comet(node: FerryNode, path: string): Promise<any> {
  return (await fetch(`${node.cometUrl}${path}`)).json();
}

describe('ferry dev: evm_snapshot / evm_revert / anvil_reset', () => {
  let node: FerryNode;
  let c: Clients;

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    c = clients(node.url);
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('evm_revert rewinds blocks, receipts, logs, tx lookups, balances, nonces and code; new blocks reuse the heights', async () => {
    const me = c.account.address;
    const id = await c.test.snapshot();
    assert.match(id, /^0x[0-9a-f]+$/, 'a hex quantity, as Anvil');
    const snapHeight = await c.pub.getBlockNumber();
    const snapBlock = await c.pub.getBlock({ blockNumber: snapHeight });
    const ethBefore = await c.pub.getBalance({ address: me });
    const nonceBefore = await c.pub.getTransactionCount({ address: me });

    const tokenAddress = await deployToken(c);
    const rewoundFirst = await c.pub.getBlock({ blockNumber: snapHeight + 1n });
    const t1 = await transfer(c, tokenAddress, devAddress(5), 1000n);
    const t2 = await transfer(c, tokenAddress, devAddress(6), 2000n);
    assert.equal(t2.blockNumber, snapHeight + 3n, 'automine: one block per tx');
    assert.equal(await tokenBalance(c, tokenAddress, devAddress(5)), 1000n);
    const logsBefore = await c.pub.getLogs({ address: tokenAddress, fromBlock: snapHeight + 1n, toBlock: t2.blockNumber });
    assert.equal(logsBefore.length, 3, 'mint + two transfers');

    assert.equal(await c.test.revert({ id }), undefined);
    assert.equal(await c.pub.getBlockNumber(), snapHeight);
    assert.equal((await c.pub.getBlock()).hash, snapBlock.hash, 'the head is the snapshot block');
    assert.equal(await call(node.url, 'eth_getBlockByNumber', [`0x${(snapHeight + 1n).toString(16)}`, false]), null);
    assert.equal(await call(node.url, 'eth_getBlockByHash', [t1.blockHash, false]), null);
    assert.equal(await call(node.url, 'eth_getTransactionReceipt', [t1.hash]), null);
    assert.equal(await call(node.url, 'eth_getTransactionByHash', [t2.hash]), null);
    const logs = await call<unknown[]>(node.url, 'eth_getLogs', [{ fromBlock: `0x${(snapHeight + 1n).toString(16)}`, toBlock: `0x${t2.blockNumber.toString(16)}` }]);
    assert.deepEqual(logs, [], 'no log of the rewound range');
    assert.equal(await c.pub.getBalance({ address: me }), ethBefore);
    assert.equal(await c.pub.getTransactionCount({ address: me }), nonceBefore);
    assert.equal(await call(node.url, 'eth_getCode', [tokenAddress, 'latest']), '0x');

    // the next block takes the snapshot's height + 1 again: another block, chained to the snapshot block
    const hash = await c.wallet.sendTransaction({ to: devAddress(7) as Address, value: parseEther('1') });
    const r = await c.pub.waitForTransactionReceipt({ hash });
    assert.equal(r.blockNumber, snapHeight + 1n);
    const reused = await c.pub.getBlock({ blockNumber: snapHeight + 1n });
    assert.notEqual(reused.hash, rewoundFirst.hash, 'a different block at the reused height');
    assert.equal(reused.parentHash, snapBlock.hash);
    const deployNonceTx = await call<any>(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(BigInt(deployNonceTx.nonce), BigInt(nonceBefore), 'the nonce was reused');
    assert.equal(await c.pub.getBalance({ address: devAddress(7) as Address, blockNumber: snapHeight + 1n }) > 0n, true);
    // state reads at the reused height see the new block, not the rewound token (RPC thread and call workers)
    assert.equal(await call(node.url, 'eth_getCode', [tokenAddress, `0x${(snapHeight + 1n).toString(16)}`]), '0x');
    const balanceOf = encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [devAddress(5)] });
    assert.equal(await call(node.url, 'eth_call', [{ to: tokenAddress, data: balanceOf }, 'latest']), '0x', 'no contract there any more');
  });

  it('no stale state at a reused height: the reader and the call workers forget what the rewound blocks wrote', async () => {
    const fresh = privateKeyToAccount('0x' + 'ab'.repeat(32) as Hex).address;
    const id = await c.test.snapshot();
    await c.pub.waitForTransactionReceipt({ hash: await c.wallet.sendTransaction({ to: fresh, value: parseEther('3') }) });
    const funded = await c.pub.getBlockNumber();
    // read at the funding height: the RPC thread's and a call worker's caches now hold the funded account
    assert.equal(await c.pub.getBalance({ address: fresh }), parseEther('3'));
    const spend = { from: fresh, to: devAddress(1), value: `0x${parseEther('2').toString(16)}` };
    assert.equal(await call(node.url, 'eth_call', [spend, 'latest']), '0x');
    await c.test.revert({ id });
    await c.test.mine({ blocks: 1 });
    assert.equal(await c.pub.getBlockNumber(), funded, 'the funding height again, another block');
    assert.equal(await c.pub.getBalance({ address: fresh }), 0n);
    const res = await rpc(node.url, 'eth_call', [spend, 'latest']);
    // geth's core.ErrInsufficientFunds text (core/state_transition.go buyGas), as eth_call answers it
    assert.deepEqual(res.error, { code: -32000, message: `insufficient funds for gas * price + value: address ${getAddress(fresh)} have 0 want ${parseEther('2')}` }, 'the call worker sees no funds');
  });

  it('snapshot ids: reverting to one removes it and every later one; an unknown id answers false', async () => {
    const a = await c.test.snapshot();
    await c.test.mine({ blocks: 1 });
    const b = await c.test.snapshot();
    await c.test.mine({ blocks: 1 });
    const d = await c.test.snapshot();
    assert.ok(BigInt(a) < BigInt(b) && BigInt(b) < BigInt(d), `${a} < ${b} < ${d}`);
    const heightA = (await c.pub.getBlockNumber()) - 2n;

    assert.equal(await call(node.url, 'evm_revert', [b]), true);
    assert.equal(await call(node.url, 'evm_revert', [d]), false, 'a later snapshot is gone');
    assert.equal(await call(node.url, 'evm_revert', [b]), false, 'the reverted snapshot is gone');
    assert.equal(await call(node.url, 'evm_revert', ['0xffffff']), false, 'never taken');
    const meta = await call<any>(node.url, 'anvil_metadata');
    assert.deepEqual(meta.snapshots[a], [Number(heightA), (await c.pub.getBlock({ blockNumber: heightA })).hash]);
    assert.equal(await call(node.url, 'anvil_revert', [a]), true, 'Anvil\'s own name');
    assert.equal(await c.pub.getBlockNumber(), heightA);
    const next = await call<Hex>(node.url, 'anvil_snapshot');
    assert.ok(BigInt(next) > BigInt(d), 'ids are never reused (Anvil\'s name takes from the same counter)');
    assert.equal(await call(node.url, 'evm_revert', [Number(BigInt(next))]), true, 'a JSON number id');
    const bad = await rpc(node.url, 'evm_revert', ['zz']);
    // geth's hexutil text for a quantity without its prefix (common/hexutil ErrMissingPrefix)
    assert.deepEqual(bad.error, { code: -32602, message: 'invalid argument 0: hex string without 0x prefix' }, 'a malformed id is an error');
  });

  it('state cheats: a revert restores the cheats pending at the snapshot and undoes those a rewound block applied; reset drops them', async () => {
    const who = '0x00000000000000000000000000000000000c0ffe' as Address;
    await c.test.setBalance({ address: who, value: 111n });
    const snap = await call<Hex>(node.url, 'evm_snapshot');
    assert.match(snap, /^0x[0-9a-f]+$/);
    assert.equal(await c.pub.getBalance({ address: who }), 111n, 'pending at the snapshot');
    await c.test.mine({ blocks: 1 }); // applies the pending cheat
    await c.test.setBalance({ address: who, value: 222n });
    await c.test.mine({ blocks: 1 });
    await c.test.setBalance({ address: who, value: 333n }); // pending, taken after the snapshot
    assert.equal(await c.pub.getBalance({ address: who }), 333n);
    await c.test.revert({ id: snap });
    assert.equal(await c.pub.getBalance({ address: who }), 111n, 'the cheat pending at the snapshot is pending again; the later ones are gone');
    const before = await c.pub.getBlockNumber();
    await c.test.mine({ blocks: 1 });
    assert.equal(await c.pub.getBalance({ address: who, blockNumber: before + 1n }), 111n, 'and the next block applies it');
    await c.test.setBalance({ address: who, value: 444n });
    await c.test.reset();
    assert.equal(await c.pub.getBlockNumber(), 0n);
    assert.equal(await c.pub.getBalance({ address: who }), 0n, 'reset drops pending cheats');
    await c.test.mine({ blocks: 1 });
    assert.equal(await c.pub.getBalance({ address: who }), 0n, 'and no later block applies them');
  });

  it('the dev clock goes back: a time increase after the snapshot is undone', async () => {
    await c.test.mine({ blocks: 1 });
    const id = await c.test.snapshot();
    const base = (await c.pub.getBlock()).timestamp;
    await c.test.increaseTime({ seconds: 86_400 * 30 });
    await c.test.mine({ blocks: 1 });
    assert.ok((await c.pub.getBlock()).timestamp >= base + 86_400n * 30n);
    await c.test.revert({ id });
    await c.test.mine({ blocks: 2 });
    const t = (await c.pub.getBlock()).timestamp;
    assert.ok(t >= base && t < base + 86_400n, `${t} is back near ${base}`);

    // a next-block timestamp set before the snapshot is kept by it
    const target = t + 5_000n;
    await c.test.setNextBlockTimestamp({ timestamp: target });
    const id2 = await c.test.snapshot();
    await c.test.mine({ blocks: 1 });
    assert.equal((await c.pub.getBlock()).timestamp, target);
    await c.test.revert({ id: id2 });
    await c.test.mine({ blocks: 1 });
    assert.equal((await c.pub.getBlock()).timestamp, target, 'the pending timestamp came back with the snapshot');
  });

  it('filters: a log filter gets the rewound logs with removed: true; the block filter goes on at the reused height', async () => {
    const tokenAddress = await deployToken(c);
    const logFilter = await call<string>(node.url, 'eth_newFilter', [{ address: tokenAddress }]);
    const blockFilter = await call<string>(node.url, 'eth_newBlockFilter');
    const id = await c.test.snapshot();
    const snapHeight = await c.pub.getBlockNumber();
    const t = await transfer(c, tokenAddress, devAddress(8), 77n);
    const added = await call<any[]>(node.url, 'eth_getFilterChanges', [logFilter]);
    assert.equal(added.length, 1);
    assert.equal(added[0].removed, false);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [blockFilter]), [t.blockHash]);

    await c.test.revert({ id });
    const removed = await call<any[]>(node.url, 'eth_getFilterChanges', [logFilter]);
    assert.deepEqual(removed, [{ ...added[0], removed: true }]);
    await c.test.mine({ blocks: 1 });
    const newHead = await c.pub.getBlock();
    assert.equal(newHead.number, snapHeight + 1n);
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [blockFilter]), [newHead.hash], 'the new block, once: none skipped or repeated');
    assert.deepEqual(await call(node.url, 'eth_getFilterChanges', [logFilter]), []);
  });

  it('WebSocket: logs subscribers get removed: true for the rewound Transfers (oldest first), then the new blocks', async () => {
    const tokenAddress = await deployToken(c);
    const ws = await WsClient.open(node.wsUrl);
    try {
      const logsSub = await ws.subscribe(['logs', { address: tokenAddress, topics: [TRANSFER_TOPIC] }]);
      const headsSub = await ws.subscribe(['newHeads']);
      const id = await c.test.snapshot();
      const snapHeight = await c.pub.getBlockNumber();
      const t1 = await transfer(c, tokenAddress, devAddress(5), 11n);
      const t2 = await transfer(c, tokenAddress, devAddress(6), 22n);
      const live = (await ws.received(logsSub, 2)).slice();
      assert.deepEqual(live.map((l) => [l.transactionHash, l.removed]), [[t1.hash, false], [t2.hash, false]]);

      await c.test.revert({ id });
      const all = await ws.received(logsSub, 4);
      const gone = all.slice(2);
      assert.deepEqual(gone, live.map((l) => ({ ...l, removed: true })), 'geth order: oldest rewound block first');

      const t3 = await transfer(c, tokenAddress, devAddress(9), 33n);
      assert.equal(t3.blockNumber, snapHeight + 1n);
      const after = await ws.received(logsSub, 5);
      assert.equal(after[4].transactionHash, t3.hash);
      assert.equal(after[4].removed, false);
      assert.equal(after[4].blockHash, t3.blockHash);
      const heads = await ws.received(headsSub, 3);
      assert.deepEqual(heads.map((h) => BigInt(h.number)), [snapHeight + 1n, snapHeight + 2n, snapHeight + 1n]);
      assert.equal(heads[2].hash, t3.blockHash);
      assert.notEqual(heads[2].hash, heads[0].hash);
    } finally {
      ws.close();
    }
  });

  it('anvil_rollback: a log filter and a logs subscriber get the rolled-back Transfer with removed: true', async () => {
    const tokenAddress = await deployToken(c);
    const logFilter = await call<string>(node.url, 'eth_newFilter', [{ address: tokenAddress }]);
    const ws = await WsClient.open(node.wsUrl);
    try {
      const logsSub = await ws.subscribe(['logs', { address: tokenAddress, topics: [TRANSFER_TOPIC] }]);
      const t = await transfer(c, tokenAddress, devAddress(8), 5n);
      const added = await call<any[]>(node.url, 'eth_getFilterChanges', [logFilter]);
      assert.deepEqual(added.map((l) => [l.transactionHash, l.removed]), [[t.hash, false]]);
      const live = (await ws.received(logsSub, 1)).slice();
      assert.equal(await call(node.url, 'anvil_rollback', [1]), null);
      assert.equal(await c.pub.getBlockNumber(), t.blockNumber - 1n);
      assert.deepEqual(await call<any[]>(node.url, 'eth_getFilterChanges', [logFilter]), [{ ...added[0], removed: true }]);
      const all = await ws.received(logsSub, 2);
      assert.deepEqual(all[1], { ...live[0], removed: true });
    } finally {
      ws.close();
    }
  });

  it('Surface B: blocks above the snapshot disappear from block, status and tx_search; new blocks reuse the heights', async () => {
    const id = await c.test.snapshot();
    const snapHeight = Number(await c.pub.getBlockNumber());
    const hash = await c.wallet.sendTransaction({ to: devAddress(4) as Address, value: 1n });
    const r = await c.pub.waitForTransactionReceipt({ hash });
    const h = Number(r.blockNumber);
    const old = await comet(node, `/block?height=${h}`);
    assert.equal(old.result.block.data.txs.length, 1);
    assert.equal((await comet(node, `/tx_search?query=${encodeURIComponent(`"tx.height=${h}"`)}`)).result.total_count, '1');
    const ethHash = `"ethereum_tx.ethereumTxHash='${hash}'"`;
    assert.equal((await comet(node, `/tx_search?query=${encodeURIComponent(ethHash)}`)).result.total_count, '1');

    await c.test.revert({ id });
    const status = await comet(node, '/status');
    assert.equal(status.result.sync_info.latest_block_height, String(snapHeight));
    // CometBFT's answer for a height above the head (rpc/core/blocks.go getHeight)
    assert.deepEqual((await comet(node, `/block?height=${h}`)).error, {
      code: -32603,
      message: 'Internal error',
      data: `height ${h} must be less than or equal to the current blockchain height ${snapHeight}`,
    }, 'the rewound height is above the head');
    assert.equal((await comet(node, `/tx_search?query=${encodeURIComponent(`"tx.height=${h}"`)}`)).result.total_count, '0');
    assert.equal((await comet(node, `/tx_search?query=${encodeURIComponent(ethHash)}`)).result.total_count, '0');
    const blocks = await comet(node, `/block_search?query=${encodeURIComponent(`"block.height>=${h}"`)}`);
    assert.equal(blocks.result.total_count, '0');

    await c.test.mine({ blocks: 1 });
    const reused = await comet(node, `/block?height=${h}`);
    assert.equal(reused.result.block.header.height, String(h));
    assert.notEqual(reused.result.block_id.hash, old.result.block_id.hash);
    assert.equal(reused.result.block.data.txs.length, 0);
    assert.equal(reused.result.block.header.last_block_id.hash, (await comet(node, `/block?height=${snapHeight}`)).result.block_id.hash);
    const commit = await comet(node, `/commit?height=${h}`);
    assert.equal(commit.result.signed_header.commit.block_id.hash, reused.result.block_id.hash);
  });

  it('anvil_reset / hardhat_reset: back to genesis (viem reset); snapshots are gone; a fork is refused', async () => {
    const genesisBalance = await c.pub.getBalance({ address: devAddress(0) as Address, blockNumber: 0n });
    const genesisHash = (await c.pub.getBlock({ blockNumber: 0n })).hash;
    const id = await c.test.snapshot();
    await c.pub.waitForTransactionReceipt({ hash: await c.wallet.sendTransaction({ to: devAddress(0) as Address, value: parseEther('2') }) });
    assert.ok((await c.pub.getBalance({ address: devAddress(0) as Address })) > genesisBalance);

    const refused = await rpc(node.url, 'anvil_reset', [{ forking: { jsonRpcUrl: 'http://127.0.0.1:1' } }]);
    // invalid params, as docs/dev-mode.md documents for anvil_reset with a fork
    const noFork = {
      code: -32602,
      message: 'invalid argument 0: this node is not a fork: anvil_reset goes back to the genesis of the dev home and takes no jsonRpcUrl; a fork starts with `ferry dev --fork-url URL` on a new home (docs/fork-mode.md)',
    };
    assert.deepEqual(refused.error, noFork, 'a fork is refused');
    const flat = await rpc(node.url, 'hardhat_reset', [{ jsonRpcUrl: 'http://127.0.0.1:1', blockNumber: 5 }]);
    assert.deepEqual(flat.error, noFork, 'the flat form too');
    assert.ok((await c.pub.getBlockNumber()) > 0n, 'nothing changed');

    await c.test.reset();
    assert.equal(await c.pub.getBlockNumber(), 0n);
    assert.equal((await c.pub.getBlock()).hash, genesisHash);
    assert.equal(await c.pub.getBalance({ address: devAddress(0) as Address }), genesisBalance);
    assert.equal(await c.pub.getTransactionCount({ address: c.account.address }), 0);
    assert.equal(await call(node.url, 'evm_revert', [id]), false, 'reset removes every snapshot');
    assert.equal((await comet(node, '/status')).result.sync_info.latest_block_height, '0');

    // the chain goes on from genesis; the dev clock is a fresh node's
    await c.test.increaseTime({ seconds: 3_600_000 });
    assert.equal(await call(node.url, 'hardhat_reset', []), null);
    const hash = await c.wallet.sendTransaction({ to: devAddress(1) as Address, value: 1n });
    const r = await c.pub.waitForTransactionReceipt({ hash });
    assert.equal(r.blockNumber, 1n);
    const t = Number((await c.pub.getBlock({ blockNumber: 1n })).timestamp);
    assert.ok(t < Date.now() / 1000 + 3_600, 'the time increase before the reset is gone');
  });
});

describe('ferry dev: a revert survives a restart', () => {
  it('revert, mine, kill -9, restart: heights, hashes and state stay; the chain goes on', async () => {
    const node = await startFerry({ args: ['--dev'] });
    let restarted: FerryNode | undefined;
    try {
      const c = clients(node.url);
      const tokenAddress = await deployToken(c);
      const id = await c.test.snapshot();
      const snapHeight = await c.pub.getBlockNumber();
      await transfer(c, tokenAddress, devAddress(5), 500n);
      await transfer(c, tokenAddress, devAddress(5), 600n);
      await c.test.revert({ id });
      const t = await transfer(c, tokenAddress, devAddress(6), 700n);
      assert.equal(t.blockNumber, snapHeight + 1n);
      const head = await c.pub.getBlock();
      const cometHead = await comet(node, `/block?height=${head.number}`);
      await node.kill9();

      restarted = await startFerry({ home: node.home, args: ['--dev'] });
      const r = clients(restarted.url);
      assert.equal(await r.pub.getBlockNumber(), head.number);
      assert.equal((await r.pub.getBlock()).hash, head.hash);
      assert.equal(await tokenBalance(r, tokenAddress, devAddress(5)), 0n, 'the rewound transfers stay undone');
      assert.equal(await tokenBalance(r, tokenAddress, devAddress(6)), 700n);
      assert.equal((await r.pub.getTransactionReceipt({ hash: t.hash })).blockHash, t.blockHash);
      assert.deepEqual((await comet(restarted, `/block?height=${head.number}`)).result.block_id, cometHead.result.block_id);
      const next = await transfer(r, tokenAddress, devAddress(6), 1n);
      assert.equal(next.blockNumber, head.number + 1n);
      assert.equal((await r.pub.getBlock({ blockNumber: next.blockNumber })).parentHash, head.hash);
    } finally {
      if (restarted) await restarted.stop();
      else await node.stop();
    }
  });
});
