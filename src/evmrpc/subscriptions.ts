/**
 * eth_subscribe / eth_unsubscribe (WebSocket): newHeads, logs, newPendingTransactions, syncing.
 *
 * - Notifications: `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"result":…}}`,
 *   serialized once per event and shared by every subscriber (only the id differs).
 * - `newHeads` (optionally `{"includeTransactions": bool}`): the header fields of
 *   eth_getBlockByNumber for the same block (same hash, real gas fields, base fee, bloom, roots),
 *   plus full `transactions` when includeTransactions is true. One per committed block, in order,
 *   none skipped (EvmFeed).
 * - `logs` (optional criteria: address, topics, fromBlock/toBlock as in eth_newFilter): one
 *   notification per matching log, in block order, `removed: false`. A dev revert (evm_revert,
 *   anvil_reset) shows as geth shows a reorg: the matching logs of the rewound blocks again, with
 *   `removed: true` (geth's order: oldest block first), then the logs of the new blocks.
 * - `newPendingTransactions` (optional `true` for full objects, as geth and Anvil): when a tx ENTERS
 *   the mempool, not when it is committed.
 * - `syncing`: one notification `false` (ferry is never catching up), then nothing.
 * - `transactionReceipts` (optional `{"transactionHashes": [hash, …]}`, at most MAX_RECEIPT_TX_HASHES,
 *   geth eth/filters/api.go TransactionReceipts): one notification per committed block that has
 *   matching txs — an array of their receipts as eth_getTransactionReceipt writes them, in block order;
 *   no hashes (or an empty list) matches every tx.
 *
 * The subscribe reply always reaches the client before the first notification: a new subscription
 * holds its notifications until the transport has queued the reply (CallContext.afterReply), then
 * flushes them in order. At most HELD_NOTIFICATIONS_MAX are held (a reply stuck behind a slow call
 * of the same batch); beyond that the subscription is cancelled and logged.
 *
 * Subscriptions belong to their connection and die with it. A connection holds at most
 * `maxPerConnection`. Over HTTP both methods answer geth's -32601 `notifications not supported`.
 */
