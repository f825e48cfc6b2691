/**
 * Block building for FinalizeBlock: the block's txs decoded (an undecodable one keeps its place as a
 * failed result), and, from what the executor ran, the EVM header, the receipts with their logs, one
 * ABCI result per block tx in block order and the block's events; the outcome is held as a
 * `PendingBlock` until Commit writes it (docs/architecture.md, "One block").
 */
import type { Common } from '@ethereumjs/common';
import type { Genesis } from '../config/genesis.js';
import { ethBlockSize } from '../evm/ethrlp.js';
import type { ExecutedBlock } from '../evm/blockexec.js';
import type { BlockContext } from '../evm/runner.js';
import { effectiveGasPrice, type DecodedTx } from '../evm/tx.js';
import type { FlatChange } from '../store/flatstate.js';
import { txEnds } from '../store/addrindex.js';
import type { ExecTxResult, FinalizeBlockRequest, FinalizeBlockResponse } from '../types/abci.js';
import type { EvmBlock, EvmHeader, EvmLog, EvmReceipt, EvmTx } from '../types/chain.js';
import type { Cheat } from '../types/cheats.js';
import { blockEvents, executedTxResult, failedTxResult } from './abcievents.js';
import { ExecCode } from './checkcodes.js';
import { nativeHash } from './nativetx.js';
import { hexKey } from './txpool.js';
import { GethText } from '../lib/gethtexts.js';

/** What FinalizeBlock computed, kept until Commit writes it (or the block is abandoned). */
export interface PendingBlock {
  block: EvmBlock;
  receipts: EvmReceipt[];
  nativeHashes: Uint8Array[];
  /** the addresses each tx touched (evm/touched.ts): the address index's rows */
  touched: Uint8Array[][];
  newNonces: Map<string, bigint>;
  excluded: EvmTx[];
  flatChange: FlatChange;
  /** the dev cheats the block applied at its start: those up to this sequence number (chain/cheats.ts) */
  cheats?: { upTo: number; cheats: Cheat[] };
}

/** A block's txs decoded, in block order; `undecodable`: the indices of those that do not decode. */
export interface BlockTxs {
  decoded: DecodedTx[];
  undecodable: number[];
}

/** Decodes a block's native txs: `known` first (the last own proposal), else `decode` (throws when they do not decode). */
export function decodeBlockTxs(txs: Uint8Array[], known: (native: Uint8Array) => DecodedTx | undefined, decode: (native: Uint8Array) => DecodedTx): BlockTxs {
  const decoded: DecodedTx[] = [];
  const undecodable: number[] = [];
  txs.forEach((native, i) => {
    const k = known(native);
    if (k) {
      decoded.push(k);
      return;
    }
    try {
      decoded.push(decode(native));
    } catch {
      undecodable.push(i);
    }
  });
  return { decoded, undecodable };
}

/** What assembling a block reads besides the executor's outcome. */
export interface BlockInput {
  req: FinalizeBlockRequest;
  parent: EvmHeader;
  ctx: BlockContext;
  txs: BlockTxs;
  exec: ExecutedBlock;
  common: Common;
  genesis: Genesis;
  cheats?: PendingBlock['cheats'];
}

function receiptsOf(req: FinalizeBlockRequest, exec: ExecutedBlock, baseFee: bigint): EvmReceipt[] {
  let logIndex = 0;
  return exec.txs.map((t, i) => {
    const logs: EvmLog[] = t.logs.map((l) => ({
      address: l.address,
      topics: l.topics,
      data: l.data,
      blockNumber: req.height,
      blockHash: req.hash,
      transactionHash: t.tx.hash,
      transactionIndex: i,
      logIndex: logIndex++,
    }));
    return {
      transactionHash: t.tx.hash,
      transactionIndex: i,
      blockHash: req.hash,
      blockNumber: req.height,
      from: t.tx.from,
      to: t.tx.to,
      type: t.tx.type,
      status: t.status,
      cumulativeGasUsed: t.cumulativeGasUsed,
      gasUsed: t.gasUsed,
      effectiveGasPrice: effectiveGasPrice(t.tx, baseFee),
      contractAddress: t.tx.to === undefined ? t.createdAddress : undefined,
      logs,
      logsBloom: t.logsBloom,
      vmError: t.vmError,
      revertData: t.status === 0 && t.vmError === GethText.executionReverted ? t.returnValue : undefined,
    };
  });
}

