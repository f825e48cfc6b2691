/**
 * Surface B's route table (CometBFT v0.38 rpc/core/routes.go): one table for URI, JSON-RPC over HTTP
 * and JSON-RPC over WebSocket. Each route declares its params by name (codecs in params.ts), whether
 * it is WebSocket-only, and when its answer may be cached. Handlers read through the
 * ConsensusBackend port, format with format.ts, and fail with CometBFT's texts (routeError).
 */
import { compileQuery, type CompiledQuery } from '../eventquery/index.js';
import { ErrorCode, FerryError } from '../lib/errors.js';
import type { CallContext, MethodSpec } from '../jsonrpc/types.js';
import type { ConsensusBackend, ExecTxResult, TxPosition } from './backend.js';
import { EventBus, MAX_QUERY_LENGTH, txHashOf, type BusEvent, type Subscription } from './events.js';
import {
  FIXED_PARAMS,
  NODE_CHANNELS,
  P2P_PROTOCOL,
  EMPTY_EXEC_TX_RESULT,
  base64,
  blockMetaJson,
  blockResultsJson,
  checkTxJson,
  commitJson,
  commitVoteSetJson,
  durationNanos,
  emptyHeightVoteSetJson,
  execTxResultJson,
  formatTime,
  headerJson,
  hexUpper,
  infoJson,
  pubKeyJson,
  queryJson,
  resultBlockJson,
  resultTxJson,
  timestampOfNanos,
  timeNanos,
  validatorJson,
  type Json,
} from './format.js';
import {
  boolParam,
  bytesParam,
  stringListParam,
  evidenceParam,
  hexBytesParam,
  int64Param,
  intParam,
  stringParam,
  uintParam,
  type CometParam,
} from './params.js';

export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;
/** blockchain returns at most this many block metas */
export const BLOCKCHAIN_LIMIT = 20n;
/** genesis_chunked slices the genesis JSON into chunks of this many bytes */
export const GENESIS_CHUNK_SIZE = 16 * 1024 * 1024;

/** A Surface B route: a MethodSpec whose params are named CometBFT codecs. */
export interface CometRoute extends MethodSpec {
  readonly params: readonly CometParam[];
  /** subscribe/unsubscribe/unsubscribe_all: WebSocket only */
  readonly wsOnly?: boolean;
  /** `always` (rpc.Cacheable()), or `height` (rpc.Cacheable("height"): only with a non-zero height) */
  readonly cache?: 'always' | 'height';
}

export type RouteTable = Readonly<Record<string, CometRoute>>;

/** What a WebSocket session offers the subscription routes. */
export interface SubscriptionSession {
  /** adds a subscription whose events go to this connection under request id `id` */
  subscribe(id: unknown, queryText: string, query: CompiledQuery, key: string, eventType: string | undefined): void;
}

/** The per-call context Surface B's transports supply (a CallContext plus what CometBFT's handlers use). */
export interface CometContext extends CallContext {
  /** `IP:port` of the client: the subscriber identity */
  readonly remoteAddr: string;
  /** the JSON-RPC id of the request (-1 for URI calls) */
  readonly requestId: unknown;
  /** present on WebSocket connections */
  readonly session?: SubscriptionSession;
}

export interface RouteOptions {
  /** config.toml `rpc.unsafe`: also serve dial_seeds, dial_peers and unsafe_flush_mempool */
  unsafe: boolean;
  timeoutBroadcastTxCommitMs: number;
  /** how long a height is expected to take (consensus_state's start time) */
  timeoutCommitMs: number;
}

export const routeError = (message: string): FerryError => new FerryError(ErrorCode.internal, message);

function perPage(p: number | undefined): number {
  if (p === undefined || p < 1) return DEFAULT_PER_PAGE;
  return p > MAX_PER_PAGE ? MAX_PER_PAGE : p;
}

