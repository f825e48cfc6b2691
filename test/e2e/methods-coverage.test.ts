/**
 * The registered methods that had no golden or e2e case of their own (test/unit/methods-covered.test.ts
 * finds them), each called on a real `ferry start --dev` and its answer checked for value and effect:
 * the eth/web3/net answers geth gives without mining or peers, block and uncle lookups by hash, the
 * node-held key signing methods (checked by recovering the signer with ethers), the Anvil/Hardhat dev
 * controls (by the block, pool or coinbase they change), and Surface B's abci_info, genesis and
 * broadcast_tx_async.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Transaction, Wallet, getBytes, keccak256, toUtf8Bytes, verifyTypedData } from 'ethers';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { CHAIN_ID, EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { assertStill, call, rpc, toHex, waitFor, waitForReceipt } from '../helpers/rpc.js';

const GWEI = 10n ** 9n;
const ZERO_HASH = '0x' + '00'.repeat(32);
const UNKNOWN_HASH = '0x' + '77'.repeat(32);

interface RpcBlock {
  number: string;
  hash: string;
  gasLimit: string;
  baseFeePerGas: string;
  miner: string;
  transactions: string[];
}

describe('methods without a case elsewhere, on ferry start --dev', () => {
  let node: FerryNode;
  /** dev account 9 signs the raw txs of this file (the others stay untouched) */
  const wallet = new Wallet(devKeys()[9]!);
  let nonce = 0;

  const latest = () => call<RpcBlock>(node.url, 'eth_getBlockByNumber', ['latest', false]);
  const height = async () => Number(BigInt((await latest()).number));
  const pending = async () => Number(BigInt((await call<{ pending: string }>(node.url, 'txpool_status')).pending));
  /** a signed EIP-1559 transfer of dev account 9 (raw 0x-hex, and its hash) */
  const signed = async (value = 1n) => {
    const raw = await wallet.signTransaction({
      chainId: EVM_CHAIN_ID, type: 2, nonce: nonce++, to: devAddress(8), value, gasLimit: 21_000,
      maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI,
    });
    return { raw, hash: keccak256(raw) };
  };

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
  });
  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  describe('eth, web3, net: the answers of a node that neither mines by proof of work nor has peers', () => {
    it('eth_syncing false, eth_mining false, eth_hashrate 0x0, net_peerCount 0, eth_protocolVersion 0x41', async () => {
      assert.equal(await call(node.url, 'eth_syncing'), false);
      assert.equal(await call(node.url, 'eth_mining'), false);
      assert.equal(await call(node.url, 'eth_hashrate'), '0x0');
      assert.equal(await call(node.url, 'net_peerCount'), 0);
      assert.equal(await call(node.url, 'eth_protocolVersion'), '0x41');
    });

    it('eth_submitWork and eth_submitHashrate are refused with false (no PoW engine)', async () => {
      assert.equal(await call(node.url, 'eth_submitWork', ['0x0000000000000001', ZERO_HASH, ZERO_HASH]), false);
      assert.equal(await call(node.url, 'eth_submitHashrate', ['0x10', ZERO_HASH]), false);
    });

    it('web3_clientVersion names ferry, its version, the OS and the runtime', async () => {
      const v = await call<string>(node.url, 'web3_clientVersion');
      const parts = v.split('/');
      assert.equal(parts.length, 4, v);
      assert.equal(parts[0], 'ferry');
      assert.match(parts[1]!, /^v?\d+\.\d+\.\d+/);
      assert.equal(parts[2], `${process.platform}-${process.arch}`);
      assert.match(parts[3]!, /^node/);
    });

    it('web3_sha3 is keccak-256 of the data', async () => {
      const input = toUtf8Bytes('ferry methods coverage');
      assert.equal(await call(node.url, 'web3_sha3', ['0x' + Buffer.from(input).toString('hex')]), keccak256(input));
      assert.equal(await call(node.url, 'web3_sha3', ['0x']), keccak256(new Uint8Array()));
    });
  });

  describe('blocks by hash: tx counts, txs by index, uncles', () => {
    let block: RpcBlock;
    let txHash: string;

    before(async () => {
      const tx = await signed(5n);
      txHash = await call<string>(node.url, 'eth_sendRawTransaction', [tx.raw]);
      const receipt = await waitForReceipt(node.url, txHash);
      block = await call<RpcBlock>(node.url, 'eth_getBlockByHash', [receipt.blockHash, false]);
    });

    it('eth_getBlockTransactionCountByHash counts the block\'s txs; an unknown hash is null', async () => {
      assert.equal(await call(node.url, 'eth_getBlockTransactionCountByHash', [block.hash]), toHex(block.transactions.length));
      assert.ok(block.transactions.includes(txHash));
      assert.equal(await call(node.url, 'eth_getBlockTransactionCountByHash', [UNKNOWN_HASH]), null);
    });

    it('eth_getTransactionByBlockHashAndIndex finds the tx at its index; past the end is null', async () => {
      const index = block.transactions.indexOf(txHash);
      const tx = await call<{ hash: string; blockHash: string; transactionIndex: string; value: string }>(
        node.url, 'eth_getTransactionByBlockHashAndIndex', [block.hash, toHex(index)],
      );
      assert.equal(tx.hash, txHash);
      assert.equal(tx.blockHash, block.hash);
      assert.equal(tx.transactionIndex, toHex(index));
      assert.equal(tx.value, '0x5');
      assert.equal(await call(node.url, 'eth_getTransactionByBlockHashAndIndex', [block.hash, toHex(block.transactions.length)]), null);
    });

    it('uncle counts are 0x0 for a known block and null for an unknown one; uncles are null', async () => {
      assert.equal(await call(node.url, 'eth_getUncleCountByBlockHash', [block.hash]), '0x0');
      assert.equal(await call(node.url, 'eth_getUncleCountByBlockHash', [UNKNOWN_HASH]), null);
      assert.equal(await call(node.url, 'eth_getUncleCountByBlockNumber', [block.number]), '0x0');
      assert.equal(await call(node.url, 'eth_getUncleCountByBlockNumber', ['0xffffff']), null);
      assert.equal(await call(node.url, 'eth_getUncleByBlockHashAndIndex', [block.hash, '0x0']), null);
      assert.equal(await call(node.url, 'eth_getUncleByBlockNumberAndIndex', [block.number, '0x0']), null);
    });
  });

  describe('signing with a node-held dev key', () => {
    const typedData = {
      types: {
        EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }],
        Mail: [{ name: 'to', type: 'address' }, { name: 'contents', type: 'string' }],
      },
      primaryType: 'Mail',
      domain: { name: 'ferry', chainId: EVM_CHAIN_ID },
      message: { to: devAddress(3), contents: 'hello' },
    };
    const { EIP712Domain: _, ...types } = typedData.types;

    it('eth_signTransaction returns the signed raw tx (from the dev account, fields as asked), not sent', async () => {
      const from = devAddress(2);
      const raw = await call<string>(node.url, 'eth_signTransaction', [{
        from, to: devAddress(3), value: '0x2a', gas: '0x5208', maxFeePerGas: toHex(100n * GWEI), maxPriorityFeePerGas: toHex(GWEI), nonce: '0x0',
      }]);
      const tx = Transaction.from(raw);
      assert.equal(tx.from, from);
      assert.equal(tx.to, devAddress(3));
      assert.equal(tx.value, 42n);
      assert.equal(tx.chainId, BigInt(EVM_CHAIN_ID));
      assert.equal(await call(node.url, 'eth_getTransactionByHash', [tx.hash]), null);
    });

    for (const method of ['eth_signTypedData_v4', 'eth_signTypedData']) {
      it(`${method} signs EIP-712 data: the signature recovers the dev account`, async () => {
        const from = devAddress(1);
        const sig = await call<string>(node.url, method, [from, typedData]);
        assert.equal(getBytes(sig).length, 65);
        assert.equal(verifyTypedData(typedData.domain, types, typedData.message, sig), from);
      });
    }
  });

  describe('dev controls (Anvil / Hardhat names)', () => {
    it('anvil_setAutomine / hardhat_getAutomine: automine off keeps a tx pending until a block is mined', async () => {
      assert.equal(await call(node.url, 'anvil_setAutomine', [false]), null);
      assert.equal(await call(node.url, 'hardhat_getAutomine'), false);
      try {
        const tx = await signed();
        await call(node.url, 'eth_sendRawTransaction', [tx.raw]);
        assert.equal(await pending(), 1);
        assert.equal(await call(node.url, 'hardhat_mine', ['0x1']), null);
        assert.equal((await waitForReceipt(node.url, tx.hash)).status, '0x1');
      } finally {
        assert.equal(await call(node.url, 'anvil_setAutomine', [true]), null);
      }
      assert.equal(await call(node.url, 'hardhat_getAutomine'), true);
    });

    it('hardhat_mine makes that many blocks', async () => {
      const before = await height();
      assert.equal(await call(node.url, 'hardhat_mine', ['0x3']), null);
      assert.equal(await height(), before + 3);
    });

    it('anvil_dropTransaction, hardhat_dropTransaction and anvil_dropAllTransactions empty the pool', async () => {
      await call(node.url, 'anvil_setAutomine', [false]);
      try {
        const a = await signed();
        const b = await signed();
        for (const t of [a, b]) await call(node.url, 'eth_sendRawTransaction', [t.raw]);
        assert.equal(await pending(), 2);
        // the later nonce first, so the earlier one stays executable
        assert.equal(await call(node.url, 'anvil_dropTransaction', [b.hash]), b.hash);
        assert.equal(await call(node.url, 'anvil_dropTransaction', [b.hash]), null);
        assert.equal(await pending(), 1);
        assert.equal(await call(node.url, 'hardhat_dropTransaction', [a.hash]), a.hash);
        assert.equal(await pending(), 0);
        nonce -= 2;
        const c = await signed();
        const d = await signed();
        for (const t of [c, d]) await call(node.url, 'eth_sendRawTransaction', [t.raw]);
        assert.equal(await pending(), 2);
        assert.equal(await call(node.url, 'anvil_dropAllTransactions'), null);
        assert.equal(await pending(), 0);
        nonce -= 2;
      } finally {
        await call(node.url, 'anvil_setAutomine', [true]);
      }
    });

    it('anvil_setCoinbase / hardhat_setCoinbase: eth_coinbase and the next block\'s miner follow', async () => {
      for (const [method, who] of [['anvil_setCoinbase', devAddress(6)], ['hardhat_setCoinbase', devAddress(7)]] as const) {
        assert.equal(await call(node.url, method, [who]), null);
        assert.equal(await call(node.url, 'eth_coinbase'), who.toLowerCase());
        await call(node.url, 'evm_mine');
        assert.equal((await latest()).miner, who.toLowerCase());
      }
    });

    it('anvil_setNextBlockBaseFeePerGas / hardhat_setNextBlockBaseFeePerGas set the next block\'s base fee', async () => {
      for (const [method, fee] of [['anvil_setNextBlockBaseFeePerGas', 7n * GWEI], ['hardhat_setNextBlockBaseFeePerGas', 3n * GWEI]] as const) {
        assert.equal(await call(node.url, method, [toHex(fee)]), null);
        await call(node.url, 'evm_mine');
        assert.equal(BigInt((await latest()).baseFeePerGas), fee);
      }
    });

    it('evm_setBlockGasLimit sets the gas limit of the blocks that follow', async () => {
      const limit = 25_000_000n;
      assert.equal(await call(node.url, 'evm_setBlockGasLimit', [toHex(limit)]), true);
      await call(node.url, 'evm_mine');
      assert.equal(BigInt((await latest()).gasLimit), limit);
    });

    it('evm_setIntervalMining / anvil_setIntervalMining: blocks come on their own, then stop at 0', async () => {
      await call(node.url, 'anvil_setAutomine', [false]);
      try {
        const before = await height();
        assert.equal(await call(node.url, 'evm_setIntervalMining', [1]), null);
        await waitFor('a block made by the interval timer', async () => ((await height()) >= before + 1 ? true : null), 30_000, 100);
        assert.equal(await call(node.url, 'anvil_setIntervalMining', [0]), null);
        // evm_mine waits for a timer block still in flight; after it the head stays for four periods
        await call(node.url, 'evm_mine');
        await assertStill(node.url, await height(), 4_000, 'after anvil_setIntervalMining 0');
      } finally {
        await call(node.url, 'anvil_setAutomine', [true]);
      }
    });

    it('hardhat_setMinGasPrice is refused: there is no minimum gas price under EIP-1559', async () => {
      const r = await rpc(node.url, 'hardhat_setMinGasPrice', ['0x1']);
      assert.equal(r.result, undefined);
      assert.equal(r.error?.message, 'hardhat_setMinGasPrice is not supported when EIP-1559 is active');
    });

    it('anvil_metadata describes this chain and its head', async () => {
      const head = await latest();
      const m = await call<Record<string, unknown>>(node.url, 'anvil_metadata');
      assert.equal(m.chainId, EVM_CHAIN_ID);
      assert.equal(m.latestBlockNumber, Number(BigInt(head.number)));
      assert.equal(m.latestBlockHash, head.hash);
      assert.match(String(m.clientVersion), /^ferry\//);
      assert.match(String(m.instanceId), /^0x[0-9a-f]{64}$/);
      assert.equal(m.forkedNetwork, null);
      assert.deepEqual(m.snapshots, {});
      // one instance id for the node's life
      assert.equal((await call<Record<string, unknown>>(node.url, 'anvil_metadata')).instanceId, m.instanceId);
    });
  });

  describe('Surface B', () => {
    const comet = async (method: string, params: Record<string, unknown> = {}) => {
      const res = await fetch(node.cometUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const body = (await res.json()) as { result?: Record<string, any>; error?: unknown };
      assert.equal(body.error, undefined, `${method}: ${JSON.stringify(body.error)}`);
      return body.result!;
    };

    it('abci_info: the application, its version and the committed height', async () => {
      const h = await height();
      const info = (await comet('abci_info')).response;
      assert.equal(info.data, 'ferry');
      assert.equal(info.app_version, '1');
      assert.ok(Number(info.last_block_height) >= h, `${info.last_block_height} < ${h}`);
      assert.match(info.last_block_app_hash, /^[A-Za-z0-9+/]+=*$/);
    });

    it('genesis: the chain id and the validator of this node', async () => {
      const g = (await comet('genesis')).genesis;
      assert.equal(g.chain_id, CHAIN_ID);
      assert.equal(g.validators.length, 1);
      assert.match(g.validators[0].power, /^[1-9]\d*$/);
      assert.equal(g.validators[0].address, (await comet('status')).validator_info.address);
    });

    it('broadcast_tx_async answers the tx hash at once; the tx is then mined', async () => {
      const tx = await signed(7n);
      const parsed = Transaction.from(tx.raw);
      const native = wrapEthereumTx(getBytes(tx.raw), getBytes(wallet.address), parsed.gasLimit, parsed.maxFeePerGas!);
      const res = await comet('broadcast_tx_async', { tx: Buffer.from(native).toString('base64') });
      assert.equal(res.code, 0);
      assert.equal(res.hash, createHash('sha256').update(native).digest('hex').toUpperCase());
      const receipt = await waitForReceipt(node.url, tx.hash);
      assert.equal(receipt.status, '0x1');
    });
  });
});
