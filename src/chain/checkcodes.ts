/**
 * CheckTx's error map: why a transaction was refused (TxRejectReason, src/lib/errors.ts) → the ABCI
 * code CometBFT and Surface B's check_tx/broadcast_tx_* report (Cosmos SDK's codes where one fits,
 * codespace "evm"); the log is the domain error's message, geth's text.
 */
import { DomainError, type TxRejectReason } from '../lib/errors.js';
import type { CheckTxResult } from '../types/abci.js';

/** CheckTx codes (Cosmos SDK's sdkerrors where one fits). */
export const CheckCode = {
  ok: 0,
  /** a bug while checking (the log says "internal error") */
  internal: 1,
  txDecode: 2,
  insufficientFunds: 5,
  outOfGas: 11,
  insufficientFee: 13,
  inMempoolCache: 19,
  mempoolFull: 20,
  wrongSequence: 32,
} as const;

const CODE_OF: { readonly [R in TxRejectReason]: number } = {
  decode: CheckCode.txDecode,
  known: CheckCode.inMempoolCache,
  poolFull: CheckCode.mempoolFull,
  underpriced: CheckCode.insufficientFee,
  nonceTooLow: CheckCode.wrongSequence,
  nonceTooHigh: CheckCode.wrongSequence,
  insufficientFunds: CheckCode.insufficientFunds,
  gas: CheckCode.outOfGas,
  // no Cosmos code says more: the log names the rule (chain id, replay protection, …)
  invalid: CheckCode.txDecode,
};

/** The ABCI code of a refusal. */
export const checkTxCode = (reason: TxRejectReason): number => CODE_OF[reason];

/** A CheckTx answer: code 0 and an empty log when accepted, else the code and log of the refusal. */
export function checkTxResult(rejected?: DomainError<'txRejected'>): CheckTxResult {
  const code = rejected === undefined ? CheckCode.ok : checkTxCode(rejected.detail.reason);
  const log = rejected === undefined ? '' : rejected.message;
  return { code, log, codespace: code === CheckCode.ok ? '' : 'evm', gasWanted: 0n, gasUsed: 0n, data: new Uint8Array(), events: [] };
}

/**
 * FinalizeBlock's per-tx result codes (ExecTxResult.code): 0 for a tx that ran and succeeded; a
 * failed or reverted run, and a tx the executor left out, are `failed` (the log says why); bytes
 * that do not decode are `txDecode` (Cosmos SDK's ErrTxDecode).
 */
export const ExecCode = {
  ok: 0,
  failed: 1,
  txDecode: CheckCode.txDecode,
} as const;

/** Whether a CheckTx answer accepted the tx. */
export const accepted = (code: number): boolean => code === CheckCode.ok;

/** Whether a thrown value is a refusal of the tx (as opposed to a bug). */
export const isTxRejected = (e: unknown): e is DomainError<'txRejected'> => e instanceof DomainError && e.is('txRejected');