/** The block FinalizeBlock made: its ABCI answer and what Commit will write. */
export function assembleBlock(b: BlockInput): { response: FinalizeBlockResponse; pending: PendingBlock } {
  const { req, parent, ctx, exec } = b;
  const baseFee = ctx.baseFee;
  const header: EvmHeader = {
    number: req.height,
    hash: req.hash,
    parentHash: parent.hash,
    stateRoot: exec.stateRoot,
    transactionsRoot: exec.transactionsRoot,
    receiptsRoot: exec.receiptsRoot,
    logsBloom: exec.logsBloom,
    miner: ctx.coinbase,
    gasLimit: ctx.gasLimit,
    gasUsed: exec.gasUsed,
    timestamp: ctx.timestamp,
    extraData: new Uint8Array(),
    baseFeePerGas: baseFee,
    mixHash: ctx.mixHash,
    size: 0n,
  };
  header.size = ethBlockSize(b.common, header, exec.txs.map((t) => t.tx.raw));
  const receipts = receiptsOf(req, exec, baseFee);
  // ABCI results: one per native tx of the block, in block order
  const { decoded, undecodable } = b.txs;
  const byHash = new Map(exec.txs.map((t, i) => [hexKey(t.tx.hash), i]));
  const nativeHashes: Uint8Array[] = [];
  const txResults: ExecTxResult[] = req.txs.map((native, i) => {
    if (undecodable.includes(i)) return failedTxResult(ExecCode.txDecode, 'tx parse error');
    const d = decoded[undecodable.length === 0 ? i : i - undecodable.filter((u) => u < i).length]!;
    const idx = byHash.get(hexKey(d.evm.hash));
    if (idx === undefined) {
      const why = exec.excluded.find((x) => Buffer.compare(x.tx.hash, d.evm.hash) === 0)?.reason ?? 'not executed';
      return failedTxResult(ExecCode.failed, why, d.evm.gasLimit);
    }
    nativeHashes[idx] = nativeHash(native);
    return executedTxResult(exec.txs[idx]!.tx, receipts[idx]!, nativeHashes[idx]!);
  });
  const newNonces = new Map<string, bigint>();
  for (const t of exec.txs) newNonces.set(hexKey(t.tx.from), t.tx.nonce + 1n);
  const pending: PendingBlock = {
    block: { header, transactions: exec.txs.map((t) => t.tx) },
    receipts,
    nativeHashes,
    touched: exec.txs.map((t) => t.touched ?? txEnds(t.tx, t.createdAddress)),
    newNonces,
    // byHash holds the executed txs' hashes already: no second set of the same keys per block tx
    // (docs/benchmarks.md "Small per-tx items on the chain thread")
    excluded: exec.excluded.map((x) => x.tx).filter((t) => !byHash.has(hexKey(t.hash))),
    flatChange: exec.flatChange!,
    cheats: b.cheats,
  };
  // validator set changes scheduled in genesis (app_state.validator_schedule) for this height
  const validatorUpdates = (b.genesis.validatorSchedule ?? []).filter((u) => u.height === req.height).map((u) => ({ pubKey: u.pubKey, power: u.power }));
  const response: FinalizeBlockResponse = {
    events: blockEvents(baseFee, exec.logsBloom),
    txResults,
    appHash: exec.stateRoot,
    ...(validatorUpdates.length > 0 ? { validatorUpdates } : {}),
  };
  return { response, pending };
}
