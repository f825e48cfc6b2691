/**
 * Polling filters (HTTP and WebSocket alike): eth_newFilter, eth_newBlockFilter,
 * eth_newPendingTransactionFilter, eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter.
 *
 * Filters are process-wide (not tied to a connection), as in geth and Evmos. Each one buffers what
 * arrived since its last poll, fed by EvmFeed: block hashes as blocks commit, tx hashes (or full
 * pending tx objects) as txs ENTER the mempool, matching logs as blocks commit. Entries are shared
 * wire objects formatted once per block, so a hundred filters on the same logs cost a hundred
 * pointers each, not a hundred copies.
 *
 * Limits:
 * - `filter-cap` installed filters at most (0: polling filters are disabled); one more is -32000
 *   `error creating filter: max limit reached` (`…block filter…`, `…pending transaction filter…`)
 *   — always a JSON-RPC error, never Evmos's success whose result is the error text.
 * - `filter-timeout` without eth_getFilterChanges or eth_getFilterLogs uninstalls a filter (0: never).
 *   An expired filter is gone at once for every call; a sweep frees its memory within
 *   min(filter-timeout, 30 s).
 * - A filter holds at most FILTER_BUFFER_MAX entries between two polls. A client that never polls
 *   fills it, and the filter is then uninstalled (its memory freed at once): the next poll answers
 *   `filter <id> not found`, exactly as after an expiry, so the client knows to start over rather
 *   than silently missing entries.
 *
 * eth_getFilterLogs on a block or pending-transaction filter is -32000
 * `filter <id> doesn't have a LogsSubscription type: got <n>` (docs/websocket-and-filters.md "Errors"), where n is geth
 * 1.10's filters.Type number (FILTER_TYPE): 4 for a pending-transaction filter, 5 for a block filter.
 */
import { jsonKind, typeMismatch } from '../lib/hex.js';
import { invalidRequest, limitExceeded, notFound } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import { bool, optional } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { EvmBackend } from './backend.js';
import { logFilter, type LogFilter } from './codecs.js';
import { liveCriteria, matchesLog, newId, type EvmFeed, type LiveCriteria, type NewBlock, type PendingTx, type Rewind } from './feed.js';
import type { RpcLog, RpcTransaction } from './format.js';
import { findLogsJson } from './methods.js';

/** geth 1.10's eth/filters Type enum, the number eth_getFilterLogs' error names */
export const FILTER_TYPE = {
  logs: 1,
  pendingTransactions: 4,
  blocks: 5,
} as const;

/** Entries one filter holds between two polls; one more uninstalls it (see above). */
export const FILTER_BUFFER_MAX = 10_000;
/** Expired filters are swept at least this often (cosmos/evm filter-cleanup-interval default). */
export const FILTER_SWEEP_MAX_MS = 30_000;
const FILTER_SWEEP_MIN_MS = 100;

export interface FilterOptions {
  /** max installed filters, all clients together (0 = none allowed) */
  filterCap: number;
  /** ms without a poll after which a filter is uninstalled (0 = never) */
  timeoutMs: number;
  /** eth_getFilterLogs: same caps as eth_getLogs (0 = no cap) */
  blockRangeCap: number;
  logsCap: number;
  /** clock (tests) */
  now?: () => number;
}

interface FilterBase {
  readonly id: string;
  lastPoll: number;
}

interface LogsFilter extends FilterBase {
  readonly type: typeof FILTER_TYPE.logs;
  readonly filter: LogFilter;
  readonly crit: LiveCriteria;
  items: RpcLog[];
}

interface BlocksFilter extends FilterBase {
  readonly type: typeof FILTER_TYPE.blocks;
  items: string[];
}

interface PendingFilter extends FilterBase {
  readonly type: typeof FILTER_TYPE.pendingTransactions;
  readonly fullTx: boolean;
  items: (string | RpcTransaction)[];
}

type Filter = LogsFilter | BlocksFilter | PendingFilter;

export interface FilterService {
  /** the six filter methods */
  readonly table: MethodTable;
  /** filters installed now */
  size(): number;
  /** stops the sweep and the feed listeners */
  close(): void;
}

/** geth's rpc.ID: any string; matched case-insensitively (ids are lowercase hex). */
const filterId: ParamCodec<string> = {
  name: 'filter id',
  decode(v, i) {
    if (typeof v !== 'string') throw typeMismatch(i, jsonKind(v), 'rpc.ID');
    return v;
  },
};

const CAP_MESSAGES = {
  [FILTER_TYPE.logs]: 'error creating filter: max limit reached',
  [FILTER_TYPE.blocks]: 'error creating block filter: max limit reached',
  [FILTER_TYPE.pendingTransactions]: 'error creating pending transaction filter: max limit reached',
} as const;

