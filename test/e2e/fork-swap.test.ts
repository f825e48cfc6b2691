/**
 * A swap on a fork (docs/fork-mode.md; issue 24): a Uniswap V2-style pair (test/contracts/Pair.sol) over
 * two ERC-20s, with liquidity and a few swaps, on a Ferry dev node and on the Anvil 1.7.1 binary; each is
 * forked by `ferry dev --fork-url` through the counting proxy (test/helpers/originproxy.ts). Reserves,
 * balances, code, a storage slot and eth_call of getAmountOut match the origin at the fork block; a swap on
 * the fork pays what eth_call of the same swap at the origin's fork block returns and leaves the origin
 * alone; history below the fork block is the origin's; after a restart of the fork's home the same swap
 * asks the origin for nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeFunctionResult, encodeFunctionData, type Address, type Hex } from 'viem';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { OriginProxy } from '../helpers/originproxy.js';
import { call } from '../helpers/rpc.js';
import { slotOf } from '../helpers/solc.js';
import { deployPair, pair, swapEvent, swapInData, swapOnce, token, TRADER, type PairDeployment } from '../helpers/swap.js';
import { startAnvil } from './debug-fixtures.js';

const FORK_ARGS = ['--fork-retries', '3', '--fork-timeout', '3000'];
const AMOUNT_IN = 5n * 10n ** 20n;
/** receives the fork's swaps: B out, never held anything at the origin */
const TAKER = '0x00000000000000000000000000000000005a5a5a' as Address;
const STATE_METHODS = ['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode', 'eth_getStorageAt', 'eth_getProof'];

const hex = (n: number | bigint) => '0x' + n.toString(16);
const read = (abi: any[], fn: string, args: unknown[] = []) => encodeFunctionData({ abi, functionName: fn, args });

