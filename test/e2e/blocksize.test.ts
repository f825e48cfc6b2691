/**
 * EIP-7934 in the embedded engine's block building (docs/abci.md "The ABCI methods", docs/limits.md): the
 * same 70 large-calldata txs (about 8.6 MB of signed envelopes) wait in the pool of a manual-mining dev
 * node; one `evm_mine` on an Osaka home makes a block that stops at the first tx that would bring it
 * within 1,000,000 bytes of 8,388,608 (geth's builder), and the next block takes the rest; on a Prague
 * home one block takes them all.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { startFerryOn } from '../helpers/hardfork.js';
import { EVM_CHAIN_ID, type FerryNode } from '../helpers/node.js';
import { call, toHex } from '../helpers/rpc.js';

const MAX_RLP_BLOCK_SIZE = 8_388_608;
const BLOCK_SIZE_BUFFER_ZONE = 1_000_000;
/** per tx, under the pool's 128 KiB `max-tx-bytes` */
const DATA_BYTES = 120 * 1024;
const SENDERS = [8, 9];
const PER_SENDER = 35;
/** 120 KiB of non-zero calldata at EIP-7623's floor (40 gas a byte), under EIP-7825's cap */
const TX_GAS = 5_000_000n;
const BLOCK_GAS = 400_000_000n;
const GWEI = 10n ** 9n;

/** 70 signed txs, each sender's in nonce order: valid on any fresh dev home (same keys, same chain id) */
async function signTxs(): Promise<Hex[]> {
  const out: Hex[] = [];
  const data = `0x${'ab'.repeat(DATA_BYTES)}` as Hex;
  for (const i of SENDERS) {
    const account = privateKeyToAccount(devKeys()[i] as Hex);
    for (let nonce = 0; nonce < PER_SENDER; nonce++) {
      const to = account.address;
      out.push(await account.signTransaction({ chainId: EVM_CHAIN_ID, type: 'eip1559', to, nonce, gas: TX_GAS, data, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }));
    }
  }
  return out;
}

/** Sends every tx to a manual-mining node and mines blocks until the pool is empty; returns the blocks. */
async function mineAll(node: FerryNode, txs: Hex[]): Promise<any[]> {
  await call(node.url, 'evm_setAutomine', [false]);
  await call(node.url, 'evm_setBlockGasLimit', [toHex(BLOCK_GAS)]);
  for (const raw of txs) await call(node.url, 'eth_sendRawTransaction', [raw]);
  const blocks: any[] = [];
  let included = 0;
  while (included < txs.length && blocks.length < 4) {
    await call(node.url, 'evm_mine');
    const b = await call<any>(node.url, 'eth_getBlockByNumber', ['latest', false]);
    blocks.push(b);
    included += b.transactions.length;
  }
  return blocks;
}

describe('EIP-7934 in block building (embedded engine, dev node)', { timeout: 300_000 }, () => {
  const nodes: FerryNode[] = [];
  let txs: Hex[];
  const rawSize = (raw: Hex) => (raw.length - 2) / 2;

  after(async () => {
    for (const n of nodes) await n.stop();
  });

  it('osaka: the first block stops below 8,388,608 less the buffer zone; the next takes the rest', async () => {
    txs = await signTxs();
    const total = txs.reduce((n, t) => n + rawSize(t), 0);
    assert.ok(total > MAX_RLP_BLOCK_SIZE, `${total} bytes of txs`);
    const node = await startFerryOn('osaka', ['--dev']);
    nodes.push(node);
    const blocks = await mineAll(node, txs);
    assert.equal(blocks.length, 2, blocks.map((b) => b.transactions.length).join(','));
    const [first, second] = blocks;
    assert.equal(first.transactions.length + second.transactions.length, txs.length);
    const size = Number(first.size);
    assert.ok(size < MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE, `first block ${size} bytes`);
    assert.ok(size + rawSize(txs[0]!) > MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_BUFFER_ZONE - 1_000, 'the next tx would not have fit');
  });

  it('prague: no size bound, one block takes all 70', async () => {
    const node = await startFerryOn('prague', ['--dev']);
    nodes.push(node);
    const blocks = await mineAll(node, txs);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0].transactions.length, txs.length);
    assert.ok(Number(blocks[0].size) > MAX_RLP_BLOCK_SIZE);
  });
});