import { DomainError, invalidArgument, invalidRequest, limitExceeded } from '../lib/errors.js';
import { argumentError, jsonKind, typeMismatch } from '../lib/hex.js';
import type { Logger } from '../lib/log.js';
import { hash, optional, string } from '../jsonrpc/codecs.js';
import { method, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import { logFilter } from './codecs.js';
import { liveCriteria, matchesLog, newId, type EvmFeed, type LiveCriteria, type NewBlock, type PendingTx, type Rewind } from './feed.js';
import { hexData, type RpcReceipt } from './format.js';

export const SUBSCRIPTION_NAMES = ['newHeads', 'logs', 'newPendingTransactions', 'syncing', 'transactionReceipts'] as const;
export type SubscriptionName = (typeof SUBSCRIPTION_NAMES)[number];

/** Notifications one subscription holds while its subscribe reply is not yet queued. */
export const HELD_NOTIFICATIONS_MAX = 4_096;

export const NOTIFICATIONS_UNSUPPORTED = 'notifications not supported';

/** geth's maxTxHashes: the hashes one transactionReceipts subscription may name */
export const MAX_RECEIPT_TX_HASHES = 200;

export interface SubscriptionOptions {
  /** max live subscriptions of one connection */
  maxPerConnection: number;
}

interface Connection {
  readonly id: string;
  readonly send: (json: string) => boolean;
  readonly subs: Map<string, Subscription>;
}

interface Subscription {
  readonly id: string;
  readonly name: SubscriptionName;
  readonly conn: Connection;
  /** newHeads: includeTransactions; newPendingTransactions: full objects */
  readonly fullTx: boolean;
  readonly crit: LiveCriteria | undefined;
  /** transactionReceipts: the tx hashes it follows (hex keys); undefined = every tx */
  readonly txHashes: Set<string> | undefined;
  /** the notification text up to the result */
  readonly prefix: string;
  /** notifications waiting for the subscribe reply; undefined once active */
  held: string[] | undefined;
}

export interface SubscriptionService {
  /** eth_subscribe and eth_unsubscribe */
  readonly table: MethodTable;
  /** live subscriptions, all connections */
  count(): number;
  close(): void;
}

const NOTIFICATION_SUFFIX = '}}';
const SYNCING_FALSE = 'false';

/** -32601 like geth's notificationsUnsupportedError (HTTP has no way to push). */
function notificationsUnsupported(method: string): DomainError<'methodNotFound'> {
  return new DomainError('methodNotFound', NOTIFICATIONS_UNSUPPORTED, { method });
}

/** The second eth_subscribe param, undecoded: its meaning depends on the first. */
const rawArgument: ParamCodec<unknown> = optional({ name: 'subscription arguments', decode: (v) => v });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** newHeads options: absent, `{}` or `{"includeTransactions": bool}` (unknown fields ignored). */
function headsArgs(v: unknown): boolean {
  if (v === undefined) return false;
  if (!isObject(v)) throw argumentError(1, `want an object such as {"includeTransactions":true}, got ${jsonKind(v)}`);
  const include = v.includeTransactions;
  if (include === undefined || include === null) return false;
  if (typeof include !== 'boolean') throw argumentError(1, `includeTransactions: want a boolean, got ${jsonKind(include)}`);
  return include;
}

function logsArgs(v: unknown): LiveCriteria {
  const f = logFilter.decode(v === undefined ? {} : v, 1);
  if (f.blockHash !== undefined) throw argumentError(1, 'blockHash is not supported by a logs subscription (it only sees new blocks)');
  return liveCriteria(f);
}

/** transactionReceipts criteria: absent, `{}` or `{"transactionHashes": [hash, …]}` (geth's TransactionReceiptsQuery). */
function receiptsArgs(v: unknown): Set<string> | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) throw typeMismatch(1, jsonKind(v), 'filters.TransactionReceiptsQuery');
  const hashes = v.transactionHashes;
  if (hashes === undefined || hashes === null) return undefined;
  if (!Array.isArray(hashes)) throw typeMismatch(1, jsonKind(hashes), '[]common.Hash');
  if (hashes.length > MAX_RECEIPT_TX_HASHES) {
    throw invalidRequest('exceed max number of transaction hashes allowed per transactionReceipts subscription');
  }
  if (hashes.length === 0) return undefined;
  return new Set(hashes.map((h) => hexData(hash.decode(h, 1))));
}

function pendingArgs(v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw typeMismatch(1, jsonKind(v), '*bool');
  return v;
}