function swapSuite(kind: 'ferry' | 'anvil'): void {
  describe(`a swap on a fork of ${kind}`, () => {
    let originUrl: string;
    let origin: { url: string; stop(): Promise<unknown> };
    let proxy: OriginProxy;
    let fork: FerryNode;
    let d: PairDeployment;
    let at: string;
    /** what eth_call of swapIn at the origin's fork block returns */
    let predicted: bigint;

    const both = async (method: string, params: unknown[]) => [await call(fork.url, method, [...params, 'latest']), await call(originUrl, method, [...params, at])];
    const callData = async (url: string, to: Address, data: Hex, block: string) => call(url, 'eth_call', [{ to, data }, block]) as Promise<Hex>;
    const reserves = async (url: string, block: string) =>
      decodeFunctionResult({ abi: pair.abi, functionName: 'getReserves', data: await callData(url, d.pair, read(pair.abi, 'getReserves'), block) }) as readonly bigint[];
    const balance = async (url: string, tokenAddr: Address, who: Address, block: string) => BigInt(await callData(url, tokenAddr, read(token.abi, 'balanceOf', [who]), block));

    before(async () => {
      origin = kind === 'ferry' ? await startFerry({ args: ['--dev'] }) : await startAnvil();
      originUrl = origin.url;
      d = await deployPair(originUrl);
      at = hex(d.block);
      proxy = await new OriginProxy(originUrl).start();
      fork = await startFerry({ args: ['--dev', '--fork-url', proxy.url, ...FORK_ARGS] });
    });

    after(async () => {
      await fork?.stop();
      await proxy?.close();
      await origin?.stop();
    });

    it('reserves, balances, code, a storage slot and eth_call getAmountOut match the origin at the fork block', async () => {
      for (const a of [d.tokenA, d.tokenB, d.pair]) {
        const [mine, theirs] = await both('eth_getCode', [a]);
        assert.equal(mine, theirs);
        assert.ok((mine as string).length > 2, `code at ${a}`);
      }
      const r = await reserves(fork.url, 'latest');
      assert.deepEqual(r, await reserves(originUrl, at));
      assert.ok(r[0]! > 0n && r[1]! > 0n);
      // slot 0 packs reserve0, reserve1 and blockTimestampLast (test/contracts/Pair.sol)
      const [slot0, originSlot0] = await both('eth_getStorageAt', [d.pair, hex(slotOf(pair, 'reserve0'))]);
      assert.equal(slot0, originSlot0);
      assert.equal(BigInt(slot0 as string) & ((1n << 112n) - 1n), r[0]);
      for (const [t, who] of [[d.tokenA, d.pair], [d.tokenB, d.pair], [d.tokenA, TRADER], [d.tokenB, TRADER]] as const) {
        assert.equal(await balance(fork.url, t, who, 'latest'), await balance(originUrl, t, who, at), `${t} balanceOf ${who}`);
      }
      const [lp, originLp] = await both('eth_call', [{ to: d.pair, data: read(pair.abi, 'balanceOf', [TRADER]) }]);
      assert.equal(lp, originLp);
      const quote = read(pair.abi, 'getAmountOut', [AMOUNT_IN, r[0], r[1]]);
      const [q, originQ] = await both('eth_call', [{ to: d.pair, data: quote }]);
      assert.equal(q, originQ);
      // the swap itself, called at the origin's fork block, pays what getAmountOut quotes
      const asTrader = { from: TRADER, to: d.pair, data: swapInData(d, AMOUNT_IN, TAKER) };
      predicted = BigInt((await call(originUrl, 'eth_call', [asTrader, at])) as string);
      assert.equal(predicted, BigInt(q as string));
      assert.equal(BigInt((await call(fork.url, 'eth_call', [asTrader, 'latest'])) as string), predicted);
    });

    it('a swap executes on the fork, pays the predicted amount and leaves the origin alone', async () => {
      const before = await reserves(fork.url, 'latest');
      const { receipt } = await swapOnce(fork.url, d, AMOUNT_IN, TAKER);
      const ev = swapEvent(receipt, d.pair);
      assert.deepEqual([ev.amount0In, ev.amount1In, ev.amount0Out, ev.amount1Out], [AMOUNT_IN, 0n, 0n, predicted]);
      assert.equal(await balance(fork.url, d.tokenB, TAKER, 'latest'), predicted);
      assert.deepEqual((await reserves(fork.url, 'latest')).slice(0, 2), [before[0]! + AMOUNT_IN, before[1]! - predicted]);
      assert.ok(receipt.blockNumber > BigInt(d.block));
      // the origin: no taker balance, reserves as at the fork block, no new block
      assert.equal(await balance(originUrl, d.tokenB, TAKER, 'latest'), 0n);
      assert.deepEqual(await reserves(originUrl, 'latest'), await reserves(originUrl, at));
      assert.equal(await call(originUrl, 'eth_blockNumber'), at);
      assert.equal(await call(originUrl, 'eth_getTransactionReceipt', [receipt.transactionHash]), null);
    });

    it("history below the fork block is the origin's; the fork's first block's parent is the fork block", async () => {
      // the same question to both: the origin has an answer, and the fork's is identical
      const same = async (method: string, params: unknown[]) => {
        const [mine, theirs] = await Promise.all([fork.url, originUrl].map((url) => call(url, method, params)));
        const what = `${method} ${JSON.stringify(params)}`;
        assert.notEqual(theirs, null, `${what} at the origin`);
        assert.deepEqual(mine, theirs, what);
        return theirs;
      };
      for (const tx of d.swaps) {
        const r = (await same('eth_getTransactionReceipt', [tx])) as { blockNumber: string; logs: unknown[] };
        assert.ok(r.logs.length >= 3, 'transfer, Sync, Swap');
        await same('eth_getBlockByNumber', [r.blockNumber, true]);
        await same('eth_getTransactionByHash', [tx]);
      }
      const top = (await same('eth_getBlockByNumber', [at, false])) as { hash: string };
      const swapTopic = (await call(originUrl, 'eth_getTransactionReceipt', [d.swaps[0]]) as { logs: { address: string; topics: string[] }[] }).logs.find(
        (l) => l.address.toLowerCase() === d.pair.toLowerCase() && l.topics.length === 3,
      )!.topics[0]!;
      const logs = (await same('eth_getLogs', [{ address: d.pair, topics: [swapTopic], fromBlock: '0x0', toBlock: at }])) as { transactionHash: string }[];
      assert.deepEqual(logs.map((l) => l.transactionHash), d.swaps);
      const first = (await call(fork.url, 'eth_getBlockByNumber', [hex(d.block + 1), false])) as { parentHash: string } | null;
      assert.ok(first !== null, `the fork has block ${d.block + 1}`);
      assert.equal(first.parentHash, top.hash);
    });

    it('after a restart of the fork home the same swap asks the origin for no state', async () => {
      assert.equal(await fork.stop(), 0);
      proxy.reset();
      fork = await startFerry({ home: fork.home, args: ['--dev', '--fork-url', proxy.url, ...FORK_ARGS] });
      const r = await reserves(fork.url, 'latest');
      const quote = BigInt(await callData(fork.url, d.pair, read(pair.abi, 'getAmountOut', [AMOUNT_IN, r[0], r[1]]), 'latest'));
      const { receipt } = await swapOnce(fork.url, d, AMOUNT_IN, TAKER);
      assert.equal(swapEvent(receipt, d.pair).amount1Out, quote);
      assert.equal(await balance(fork.url, d.tokenB, TAKER, 'latest'), predicted + quote);
      assert.equal(proxy.count(...STATE_METHODS), 0, `origin state calls after the restart: ${[...proxy.byCall.keys()].join(', ')}`);
      assert.equal(proxy.count(), 0, `origin calls after the restart: ${[...proxy.byCall.keys()].join(', ')}`);
    });
  });
}

swapSuite('ferry');
swapSuite('anvil');
