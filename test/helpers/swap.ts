/**
 * A Uniswap V2-style pair (test/contracts/Pair.sol) over two test ERC-20s (test/contracts/Token.sol) on
 * any dev node: deploy, add liquidity, a few swaps (the router-free flow: transfer in, then `swap`), and
 * `swapIn` (transferFrom + swap in one transaction) for the fork-mode e2e test and bench/fork.ts.
 */
import { createPublicClient, createWalletClient, decodeEventLog, encodeFunctionData, http, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from './accounts.js';
import { VIEM_CHAIN } from './node.js';
import { receiptOf } from './receipt.js';
import { compileContract } from './solc.js';

export const token = compileContract('Token.sol', 'Token');
export const pair = compileContract('Pair.sol', 'Pair');
/** the dev account that deploys, provides liquidity and swaps */
export const TRADER_KEY = 3;
export const TRADER = devAddress(TRADER_KEY) as Address;
const SUPPLY = 10n ** 27n;
const LIQUIDITY_A = 10n ** 24n;
const LIQUIDITY_B = 3n * 10n ** 24n;

export interface PairDeployment {
  tokenA: Address;
  tokenB: Address;
  pair: Address;
  /** every transaction of the set-up, in order */
  txs: Hex[];
  /** the `swap` transactions among them */
  swaps: Hex[];
  /** the block of the last transaction */
  block: number;
}

export function clients(url: string) {
  const account = privateKeyToAccount(devKeys()[TRADER_KEY] as Hex);
  return {
    pub: createPublicClient({ chain: VIEM_CHAIN, transport: http(url), cacheTime: 0, pollingInterval: 20 }),
    wallet: createWalletClient({ chain: VIEM_CHAIN, account, transport: http(url) }),
  };
}

async function mined(url: string, hash: Hex): Promise<TransactionReceipt> {
  const r = await receiptOf(clients(url).pub, hash);
  if (r.status !== 'success') throw new Error(`transaction ${hash} reverted on ${url}`);
  return r;
}

/** sends a call from the trader and waits for it to succeed */
export async function send(url: string, to: Address, abi: any[], functionName: string, args: unknown[]): Promise<TransactionReceipt> {
  const hash = await clients(url).wallet.sendTransaction({ to, data: encodeFunctionData({ abi, functionName, args }) });
  return mined(url, hash);
}

/** Token A and B, the pair, liquidity 1e24 A : 3e24 B, two swaps each way, and the pair approved to take the trader's A. */
export async function deployPair(url: string): Promise<PairDeployment> {
  const w = clients(url).wallet;
  const deploy = async (c: typeof token, args: unknown[]) => (await mined(url, await w.deployContract({ abi: c.abi, bytecode: c.bytecode, args }))).contractAddress!;
  const tokenA = await deploy(token, ['Token A', 'TKA', SUPPLY]);
  const tokenB = await deploy(token, ['Token B', 'TKB', SUPPLY]);
  const pairAddr = await deploy(pair, [tokenA, tokenB]);
  const receipts: TransactionReceipt[] = [];
  const swaps: Hex[] = [];
  const step = async (to: Address, abi: any[], fn: string, args: unknown[]) => {
    const r = await send(url, to, abi, fn, args);
    receipts.push(r);
    return r;
  };
  await step(tokenA, token.abi, 'transfer', [pairAddr, LIQUIDITY_A]);
  await step(tokenB, token.abi, 'transfer', [pairAddr, LIQUIDITY_B]);
  await step(pairAddr, pair.abi, 'mint', [TRADER]);
  for (const [i, amountIn] of [10n ** 21n, 7n * 10n ** 20n].entries()) {
    // transfer in, then swap out what getAmountOut gives (A in for B out, then B in for A out)
    const [tin, r0, r1] = i === 0 ? [tokenA, 0, 1] : [tokenB, 1, 0];
    const reserves = (await clients(url).pub.readContract({ address: pairAddr, abi: pair.abi, functionName: 'getReserves' })) as bigint[];
    const out = (await clients(url).pub.readContract({ address: pairAddr, abi: pair.abi, functionName: 'getAmountOut', args: [amountIn, reserves[r0], reserves[r1]] })) as bigint;
    await step(tin, token.abi, 'transfer', [pairAddr, amountIn]);
    swaps.push((await step(pairAddr, pair.abi, 'swap', i === 0 ? [0n, out, TRADER, '0x'] : [out, 0n, TRADER, '0x'])).transactionHash);
  }
  const last = await step(tokenA, token.abi, 'approve', [pairAddr, SUPPLY]);
  return { tokenA, tokenB, pair: pairAddr, txs: receipts.map((r) => r.transactionHash), swaps, block: Number(last.blockNumber) };
}

/** calldata of `swapIn(tokenA, amountIn, 0, to)`: A in, B out */
export const swapInData = (d: PairDeployment, amountIn: bigint, to: Address): Hex =>
  encodeFunctionData({ abi: pair.abi, functionName: 'swapIn', args: [d.tokenA, amountIn, 0n, to] });

/** The amounts of the receipt's Swap event (the pair's only one). */
export function swapEvent(r: TransactionReceipt, pairAddr: Address): { amount0In: bigint; amount1In: bigint; amount0Out: bigint; amount1Out: bigint; to: Address } {
  const logs = r.logs.filter((l) => l.address.toLowerCase() === pairAddr.toLowerCase());
  for (const l of logs) {
    const e = decodeEventLog({ abi: pair.abi, data: l.data, topics: l.topics as [Hex, ...Hex[]] }) as { eventName: string; args: unknown };
    if (e.eventName === 'Swap') return e.args as any;
  }
  throw new Error(`no Swap event in ${r.transactionHash}`);
}

/** Sends swapIn(A → B) from the trader; the receipt and ms from send to receipt. */
export async function swapOnce(url: string, d: PairDeployment, amountIn: bigint, to: Address): Promise<{ receipt: TransactionReceipt; ms: number }> {
  const t0 = performance.now();
  const hash = await clients(url).wallet.sendTransaction({ to: d.pair, data: swapInData(d, amountIn, to) });
  const receipt = await mined(url, hash);
  return { receipt, ms: performance.now() - t0 };
}
