/**
 * web3.js 4 against a real ferry over WebSocket: `subscribe('newBlockHeaders')` (every block once,
 * in order, the same header as eth_getBlockByNumber) and `subscribe('logs')` with address and
 * topic criteria (exactly the matching logs), then unsubscribe.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, Interface, Transaction, id, zeroPadValue } from 'ethers';
import { Web3, WebSocketProvider } from 'web3';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, waitFor, waitForBlock, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const TRANSFER = id('Transfer(address,address,uint256)');
const BLOCKS = 8;

describe('web3.js 4: subscribe newBlockHeaders and logs', () => {
  let node: FerryNode;
  let web3: Web3;
  let token: string;
  const iface = new Interface(compileToken().abi);
  const owner = devWallet(0);
  const bob = devWallet(2);
  const carol = devWallet(3);

  async function send(data: string, to?: string, gasLimit = 200_000n): Promise<any> {
    const nonce = Number(await call(node.url, 'eth_getTransactionCount', [owner.address, 'pending']));
    const gasPrice = BigInt(await call(node.url, 'eth_gasPrice'));
    const tx = Transaction.from({ type: 2, chainId: EVM_CHAIN_ID, nonce, to: to ?? null, data, gasLimit, maxFeePerGas: gasPrice * 2n, maxPriorityFeePerGas: gasPrice / 4n });
    return waitForReceipt(node.url, await call(node.url, 'eth_sendRawTransaction', [await owner.signTransaction(tx)]));
  }

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
    const args = AbiCoder.defaultAbiCoder().encode(['string', 'string', 'uint256'], ['web3 Token', 'W3T', 10n ** 24n]);
    token = (await send(compileToken().bytecode + args.slice(2), undefined, 3_000_000n)).contractAddress;
    web3 = new Web3(new WebSocketProvider(node.wsUrl, {}, { autoReconnect: false }));
  });

  after(async () => {
    await web3?.eth.clearSubscriptions();
    (web3?.provider as WebSocketProvider | undefined)?.disconnect();
    if (node) assert.equal(await node.stop(), 0);
  });

  it("subscribe('newBlockHeaders'): every block once, in order, the header of eth_getBlockByNumber", async () => {
    const sub = await web3.eth.subscribe('newBlockHeaders');
    const heads: any[] = [];
    sub.on('data', (h) => void heads.push(h));
    sub.on('error', (e) => assert.fail(e));
    await waitFor(`${BLOCKS} headers`, async () => (heads.length >= BLOCKS ? true : null), 30_000, 20);
    await sub.unsubscribe();
    const n0 = Number(heads[0].number);
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      assert.equal(Number(h.number), n0 + i, 'every block once, in order');
      const raw = await call(node.url, 'eth_getBlockByNumber', [`0x${(n0 + i).toString(16)}`, false]);
      assert.equal(h.hash, raw.hash);
      assert.equal(h.parentHash, raw.parentHash);
      assert.equal(h.stateRoot, raw.stateRoot);
      assert.equal(h.receiptsRoot, raw.receiptsRoot);
      assert.equal(h.logsBloom, raw.logsBloom);
      assert.equal(BigInt(h.gasLimit), BigInt(raw.gasLimit));
      assert.equal(BigInt(h.gasUsed), BigInt(raw.gasUsed));
      assert.equal(BigInt(h.baseFeePerGas), BigInt(raw.baseFeePerGas));
      assert.equal(BigInt(h.timestamp), BigInt(raw.timestamp));
    }
  });

  it("subscribe('logs') with address and topics: exactly the matching logs", async () => {
    const toBob = await web3.eth.subscribe('logs', { address: token, topics: [TRANSFER, null as never, zeroPadValue(bob.address, 32)] });
    const all = await web3.eth.subscribe('logs', { address: token });
    const got: { toBob: any[]; all: any[] } = { toBob: [], all: [] };
    toBob.on('data', (l) => void got.toBob.push(l));
    all.on('data', (l) => void got.all.push(l));
    const receipts = [
      await send(iface.encodeFunctionData('transfer', [bob.address, 11n]), token),
      await send(iface.encodeFunctionData('transfer', [carol.address, 22n]), token),
      await send(iface.encodeFunctionData('approve', [carol.address, 33n]), token),
      await send(iface.encodeFunctionData('transfer', [bob.address, 44n]), token),
    ];
    await waitForBlock(node.url, Number(receipts.at(-1).blockNumber) + 1);
    await waitFor('all logs', async () => (got.all.length >= 4 && got.toBob.length >= 2 ? true : null), 10_000, 20);
    await toBob.unsubscribe();
    await all.unsubscribe();
    const shape = (l: any) => ({
      address: l.address.toLowerCase(),
      topics: l.topics,
      data: l.data,
      blockNumber: BigInt(l.blockNumber),
      blockHash: l.blockHash,
      transactionHash: l.transactionHash,
      transactionIndex: BigInt(l.transactionIndex),
      logIndex: BigInt(l.logIndex),
      removed: l.removed,
    });
    const expected = receipts.flatMap((r) => r.logs).map(shape);
    assert.deepEqual(got.all.map(shape), expected);
    assert.deepEqual(got.toBob.map(shape), [expected[0], expected[3]]);
  });
});