export function createSubscriptionMethods(feed: EvmFeed, opts: SubscriptionOptions, log: Logger): SubscriptionService {
  const connections = new Map<string, Connection>();
  const byName: Record<SubscriptionName, Set<Subscription>> = {
    newHeads: new Set(),
    logs: new Set(),
    newPendingTransactions: new Set(),
    syncing: new Set(),
    transactionReceipts: new Set(),
  };

  function remove(s: Subscription): boolean {
    byName[s.name].delete(s);
    return s.conn.subs.delete(s.id);
  }

  function deliver(s: Subscription, result: string): void {
    const text = s.prefix + result + NOTIFICATION_SUFFIX;
    if (s.held === undefined) {
      s.conn.send(text);
      return;
    }
    if (s.held.length >= HELD_NOTIFICATIONS_MAX) {
      log.warn({ id: s.id, connection: s.conn.id }, 'subscription cancelled: too many notifications before its reply was sent');
      remove(s);
      s.held = [];
      return;
    }
    s.held.push(text);
  }

  function onBlock(b: NewBlock): void {
    for (const s of byName.newHeads) deliver(s, b.headJson(s.fullTx));
    onBlockReceipts(b);
    const subs = byName.logs;
    if (subs.size === 0) return;
    for (let i = 0; i < b.logs.length; i++) {
      const l = b.logs[i]!;
      for (const s of subs) if (matchesLog(s.crit!, l)) deliver(s, b.logJson(i));
    }
  }

  /** one array per subscriber of the block's matching receipts (serialized once for those following every tx) */
  function onBlockReceipts(b: NewBlock): void {
    const subs = byName.transactionReceipts;
    if (subs.size === 0 || b.block.transactions.length === 0) return;
    let all: string | undefined;
    for (const s of subs) {
      if (s.txHashes === undefined) {
        all ??= JSON.stringify(b.receipts.map((_, i) => b.rpcReceipt(i)));
        deliver(s, all);
        continue;
      }
      const matched: RpcReceipt[] = [];
      b.receipts.forEach((r, i) => {
        if (s.txHashes!.has(hexData(r.transactionHash))) matched.push(b.rpcReceipt(i));
      });
      if (matched.length > 0) deliver(s, JSON.stringify(matched));
    }
  }

  function onRewind(r: Rewind): void {
    const subs = byName.logs;
    if (subs.size === 0) return;
    for (let i = 0; i < r.logs.length; i++) {
      const l = r.logs[i]!;
      for (const s of subs) if (matchesLog(s.crit!, l)) deliver(s, r.logJson(i));
    }
  }

  function onPending(txs: PendingTx[]): void {
    for (const s of byName.newPendingTransactions) for (const p of txs) deliver(s, p.json(s.fullTx));
  }

  const unsubscribe = [feed.onBlock(onBlock), feed.onPendingTxs(onPending), feed.onRewind(onRewind)];

  function connectionOf(ctx: CallContext): Connection {
    const id = ctx.connectionId!;
    let conn = connections.get(id);
    if (conn === undefined) {
      const created: Connection = { id, send: ctx.sendText!, subs: new Map() };
      connections.set(id, created);
      ctx.onClose!(() => {
        connections.delete(id);
        for (const s of created.subs.values()) byName[s.name].delete(s);
        created.subs.clear();
      });
      conn = created;
    }
    return conn;
  }

  function subscribe([name, arg]: [string, unknown], ctx: CallContext): string {
    if (ctx.sendText === undefined || ctx.onClose === undefined || ctx.connectionId === undefined) throw notificationsUnsupported('eth_subscribe');
    let fullTx = false;
    let crit: LiveCriteria | undefined;
    let txHashes: Set<string> | undefined;
    switch (name) {
      case 'newHeads':
        fullTx = headsArgs(arg);
        break;
      case 'logs':
        crit = logsArgs(arg);
        break;
      case 'newPendingTransactions':
        fullTx = pendingArgs(arg);
        break;
      case 'syncing':
        if (arg !== undefined) throw invalidArgument('too many arguments, want at most 1');
        break;
      case 'transactionReceipts':
        txHashes = receiptsArgs(arg);
        break;
      default:
        throw new DomainError('methodNotFound', `no ${JSON.stringify(name)} subscription in eth namespace`, { method: `eth_subscribe ${name}` });
    }
    const conn = connectionOf(ctx);
    // the connection closed meanwhile: its reply goes nowhere, and nothing is registered
    if (connections.get(conn.id) !== conn) return newId();
    if (conn.subs.size >= opts.maxPerConnection) {
      throw limitExceeded(`too many subscriptions on this connection (limit ${opts.maxPerConnection})`);
    }
    let id = newId();
    while (conn.subs.has(id)) id = newId();
    const prefix = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":`;
    const s: Subscription = { id, name, conn, fullTx, crit, txHashes, prefix, held: [] };
    conn.subs.set(id, s);
    byName[name].add(s);
    const activate = (): void => {
      const held = s.held ?? [];
      s.held = undefined;
      if (!conn.subs.has(id)) return;
      for (const text of held) conn.send(text);
      if (name === 'syncing') deliver(s, SYNCING_FALSE);
    };
    if (ctx.afterReply !== undefined) ctx.afterReply(activate);
    else activate();
    return id;
  }

  function unsubscribeOne([id]: [string], ctx: CallContext): boolean {
    if (ctx.sendText === undefined || ctx.connectionId === undefined) throw notificationsUnsupported('eth_unsubscribe');
    const s = connections.get(ctx.connectionId)?.subs.get(id.toLowerCase());
    return s === undefined ? false : remove(s);
  }

  const table: Record<string, MethodSpec> = {
    eth_subscribe: method([string, rawArgument], subscribe),
    eth_unsubscribe: method([string], unsubscribeOne),
  };

  return {
    table: Object.freeze(table),
    count: () => Object.values(byName).reduce((n, set) => n + set.size, 0),
    close() {
      for (const u of unsubscribe) u();
      for (const set of Object.values(byName)) set.clear();
      connections.clear();
    },
  };
}