function validatePage(p: number | undefined, per: number, total: number): number {
  if (p === undefined) return 1;
  const pages = Math.max(1, Math.trunc((total - 1) / per) + 1);
  if (p <= 0 || p > pages) throw routeError(`page should be within [1, ${pages}] range, given ${p}`);
  return p;
}

/** the slice of a page (paging as rpc/core/env.go does it) */
function pageOf<T>(items: readonly T[], page: number | undefined, per_page: number | undefined): T[] {
  const per = perPage(per_page);
  const p = validatePage(page, per, items.length);
  const skip = (p - 1) * per;
  return items.slice(skip, skip + Math.min(per, items.length - skip));
}

function orderOf(order: string, dflt: 'asc' | 'desc'): 'asc' | 'desc' {
  if (order === '') return dflt;
  if (order === 'asc' || order === 'desc') return order;
  throw routeError('expected order_by to be either `asc` or `desc` or empty');
}

const ctxOf = (ctx: CallContext): CometContext => ctx as CometContext;

export function createCometRoutes(backend: ConsensusBackend, bus: EventBus, opts: RouteOptions): RouteTable {
  const latest = () => backend.latestHeight();

  /** rpc/core/env.go getHeight */
  function height(h: bigint | undefined, top = latest()): bigint {
    if (h === undefined) return top;
    if (h <= 0n) throw routeError(`height must be greater than 0, but got ${h}`);
    if (h > top) throw routeError(`height ${h} must be less than or equal to the current blockchain height ${top}`);
    const base = backend.baseHeight();
    if (h < base) throw routeError(`height ${h} is not available, lowest height is ${base}`);
    return h;
  }

  function txJson(pos: TxPosition, prove: boolean): Json {
    const t = backend.txAt(BigInt(pos.height), pos.idx);
    if (!t) throw routeError(`failed to get Tx{${pos.height}/${pos.idx}}`);
    return resultTxJson(t, prove ? backend.txProof(t.height, t.index) : undefined);
  }

  let genesisCache: { obj: Json; chunks: string[] } | undefined;
  const genesis = () => {
    if (!genesisCache) {
      const text = backend.genesisJson();
      const bytes = Buffer.from(text, 'utf8');
      const chunks: string[] = [];
      for (let at = 0; at < bytes.length; at += GENESIS_CHUNK_SIZE) chunks.push(bytes.subarray(at, at + GENESIS_CHUNK_SIZE).toString('base64'));
      genesisCache = { obj: JSON.parse(text) as Json, chunks };
    }
    return genesisCache;
  };

  /** waits for the Tx event of `hash` (broadcast_tx_commit), as an in-process subscription */
  function awaitTx(ctx: CometContext, hash: Uint8Array): { done: Promise<BusEvent>; cancel(): void } {
    const hex = hexUpper(hash);
    const text = `tm.event='Tx' AND tx.hash='${hex}'`;
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
      cancelled: (reason) => reject(routeError(`txSub was canceled (reason: ${reason})`)),
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

  function status(): Json {
    const id = backend.identity();
    const top = latest();
    const base = backend.baseHeight();
    const last = top >= base ? backend.block(top) : undefined;
    const first = top >= base ? backend.block(base) : undefined;
    const own = backend.validators(top + 1n)?.find((v) => Buffer.compare(v.address, id.validator.address) === 0);
    return {
      node_info: {
        protocol_version: { p2p: P2P_PROTOCOL, block: '11', app: id.appVersion.toString() },
        id: id.nodeId,
        listen_addr: id.listenAddr,
        network: id.network,
        version: id.version,
        channels: NODE_CHANNELS,
        moniker: id.moniker,
        other: { tx_index: 'on', rpc_address: id.rpcAddress },
      },
      sync_info: {
        latest_block_hash: last ? hexUpper(last.blockId.hash) : '',
        latest_app_hash: last ? hexUpper(last.block.header.appHash) : '',
        latest_block_height: (last ? top : 0n).toString(),
        latest_block_time: last ? formatTime(last.block.header.time) : formatTime({ seconds: 0n, nanos: 0 }),
        earliest_block_hash: first ? hexUpper(first.blockId.hash) : '',
        earliest_app_hash: first ? hexUpper(first.block.header.appHash) : '',
        earliest_block_height: (first ? base : 0n).toString(),
        earliest_block_time: first ? formatTime(first.block.header.time) : formatTime({ seconds: 0n, nanos: 0 }),
        catching_up: false,
      },
      validator_info: {
        address: hexUpper(id.validator.address),
        pub_key: pubKeyJson(id.validator.pubKey),
        voting_power: (own?.votingPower ?? 0n).toString(),
      },
    };
  }

  /** the round state between heights: ferry waits in NewHeight for timeout_commit */
  function roundState(): { height: bigint; startTime: string; commitTime: string; last: ReturnType<ConsensusBackend['block']> } {
    const top = latest();
    const last = top >= backend.baseHeight() ? backend.block(top) : undefined;
    const commitNanos = last ? timeNanos(last.commit.signatures.find((s) => s.blockIdFlag === 2)?.timestamp ?? last.block.header.time) : 0n;
    return {
      height: top + 1n,
      commitTime: formatTime(timestampOfNanos(commitNanos)),
      startTime: formatTime(timestampOfNanos(commitNanos + BigInt(durationNanos(opts.timeoutCommitMs)))),
      last,
    };
  }

  const table: Record<string, CometRoute> = {
    subscribe: {
      params: [stringParam('query')],
      wsOnly: true,
      handler: ([query], c) => {
        const ctx = ctxOf(c);
        if (!ctx.session) throw routeError('subscribe is only available over WebSocket');
        const p = bus.prepare(ctx.remoteAddr, query as string);
        ctx.session.subscribe(ctx.requestId, query as string, p.query, p.key, p.eventType);
        return {};
      },
    },
    unsubscribe: {
      params: [stringParam('query')],
      wsOnly: true,
      handler: ([query], c) => {
        bus.unsubscribe(ctxOf(c).remoteAddr, query as string);
        return {};
      },
    },
    unsubscribe_all: {
      params: [],
      wsOnly: true,
      handler: (_args, c) => {
        bus.unsubscribeAll(ctxOf(c).remoteAddr);
        return {};
      },
    },

    health: { params: [], handler: () => ({}) },
    status: { params: [], handler: () => status() },
    net_info: { params: [], handler: () => ({ listening: false, listeners: [], n_peers: '0', peers: [] }) },
    blockchain: {
      params: [int64Param('minHeight'), int64Param('maxHeight')],
      cache: 'always',
      handler: ([minArg, maxArg]) => {
        let min = (minArg as bigint | undefined) ?? 0n;
        let max = (maxArg as bigint | undefined) ?? 0n;
        const top = latest();
        if (min < 0n || max < 0n) throw routeError('heights must be non-negative');
        if (min === 0n) min = 1n;
        if (max === 0n) max = top;
        if (max > top) max = top;
        const base = backend.baseHeight();
        if (min < base) min = base;
        if (min < max - BLOCKCHAIN_LIMIT + 1n) min = max - BLOCKCHAIN_LIMIT + 1n;
        if (min > max) throw routeError(`min height ${min} can't be greater than max height ${max}`);
        const metas: Json[] = [];
        for (let h = max; h >= min; h--) {
          const rec = backend.block(h);
          if (rec) metas.push(blockMetaJson(rec));
        }
        return { last_height: top.toString(), block_metas: metas };
      },
    },
    genesis: {
      params: [],
      cache: 'always',
      handler: () => {
        const g = genesis();
        if (g.chunks.length > 1) throw routeError('genesis response is large, please use the genesis_chunked API instead');
        return { genesis: g.obj };
      },
    },
    genesis_chunked: {
      params: [uintParam('chunk')],
      cache: 'always',
      handler: ([chunk]) => {
        const g = genesis();
        const id = Number((chunk as bigint | undefined) ?? 0n);
        if (id > g.chunks.length - 1) throw routeError(`there are ${g.chunks.length - 1} chunks, ${id} is invalid`);
        return { chunk: String(id), total: String(g.chunks.length), data: g.chunks[id]! };
      },
    },
    block: {
      params: [int64Param('height')],
      cache: 'height',
      handler: ([h]) => resultBlockJson(backend.block(height(h as bigint | undefined))),
    },
    block_by_hash: {
      params: [bytesParam('hash')],
      cache: 'always',
      handler: ([hash]) => {
        const h = backend.heightByHash(hash as Uint8Array);
        return resultBlockJson(h === undefined ? undefined : backend.block(h));
      },
    },
    block_results: {
      params: [int64Param('height')],
      cache: 'height',
      handler: ([h]) => {
        const ht = height(h as bigint | undefined);
        const rec = backend.block(ht);
        if (!rec) throw routeError(`could not find results for height #${ht}`);
        return blockResultsJson(ht, rec.results);
      },
    },
    commit: {
      params: [int64Param('height')],
      cache: 'height',
      handler: ([h]) => {
        const top = latest();
        const ht = height(h as bigint | undefined, top);
        const rec = backend.block(ht);
        if (!rec) return null;
        // the canonical commit of H is block H+1's last_commit; at the tip only the seen commit exists
        const next = ht < top ? backend.block(ht + 1n) : undefined;
        const commit = next ? next.block.lastCommit : rec.commit;
        return { signed_header: { header: headerJson(rec.block.header), commit: commitJson(commit) }, canonical: next !== undefined };
      },
    },
    header: {
      params: [int64Param('height')],
      cache: 'height',
      handler: ([h]) => {
        const rec = backend.block(height(h as bigint | undefined));
        return { header: rec ? headerJson(rec.block.header) : null };
      },
    },
    header_by_hash: {
      params: [hexBytesParam('hash')],
      cache: 'always',
      handler: ([hash]) => {
        const h = backend.heightByHash(hash as Uint8Array);
        const rec = h === undefined ? undefined : backend.block(h);
        return { header: rec ? headerJson(rec.block.header) : null };
      },
    },
    check_tx: {
      params: [bytesParam('tx')],
      handler: async ([tx]) => checkTxJson(await backend.checkTx(tx as Uint8Array, false)),
    },
    tx: {
      params: [bytesParam('hash'), boolParam('prove')],
      cache: 'always',
      handler: ([hash, prove]) => {
        const t = backend.tx(hash as Uint8Array);
        if (!t) throw routeError(`tx (${hexUpper(hash as Uint8Array)}) not found`);
        return resultTxJson(t, prove ? backend.txProof(t.height, t.index) : undefined);
      },
    },
    tx_search: {
      params: [stringParam('query'), boolParam('prove'), intParam('page'), intParam('per_page'), stringParam('order_by')],
      handler: ([query, prove, page, per, order]) => {
        if ((query as string).length > MAX_QUERY_LENGTH) throw routeError('maximum query length exceeded');
        let q: CompiledQuery;
        try {
          q = compileQuery(query as string);
        } catch (e) {
          throw routeError((e as Error).message);
        }
        const results = backend.searchTxs(q.query);
        const dir = orderOf(order as string, 'asc') === 'asc' ? 1 : -1;
        results.sort((a, b) => dir * (a.height !== b.height ? a.height - b.height : a.idx - b.idx));
        const pageItems = pageOf(results, page as number | undefined, per as number | undefined);
        return { txs: pageItems.map((p) => txJson(p, prove as boolean)), total_count: String(results.length) };
      },
    },
    block_search: {
      params: [stringParam('query'), intParam('page'), intParam('per_page'), stringParam('order_by')],
      handler: ([query, page, per, order]) => {
        let q: CompiledQuery;
        try {
          q = compileQuery(query as string);
        } catch (e) {
          throw routeError((e as Error).message);
        }
        const heights = backend.searchBlocks(q.query);
        const dir = orderOf(order as string, 'desc') === 'asc' ? 1 : -1;
        heights.sort((a, b) => dir * (a - b));
        const pageItems = pageOf(heights, page as number | undefined, per as number | undefined);
        const blocks: Json[] = [];
        for (const h of pageItems) {
          const rec = backend.block(BigInt(h));
          if (rec) blocks.push(resultBlockJson(rec));
        }
        return { blocks, total_count: String(heights.length) };
      },
    },
    validators: {
      params: [int64Param('height'), intParam('page'), intParam('per_page')],
      cache: 'height',
      handler: ([h, page, per]) => {
        const ht = height(h as bigint | undefined, latest() + 1n);
        const set = backend.validators(ht);
        if (!set) throw routeError(`could not find validator set for height #${ht}`);
        const items = pageOf(set, page as number | undefined, per as number | undefined);
        return { block_height: ht.toString(), validators: items.map(validatorJson), count: String(items.length), total: String(set.length) };
      },
    },
    dump_consensus_state: {
      params: [],
      handler: () => {
        const rs = roundState();
        const vals = backend.validators(rs.height) ?? [];
        const lastVals = rs.height > backend.baseHeight() ? (backend.validators(rs.height - 1n) ?? []) : [];
        const own = backend.identity().validator.address;
        const proposerIndex = Math.max(0, vals.findIndex((v) => Buffer.compare(v.address, own) === 0));
        const valSet = (vs: typeof vals) => ({
          validators: vs.map(validatorJson),
          proposer: vs.length > 0 ? validatorJson(vs[proposerIndex] ?? vs[0]!) : null,
        });
        return {
          round_state: {
            height: rs.height.toString(),
            round: 0,
            step: 1,
            start_time: rs.startTime,
            commit_time: rs.commitTime,
            validators: valSet(vals),
            proposal: null,
            proposal_block: null,
            proposal_block_parts: null,
            locked_round: -1,
            locked_block: null,
            locked_block_parts: null,
            valid_round: -1,
            valid_block: null,
            valid_block_parts: null,
            votes: emptyHeightVoteSetJson(vals),
            commit_round: -1,
            last_commit: rs.last ? commitVoteSetJson(rs.last.commit, lastVals) : null,
            last_validators: valSet(lastVals),
            triggered_timeout_precommit: false,
          },
          peers: [],
        };
      },
    },
    consensus_state: {
      params: [],
      handler: () => {
        const rs = roundState();
        const vals = backend.validators(rs.height) ?? [];
        const own = backend.identity().validator.address;
        const index = Math.max(0, vals.findIndex((v) => Buffer.compare(v.address, own) === 0));
        return {
          round_state: {
            'height/round/step': `${rs.height}/0/1`,
            start_time: rs.startTime,
            proposal_block_hash: '',
            locked_block_hash: '',
            valid_block_hash: '',
            height_vote_set: emptyHeightVoteSetJson(vals),
            proposer: { address: hexUpper(own), index },
          },
        };
      },
    },
    consensus_params: {
      params: [int64Param('height')],
      cache: 'height',
      handler: ([h]) => {
        const ht = height(h as bigint | undefined, latest() + 1n);
        const p = backend.blockParams(ht);
        return {
          block_height: ht.toString(),
          consensus_params: { block: { max_bytes: p.maxBytes.toString(), max_gas: p.maxGas.toString() }, ...FIXED_PARAMS },
        };
      },
    },
    unconfirmed_txs: {
      params: [intParam('limit')],
      handler: ([limit]) => {
        const pool = backend.mempool();
        const txs = pool.txs(perPage(limit as number | undefined));
        return { n_txs: String(txs.length), total: String(pool.size), total_bytes: String(pool.totalBytes), txs: txs.map(base64) };
      },
    },
    num_unconfirmed_txs: {
      params: [],
      handler: () => {
        const pool = backend.mempool();
        return { n_txs: String(pool.size), total: String(pool.size), total_bytes: String(pool.totalBytes), txs: null };
      },
    },
    broadcast_tx_async: {
      params: [bytesParam('tx')],
      handler: ([tx]) => {
        void backend.checkTx(tx as Uint8Array, true).catch(() => undefined);
        return { code: 0, data: '', log: '', codespace: '', hash: hexUpper(txHashOf(tx as Uint8Array)) };
      },
    },
    broadcast_tx_sync: {
      params: [bytesParam('tx')],
      handler: async ([tx]) => {
        const r = await backend.checkTx(tx as Uint8Array, true);
        return { code: r.code, data: hexUpper(r.data), log: r.log, codespace: r.codespace, hash: hexUpper(txHashOf(tx as Uint8Array)) };
      },
    },
    broadcast_tx_commit: {
      params: [bytesParam('tx')],
      handler: async ([txArg], c) => {
        const tx = txArg as Uint8Array;
        const hash = txHashOf(tx);
        const wait = awaitTx(ctxOf(c), hash);
        try {
          const check = await backend.checkTx(tx, true);
          if (check.code !== 0) {
            return { check_tx: checkTxJson(check), tx_result: execTxResultJson(EMPTY_EXEC_TX_RESULT), hash: hexUpper(hash), height: '0' };
          }
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(routeError('timed out waiting for tx to be included in a block')), opts.timeoutBroadcastTxCommitMs);
          });
          try {
            const ev = await Promise.race([wait.done, timeout]);
            const v = ev.value() as { TxResult: { height: string } };
            const t = backend.tx(hash);
            const result: ExecTxResult = t?.result ?? EMPTY_EXEC_TX_RESULT;
            return { check_tx: checkTxJson(check), tx_result: execTxResultJson(result), hash: hexUpper(hash), height: v.TxResult.height };
          } finally {
            clearTimeout(timer);
          }
        } finally {
          wait.cancel();
        }
      },
    },
    abci_query: {
      params: [stringParam('path'), hexBytesParam('data'), int64Param('height'), boolParam('prove')],
      handler: async ([path, data, h, prove]) =>
        ({ response: queryJson(await backend.abciQuery({ path: path as string, data: data as Uint8Array, height: (h as bigint | undefined) ?? 0n, prove: prove as boolean })) }),
    },
    abci_info: { params: [], cache: 'always', handler: () => ({ response: infoJson(backend.abciInfo()) }) },
    broadcast_evidence: {
      params: [evidenceParam('evidence')],
      handler: ([ev]) => {
        if (ev === undefined) throw routeError('no evidence was provided');
        throw routeError('failed to add evidence: ferry runs a single validator, so there is no other validator whose misbehaviour evidence could prove; evidence is not accepted');
      },
    },
  };
  if (opts.unsafe) Object.assign(table, unsafeRoutes());
  return table;
}

/** NO_P2P: ferry is one node with no p2p layer, so the unsafe control routes have nothing to act on. */
export const NO_P2P = 'ferry runs a single node without a p2p network: there is no peer to dial';

/** rpc/core/routes.go AddUnsafeRoutes (with `rpc.unsafe = true`). */
function unsafeRoutes(): Record<string, CometRoute> {
  return {
    dial_seeds: {
      params: [stringListParam('seeds')],
      handler: ([seeds]) => {
        if ((seeds as string[]).length === 0) throw routeError('no seeds provided');
        throw routeError(NO_P2P);
      },
    },
    dial_peers: {
      params: [stringListParam('peers'), boolParam('persistent'), boolParam('unconditional'), boolParam('private')],
      handler: ([peers]) => {
        if ((peers as string[]).length === 0) throw routeError('no peers provided');
        throw routeError(NO_P2P);
      },
    },
    unsafe_flush_mempool: {
      params: [],
      handler: () => {
        throw routeError('unsafe_flush_mempool is not supported: the mempool belongs to the application, which keeps its txs until they are included or replaced');
      },
    },
  };
}
