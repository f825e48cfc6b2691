/**
 * The dev methods Anvil serves under a second name or answers from its miner state
 * (docs/dev-mode.md "Methods"): anvil_increaseTime, hardhat_dropAllTransactions,
 * anvil_getIntervalMining, anvil_removePoolTransactions, and anvil_setRpcUrl (null on a node that is not a fork, as Anvil;
 * fork.test.ts checks its refusal on a fork);
 * then issue 22's part 2: anvil_setBlockTimestampInterval / removeBlockTimestampInterval, anvil_setTime /
 * evm_setTime, anvil_getGenesisTime, anvil_setLoggingEnabled, anvil_addBalance, anvil_rollback,
 * eth_sendUnsignedTransaction, eth_getAccountInfo and the methods Ferry refuses (`cast rpc` too). Each call goes to a
 * `ferry start --dev` and to the pinned Anvil 1.7.1 binary, and the answers are compared; viem's
 * test client drives the methods viem has an action for.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createTestClient, http, publicActions } from 'viem';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitForReceipt } from '../helpers/rpc.js';
import { startAnvil, type AnvilNode } from './debug-fixtures.js';

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');
const run = promisify(execFile);

interface Block {
  number: string;
  timestamp: string;
}

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

  it('by name, as raw JSON-RPC: the hardhat_ interval twins, hardhat_setRpcUrl, eth_sendUnsignedTransaction', async () => {
    // viem's hardhat mode sends these (the tests below); here each is sent by its own name
    assert.equal(await call(node.url, 'hardhat_setBlockTimestampInterval', [1000]), null);
    assert.equal(await call(node.url, 'hardhat_removeBlockTimestampInterval', []), true);
    assert.equal(await call(node.url, 'hardhat_removeBlockTimestampInterval', []), false);
    assert.equal(await call(node.url, 'hardhat_setRpcUrl', ['http://127.0.0.1:1']), null);
    const from = devAddress(7);
    const hash = await call<string>(node.url, 'eth_sendUnsignedTransaction', [{ from, to: devAddress(8), value: '0x1' }]);
    const tx = await call<{ from: string } | null>(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(tx?.from.toLowerCase(), from.toLowerCase());
    // automine answers at admission and mines a few ms later: its block lands here, not inside the next test
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
  });

  it('anvil_setRpcUrl answers null and changes nothing when the node is not a fork, as Anvil', async () => {
    const before = await call(node.url, 'eth_blockNumber');
    assert.deepEqual(await Promise.all([node.url, anvil.url].map((u) => call(u, 'anvil_setRpcUrl', ['http://127.0.0.1:1']))), [null, null]);
    assert.equal(await call(node.url, 'eth_blockNumber'), before);
    // a param of the wrong type is a type error
    const bad = await rpc(node.url, 'anvil_setRpcUrl', [1]);
    assert.equal(bad.error?.code, -32602);
  });

  // issue 22 part 2: the rest of the dev methods (docs/dev-mode.md "Methods")
  const latest = (url: string) => call<Block>(url, 'eth_getBlockByNumber', ['latest', false]);
  const test = (url: string, mode: 'anvil' | 'hardhat') => createTestClient({ chain: VIEM_CHAIN, mode, transport: http(url) }).extend(publicActions);

  it('anvil_getGenesisTime answers block 0 timestamp as a JSON number (cast rpc too)', async () => {
    for (const url of [node.url, anvil.url]) {
      const t = await call<number>(url, 'anvil_getGenesisTime');
      const genesis = await call<Block>(url, 'eth_getBlockByNumber', ['0x0', false]);
      assert.equal(typeof t, 'number');
      assert.equal(BigInt(t), BigInt(genesis.timestamp));
      const { stdout } = await run(CAST, ['rpc', '--rpc-url', url, 'anvil_getGenesisTime']);
      assert.equal(stdout.trim(), String(t));
    }
  });

  it('setBlockTimestampInterval spaces blocks by the interval; remove answers whether one was set (viem, both modes)', async () => {
    // Anvil serves only the anvil_ names; ferry also the hardhat_ ones viem's mode 'hardhat' sends
    for (const [url, mode] of [[node.url, 'anvil'], [node.url, 'hardhat'], [anvil.url, 'anvil']] as const) {
      await test(url, mode).setBlockTimestampInterval({ interval: 100 });
      await call(url, 'evm_mine');
      const a = BigInt((await latest(url)).timestamp);
      await call(url, 'evm_mine');
      const b = BigInt((await latest(url)).timestamp);
      assert.equal(b - a, 100n, `${url} ${mode}: blocks ${a} and ${b} should be 100 s apart`);
      await test(url, mode).removeBlockTimestampInterval();
    }
    assert.deepEqual(await both('anvil_setBlockTimestampInterval', [5]), [null, null]);
    assert.deepEqual(await both('anvil_removeBlockTimestampInterval'), [true, true]);
    assert.deepEqual(await both('anvil_removeBlockTimestampInterval'), [false, false]);
  });

  it('anvil_addBalance adds to the balance and answers null', async () => {
    const who = '0x00000000000000000000000000000000000add01';
    assert.deepEqual(await both('anvil_addBalance', [who, '0x10']), [null, null]);
    assert.deepEqual(await both('anvil_addBalance', [who, '0x10']), [null, null]);
    assert.deepEqual(await both('eth_getBalance', [who, 'latest']), ['0x20', '0x20']);
  });

  it('setLoggingEnabled (viem, both modes) answers null, as Anvil', async () => {
    for (const mode of ['anvil', 'hardhat'] as const) {
      await test(node.url, mode).setLoggingEnabled(false);
      await test(anvil.url, mode).setLoggingEnabled(false);
    }
    assert.deepEqual(await both('anvil_setLoggingEnabled', [true]), [null, null]);
    assert.deepEqual(await both('hardhat_setLoggingEnabled', [true]), [null, null]);
  });

  it('setRpcUrl (viem, anvil and hardhat modes) works on a node that is not a fork', async () => {
    for (const mode of ['anvil', 'hardhat'] as const) await test(node.url, mode).setRpcUrl('http://127.0.0.1:1');
  });

  it('sendUnsignedTransaction (viem) sends from a keyless address without a signature', async () => {
    const from = '0x00000000000000000000000000000000000add02' as const;
    for (const url of [node.url, anvil.url]) {
      await call(url, 'anvil_setBalance', [from, '0xde0b6b3a7640000']);
      const client = test(url, 'anvil');
      const hash = await client.sendUnsignedTransaction({ from, to: devAddress(7) as `0x${string}`, value: 1n });
      const receipt = await client.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, 'success');
      assert.equal(receipt.from.toLowerCase(), from);
    }
  });

  it('anvil_rollback removes the last blocks (default 1) and refuses a depth past genesis', async () => {
    for (const url of [node.url, anvil.url]) {
      await call(url, 'anvil_mine', [3]);
      const head = BigInt((await latest(url)).number);
      assert.equal(await call(url, 'anvil_rollback', [2]), null);
      assert.equal(BigInt((await latest(url)).number), head - 2n);
      // Anvil wants the optional depth as null; ferry takes [] too
      assert.equal(await call(url, 'anvil_rollback', [null]), null);
      assert.equal(BigInt((await latest(url)).number), head - 3n);
      // the chain goes on from there
      await call(url, 'evm_mine');
      assert.equal(BigInt((await latest(url)).number), head - 2n);
    }
    const tooDeep = await rpc(node.url, 'anvil_rollback', [1_000_000]);
    assert.match(tooDeep.error?.message ?? '', /^Rollback depth must not exceed current chain height: current height \d+, depth 1000000$/);
  });

  it('eth_getAccountInfo answers balance, nonce and code in one object, as Anvil and as the three single reads', async () => {
    // the CREATE2 deployer is the same predeploy on both (src/config/predeploys.ts): equal answers
    const deployer = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
    const [mine, theirs] = await both<Record<string, string>>('eth_getAccountInfo', [deployer, 'latest']);
    assert.deepEqual(mine, theirs);
    assert.notEqual(mine.code, '0x');
    // a dev account that sent txs in this file: Ferry's own single reads, at the same block
    const dev = devAddress(0);
    const at = (await latest(node.url)).number;
    const info = await call<Record<string, string>>(node.url, 'eth_getAccountInfo', [dev, at]);
    assert.deepEqual(Object.keys(info), ['balance', 'nonce', 'code']);
    assert.deepEqual(info, {
      balance: await call<string>(node.url, 'eth_getBalance', [dev, at]),
      nonce: await call<string>(node.url, 'eth_getTransactionCount', [dev, at]),
      code: await call<string>(node.url, 'eth_getCode', [dev, at]),
    });
    // a bad address: an invalid-params error on both, nothing else
    const bad = await Promise.all([node.url, anvil.url].map((u) => rpc(u, 'eth_getAccountInfo', ['0x4e59', 'latest'])));
    for (const r of bad) assert.equal(r.error?.code, -32602, JSON.stringify(r));
  });

  it('refuses what cannot apply on ferry with a clear reason', async () => {
    // the others of issue 22 are served (devnode-blocks.test.ts); anvil_setChainId stays refused by decision
    for (const [m, params] of [['anvil_setChainId', [5]]] as const) {
      const r = await rpc(node.url, m, [...params]);
      assert.match(r.error?.message ?? '', /^not supported on ferry: /, m);
    }
  });

  // last: it moves both clocks far ahead
  it('evm_setTime / anvil_setTime answer as Anvil and set the next block time', async () => {
    const now = BigInt((await latest(anvil.url)).timestamp) > BigInt((await latest(node.url)).timestamp)
      ? BigInt((await latest(anvil.url)).timestamp)
      : BigInt((await latest(node.url)).timestamp);
    const target = now + 1_000_500n;
    const answers = await both<number>('evm_setTime', [Number(target)]);
    // Anvil 1.7.1: target - the clock's seconds; each node's clock is near (not at) the latest block's
    // time (Anvil's stays behind the blocks anvil_setBlockTimestampInterval moved ahead)
    for (const a of answers) assert.ok(Math.abs(a - 1_000_500) <= 1_000, `evm_setTime answered ${a}`);
    for (const url of [node.url, anvil.url]) {
      await call(url, 'evm_mine');
      const t = BigInt((await latest(url)).timestamp);
      assert.ok(t >= target && t <= target + 1n, `${url}: block time ${t} should be ${target}`);
    }
    // the clock went on from `target` for a moment only
    for (const a of await both<number>('anvil_setTime', [Number(target) + 10_500])) assert.ok(a <= 10_500 && a >= 10_490, `anvil_setTime answered ${a}`);
  });
});
