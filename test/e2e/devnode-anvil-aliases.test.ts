/**
 * The dev methods Anvil serves under a second name or answers from its miner state
 * (docs/dev-mode.md "Methods"): anvil_increaseTime, hardhat_dropAllTransactions,
 * anvil_getIntervalMining, anvil_removePoolTransactions, and anvil_setRpcUrl (refused: Ferry does not fork). Each call goes to a
 * `ferry start --dev` and to the pinned Anvil 1.7.1 binary, and the answers are compared; viem's
 * test client drives the methods viem has an action for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestClient, http } from 'viem';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { startAnvil, type AnvilNode } from './debug-fixtures.js';

describe('anvil aliases and interval state: ferry start --dev against Anvil', () => {
  let node: FerryNode;
  let anvil: AnvilNode;
  /** the same call on both nodes: [ferry's answer, anvil's answer] */
  const both = async <T>(method: string, params: unknown[] = []): Promise<[T, T]> => [
    await call<T>(node.url, method, params),
    await call<T>(anvil.url, method, params),
  ];

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    anvil = await startAnvil();
  });
  after(async () => {
    if (anvil) await anvil.stop();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('anvil_getIntervalMining: null with automine, the seconds while interval mining, null again after', async () => {
    assert.deepEqual(await both('anvil_getIntervalMining'), [null, null]);
    try {
      await both('evm_setIntervalMining', [3600]);
      assert.deepEqual(await both('anvil_getIntervalMining'), [3600, 3600]);
      await both('evm_setIntervalMining', [0]);
      assert.deepEqual(await both('anvil_getIntervalMining'), [null, null]);
    } finally {
      await both('evm_setAutomine', [true]);
    }
  });

  it('anvil_increaseTime answers the total increase, as evm_increaseTime (viem increaseTime too)', async () => {
    assert.deepEqual(await both('anvil_increaseTime', [60]), [60, 60]);
    assert.deepEqual(await both('anvil_increaseTime', ['0x3c']), [120, 120]);
    const viem = createTestClient({ chain: VIEM_CHAIN, mode: 'anvil', transport: http(node.url) });
    await viem.increaseTime({ seconds: 30 });
    assert.equal(await call(node.url, 'anvil_increaseTime', [0]), 150);
    // a block takes the increase: its time is at least the clock plus the total
    const before = BigInt((await call<{ timestamp: string }>(node.url, 'eth_getBlockByNumber', ['latest', false])).timestamp);
    await call(node.url, 'evm_mine');
    const after = BigInt((await call<{ timestamp: string }>(node.url, 'eth_getBlockByNumber', ['latest', false])).timestamp);
    assert.ok(after >= before + 150n, `block time ${after} should be at least ${before} + 150`);
  });

  it('hardhat_dropAllTransactions empties the pool and answers null, as anvil_dropAllTransactions', async () => {
    await both('evm_setAutomine', [false]);
    try {
      for (const url of [node.url, anvil.url]) {
        await call(url, 'eth_sendTransaction', [{ from: devAddress(3), to: devAddress(4), value: '0x1' }]);
        assert.equal((await call<{ pending: string }>(url, 'txpool_status')).pending, '0x1');
      }
      assert.deepEqual(await both('hardhat_dropAllTransactions'), [null, null]);
      for (const url of [node.url, anvil.url]) assert.equal((await call<{ pending: string }>(url, 'txpool_status')).pending, '0x0');
    } finally {
      await both('evm_setAutomine', [true]);
    }
  });

  it('anvil_removePoolTransactions drops every pool tx of one sender and keeps the others', async () => {
    await both('evm_setAutomine', [false]);
    try {
      for (const url of [node.url, anvil.url]) {
        for (const from of [devAddress(5), devAddress(5), devAddress(6)]) {
          await call(url, 'eth_sendTransaction', [{ from, to: devAddress(4), value: '0x1' }]);
        }
        assert.equal((await call<{ pending: string }>(url, 'txpool_status')).pending, '0x3');
      }
      assert.deepEqual(await both('anvil_removePoolTransactions', [devAddress(5)]), [null, null]);
      for (const url of [node.url, anvil.url]) {
        const content = await call<{ pending: Record<string, unknown> }>(url, 'txpool_content');
        assert.deepEqual(Object.keys(content.pending).map((a) => a.toLowerCase()), [devAddress(6).toLowerCase()], url);
      }
      await both('anvil_dropAllTransactions');
    } finally {
      await both('evm_setAutomine', [true]);
    }
  });

  it('anvil_setRpcUrl is refused with a clear error (Anvil ignores it when not forking); viem setRpcUrl sees it', async () => {
    const r = await rpc(node.url, 'anvil_setRpcUrl', ['http://127.0.0.1:1']);
    assert.equal(r.error?.code, -32602);
    assert.match(r.error!.message, /no fork mode/);
    assert.equal(await call(anvil.url, 'anvil_setRpcUrl', ['http://127.0.0.1:1']), null);
    const viem = createTestClient({ chain: VIEM_CHAIN, mode: 'anvil', transport: http(node.url) });
    await assert.rejects(viem.setRpcUrl('http://127.0.0.1:1'), /no fork mode/);
    // a param of the wrong type is a type error, not the refusal
    const bad = await rpc(node.url, 'anvil_setRpcUrl', [1]);
    assert.equal(bad.error?.code, -32602);
    assert.doesNotMatch(bad.error!.message, /no fork mode/);
  });
});
