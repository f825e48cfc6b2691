/**
 * The `txpool` namespace over the real mempool, with geth's shapes:
 *
 * - txpool_status → `{pending, queued}` counts as quantities.
 * - txpool_content → `{pending: {<sender>: {<nonce>: tx}}, queued: {…}}`; senders in EIP-55 form,
 *   nonces as decimal strings, transactions as eth_getTransactionByHash shows pending ones.
 * - txpool_contentFrom(address) → `{pending: {<nonce>: tx}, queued: {…}}` of one sender.
 * - txpool_inspect → like content, each tx as geth's text summary
 *   `<to>: <value> wei + <gas> gas × <gas price> wei` (`contract creation: …` without `to`;
 *   the gas price of an EIP-1559 tx is its fee cap).
 * Empty objects when the pool is empty.
 *
 * pending = a sender's transactions whose nonces continue the account's nonce without a gap
 * (executable); queued = those after a gap. A queued tx becomes pending when the gap fills; a tx
 * leaves the pool when a block includes it (or makes its nonce stale), when a same-nonce
 * replacement with the price bump arrives, or when the full pool evicts it as the cheapest.
 */
import { address } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable } from '../jsonrpc/types.js';
import type { EvmTx } from '../types/chain.js';
import { checksumAddress } from '../lib/address.js';
import { formatTransaction, hexQuantity, hexKey, type RpcTransaction } from './format.js';

/** The pool split as geth splits it; node/ wires it to the pool mirror and the state nonces. */
export interface TxPoolBackend {
  poolContent(): Promise<{ pending: EvmTx[]; queued: EvmTx[] }>;
}

type BySender<T> = Record<string, Record<string, T>>;

function group<T>(txs: readonly EvmTx[], render: (tx: EvmTx) => T): BySender<T> {
  const out: BySender<T> = {};
  for (const tx of txs) {
    const sender = checksumAddress(tx.from);
    (out[sender] ??= {})[tx.nonce.toString()] = render(tx);
  }
  return out;
}

function byNonce<T>(txs: readonly EvmTx[], render: (tx: EvmTx) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const tx of txs) out[tx.nonce.toString()] = render(tx);
  return out;
}

const pendingTx = (tx: EvmTx): RpcTransaction => formatTransaction(tx, undefined);

/** geth's txpool_inspect line. */
function inspectLine(tx: EvmTx): string {
  const price = tx.maxFeePerGas ?? tx.gasPrice!;
  const what = tx.to === undefined ? 'contract creation' : checksumAddress(tx.to);
  return `${what}: ${tx.value} wei + ${tx.gasLimit} gas × ${price} wei`;
}

export function createTxPoolMethods(backend: TxPoolBackend): MethodTable {
  const table: Record<string, MethodSpec> = {
    txpool_status: method([], async () => {
      const c = await backend.poolContent();
      return { pending: hexQuantity(c.pending.length), queued: hexQuantity(c.queued.length) };
    }),
    txpool_content: method([], async () => {
      const c = await backend.poolContent();
      return { pending: group(c.pending, pendingTx), queued: group(c.queued, pendingTx) };
    }),
    txpool_contentFrom: method([address], async ([from]) => {
      const c = await backend.poolContent();
      const mine = (t: EvmTx) => hexKey(t.from) === hexKey(from);
      return { pending: byNonce(c.pending.filter(mine), pendingTx), queued: byNonce(c.queued.filter(mine), pendingTx) };
    }),
    txpool_inspect: method([], async () => {
      const c = await backend.poolContent();
      return { pending: group(c.pending, inspectLine), queued: group(c.queued, inspectLine) };
    }),
  };
  return Object.freeze(table);
}
