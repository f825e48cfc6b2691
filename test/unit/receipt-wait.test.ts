/**
 * test/helpers/receipt.ts against a scripted JSON-RPC server that replays the race seen with a
 * `ferry start --dev` node (docs/dev-mode.md automine): the tx is pending at the first two receipt
 * asks, its block lands right after the second, and the next block-by-number answer is slow, so a
 * block-number watcher busy with that request misses the only new block. The helper must still
 * come back with the receipt (viem's waitForTransactionReceipt waits for a block that never comes).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createPublicClient, http, type Hex } from 'viem';
import { VIEM_CHAIN } from '../helpers/node.js';
import { receiptOf } from '../helpers/receipt.js';

const HASH = `0x${'ab'.repeat(32)}` as Hex;
const FROM = `0x${'11'.repeat(20)}`;
const TO = `0x${'22'.repeat(20)}`;
const BLOCK_HASH = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** A JSON-RPC node whose only tx is mined into block 8 right after the 2nd receipt ask; the chain then stays at 8. */
function scriptedNode() {
  let height = 7;
  let receiptAsks = 0;
  const tx = (mined: boolean) => ({
    hash: HASH, from: FROM, to: TO, nonce: '0x6', gas: '0x5208', value: '0x0', input: '0x', type: '0x0', gasPrice: '0x1',
    chainId: '0x2328', v: '0x4673', r: '0x1', s: '0x1',
    blockHash: mined ? BLOCK_HASH(8) : null, blockNumber: mined ? '0x8' : null, transactionIndex: mined ? '0x0' : null,
  });
  const receipt = {
    transactionHash: HASH, transactionIndex: '0x0', blockHash: BLOCK_HASH(8), blockNumber: '0x8', from: FROM, to: TO,
    cumulativeGasUsed: '0x5208', gasUsed: '0x5208', effectiveGasPrice: '0x1', contractAddress: null, logs: [],
    logsBloom: `0x${'00'.repeat(256)}`, status: '0x1', type: '0x0',
  };
  const block = (n: number) => ({
    number: `0x${n.toString(16)}`, hash: BLOCK_HASH(n), parentHash: BLOCK_HASH(n - 1), nonce: '0x0000000000000000',
    sha3Uncles: BLOCK_HASH(0), logsBloom: `0x${'00'.repeat(256)}`, transactionsRoot: BLOCK_HASH(0), stateRoot: BLOCK_HASH(0),
    receiptsRoot: BLOCK_HASH(0), miner: TO, difficulty: '0x0', totalDifficulty: '0x0', extraData: '0x', size: '0x1',
    gasLimit: '0x1c9c380', gasUsed: '0x0', timestamp: '0x1', transactions: n === 8 ? [tx(true)] : [], uncles: [],
  });
  const answer = async (method: string, params: unknown[]): Promise<unknown> => {
    switch (method) {
      case 'eth_blockNumber':
        return `0x${height.toString(16)}`;
      case 'eth_getTransactionByHash':
        return tx(height >= 8);
      case 'eth_getTransactionReceipt':
        receiptAsks++;
        if (height >= 8) return receipt;
        if (receiptAsks === 2) height = 8; // the block lands just after this answer
        return null;
      case 'eth_getBlockByNumber': {
        // a slow answer: the watcher polls the block number meanwhile and sees 8
        await new Promise((r) => setTimeout(r, 200));
        return block(Number(BigInt(params[0] as string)));
      }
      default:
        throw new Error(`unexpected ${method}`);
    }
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const m = JSON.parse(body) as { id: number; method: string; params?: unknown[] };
      const out = { jsonrpc: '2.0', id: m.id, result: await answer(m.method, m.params ?? []) };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(out));
    });
  });
  return server;
}

describe('receiptOf (test/helpers/receipt.ts)', () => {
  it('gets the receipt of a tx whose block lands while a block lookup is in flight, with no later block', async () => {
    const server = scriptedNode();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const pub = createPublicClient({ chain: VIEM_CHAIN, transport: http(url), cacheTime: 0, pollingInterval: 20 });
      // the bound only turns a hang into a failure; the answer comes within a few polls
      const r = await receiptOf(pub, HASH, { timeoutMs: 30_000 });
      assert.equal(r.transactionHash, HASH);
      assert.equal(r.blockNumber, 8n);
      assert.equal(r.status, 'success');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
