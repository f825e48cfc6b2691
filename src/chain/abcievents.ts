/**
 * The Evmos-compatible ABCI events of a block and its txs (docs/cometbft-rpc.md, "ferry's events"): each executed
 * tx's ExecTxResult with its `ethereum_tx`, `tx_log` and `message` events, the result of a tx that
 * was not executed, and the block's `evm_fee_market` / `block_bloom` events. One job: the shapes;
 * which tx got which result is the block builder's (chain/blockbuild.ts).
 */
import type { AbciEvent, ExecTxResult } from '../types/abci.js';
import type { EvmReceipt, EvmTx } from '../types/chain.js';
import { ExecCode } from './checkcodes.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const attr = (key: string, value: string, index = true) => ({ key, value, index });

/** The result of a block tx that was not executed: `code` says why (undecodable, or excluded by the executor). */
export function failedTxResult(code: number, log: string, gasWanted = 0n): ExecTxResult {
  return { code, data: new Uint8Array(), log, info: '', gasWanted, gasUsed: 0n, events: [], codespace: 'evm' };
}

/** The result of an executed tx: its receipt as Evmos reports it; `native` is the tx's native (TxRaw) hash. */
export function executedTxResult(tx: EvmTx, r: EvmReceipt, native: Uint8Array): ExecTxResult {
  const ethTx: { key: string; value: string; index: boolean }[] = [
    attr('amount', tx.value.toString()),
    attr('ethereumTxHash', '0x' + hex(tx.hash)),
    attr('txIndex', String(r.transactionIndex)),
    attr('txGasUsed', r.gasUsed.toString()),
    attr('txHash', hex(native).toUpperCase()),
  ];
  if (tx.to) ethTx.push(attr('recipient', '0x' + hex(tx.to)));
  ethTx.push(attr('sender', '0x' + hex(tx.from)));
  if (r.status === 0) ethTx.push(attr('ethereumTxFailed', r.vmError ?? 'failed'));
  // txLog values are whole log JSON documents: published to subscribers, not put in the kv index
  const txLog = r.logs.map((l) =>
    attr(
      'txLog',
      JSON.stringify({
        address: '0x' + hex(l.address),
        topics: l.topics.map((t) => '0x' + hex(t)),
        data: Buffer.from(l.data).toString('base64'),
        blockNumber: Number(l.blockNumber),
        transactionHash: '0x' + hex(l.transactionHash),
        transactionIndex: l.transactionIndex,
        blockHash: '0x' + hex(l.blockHash),
        logIndex: l.logIndex,
      }),
      false,
    ),
  );
  // the receipt status is the inverse of the consensus code: code 0 <-> status 0x1
  return {
    code: r.status === 1 ? ExecCode.ok : ExecCode.failed,
    data: tx.hash,
    log: r.status === 1 ? '' : (r.vmError ?? 'failed'),
    info: '',
    gasWanted: tx.gasLimit,
    gasUsed: r.gasUsed,
    codespace: r.status === 1 ? '' : 'evm',
    events: [
      { type: 'ethereum_tx', attributes: ethTx },
      { type: 'tx_log', attributes: txLog },
      {
        type: 'message',
        attributes: [attr('module', 'evm'), attr('sender', '0x' + hex(tx.from)), attr('txType', String(tx.type))],
      },
    ],
  };
}

/** The block's own events: its base fee (BeginBlock) and its logs bloom (EndBlock). */
export function blockEvents(baseFee: bigint, logsBloom: Uint8Array): AbciEvent[] {
  return [
    { type: 'evm_fee_market', attributes: [attr('base_fee', baseFee.toString()), attr('mode', 'BeginBlock')] },
    { type: 'block_bloom', attributes: [attr('bloom', hex(logsBloom)), attr('mode', 'EndBlock')] },
  ];
}
