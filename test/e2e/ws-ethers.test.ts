/**
 * ethers v6 against a real ferry, push and poll: WebSocketProvider `provider.on('block')`,
 * `contract.on('Transfer')` and `provider.on('pending')` (eth_subscribe), and the same three on a
 * JsonRpcProvider over HTTP, where ethers polls eth_blockNumber for blocks and uses filters
 * (eth_newFilter / eth_newPendingTransactionFilter + eth_getFilterChanges) for events and pending
 * txs. Every test checks the exact blocks, events and hashes received.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Contract,
  ContractFactory,
  JsonRpcProvider,
  Network,
  WebSocketProvider,
  type ContractEventPayload,
  type Provider,
  type TransactionReceipt,
} from 'ethers';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitFor, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const POLL_MS = 100;
const BLOCKS = 8;

/** A JsonRpcProvider that records the methods it sends (to show which mechanism ethers used). */
class RecordingProvider extends JsonRpcProvider {
  readonly methods = new Set<string>();
  override send(method: string, params: unknown[] | Record<string, unknown>): Promise<any> {
    this.methods.add(method);
    return super.send(method, params);
  }
}

interface Seen {
  from: string;
  to: string;
  value: bigint;
  blockNumber: number;
  transactionHash: string;
  index: number;
}

describe('ethers v6: WebSocketProvider subscriptions and HTTP polling filters', () => {
  let node: FerryNode;
  let http: RecordingProvider;
  let ws: WebSocketProvider;
  let tokenAddress: string;
  const compiled = compileToken();
  const owner = devWallet(0);
  const recipients = [devWallet(6).address, devWallet(7).address, devWallet(8).address];

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
    http = new RecordingProvider(node.url, Network.from(EVM_CHAIN_ID), { staticNetwork: true, pollingInterval: POLL_MS, cacheTimeout: -1 });
    ws = new WebSocketProvider(node.wsUrl, Network.from(EVM_CHAIN_ID), { staticNetwork: true });
    const factory = new ContractFactory(compiled.abi, compiled.bytecode, owner.connect(http));
    const deployed = await factory.deploy('Ethers WS Token', 'EWS', 10n ** 24n);
    await deployed.waitForDeployment();
    tokenAddress = await deployed.getAddress();
  });

  after(async () => {
    await ws?.destroy();
    http?.destroy();
    if (node) assert.equal(await node.stop(), 0);
  });

  /** Three transfers with distinct amounts; their receipts. */
  async function transfers(tag: bigint): Promise<TransactionReceipt[]> {
    const token = new Contract(tokenAddress, compiled.abi, owner.connect(http));
    const out: TransactionReceipt[] = [];
    for (let i = 0; i < recipients.length; i++) {
      const tx = await token.getFunction('transfer')(recipients[i], tag * 10n + BigInt(i));
      out.push((await tx.wait())!);
    }
    return out;
  }

  /** Subscribes contract.on('Transfer') on `provider`, runs the transfers, returns what arrived and the receipts. */
  async function watchTransfers(provider: Provider, tag: bigint): Promise<{ seen: Seen[]; receipts: TransactionReceipt[] }> {
    const token = new Contract(tokenAddress, compiled.abi, provider);
    const seen: Seen[] = [];
    await token.on('Transfer', (from: string, to: string, value: bigint, ev: ContractEventPayload) => {
      seen.push({ from, to, value, blockNumber: ev.log.blockNumber, transactionHash: ev.log.transactionHash, index: ev.log.index });
    });
    const receipts = await transfers(tag);
    await waitFor('all Transfer events', async () => (seen.length >= receipts.length ? true : null), 30_000, 50);
    await token.removeAllListeners();
    return { seen, receipts };
  }

  /** ethers uninstalls a filter asynchronously after removeAllListeners: let it finish */
  async function uninstalled(): Promise<void> {
    await waitFor('eth_uninstallFilter', async () => (http.methods.has('eth_uninstallFilter') ? true : null), 10_000, 20);
    await http.send('eth_chainId', []);
  }

  function expected(receipts: TransactionReceipt[], tag: bigint): Seen[] {
    return receipts.map((r, i) => ({
      from: owner.address,
      to: recipients[i]!,
      value: tag * 10n + BigInt(i),
      blockNumber: r.blockNumber,
      transactionHash: r.hash,
      index: r.logs[0]!.index,
    }));
  }

  async function watchBlocks(provider: Provider): Promise<number[]> {
    const seen: number[] = [];
    await provider.on('block', (n: number) => seen.push(n));
    await waitFor(`${BLOCKS} blocks`, async () => (seen.length >= BLOCKS ? true : null), 30_000, 50);
    await provider.removeAllListeners('block');
    return seen;
  }

  /** Records the subscription kinds the provider's eth_subscribe calls got an id for. */
  function watchSubscribes(provider: WebSocketProvider): string[] {
    const kinds: string[] = [];
    const send = provider.send.bind(provider);
    provider.send = async (method: string, params: unknown[] | Record<string, unknown>) => {
      const result = await send(method, params);
      if (method === 'eth_subscribe') kinds.push(String((params as unknown[])[0]));
      return result;
    };
    return kinds;
  }

  /** A tx that enters the mempool but cannot be committed (nonce gap); then the filler. */
  async function pendingPair(sender: number): Promise<{ gapped: string; filler: () => Promise<string> }> {
    const w = devWallet(sender).connect(http);
    const nonce = await http.getTransactionCount(w.address, 'pending');
    const fee = { maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 21_000n, chainId: EVM_CHAIN_ID, type: 2 };
    const gapped = await http.send('eth_sendRawTransaction', [await w.signTransaction({ ...fee, to: recipients[0], value: 1n, nonce: nonce + 1 })]);
    return {
      gapped,
      filler: async () => http.send('eth_sendRawTransaction', [await w.signTransaction({ ...fee, to: recipients[0], value: 1n, nonce })]),
    };
  }

  it("WebSocketProvider.on('block'): every block number once, in order", async () => {
    const head = await http.getBlockNumber();
    const seen = await watchBlocks(ws);
    assert.ok(seen[0]! >= head, `no block from before the subscription (first ${seen[0]}, head was ${head})`);
    seen.forEach((n, i) => assert.equal(n, seen[0]! + i));
    // the head ethers learned over WebSocket names the same block as HTTP
    const last = await ws.getBlock(seen.at(-1)!);
    assert.equal(last!.hash, (await call(node.url, 'eth_getBlockByNumber', [`0x${seen.at(-1)!.toString(16)}`, false])).hash);
  });

  it("WebSocketProvider contract.on('Transfer'): exactly the three transfers, in order", async () => {
    const { seen, receipts } = await watchTransfers(ws, 1n);
    assert.deepEqual(seen, expected(receipts, 1n));
  });

  it("WebSocketProvider.on('pending'): a tx is announced when it enters the mempool", async () => {
    const hashes: string[] = [];
    // ethers subscribes in the background: wait for the node's answer to its eth_subscribe
    const subscribed = watchSubscribes(ws);
    await ws.on('pending', (h: string) => hashes.push(h));
    await waitFor('eth_subscribe newPendingTransactions', async () => (subscribed.includes('newPendingTransactions') ? true : null), 10_000, 20);
    const { gapped, filler } = await pendingPair(4);
    await waitFor('the pending hash', async () => (hashes.includes(gapped) ? true : null), 10_000, 20);
    assert.equal((await rpc(node.url, 'eth_getTransactionReceipt', [gapped])).result, null, 'announced before any commit');
    const second = await filler();
    await waitFor('the filler hash', async () => (hashes.includes(second) ? true : null), 10_000, 20);
    await ws.removeAllListeners('pending');
    assert.deepEqual(hashes, [gapped, second]);
    await waitForReceipt(node.url, gapped);
  });

  it("JsonRpcProvider (HTTP polling).on('block'): every block number once, in order", async () => {
    const seen = await watchBlocks(http);
    seen.forEach((n, i) => assert.equal(n, seen[0]! + i));
  });

  it("JsonRpcProvider (HTTP) contract.on('Transfer') through eth_newFilter + eth_getFilterChanges", async () => {
    http.methods.clear();
    const { seen, receipts } = await watchTransfers(http, 2n);
    assert.deepEqual(seen, expected(receipts, 2n));
    assert.ok(http.methods.has('eth_newFilter'), `methods used: ${[...http.methods].join(', ')}`);
    assert.ok(http.methods.has('eth_getFilterChanges'));
    await uninstalled();
  });

  it("JsonRpcProvider (HTTP).on('pending') through eth_newPendingTransactionFilter", async () => {
    http.methods.clear();
    const hashes: string[] = [];
    await http.on('pending', (h: string) => hashes.push(h));
    await waitFor('the pending filter', async () => (http.methods.has('eth_newPendingTransactionFilter') ? true : null), 10_000, 20);
    const { gapped, filler } = await pendingPair(5);
    await waitFor('the pending hash', async () => (hashes.includes(gapped) ? true : null), 10_000, 20);
    assert.equal((await rpc(node.url, 'eth_getTransactionReceipt', [gapped])).result, null, 'seen before any commit');
    const second = await filler();
    await waitFor('the filler hash', async () => (hashes.includes(second) ? true : null), 10_000, 20);
    await http.removeAllListeners('pending');
    assert.deepEqual(hashes, [gapped, second]);
    assert.ok(http.methods.has('eth_getFilterChanges'));
    await uninstalled();
  });
});
