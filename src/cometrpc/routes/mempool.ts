/**
 * The mempool (rpc/core/mempool.go): broadcast_tx_async, broadcast_tx_sync, broadcast_tx_commit,
 * check_tx, unconfirmed_txs, num_unconfirmed_txs, and the unsafe unsafe_flush_mempool.
 */
import { domainError, unsupported } from '../../lib/errors.js';
import type { ExecTxResult, MempoolView, TxChecker, TxIndex } from '../backend.js';
import { TX_HEIGHT_KEY, txHashOf, type BusEvent, type EventBus, type Subscription } from '../events.js';
import { EMPTY_EXEC_TX_RESULT, base64, checkTxJson, execTxResultJson, hexUpper } from '../format.js';
import type { ExecTxResultJson } from '../jsontypes.js';
import { bytesParam, intParam } from '../params.js';
import { route, type CometContext, type CometRoute } from '../route.js';
import { perPage } from './env.js';

/** coretypes.ResultUnconfirmedTxs (num_unconfirmed_txs: `txs` null) */
export interface UnconfirmedTxsResult {
  n_txs: string;
  total: string;
  total_bytes: string;
  txs: string[] | null;
}

/** coretypes.ResultBroadcastTx */
export interface BroadcastTxResult {
  code: number;
  data: string;
  log: string;
  codespace: string;
  hash: string;
}

/** coretypes.ResultBroadcastTxCommit */
export interface BroadcastTxCommitResult {
  check_tx: ExecTxResultJson;
  tx_result: ExecTxResultJson;
  hash: string;
  height: string;
}

export interface MempoolRouteOptions {
  timeoutBroadcastTxCommitMs: number;
}

export function mempoolRoutes(checker: TxChecker, pool: MempoolView, txs: TxIndex, bus: EventBus, opts: MempoolRouteOptions) {
  /** waits for the Tx event of `hash` (broadcast_tx_commit), as an in-process subscription */
  function awaitTx(ctx: CometContext, hash: Uint8Array): { done: Promise<BusEvent>; cancel(): void } {
    const text = `tm.event='Tx' AND tx.hash='${hexUpper(hash)}'`;
    const { query, key, eventType } = bus.prepare(ctx.remoteAddr, text);
    let resolve!: (e: BusEvent) => void;
    let reject!: (e: Error) => void;
    const done = new Promise<BusEvent>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const sub: Subscription = {
      clientId: ctx.remoteAddr,
      text,
      key,
      query,
      eventType,
      deliver: (ev) => resolve(ev),
      cancelled: (reason) => reject(domainError('cancelled', `txSub was canceled (reason: ${reason})`)),
    };
    bus.add(sub);
    return {
      done,
      cancel: () => {
        try {
          bus.unsubscribe(ctx.remoteAddr, text);
        } catch {
          // already gone (cancelled)
        }
      },
    };
  }

  const unconfirmed = (txs: string[] | null, n: number): UnconfirmedTxsResult => ({
    n_txs: String(n),
    total: String(pool.size),
    total_bytes: String(pool.totalBytes),
    txs,
  });

  return {
    unconfirmed_txs: route([intParam('limit')], ([limit]): UnconfirmedTxsResult => {
      const list = pool.txs(perPage(limit));
      return unconfirmed(list.map(base64), list.length);
    }),
    num_unconfirmed_txs: route([], (): UnconfirmedTxsResult => unconfirmed(null, pool.size)),
    broadcast_tx_async: route([bytesParam('tx')], ([tx]): BroadcastTxResult => {
      void checker.checkTx(tx, true).catch(() => undefined);
      return { code: 0, data: '', log: '', codespace: '', hash: hexUpper(txHashOf(tx)) };
    }),
    broadcast_tx_sync: route([bytesParam('tx')], async ([tx]): Promise<BroadcastTxResult> => {
      const r = await checker.checkTx(tx, true);
      return { code: r.code, data: hexUpper(r.data), log: r.log, codespace: r.codespace, hash: hexUpper(txHashOf(tx)) };
    }),
    broadcast_tx_commit: route([bytesParam('tx')], async ([tx], ctx): Promise<BroadcastTxCommitResult> => {
      const hash = txHashOf(tx);
      const wait = awaitTx(ctx, hash);
      try {
        const check = await checker.checkTx(tx, true);
        if (check.code !== 0) {
          return { check_tx: checkTxJson(check), tx_result: execTxResultJson(EMPTY_EXEC_TX_RESULT), hash: hexUpper(hash), height: '0' };
        }
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(domainError('timeout', 'timed out waiting for tx to be included in a block')), opts.timeoutBroadcastTxCommitMs);
        });
        try {
          const ev = await Promise.race([wait.done, timeout]);
          const height = ev.eventMap.get(TX_HEIGHT_KEY)?.[0] ?? '0';
          const result: ExecTxResult = txs.tx(hash)?.result ?? EMPTY_EXEC_TX_RESULT;
          return { check_tx: checkTxJson(check), tx_result: execTxResultJson(result), hash: hexUpper(hash), height };
        } finally {
          clearTimeout(timer);
        }
      } finally {
        wait.cancel();
      }
    }),
    check_tx: route([bytesParam('tx')], async ([tx]): Promise<ExecTxResultJson> => checkTxJson(await checker.checkTx(tx, false))),
  } satisfies Record<string, CometRoute>;
}

/** rpc/core/routes.go AddUnsafeRoutes, the mempool part. */
export function flushRoutes() {
  return {
    unsafe_flush_mempool: route([], (): never => {
      throw unsupported('unsafe_flush_mempool is not supported: the mempool belongs to the application, which keeps its txs until they are included or replaced');
    }),
  } satisfies Record<string, CometRoute>;
}
