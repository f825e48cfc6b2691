/**
 * Signed-transaction decoding: raw envelope -> ethereumjs tx + ferry's EvmTx (sender recovered).
 */
import type { Common } from '@ethereumjs/common';
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { txRejected, type DomainError } from '../lib/errors.js';
import type { EvmTx } from '../types/chain.js';

export const SUPPORTED_TX_TYPES = new Set([0, 1, 2]);

export interface DecodedTx {
  tx: TypedTransaction;
  evm: EvmTx;
}

/** bytes that are not a valid signed transaction */
function rejected(message: string): DomainError<'txRejected'> {
  return txRejected('decode', message);
}

export function decodeTx(raw: Uint8Array, common: Common): DecodedTx {
  const first = raw[0];
  // geth: a first byte up to 0x7f is a typed envelope (type byte + payload); 0xc0+ is a legacy RLP list
  if (first === undefined || (first <= 0x7f && raw.length <= 1)) throw rejected('typed transaction too short');
  if (first <= 0x7f && !SUPPORTED_TX_TYPES.has(first)) throw rejected('transaction type not supported');
  let tx: TypedTransaction;
  try {
    tx = createTxFromRLP(raw, { common }) as TypedTransaction;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/chain ID|EIP155|chainId/i.test(msg)) throw rejected('invalid chain id for signer');
    if (/signature|Invalid Signature|s-values/i.test(msg)) throw rejected('invalid transaction v, r, s values');
    throw rejected(`rlp: ${msg.split('\n')[0]!.replace(/ \(tx type=.*$/, '')}`);
  }
  if (!tx.isSigned()) throw rejected('invalid transaction v, r, s values');
  let from: Uint8Array;
  try {
    from = tx.getSenderAddress().bytes;
  } catch {
    throw rejected('invalid sender');
  }
  return { tx, evm: toEvmTx(tx, from, raw) };
}

export function toEvmTx(tx: TypedTransaction, from: Uint8Array, raw: Uint8Array): EvmTx {
  const t = tx as TypedTransaction & {
    gasPrice?: bigint;
    maxFeePerGas?: bigint;
    maxPriorityFeePerGas?: bigint;
    accessList?: [Uint8Array, Uint8Array[]][];
    chainId?: bigint;
  };
  const type = tx.type as 0 | 1 | 2;
  const legacyProtected = type === 0 && tx.supports(155 as never) && (tx.v ?? 0n) >= 35n;
  return {
    hash: tx.hash(),
    type,
    chainId: type === 0 ? (legacyProtected ? tx.common.chainId() : undefined) : t.chainId,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    gasPrice: type === 2 ? undefined : t.gasPrice,
    maxFeePerGas: type === 2 ? t.maxFeePerGas : undefined,
    maxPriorityFeePerGas: type === 2 ? t.maxPriorityFeePerGas : undefined,
    to: tx.to?.bytes,
    value: tx.value,
    input: tx.data,
    accessList: (t.accessList ?? []).map(([address, keys]) => ({ address, storageKeys: keys })),
    v: tx.v ?? 0n,
    r: tx.r ?? 0n,
    s: tx.s ?? 0n,
    from,
    raw,
  };
}

/** Fee the sender pays per gas at a base fee (legacy/2930: gasPrice). */
export function effectiveGasPrice(tx: EvmTx, baseFee: bigint): bigint {
  if (tx.type !== 2) return tx.gasPrice!;
  const tip = tx.maxPriorityFeePerGas!;
  const cap = tx.maxFeePerGas!;
  return cap < baseFee + tip ? cap : baseFee + tip;
}

/** Miner tip per gas at a base fee (may be negative if fee cap < base fee). */
export function effectiveTip(tx: EvmTx, baseFee: bigint): bigint {
  return effectiveGasPrice(tx, baseFee) - baseFee;
}

export function feeCap(tx: EvmTx): bigint {
  return tx.type === 2 ? tx.maxFeePerGas! : tx.gasPrice!;
}

export function tipCap(tx: EvmTx): bigint {
  return tx.type === 2 ? tx.maxPriorityFeePerGas! : tx.gasPrice!;
}
