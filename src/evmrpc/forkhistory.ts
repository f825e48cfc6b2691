/**
 * A fork's history (docs/fork-mode.md "Numbering and history"): a request about a block at or below the
 * fork block — by number, by the hash of such a block, or by the hash of a transaction in one — is the
 * origin's to answer, as Anvil forwards it (foundry crates/anvil/src/eth/backend/mem/mod.rs, the `fork`
 * branches of block_by_number, transaction_receipt, logs). The params are checked by the method's own
 * codecs first, then sent on as the client gave them, and the origin's answer is passed back unchanged
 * (never re-hashed). eth_getLogs over a range spanning the fork block merges the origin's logs with the
 * fork's own. The fork's genesis block stands in for the fork block locally (chain/genesisblock.ts) and is
 * never served: the origin's block is.
 */
import { DomainError, limitExceeded, unavailable } from '../lib/errors.js';
import { JsonText, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';

/** Log filters over the fork's history (eth_newFilter from at or below the fork block) the RPC thread tracks. */
export const MAX_FORK_HISTORY_FILTERS = 1024;

/** The origin's side (fork/history.ts implements it; node/ethrpc.ts wires it). */
export interface ForkHistoryPort {
  /** the fork block: at or below it, history is the origin's */
  readonly forkBlock: bigint;
  /** the origin's URL without credentials or query, for messages */
  readonly label: string;
  /** the fork as recorded at its start (data/fork.json): the origin's URL, the fork block's hash as the origin reports it, the fork's chain id */
  readonly record: { readonly url: string; readonly blockNumber: bigint; readonly blockHash: string; readonly chainId: bigint };
  /** the first retry's wait, ms (anvil_nodeInfo's forkRetryBackoff) */
  readonly retryBackoffMs: number;
  ask(method: string, params: readonly unknown[]): Promise<unknown>;
  /** the origin's latest block number, asked now (never cached) */
  latest(): Promise<bigint>;
}

/** ForkHistory's settings besides the port. */
export interface ForkHistoryOptions {
  /** `filter-timeout`, ms (0: never): a filter not polled for longer is gone (evmrpc/filters.ts) */
  filterTimeoutMs: number;
  now?: () => number;
}

/** methods whose first param is a block number, tag or (EIP-1898) block reference */
const BY_BLOCK = [
  'eth_getBlockByNumber',
  'eth_getHeaderByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getRawTransactionByBlockNumberAndIndex',
  'eth_getUncleCountByBlockNumber',
  'eth_getUncleByBlockNumberAndIndex',
  'debug_traceBlockByNumber',
  'debug_getRawBlock',
  'debug_getRawHeader',
  'debug_getRawReceipts',
  'trace_block',
  'trace_replayBlockTransactions',
];
/** methods whose first param is a block hash */
const BY_BLOCK_HASH = [
  'eth_getBlockByHash',
  'eth_getHeaderByHash',
  'eth_getBlockTransactionCountByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getRawTransactionByBlockHashAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleByBlockHashAndIndex',
  'debug_traceBlockByHash',
];
/** methods whose first param is a transaction hash */
const BY_TX = [
  'eth_getTransactionByHash',
  'eth_getRawTransactionByHash',
  'eth_getTransactionReceipt',
  'debug_traceTransaction',
  'debug_getRawTransaction',
  'trace_transaction',
  'trace_replayTransaction',
];
/** state (and fee history) at a block: the index of the block param */
const STATE_AT: Readonly<Record<string, number>> = {
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getCode: 1,
  eth_getAccountInfo: 1,
  eth_call: 1,
  eth_getStorageAt: 2,
  eth_feeHistory: 1,
};

/** the filter methods that take a filter id */
const FILTERS = ['eth_getFilterLogs', 'eth_getFilterChanges', 'eth_uninstallFilter'];

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;

type Where = { number: bigint } | { hash: string } | 'local';

/** Where a raw block param points: a number (`earliest` is 0), a hash, or the fork's own head ('local'). */
function blockParam(raw: unknown): Where {
  if (raw === undefined || raw === null) return 'local';
  if (typeof raw === 'string') {
    if (raw === 'earliest') return { number: 0n };
    if (HASH.test(raw)) return { hash: raw };
    if (QUANTITY.test(raw)) return { number: BigInt(raw) };
    return 'local';
  }
  if (typeof raw === 'object') {
    const o = raw as { blockNumber?: unknown; blockHash?: unknown };
    if (typeof o.blockHash === 'string') return { hash: o.blockHash };
    if (o.blockNumber !== undefined) return blockParam(o.blockNumber);
  }
  return 'local';
}

/** trace_filter's `after` / `count`, checked by its codec already: a number or a hex quantity */
const page = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' ? Number(BigInt(v)) : undefined);

const hex = (n: bigint): string => '0x' + n.toString(16);

const quantity = (v: unknown): bigint | undefined => (typeof v === 'string' && QUANTITY.test(v) ? BigInt(v) : undefined);

export class ForkHistory {
  /** log filters reaching at or below the fork block: id → the criteria as the client sent them, last poll */
  private readonly filters = new Map<string, { criteria: Record<string, unknown>; lastPoll: number }>();
  private readonly now: () => number;

  constructor(
    private readonly table: MethodTable,
    private readonly origin: ForkHistoryPort,
    private readonly opts: ForkHistoryOptions = { filterTimeoutMs: 0 },
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The fork's own answer to `name(raw)`, its params decoded by the method's codecs. */
  private local(name: string, raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const spec = this.table[name]!;
    const args = spec.params.map((c, i) => (raw[i] === undefined || raw[i] === null ? c.decode(undefined, i) : c.decode(raw[i], i)));
    return Promise.resolve(spec.handler(args, ctx));
  }

  private below(n: bigint | undefined): boolean {
    return n !== undefined && n <= this.origin.forkBlock;
  }

  /** True when the block with this hash is the origin's (the fork's stand-in for the fork block included). */
  private async originBlock(hash: string, ctx: CallContext): Promise<boolean> {
    const mine = (await this.local('eth_getBlockByHash', [hash, false], ctx)) as { number?: unknown } | null;
    if (mine !== null && !this.below(quantity(mine.number))) return false;
    const theirs = (await this.origin.ask('eth_getBlockByHash', [hash, false])) as { number?: unknown } | null;
    return theirs !== null && this.below(quantity(theirs.number));
  }

  private async originTx(hash: string, ctx: CallContext): Promise<boolean> {
    if ((await this.local('eth_getTransactionByHash', [hash], ctx)) !== null) return false;
    const theirs = (await this.origin.ask('eth_getTransactionByHash', [hash])) as { blockNumber?: unknown } | null;
    return theirs !== null && this.below(quantity(theirs.blockNumber));
  }

  private async atBlock(where: Where, ctx: CallContext): Promise<boolean> {
    if (where === 'local') return false;
    if ('number' in where) return this.below(where.number);
    return this.originBlock(where.hash, ctx);
  }

  /** Whether `name(raw)` is the origin's to answer. */
  private async isOrigin(name: string, raw: readonly unknown[], ctx: CallContext): Promise<boolean> {
    if (BY_BLOCK.includes(name)) return this.atBlock(blockParam(raw[0]), ctx);
    if (BY_BLOCK_HASH.includes(name)) return typeof raw[0] === 'string' && this.originBlock(raw[0], ctx);
    if (BY_TX.includes(name)) return typeof raw[0] === 'string' && this.originTx(raw[0], ctx);
    const at = STATE_AT[name];
    return at !== undefined && this.atBlock(blockParam(raw[at]), ctx);
  }

  /**
   * A range (`fromBlock`, `toBlock`, each default latest) starting at or below the fork block: the origin's
   * part, and whether the fork's own blocks (from the fork block + 1) follow. Undefined: the fork's alone
   * (a range above the fork block, or one ending before it starts: the method's own range error).
   */
  private split(f: Record<string, unknown>): { from: bigint; originTo: bigint; mine: boolean } | undefined {
    const from = blockParam(f.fromBlock ?? 'latest');
    if (from === 'local' || !('number' in from) || !this.below(from.number)) return undefined;
    const to = blockParam(f.toBlock ?? 'latest');
    const toNumber = to !== 'local' && 'number' in to ? to.number : undefined;
    if (toNumber !== undefined && toNumber < from.number) return undefined;
    const fork = this.origin.forkBlock;
    const mine = toNumber === undefined || toNumber > fork;
    return { from: from.number, originTo: mine ? fork : toNumber, mine };
  }

  /** eth_getLogs: the origin's logs up to the fork block, then the fork's own after it. */
  private async logs(raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const f = raw[0] as Record<string, unknown>;
    if (typeof f.blockHash === 'string') {
      return (await this.originBlock(f.blockHash, ctx)) ? this.origin.ask('eth_getLogs', raw) : this.local('eth_getLogs', raw, ctx);
    }
    const range = this.split(f);
    if (range === undefined) return this.local('eth_getLogs', raw, ctx);
    const theirs = await this.origin.ask('eth_getLogs', [{ ...f, fromBlock: hex(range.from), toBlock: hex(range.originTo) }]);
    if (!Array.isArray(theirs)) throw unavailable('fork origin: eth_getLogs answered something that is not a list of logs');
    if (!range.mine) return theirs;
    const own = await this.local('eth_getLogs', [{ ...f, fromBlock: hex(this.origin.forkBlock + 1n) }], ctx);
    // the local eth_getLogs answers JSON text (evmrpc/logjson.ts)
    const mine = (own instanceof JsonText ? JSON.parse(own.text) : own) as unknown[];
    return [...theirs, ...mine];
  }

  /**
   * eth_newFilter from at or below the fork block: the fork installs it as any filter, and this keeps its
   * criteria so that eth_getFilterLogs answers as eth_getLogs does (the origin's logs, then the fork's).
   * eth_getFilterChanges needs nothing: it reports logs of blocks committed since the last poll, all the fork's.
   */
  private async newFilter(raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const criteria = raw[0] as Record<string, unknown> | undefined;
    const reaches = criteria !== undefined && criteria !== null && typeof criteria.blockHash !== 'string' && this.split(criteria) !== undefined;
    if (reaches) {
      this.sweep();
      if (this.filters.size >= MAX_FORK_HISTORY_FILTERS) {
        throw limitExceeded(`error creating filter: more than ${MAX_FORK_HISTORY_FILTERS} filters reach below the fork block ${this.origin.forkBlock}; uninstall some`);
      }
    }
    const id = await this.local('eth_newFilter', raw, ctx);
    if (reaches && typeof id === 'string') this.filters.set(id.toLowerCase(), { criteria: criteria!, lastPoll: this.now() });
    return id;
  }

  /** forgets the filters the fork's filter service expired (not polled for filter-timeout) */
  private sweep(): void {
    const t = this.now();
    if (this.opts.filterTimeoutMs <= 0) return;
    for (const [id, f] of this.filters) if (t - f.lastPoll > this.opts.filterTimeoutMs) this.filters.delete(id);
  }

  /** eth_getFilterLogs, eth_getFilterChanges, eth_uninstallFilter: the fork's filter service answers first (its errors, its polls). */
  private async filterCall(name: string, raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const id = typeof raw[0] === 'string' ? raw[0].toLowerCase() : '';
    const tracked = this.filters.get(id);
    let mine: unknown;
    try {
      mine = await this.local(name, raw, ctx);
    } catch (e) {
      if (e instanceof DomainError && e.kind === 'notFound') {
        this.filters.delete(id); // expired or uninstalled by the service: gone here too
        throw e;
      }
      // eth_getFilterLogs of a tracked filter may fail locally for its range alone (from below the fork's
      // genesis: the block-range cap), after its lookup took the poll; the merged answer below checks its own
      if (tracked === undefined || name !== 'eth_getFilterLogs') throw e;
    }
    if (tracked === undefined) return mine;
    if (name === 'eth_uninstallFilter') {
      this.filters.delete(id);
      return mine;
    }
    tracked.lastPoll = this.now();
    return name === 'eth_getFilterLogs' ? this.logs([tracked.criteria], ctx) : mine;
  }

  /**
   * trace_filter from at or below the fork block: the origin's traces up to the fork block, then the fork's
   * own, `after` and `count` applied to the whole list (OpenEthereum's paging).
   */
  private async traceFilter(raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const f = raw[0] as Record<string, unknown>;
    const range = this.split(f);
    if (range === undefined) return this.local('trace_filter', raw, ctx);
    const { after, count, ...rest } = f;
    const theirs = await this.origin.ask('trace_filter', [{ ...rest, fromBlock: hex(range.from), toBlock: hex(range.originTo) }]);
    if (!Array.isArray(theirs)) throw unavailable('fork origin: trace_filter answered something that is not a list of traces');
    const mine = range.mine ? ((await this.local('trace_filter', [{ ...rest, fromBlock: hex(this.origin.forkBlock + 1n) }], ctx)) as unknown[]) : [];
    const all = [...theirs, ...mine].slice(page(after) ?? 0);
    const want = page(count);
    return want === undefined ? all : all.slice(0, want);
  }

  /** The table with its history methods answering from the origin at or below the fork block. */
  wrap(): MethodTable {
    const out: Record<string, MethodSpec> = { ...this.table };
    const names = [...BY_BLOCK, ...BY_BLOCK_HASH, ...BY_TX, ...Object.keys(STATE_AT), 'eth_getLogs', 'eth_newFilter', ...FILTERS, 'trace_filter'];
    for (const name of names) {
      const spec = this.table[name];
      if (spec === undefined) continue;
      // each param is decoded (and refused) by the method's own codec; the raw value is kept to send on
      const params: ParamCodec[] = spec.params.map((c) => ({ ...c, decode: (v: unknown, i: number) => (c.decode(v, i), v) }));
      out[name] = {
        ...spec,
        params,
        handler: async (raw, ctx) => {
          if (name === 'eth_getLogs') return this.logs(raw, ctx);
          if (name === 'eth_newFilter') return this.newFilter(raw, ctx);
          if (FILTERS.includes(name)) return this.filterCall(name, raw, ctx);
          if (name === 'trace_filter') return this.traceFilter(raw, ctx);
          return (await this.isOrigin(name, raw, ctx)) ? this.origin.ask(name, trimmed(raw)) : this.local(name, raw, ctx);
        },
      };
    }
    return out;
  }
}

/** the raw params without trailing absent ones (as the client sent them) */
function trimmed(raw: readonly unknown[]): unknown[] {
  let n = raw.length;
  while (n > 0 && raw[n - 1] === undefined) n--;
  return raw.slice(0, n);
}
