/**
 * A graceful restart keeps the whole chain: make transactions (transfers of each type, a contract
 * with logs), stop with SIGTERM (exit 0), start again on the same home, and find every block, tx,
 * receipt, log and balance again, byte for byte; then blocks and transactions continue.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContractFactory, Interface, type Wallet } from 'ethers';
import { devAddress, devWallet, DEV_ACCOUNT_COUNT } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry } from '../helpers/node.js';
import { blockNumber, call, toHex, waitForBlock, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const ARGS = ['--consensus.timeout_commit', '200ms'];
const GWEI = 10n ** 9n;
const MAX_FEE = 100n * GWEI;
const EXTRA_BLOCKS = 3;

interface Snapshot {
  height: number;
  blocks: unknown[];
  blocksByHash: unknown[];
  txs: unknown[];
  receipts: unknown[];
  logs: unknown;
  state: unknown[];
}

async function signAndSend(url: string, w: Wallet, nonce: number, tx: Record<string, unknown>): Promise<string> {
  const raw = await w.signTransaction({ chainId: EVM_CHAIN_ID, nonce, gasLimit: 100_000n, ...tx });
  return call<string>(url, 'eth_sendRawTransaction', [raw]);
}

/** Everything a client can read about heights 0..height. */
async function snapshot(url: string, height: number, hashes: string[], token: string): Promise<Snapshot> {
  const heights = Array.from({ length: height + 1 }, (_, h) => h);
  const blocks = await Promise.all(heights.map((h) => call(url, 'eth_getBlockByNumber', [toHex(h), true])));
  const blocksByHash = await Promise.all(blocks.map((b: any) => call(url, 'eth_getBlockByHash', [b.hash, false])));
  const txs = await Promise.all(hashes.map((h) => call(url, 'eth_getTransactionByHash', [h])));
  const receipts = await Promise.all(hashes.map((h) => call(url, 'eth_getTransactionReceipt', [h])));
  const logs = await call(url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: toHex(height) }]);
  const iface = new Interface(compileToken().abi);
  const state: unknown[] = [];
  for (let i = 0; i < DEV_ACCOUNT_COUNT; i++) {
    const a = devAddress(i);
    state.push(
      await call(url, 'eth_getBalance', [a, toHex(height)]),
      await call(url, 'eth_getTransactionCount', [a, toHex(height)]),
      await call(url, 'eth_call', [{ to: token, data: iface.encodeFunctionData('balanceOf', [a]) }, toHex(height)]),
    );
  }
  state.push(await call(url, 'eth_getCode', [token, toHex(height)]), await call(url, 'eth_getStorageAt', [token, '0x2', toHex(height)]));
  return { height, blocks, blocksByHash, txs, receipts, logs, state };
}

describe('restart', () => {
  it('keeps every block, tx, receipt, log and balance across SIGTERM + start, then continues', async () => {
    const first = await startFerry({ args: ARGS });
    const url1 = first.url;
    const hashes: string[] = [];
    const compiled = compileToken();
    const iface = new Interface(compiled.abi);

    // a contract with events
    const owner = devWallet(0);
    const deployTx = await new ContractFactory(compiled.abi, compiled.bytecode).getDeployTransaction('Restart', 'RST', 10n ** 24n);
    const deployHash = await signAndSend(url1, owner, 0, { ...deployTx, type: 2, maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: GWEI, gasLimit: 2_000_000n });
    hashes.push(deployHash);
    const token = (await waitForReceipt(url1, deployHash)).contractAddress as string;
    assert.ok(token, 'contract deployed');

    // transfers of each type from several senders, and token transfers with logs, over a few blocks
    for (let round = 0; round < 3; round++) {
      const sent: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const nonce = round;
        const to = devAddress(i + 4);
        const type = (i - 1) % 3;
        const fees = type === 2 ? { maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: GWEI } : { gasPrice: MAX_FEE };
        const accessList = type === 1 ? { accessList: [{ address: token, storageKeys: [] }] } : {};
        sent.push(await signAndSend(url1, devWallet(i), nonce, { type, to, value: BigInt(1000 + round), ...fees, ...accessList }));
      }
      const data = iface.encodeFunctionData('transfer', [devAddress(4 + round), 10n ** 18n]);
      sent.push(await signAndSend(url1, owner, round + 1, { type: 2, to: token, data, maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: GWEI }));
      for (const h of sent) {
        const r = await waitForReceipt(url1, h);
        assert.equal(r.status, '0x1', `tx ${h} succeeded`);
      }
      hashes.push(...sent);
    }
    const lastReceiptBlock = Number(BigInt((await waitForReceipt(url1, hashes.at(-1)!)).blockNumber));
    await waitForBlock(url1, lastReceiptBlock + EXTRA_BLOCKS);

    const height = await blockNumber(url1);
    const before = await snapshot(url1, height, hashes, token);
    assert.equal((before.logs as unknown[]).length, 4, 'mint + 3 token transfers');
    const lastSeen = await blockNumber(url1);

    assert.equal(await first.stop(), 0, 'SIGTERM exits 0');

    const second = await startFerry({ home: first.home, args: ARGS });
    try {
      const url2 = second.url;
      const resumed = await blockNumber(url2);
      assert.ok(resumed >= lastSeen, `height after restart ${resumed} >= last height seen ${lastSeen}`);
      const after = await snapshot(url2, height, hashes, token);
      assert.deepEqual(after.blocks, before.blocks, 'blocks by number');
      assert.deepEqual(after.blocksByHash, before.blocksByHash, 'blocks by hash');
      assert.deepEqual(after.txs, before.txs, 'transactions');
      assert.deepEqual(after.receipts, before.receipts, 'receipts');
      assert.deepEqual(after.logs, before.logs, 'logs');
      assert.deepEqual(after.state, before.state, 'balances, nonces, token balances, code, storage');

      // the chain goes on: new blocks on top of the old ones, nonces continue
      await waitForBlock(url2, resumed + 2);
      const next = await call(url2, 'eth_getBlockByNumber', [toHex(height + 1), false]);
      const top = (before.blocks[height] as any).hash;
      assert.equal(next.parentHash, top, 'block after the old tip links to it');
      const nonce = Number(BigInt(await call(url2, 'eth_getTransactionCount', [owner.address, 'latest'])));
      assert.equal(nonce, 4);
      const h = await signAndSend(url2, owner, nonce, { type: 2, to: devAddress(9), value: 1n, maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: GWEI });
      const r = await waitForReceipt(url2, h);
      assert.equal(r.status, '0x1');
      assert.ok(Number(BigInt(r.blockNumber)) > height, 'new tx lands in a new block');
    } finally {
      assert.equal(await second.stop(), 0, 'second SIGTERM exits 0');
    }
  });
});
