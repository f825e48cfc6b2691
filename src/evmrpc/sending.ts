/**
 * Surface A's sends that wait, and the fill that does not send:
 *
 * - eth_sendRawTransactionSync (EIP-7966; geth's TransactionAPI.SendRawTransactionSync) and
 *   eth_sendTransactionSync (the same wait after eth_sendTransaction's fill and signing, as Anvil
 *   serves it): the tx goes through eth_sendRawTransaction's path (CheckTx), then the answer is its
 *   receipt, as eth_getTransactionReceipt writes it, once a block holds it. The 2nd param is the wait in
 *   milliseconds (a JSON number or a hex quantity; viem sends hex); absent or 0 means
 *   DEFAULT_TX_SYNC_TIMEOUT_MS, more than MAX_TX_SYNC_TIMEOUT_MS is lowered to it (geth's defaults,
 *   eth/ethconfig/config.go). When the wait ends first: code 4, geth's message, `data` the tx hash.
 *   At most MAX_TX_SYNC_WAITERS sends wait at once; more are refused before anything is sent.
 * - eth_fillTransaction (geth's TransactionAPI.FillTransaction): eth_sendTransaction's defaults
 *   (nonce, fees, chain id, type, and the gas estimated on the latest block when absent, as geth's
 *   setDefaults: AccountSigner.fill); answers `{raw, tx}`: the unsigned envelope (v, r, s empty, as geth's
 *   MarshalBinary) and the unsigned transaction as execution-apis' FilledTransaction. `from` may be
 *   absent (the zero address, as geth's args.from()).
 */
import { limitExceeded, notIncluded } from '../lib/errors.js';
import { formatDuration } from '../config/duration.js';
import { argumentError, hexToBytes, jsonKind, parseQuantity } from '../lib/hex.js';
import { data } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import { unsignedTransaction, type TxFields } from '../keystore/index.js';
import type { EvmReceipt, Hash } from '../types/chain.js';
import { sendArgs, type AccountSigner } from './accounts.js';
import type { EvmBackend } from './backend.js';
import type { EvmFeed, NewBlock } from './feed.js';
import { formatAuthorizationList, formatReceipt, hexData, hexKey, hexQuantity, type RpcReceipt } from './format.js';

/** geth's TxSyncDefaultTimeout: the wait when the request names none, ms */
export const DEFAULT_TX_SYNC_TIMEOUT_MS = 20_000;
/** geth's TxSyncMaxTimeout: the longest wait a request may ask for, ms */
export const MAX_TX_SYNC_TIMEOUT_MS = 60_000;
/** synchronous sends waiting for their receipts at once, all clients */
export const MAX_TX_SYNC_WAITERS = 1_024;

/** The part of Surface A's modules (evmrpc/api.ts) these methods use. */
export interface SendingModules {
  reader: Pick<EvmBackend, 'sendRawTransaction' | 'receipt'>;
  signer: Pick<AccountSigner, 'fill' | 'sendTransaction'>;
  feed: Pick<EvmFeed, 'onBlock'>;
}

/** The wait of a synchronous send, ms: a JSON number or a hex quantity; absent or 0 → the default. */
const syncTimeout: ParamCodec<number> = {
  name: 'timeout',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return DEFAULT_TX_SYNC_TIMEOUT_MS;
    let ms: bigint;
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0) throw argumentError(i, `timeout must be a non-negative integer of milliseconds, got ${v}`);
      ms = BigInt(v);
    } else if (typeof v === 'string') {
      ms = parseQuantity(v, i);
    } else {
      throw argumentError(i, `timeout: want milliseconds as a number or a hex quantity, got ${jsonKind(v)}`);
    }
    if (ms === 0n) return DEFAULT_TX_SYNC_TIMEOUT_MS;
    return ms > BigInt(MAX_TX_SYNC_TIMEOUT_MS) ? MAX_TX_SYNC_TIMEOUT_MS : Number(ms);
  },
};

/** Sends waiting for their txs to be in a block: one feed listener for all of them, bounded. */
class ReceiptWaiters {
  private readonly waiting = new Map<string, Set<(r: EvmReceipt) => void>>();
  private count = 0;

  constructor(
    private readonly reader: SendingModules['reader'],
    feed: SendingModules['feed'],
  ) {
    feed.onBlock((b) => this.onBlock(b));
  }

