/**
 * The dev preset (`ferry start --dev`) driven by viem's test client in Anvil mode: mining on demand,
 * block time controls, the mining modes, the next block's gas limit, base fee and fee recipient, and
 * pool drops, each checked by its effect on the real blocks. Also: the dev accounts are listed and
 * unlocked (eth_sendTransaction without a passphrase), and a time in the past is refused as Anvil does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createTestClient, createWalletClient, http, parseEther, type Hash } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { assertStill, call, rpc, waitFor } from '../helpers/rpc.js';

const chain = VIEM_CHAIN;
/** interval periods (of 1 s) the head must stay still after interval mining is stopped */
const STILL_PERIODS = 4;

describe('ferry start --dev with viem test actions (anvil mode)', () => {
  let node: FerryNode;
  let test: ReturnType<typeof createTestClient>;
  let pub: ReturnType<typeof createPublicClient>;

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    test = createTestClient({ chain, mode: 'anvil', transport: http(node.url) });
    pub = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('eth_accounts lists the dev accounts; eth_sendTransaction from one is mined at once (automine)', async () => {
    const accounts = await call<string[]>(node.url, 'eth_accounts');
    assert.equal(accounts.length, 10);
    assert.equal(accounts[0], devAddress(0).toLowerCase());
    assert.equal(await test.getAutomine(), true);
    const before = await pub.getBlockNumber();
    const hash = await call<Hash>(node.url, 'eth_sendTransaction', [{ from: devAddress(0), to: devAddress(1), value: '0x1' }]);
    const receipt = await pub.waitForTransactionReceipt({ hash });
    assert.equal(receipt.blockNumber, before + 1n);
  });

  it('automine answers a send once its block is committed (as Anvil and Hardhat); a gapped tx is answered pending', async () => {
    const wallet = createWalletClient({ account: privateKeyToAccount(devKeys()[3]! as `0x${string}`), chain, transport: http(node.url) });
    // each send, and at once the receipt and the head: the tx is mined before the hash comes back (docs/dev-mode.md "Automine")
    for (let i = 0; i < 12; i++) {
      const hash = await wallet.sendTransaction({ to: devAddress(4) as `0x${string}`, value: 1n });
      const receipt = await call<{ blockNumber: string; status: string } | null>(node.url, 'eth_getTransactionReceipt', [hash]);
      assert.ok(receipt, `send ${i}: no receipt right after the hash came back`);
      assert.equal(receipt.status, '0x1');
      assert.ok(BigInt(await call<string>(node.url, 'eth_blockNumber')) >= BigInt(receipt.blockNumber));
    }
    // viem's own wait, many times over (it used to race a block landing between its polls)
    for (let i = 0; i < 12; i++) {
      const hash = await wallet.sendTransaction({ to: devAddress(4) as `0x${string}`, value: 1n });
      assert.equal((await pub.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 20_000 })).status, 'success');
    }
    // a tx behind a nonce gap cannot be mined: answered at once, left pending (queued)
    const nonce = await pub.getTransactionCount({ address: wallet.account.address });
    const gapped = await wallet.sendTransaction({ to: devAddress(4) as `0x${string}`, value: 1n, nonce: nonce + 1 });
    assert.equal(await call(node.url, 'eth_getTransactionReceipt', [gapped]), null);
    const filler = await wallet.sendTransaction({ to: devAddress(4) as `0x${string}`, value: 1n, nonce });
    assert.ok(await call(node.url, 'eth_getTransactionReceipt', [filler]));
    assert.equal((await pub.waitForTransactionReceipt({ hash: gapped, pollingInterval: 20, timeout: 20_000 })).status, 'success');
  });

  it('mine: a given number of blocks, spaced by the interval; no block without it', async () => {
    const start = await pub.getBlockNumber();
    await test.mine({ blocks: 3, interval: 7 });
    assert.equal(await pub.getBlockNumber(), start + 3n);
    const b1 = await pub.getBlock({ blockNumber: start + 1n });
    const b2 = await pub.getBlock({ blockNumber: start + 2n });
    const b3 = await pub.getBlock({ blockNumber: start + 3n });
    assert.equal(b2.timestamp - b1.timestamp, 7n);
    assert.equal(b3.timestamp - b2.timestamp, 7n);
    // a real CometBFT block with a signed commit behind each height
    const commit = await (await fetch(`${node.cometUrl}/commit?height=${Number(start + 3n)}`)).json() as any;
    assert.equal(commit.result.signed_header.commit.signatures[0].block_id_flag, 2);
  });

  it('increaseTime and setNextBlockTimestamp move the next block time; the past is refused', async () => {
    const last = await pub.getBlock();
    const total = await test.increaseTime({ seconds: 3600 });
    assert.equal(total, 3600, 'Anvil answers the total increase');
    await test.mine({ blocks: 1 });
    const moved = await pub.getBlock();
    assert.ok(moved.timestamp >= last.timestamp + 3600n, `${moved.timestamp} >= ${last.timestamp} + 3600`);

    const target = moved.timestamp + 100_000n;
    await test.setNextBlockTimestamp({ timestamp: target });
    await test.mine({ blocks: 1 });
    assert.equal((await pub.getBlock()).timestamp, target);
    // later blocks go on from there, never back
    await test.mine({ blocks: 1 });
    assert.ok((await pub.getBlock()).timestamp >= target);

    const res = await rpc(node.url, 'evm_setNextBlockTimestamp', [Number(target - 10n)]);
    assert.equal(res.error?.code, -32602);
    assert.equal(res.error?.message, `Timestamp error: ${target - 10n} is lower than previous block's timestamp`);
    const mineRes = await rpc(node.url, 'evm_mine', [Number(target - 10n)]);
    assert.equal(mineRes.error?.code, -32602);
  });

  it('evm_mine with a timestamp and the object form', async () => {
    const last = await pub.getBlock();
    assert.equal(await call(node.url, 'evm_mine', [Number(last.timestamp + 50n)]), '0x0');
    assert.equal((await pub.getBlock()).timestamp, last.timestamp + 50n);
    assert.equal(await call(node.url, 'evm_mine', [{ blocks: 2 }]), '0x0');
    assert.equal(await pub.getBlockNumber(), last.number + 3n);
  });

  it('manual mode: setAutomine(false) keeps a tx pending until mine; dropTransaction removes it', async () => {
    await test.setAutomine(false);
    assert.equal(await test.getAutomine(), false);
    const wallet = createWalletClient({ chain, account: privateKeyToAccount(devKeys()[2] as `0x${string}`), transport: http(node.url) });
    const start = await pub.getBlockNumber();
    const hash = await wallet.sendTransaction({ to: devAddress(3) as `0x${string}`, value: parseEther('1') });
    const pending = await call<any>(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(pending.blockNumber, null, 'pending, not mined');
    assert.equal(await pub.getBlockNumber(), start, 'no block in manual mode');

    await test.dropTransaction({ hash });
    assert.equal(await call(node.url, 'eth_getTransactionByHash', [hash]), null, 'the dropped tx is gone');
    await test.mine({ blocks: 1 });
    const block = await pub.getBlock();
    assert.equal(block.transactions.length, 0);

    // a new tx (the dropped one's nonce is free again) waits for mine, then lands in that block
    const again = await wallet.sendTransaction({ to: devAddress(3) as `0x${string}`, value: 1n });
    assert.equal((await call<any>(node.url, 'eth_getTransactionByHash', [again])).nonce, pending.nonce);
    await test.mine({ blocks: 1 });
    const receipt = await pub.getTransactionReceipt({ hash: again });
    assert.equal(receipt.blockNumber, block.number + 1n);
    await test.setAutomine(true);
  });

  it('setIntervalMining makes blocks on a timer; 0 stops it', async () => {
    await test.setIntervalMining({ interval: 1 });
    assert.equal(await test.getAutomine(), false);
    const start = await pub.getBlockNumber();
    await waitFor('two interval blocks', async () => ((await pub.getBlockNumber()) >= start + 2n ? true : undefined), 20_000);
    await test.setIntervalMining({ interval: 0 });
    const stopped = await pub.getBlockNumber();
    // no timer: a mine right now makes exactly the next block (after a timer block still in flight, if any)
    await test.mine({ blocks: 1 });
    const mined = await pub.getBlockNumber();
    assert.ok(mined === stopped + 1n || mined === stopped + 2n, `${mined} is the block after ${stopped}`);
    // and none comes on its own: the head stays for four interval periods
    await assertStill(node.url, Number(mined), STILL_PERIODS * 1_000, 'after setIntervalMining 0');
    await test.setAutomine(true);
    assert.equal(await test.getAutomine(), true);
  });

  it('setAutomine false leaves interval mining on, as Anvil (docs/dev-mode.md)', async () => {
    await test.setIntervalMining({ interval: 1 });
    await test.setAutomine(false);
    assert.equal(await test.getAutomine(), false);
    const start = await pub.getBlockNumber();
    await waitFor('two interval blocks after setAutomine false', async () => ((await pub.getBlockNumber()) >= start + 2n ? true : undefined), 20_000);
    await test.setIntervalMining({ interval: 0 });
    await test.setAutomine(true);
    assert.equal(await test.getAutomine(), true);
  });

  it('setBlockGasLimit, setNextBlockBaseFeePerGas, setCoinbase show in the next block', async () => {
    await test.setBlockGasLimit({ gasLimit: 30_000_000n });
    await test.setNextBlockBaseFeePerGas({ baseFeePerGas: 12_345n });
    const coinbase = '0x00000000000000000000000000000000000c0ffe';
    await test.setCoinbase({ address: coinbase });
    await test.mine({ blocks: 1 });
    const block = await pub.getBlock();
    assert.equal(block.gasLimit, 30_000_000n);
    assert.equal(block.baseFeePerGas, 12_345n);
    assert.equal(block.miner, coinbase);
    // the base fee is for one block only: the next follows EIP-1559 from it
    await test.mine({ blocks: 1 });
    const next = await pub.getBlock();
    // EIP-1559 after an empty block: 12345 − ⌊12345 × 15M / 15M / 8⌋ = 12345 − 1543 (geth consensus/misc/eip1559)
    assert.equal(next.baseFeePerGas, 10_802n);
    assert.equal(next.gasLimit, 30_000_000n, 'the gas limit stays');
  });

  it('anvil_setMinGasPrice is refused under EIP-1559, as Anvil; nodeInfo and metadata answer', async () => {
    const res = await rpc(node.url, 'anvil_setMinGasPrice', ['0x1']);
    assert.equal(res.error?.code, -32602);
    assert.equal(res.error?.message, 'anvil_setMinGasPrice is not supported when EIP-1559 is active');
    const info = await call<any>(node.url, 'anvil_nodeInfo');
    const latest = await pub.getBlock();
    assert.equal(info.currentBlockNumber, `0x${latest.number.toString(16)}`);
    assert.equal(info.currentBlockHash, latest.hash);
    assert.equal(info.environment.chainId, EVM_CHAIN_ID);
    const meta = await call<any>(node.url, 'hardhat_metadata');
    assert.equal(meta.chainId, EVM_CHAIN_ID);
    assert.equal(meta.latestBlockNumber, Number(latest.number));
  });
});
