/** Transactions (rpc/core/tx.go): tx, tx_search. */
import { compileQuery } from '../../eventquery/index.js';
import { limitExceeded, notFound } from '../../lib/errors.js';
import type { TxIndex, TxPosition } from '../backend.js';
import { MAX_QUERY_LENGTH, QUERY_TOO_LONG } from '../events.js';
import { hexUpper, resultTxJson } from '../format.js';
import type { ResultTxJson } from '../jsontypes.js';
import { boolParam, bytesParam, intParam, stringParam } from '../params.js';
import { route, type CometRoute } from '../route.js';
import { orderOf, pageOf } from './env.js';

/** coretypes.ResultTxSearch */
export interface TxSearchResult {
  txs: ResultTxJson[];
  total_count: string;
}

export function txRoutes(txs: TxIndex) {
  function txAt(pos: TxPosition, prove: boolean): ResultTxJson {
    const t = txs.txAt(BigInt(pos.height), pos.idx);
    if (!t) throw notFound(`failed to get Tx{${pos.height}/${pos.idx}}`);
    return resultTxJson(t, prove ? txs.txProof(t.height, t.index) : undefined);
  }
  return {
    tx: route(
      [bytesParam('hash'), boolParam('prove')],
      ([hash, prove]): ResultTxJson => {
        const t = txs.tx(hash);
        if (!t) throw notFound(`tx (${hexUpper(hash)}) not found`);
        return resultTxJson(t, prove ? txs.txProof(t.height, t.index) : undefined);
      },
      { cache: 'always' },
    ),
    tx_search: route(
      [stringParam('query'), boolParam('prove'), intParam('page'), intParam('per_page'), stringParam('order_by')],
      ([query, prove, page, per, order]): TxSearchResult => {
        if (query.length > MAX_QUERY_LENGTH) throw limitExceeded(QUERY_TOO_LONG);
        const q = compileQuery(query);
        const results = txs.searchTxs(q.query);
        const dir = orderOf(order, 'asc');
        results.sort((a, b) => dir * (a.height !== b.height ? a.height - b.height : a.idx - b.idx));
        return { txs: pageOf(results, page, per).map((p) => txAt(p, prove)), total_count: String(results.length) };
      },
    ),
  } satisfies Record<string, CometRoute>;
}
