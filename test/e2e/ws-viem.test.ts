/**
 * viem against a real ferry over both transports: watchBlocks, watchContractEvent and
 * watchPendingTransactions with webSocket() (eth_subscribe: newHeads, logs, newPendingTransactions)
 * and with http() (block polling; eth_newFilter / eth_newPendingTransactionFilter +
 * eth_getFilterChanges, checked from the requests viem sent). Every test checks the exact blocks,
 * logs and hashes received.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createPublicClient,
  createWalletClient,
  http,
  parseAbiItem,
  webSocket,
  type Abi,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { ferryChain } from '../helpers/viemchain.js';
import { call, rpc, waitFor } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const POLL_MS = 50;
const BLOCKS = 8;
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

describe('viem: watchBlocks / watchContractEvent / watchPendingTransactions over webSocket() and http()', () => {
  let node: FerryNode;
  let wsClient: PublicClient;
  let httpClient: PublicClient;
  let wallet: WalletClient;
  let token: Address;
  /** methods viem sent over http() */
  const httpMethods = new Set<string>();
  /** methods of those the node has answered, by request id while in flight */
  const httpAnswered = new Set<string>();
  const httpInFlight = new Map<unknown, string>();
  const accounts = devKeys().map((k) => privateKeyToAccount(k as Hex));
  const owner = accounts[0]!;
  const recipients = [accounts[6]!.address, accounts[7]!.address, accounts[8]!.address];
  const compiled = compileToken();
  const abi = compiled.abi as Abi;

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
    const chain = ferryChain([node.url], [node.wsUrl]);
    const httpTransport = http(node.url, {
      onFetchRequest: async (req) => {
        const body = await req.clone().json();
        for (const m of Array.isArray(body) ? body : [body]) {
          httpMethods.add(m.method);
          httpInFlight.set(m.id, m.method);
        }
      },
      onFetchResponse: async (res) => {
        const body = await res.clone().json();
        for (const m of Array.isArray(body) ? body : [body]) {
          const method = httpInFlight.get(m.id);
          httpInFlight.delete(m.id);
          if (method !== undefined && m.result !== undefined) httpAnswered.add(method);
        }
      },
    });
    httpClient = createPublicClient({ chain, transport: httpTransport, pollingInterval: POLL_MS, cacheTime: 0 });
    wsClient = createPublicClient({ chain, transport: webSocket(node.wsUrl), cacheTime: 0 });
    wallet = createWalletClient({ account: owner, chain, transport: http(node.url), pollingInterval: POLL_MS, cacheTime: 0 });
    const hash = await wallet.deployContract({ abi, bytecode: compiled.bytecode, args: ['Viem WS Token', 'VWS', 10n ** 24n], account: owner, chain });
    const receipt = await httpClient.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS });
    token = receipt.contractAddress!;
  });

  after(async () => {
    const rpcClient = await (wsClient?.transport as any)?.getRpcClient?.();
    rpcClient?.close();
    if (node) assert.equal(await node.stop(), 0);
  });

  /**
   * Waits until the watcher just started on `client` is live at the node: its eth_subscribe `kind`
   * answered (webSocket()), or its `filterMethod` answered (http()).
   */
  async function installed(client: PublicClient, kind: string, filterMethod: string): Promise<void> {
    if (client === wsClient) {
      const rpcClient = (await (wsClient.transport as any).getRpcClient()) as { subscriptions: Map<string, { body: { params?: unknown[] } }> };
      await waitFor(`eth_subscribe ${kind}`, async () => ([...rpcClient.subscriptions.values()].some((s) => s.body.params?.[0] === kind) ? true : null), 10_000, 20);
    } else {
      await waitFor(`${filterMethod} answered`, async () => (httpAnswered.has(filterMethod) ? true : null), 10_000, 20);
    }
  }

  /** Watches `n` blocks; checks them against eth_getBlockByNumber over raw HTTP. */
  async function checkBlocks(client: PublicClient, opts: { emitMissed?: boolean }): Promise<void> {
    const blocks: any[] = [];
    const unwatch = client.watchBlocks({ ...opts, onBlock: (b) => blocks.push(b), onError: (e) => assert.fail(e) });
    await waitFor(`${BLOCKS} blocks`, async () => (blocks.length >= BLOCKS ? true : null), 30_000, 20);
    unwatch();
    const n0 = Number(blocks[0].number);
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i];
      assert.equal(Number(b.number), n0 + i, 'every block once, in order');
      const raw = await call(node.url, 'eth_getBlockByNumber', [`0x${b.number.toString(16)}`, false]);
      assert.equal(b.hash, raw.hash);
      assert.equal(b.parentHash, raw.parentHash);
      assert.equal(b.stateRoot, raw.stateRoot);
      assert.equal(b.logsBloom, raw.logsBloom);
      assert.equal(b.gasLimit, BigInt(raw.gasLimit));
      assert.equal(b.gasUsed, BigInt(raw.gasUsed));
      assert.equal(b.baseFeePerGas, BigInt(raw.baseFeePerGas));
      assert.equal(b.timestamp, BigInt(raw.timestamp));
      assert.ok(b.gasLimit > 0n);
    }
  }

  /** Three transfers with distinct amounts, one after the other; their receipts. */
  async function transfers(tag: bigint): Promise<TransactionReceipt[]> {
    const out: TransactionReceipt[] = [];
    for (let i = 0; i < recipients.length; i++) {
      const hash = await wallet.writeContract({
        address: token, abi, functionName: 'transfer', args: [recipients[i], tag * 10n + BigInt(i)], account: owner, chain: wallet.chain,
      });
      out.push(await httpClient.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS }));
    }
    return out;
  }

  async function checkEvents(client: PublicClient, tag: bigint): Promise<void> {
    const logs: Log[] = [];
    httpAnswered.clear();
    const unwatch = client.watchContractEvent({
      address: token, abi: [TRANSFER], eventName: 'Transfer', onLogs: (l) => logs.push(...l), onError: (e) => assert.fail(e),
    });
    // the watcher's subscription or filter is live before anything happens
    await installed(client, 'logs', 'eth_newFilter');
    const receipts = await transfers(tag);
    await waitFor('three Transfer logs', async () => (logs.length >= 3 ? true : null), 30_000, 20);
    unwatch();
    assert.deepEqual(
      logs.map((l: any) => ({ ...l.args, blockNumber: l.blockNumber, transactionHash: l.transactionHash, logIndex: l.logIndex, blockHash: l.blockHash })),
      receipts.map((r, i) => ({
        from: owner.address, to: recipients[i], value: tag * 10n + BigInt(i),
        blockNumber: r.blockNumber, transactionHash: r.transactionHash, logIndex: r.logs[0]!.logIndex, blockHash: r.blockHash,
      })),
    );
  }

  async function checkPending(client: PublicClient, sender: number): Promise<void> {
    const seen: string[] = [];
    httpAnswered.clear();
    const unwatch = client.watchPendingTransactions({ onTransactions: (h) => seen.push(...h), onError: (e) => assert.fail(e) });
    await installed(client, 'newPendingTransactions', 'eth_newPendingTransactionFilter');
    const from = accounts[sender]!;
    const nonce = Number(await call(node.url, 'eth_getTransactionCount', [from.address, 'pending']));
    const sign = (n: number) =>
      from.signTransaction({ chainId: EVM_CHAIN_ID, type: 'eip1559', to: recipients[0], value: 1n, gas: 21_000n, nonce: n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n });
    const gapped = await call(node.url, 'eth_sendRawTransaction', [await sign(nonce + 1)]);
    await waitFor('the gapped tx', async () => (seen.includes(gapped) ? true : null), 10_000, 20);
    assert.equal((await rpc(node.url, 'eth_getTransactionReceipt', [gapped])).result, null, 'seen before any commit');
    const filler = await call(node.url, 'eth_sendRawTransaction', [await sign(nonce)]);
    await waitFor('the filler tx', async () => (seen.includes(filler) ? true : null), 10_000, 20);
    unwatch();
    assert.deepEqual(seen, [gapped, filler]);
    await httpClient.waitForTransactionReceipt({ hash: gapped, pollingInterval: POLL_MS });
  }

  it('webSocket(): watchBlocks gets every block once, in order, with the fields of eth_getBlockByNumber', async () => {
    await checkBlocks(wsClient, {});
  });

  it('http(): watchBlocks (polling, emitMissed) gets every block once, in order', async () => {
    await checkBlocks(httpClient, { emitMissed: true });
  });

  it('webSocket(): watchContractEvent gets exactly the three Transfer logs', async () => {
    await checkEvents(wsClient, 1n);
  });

  it('http(): watchContractEvent gets exactly the three Transfer logs through a filter', async () => {
    httpMethods.clear();
    await checkEvents(httpClient, 2n);
    assert.ok(httpMethods.has('eth_newFilter'), `methods: ${[...httpMethods].join(', ')}`);
    assert.ok(httpMethods.has('eth_getFilterChanges'));
  });

  it('webSocket(): watchPendingTransactions sees a tx when it enters the mempool', async () => {
    await checkPending(wsClient, 4);
  });

  it('http(): watchPendingTransactions sees a tx when it enters the mempool, through a filter', async () => {
    httpMethods.clear();
    await checkPending(httpClient, 5);
    assert.ok(httpMethods.has('eth_newPendingTransactionFilter'), `methods: ${[...httpMethods].join(', ')}`);
    assert.ok(httpMethods.has('eth_getFilterChanges'));
  });
});