  /** refuses a send before it is made when too many already wait */
  checkRoom(): void {
    if (this.count >= MAX_TX_SYNC_WAITERS) throw limitExceeded(`too many transactions waiting for their receipts (max ${MAX_TX_SYNC_WAITERS})`);
  }

  /** the receipt of `hash` once a block holds it; notIncluded when `ms` pass first */
  wait(hash: Hash, ms: number): Promise<EvmReceipt> {
    this.checkRoom();
    const key = hexKey(hash);
    return new Promise<EvmReceipt>((resolve, reject) => {
      let set = this.waiting.get(key);
      if (set === undefined) {
        set = new Set();
        this.waiting.set(key, set);
      }
      const waiters = set;
      const done = (r: EvmReceipt): void => {
        clearTimeout(timer);
        this.drop(key, waiters, done);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.drop(key, waiters, done);
        reject(notIncluded(`The transaction was added to the transaction pool but wasn't processed in ${formatDuration(ms)}`, hash));
      }, ms);
      waiters.add(done);
      this.count++;
      // committed before the wait began (registered first, so nothing is missed in between)
      const now = this.reader.receipt(hash);
      if (now !== undefined) done(now);
    });
  }

  private drop(key: string, set: Set<(r: EvmReceipt) => void>, fn: (r: EvmReceipt) => void): void {
    if (!set.delete(fn)) return;
    this.count--;
    if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
  }

  private onBlock(b: NewBlock): void {
    if (this.count === 0) return;
    for (const receipt of b.receipts) {
      const set = this.waiting.get(hexKey(receipt.transactionHash));
      if (set !== undefined) for (const fn of [...set]) fn(receipt);
    }
  }
}

/**
 * The unsigned transaction as execution-apis' FilledTransaction (Transaction*Unsigned) writes it, in
 * geth's field order (core/types/transaction_marshalling.go): v, r, s zero; a type-2 tx's `gasPrice` is
 * its fee cap (the schema's "not yet included" rule, as Anvil answers); fields a type lacks are left out.
 */
function filledTxJson(f: TxFields, hash: Uint8Array): Record<string, unknown> {
  const q = hexQuantity;
  const out: Record<string, unknown> = { type: q(f.type), chainId: q(f.chainId), nonce: q(f.nonce) };
  out.to = f.to === undefined ? null : hexData(f.to);
  out.gas = q(f.gasLimit);
  if (f.type === 2 || f.type === 4) {
    out.gasPrice = q(f.maxFeePerGas ?? 0n);
    out.maxPriorityFeePerGas = q(f.maxPriorityFeePerGas ?? 0n);
    out.maxFeePerGas = q(f.maxFeePerGas ?? 0n);
  } else {
    out.gasPrice = q(f.gasPrice ?? 0n);
  }
  out.value = q(f.value);
  out.input = hexData(f.data);
  if (f.type !== 0) out.accessList = (f.accessList ?? []).map((a) => ({ address: hexData(a.address), storageKeys: a.storageKeys.map(hexData) }));
  if (f.type === 4) out.authorizationList = formatAuthorizationList(f.authorizationList ?? []);
  out.v = q(0);
  out.r = q(0);
  out.s = q(0);
  if (f.type !== 0) out.yParity = q(0);
  out.hash = hexData(hash);
  return out;
}

export function createSendingMethods({ reader, signer, feed }: SendingModules): MethodTable {
  const waiters = new ReceiptWaiters(reader, feed);

  const receiptOf = async (hash: Hash, ms: number): Promise<RpcReceipt> => formatReceipt(await waiters.wait(hash, ms));

  const table: Record<string, MethodSpec> = {
    eth_sendRawTransactionSync: method([data, syncTimeout], async ([raw, ms]) => {
      waiters.checkRoom();
      return receiptOf(await reader.sendRawTransaction(raw), ms);
    }),
    eth_sendTransactionSync: method([sendArgs, syncTimeout], async ([args, ms], ctx) => {
      waiters.checkRoom();
      const hash = await signer.sendTransaction(args, undefined, ctx);
      return receiptOf(hexToBytes(hash), ms);
    }),
    eth_fillTransaction: method([sendArgs], async ([args], ctx) => {
      // a missing gas is estimated by the fill, as for eth_sendTransaction
      const fields = await signer.fill({ ...args, from: args.from ?? new Uint8Array(20) }, ctx);
      const { raw, hash } = unsignedTransaction(fields);
      return { raw: hexData(raw), tx: filledTxJson(fields, hash) };
    }),
  };
  return Object.freeze(table);
}