export function createFilterMethods(backend: EvmBackend, feed: EvmFeed, opts: FilterOptions, log: Logger): FilterService {
  const filters = new Map<string, Filter>();
  const now = opts.now ?? Date.now;

  const expired = (f: Filter, t: number): boolean => opts.timeoutMs > 0 && t - f.lastPoll > opts.timeoutMs;

  function sweep(): void {
    const t = now();
    for (const [id, f] of filters) if (expired(f, t)) filters.delete(id);
  }

  /** The live filter with this id, or the -32000 `filter <id> not found` error. */
  function lookup(id: string): Filter {
    const f = filters.get(id.toLowerCase());
    if (f === undefined || expired(f, now())) {
      if (f !== undefined) filters.delete(f.id);
      throw notFound(`filter ${id} not found`);
    }
    return f;
  }

  function install(make: (id: string, t: number) => Filter, type: Filter['type']): string {
    if (filters.size >= opts.filterCap) sweep();
    if (filters.size >= opts.filterCap) throw limitExceeded(CAP_MESSAGES[type]);
    let id = newId();
    while (filters.has(id)) id = newId();
    filters.set(id, make(id, now()));
    return id;
  }

  /** Adds an entry; a full buffer uninstalls the filter (the client stopped polling). */
  function push<T>(f: Filter & { items: T[] }, item: T): void {
    if (f.items.length >= FILTER_BUFFER_MAX) {
      if (filters.delete(f.id)) log.debug({ id: f.id, entries: f.items.length }, 'filter buffer full: filter uninstalled');
      return;
    }
    f.items.push(item);
  }

  function onBlock(b: NewBlock): void {
    const t = now();
    for (const f of filters.values()) {
      if (expired(f, t)) {
        filters.delete(f.id);
        continue;
      }
      if (f.type === FILTER_TYPE.blocks) {
        push(f, b.hash);
      } else if (f.type === FILTER_TYPE.logs) {
        for (let i = 0; i < b.logs.length && filters.has(f.id); i++) {
          if (matchesLog(f.crit, b.logs[i]!)) push(f, b.rpcLog(i));
        }
      }
    }
  }

  /**
   * A dev revert, as geth's filter system handles removed logs: every log filter gets the matching
   * logs of the rewound blocks with `removed: true`. Block filters keep what they hold (geth's only
   * see new heads; the blocks after the revert come as new hashes at the reused heights).
   */
  function onRewind(r: Rewind): void {
    for (const f of filters.values()) {
      if (f.type !== FILTER_TYPE.logs) continue;
      for (let i = 0; i < r.logs.length && filters.has(f.id); i++) {
        if (matchesLog(f.crit, r.logs[i]!)) push(f, r.rpcLog(i));
      }
    }
  }

  function onPending(txs: PendingTx[]): void {
    for (const f of filters.values()) {
      if (f.type !== FILTER_TYPE.pendingTransactions) continue;
      for (const p of txs) push(f, f.fullTx ? p.rpc() : p.hash);
    }
  }

  const unsubscribe = [feed.onBlock(onBlock), feed.onPendingTxs(onPending), feed.onRewind(onRewind)];
  const sweepMs = Math.max(FILTER_SWEEP_MIN_MS, Math.min(opts.timeoutMs, FILTER_SWEEP_MAX_MS));
  const timer = opts.timeoutMs > 0 ? setInterval(sweep, sweepMs) : undefined;
  timer?.unref();

  const table: Record<string, MethodSpec> = {
    eth_newFilter: method([logFilter], ([f]) => {
      const crit = liveCriteria(f);
      return install((id, t) => ({ id, type: FILTER_TYPE.logs, lastPoll: t, filter: f, crit, items: [] }), FILTER_TYPE.logs);
    }),
    eth_newBlockFilter: method([], () =>
      install((id, t) => ({ id, type: FILTER_TYPE.blocks, lastPoll: t, items: [] }), FILTER_TYPE.blocks),
    ),
    eth_newPendingTransactionFilter: method([optional(bool)], ([fullTx]) =>
      install(
        (id, t) => ({ id, type: FILTER_TYPE.pendingTransactions, lastPoll: t, fullTx: fullTx === true, items: [] }),
        FILTER_TYPE.pendingTransactions,
      ),
    ),
    eth_getFilterChanges: method([filterId], ([id]) => {
      const f = lookup(id);
      f.lastPoll = now();
      const out = f.items;
      f.items = [];
      return out;
    }),
    eth_getFilterLogs: method([filterId], ([id]) => {
      const f = lookup(id);
      if (f.type !== FILTER_TYPE.logs) throw invalidRequest(`filter ${id} doesn't have a LogsSubscription type: got ${f.type}`);
      f.lastPoll = now();
      return findLogsJson(backend, opts, f.filter);
    }),
    eth_uninstallFilter: method([filterId], ([id]) => {
      const f = filters.get(id.toLowerCase());
      if (f === undefined) return false;
      filters.delete(f.id);
      return !expired(f, now());
    }),
  };

  return {
    table: Object.freeze(table),
    size: () => filters.size,
    close() {
      for (const u of unsubscribe) u();
      if (timer !== undefined) clearInterval(timer);
      filters.clear();
    },
  };
}
