/**
 * Which block a new fork starts from (docs/fork-mode.md "Flags"): Anvil's meanings (foundry
 * crates/anvil/src/cmd.rs) — --fork-block-number N (a negative N counts back from the origin's latest),
 * --fork-transaction-hash H (the block before H's block), else the origin's latest block; the chain id is
 * the origin's unless --fork-chain-id. The block hash is taken as the origin reports it, never re-hashed.
 */
import { badConfig, unavailable } from '../lib/errors.js';
import { OriginClient, originQuantity, type OriginOptions } from './origin.js';
import type { ForkRecord } from './lazystate.js';

export interface ForkRequest extends OriginOptions {
  blockNumber?: bigint;
  transactionHash?: string;
  chainId?: bigint;
}

export async function identifyFork(req: ForkRequest): Promise<ForkRecord> {
  if (req.blockNumber !== undefined && req.transactionHash !== undefined) {
    throw badConfig('fork-transaction-hash', '--fork-block-number and --fork-transaction-hash exclude each other');
  }
  const client = new OriginClient(req);
  const label = client.label;
  const originChainId = originQuantity(await client.call('eth_chainId', []), 'eth_chainId', label);
  let number: bigint;
  if (req.transactionHash !== undefined) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(req.transactionHash)) throw badConfig('fork-transaction-hash', `--fork-transaction-hash: expected a 32-byte 0x hash, got ${JSON.stringify(req.transactionHash)}`);
    const tx = (await client.call('eth_getTransactionByHash', [req.transactionHash])) as { blockNumber?: unknown } | null;
    if (tx === null || tx.blockNumber === null || tx.blockNumber === undefined) {
      throw unavailable(`fork origin ${label}: transaction ${req.transactionHash} is not in a block`);
    }
    number = originQuantity(tx.blockNumber, 'eth_getTransactionByHash blockNumber', label) - 1n;
  } else {
    const latest = originQuantity(await client.call('eth_blockNumber', []), 'eth_blockNumber', label);
    number = req.blockNumber === undefined ? latest : req.blockNumber < 0n ? latest + req.blockNumber : req.blockNumber;
    if (number > latest) throw badConfig('fork-block-number', `--fork-block-number ${number} is above the origin's latest block ${latest} (${label})`);
  }
  if (number < 0n) throw badConfig('fork-block-number', `fork block ${number} is below 0 (${label})`);
  const block = (await client.call('eth_getBlockByNumber', ['0x' + number.toString(16), false])) as { hash?: unknown } | null;
  if (block === null || typeof block.hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(block.hash)) {
    throw unavailable(`fork origin ${label}: block ${number} not found`);
  }
  return {
    url: req.url,
    blockNumber: number,
    blockHash: block.hash.toLowerCase(),
    chainId: req.chainId ?? originChainId,
    ...(req.retries !== undefined ? { retries: req.retries } : {}),
    ...(req.timeoutMs !== undefined ? { timeoutMs: req.timeoutMs } : {}),
    ...(req.computeUnitsPerSecond !== undefined ? { computeUnitsPerSecond: req.computeUnitsPerSecond } : {}),
  };
}
