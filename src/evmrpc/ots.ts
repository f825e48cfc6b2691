/**
 * Surface A's `ots` and `erigon` namespaces: what the Otterscan explorer reads (Otterscan
 * docs/custom-jsonrpc.md, API level 8), in the shapes Anvil (crates/anvil/src/eth/otterscan/)
 * and Erigon answer. docs/compatibility.md lists each method and what differs.
 *
 * Transaction views come from the callTracer run by the trace service; block views are built from
 * the `eth` methods' own answers (one format layer); ots_getTransactionBySenderAndNonce and
 * ots_getContractCreator bisect the chain's state by block (nonce, code presence), so they cost
 * O(log height) state reads and, for the creator, one block trace. The address history searches
 * (ots_searchTransactionsBefore/After) page through the store's address index (store/addrindex.ts),
 * paged as otssearch.ts says, each tx with its receipt and its block's timestamp.
 */
import type { Frame } from '../evm/tracing/calltracer.js';
import { DEFAULT_TRACE_TIMEOUT_MS, type TraceOptions } from '../evm/tracing/types.js';
import { invalidArgument, limitExceeded, notFound, unsupported } from '../lib/errors.js';
import { address, hash } from '../jsonrpc/codecs.js';
import { argumentError, jsonKind, parseQuantity } from '../lib/hex.js';
import { method, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Hash } from '../types/chain.js';
import type { BlockSelector } from '../types/query.js';
import { blockNumberOrTag, blockNumberOrTagOrHash } from './codecs.js';
import type { EvmBackend } from './backend.js';
import type { TraceRunner } from './debug.js';
import { hexData } from './format.js';
import { newestFirst, pageFlags, searchRange, type SearchDirection } from './otssearch.js';

/** Otterscan's API level this node answers (Otterscan docs/custom-jsonrpc.md) */
export const OTS_API_LEVEL = 8;

/** The part of Surface A's modules (evmrpc/api.ts) the namespace uses: the chain head and call traces. */
export interface OtsModules {
  reader: Pick<EvmBackend, 'latestNumber' | 'blockByNumber' | 'addressTxs'>;
  runs: Pick<TraceRunner, 'traceTransaction' | 'traceBlock'>;
}

type Json = Record<string, any>;

export const CALL_TRACER: TraceOptions = {
  tracer: 'callTracer',
  disableStack: false,
  disableStorage: false,
  enableMemory: false,
  enableReturnData: false,
  limit: 0,
  timeoutMs: DEFAULT_TRACE_TIMEOUT_MS,
};

/** ots_getInternalOperations' types */
const OP_TRANSFER = 0;
const OP_SELF_DESTRUCT = 1;
const OP_CREATE = 2;
const OP_CREATE2 = 3;

function walk(f: Frame, depth: number, visit: (f: Frame, depth: number) => void): void {
  visit(f, depth);
  for (const c of f.calls ?? []) walk(c, depth + 1, visit);
}

/**
 * ots_traceTransaction: every frame, depth first, as Erigon answers (Anvil 1.7.1 leaves out
 * CREATE, CREATE2 and SELFDESTRUCT frames)
 */
export function otsTrace(top: Frame): Json[] {
  const out: Json[] = [];
  walk(top, 0, (f, depth) => {
    out.push({ type: f.type, depth, from: f.from, to: f.to ?? null, value: f.value ?? '0x0', input: f.input, output: f.output ?? '0x' });
  });
  return out;
}

/** ots_getInternalOperations: value transfers, creations and self-destructs, in order */
export function internalOperations(top: Frame): Json[] {
  const out: Json[] = [];
  walk(top, 0, (f) => {
    let type: number;
    if (f.type === 'SELFDESTRUCT') type = OP_SELF_DESTRUCT;
    else if (f.type === 'CREATE') type = OP_CREATE;
    else if (f.type === 'CREATE2') type = OP_CREATE2;
    else if (f.type === 'CALL' && f.value !== undefined && BigInt(f.value) !== 0n) type = OP_TRANSFER;
    else return;
    out.push({ type, from: f.from, to: f.to ?? null, value: f.value ?? '0x0' });
  });
  return out;
}

/** Calls an `eth` method with wire params, through its own codecs. */
async function eth(table: MethodTable, name: string, params: unknown[], ctx: CallContext): Promise<any> {
  const spec = table[name];
  if (spec === undefined) throw new Error(`${name} is not in the eth table`);
  return spec.handler(
    spec.params.map((c, i) => c.decode(params[i], i)),
    ctx,
  );
}

const hexNumber = (n: bigint): string => '0x' + n.toString(16);

/** Erigon takes page numbers, sizes and nonces as JSON numbers (Go uint64); hex strings are read too, as Anvil does */
const uint: ParamCodec<bigint> = {
  name: 'unsigned integer',
  decode: (v, i) => {
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0) throw argumentError(i, `want a non-negative integer, got ${v}`);
      return BigInt(v);
    }
    if (typeof v === 'string') return parseQuantity(v, i);
    throw argumentError(i, `want a non-negative integer, got ${jsonKind(v)}`);
  },
};

/** most transactions one ots_getBlockTransactions page holds */
export const MAX_OTS_PAGE_SIZE = 1_000;
/** largest pageSize of ots_searchTransactionsBefore/After */
export const MAX_OTS_SEARCH_PAGE_SIZE = 1_000;
/** most transactions one search answers: its page plus the rest of the page's last block */
export const MAX_OTS_SEARCH_RESULTS = 10_000;

/** `ethTable`: the `eth` methods (methods.ts) whose block, receipt, code and nonce answers the namespace reshapes */
export function createOtsMethods({ reader, runs }: OtsModules, ethTable: MethodTable): MethodTable {
  const tree = async (h: Hash, ctx: CallContext): Promise<Frame> => (await runs.traceTransaction(h, CALL_TRACER, ctx)) as Frame;

  async function blockDetails(block: Json | null, ctx: CallContext): Promise<Json | null> {
    if (block === null) return null;
    const receipts: Json[] = (await eth(ethTable, 'eth_getBlockReceipts', [block.number], ctx)) ?? [];
    let fees = 0n;
    for (const r of receipts) fees += BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice);
    const { transactions, ...rest } = block;
    return {
      block: { ...rest, logsBloom: null, transactionCount: (transactions as unknown[]).length },
      issuance: { blockReward: '0x0', uncleReward: '0x0', issuance: '0x0' },
      totalFees: hexNumber(fees),
    };
  }

  /** first block in [lo, hi] where `pred` holds (it holds at hi, and stays once it does) */
  async function bisect(lo: bigint, hi: bigint, pred: (n: bigint) => Promise<boolean>): Promise<bigint> {
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      if (await pred(mid)) hi = mid;
      else lo = mid + 1n;
    }
    return lo;
  }

  /** ots_searchTransactionsBefore/After: Erigon's {txs, receipts, firstPage, lastPage} */
  async function search(dir: SearchDirection, addr: Uint8Array, blockNumber: bigint, size: bigint, ctx: CallContext): Promise<Json> {
    if (size === 0n || size > BigInt(MAX_OTS_SEARCH_PAGE_SIZE)) throw argumentError(2, `page size must be 1..${MAX_OTS_SEARCH_PAGE_SIZE}`);
    if (reader.addressTxs === undefined) throw unsupported('this node keeps no address index');
    const best = reader.latestNumber();
    const range = searchRange(dir, blockNumber, best);
    const rows = reader.addressTxs(addr, range.lo, range.hi, range.desc, Number(size), MAX_OTS_SEARCH_RESULTS);
    if (rows.length > MAX_OTS_SEARCH_RESULTS) {
      throw limitExceeded(`the page's last block holds more than ${MAX_OTS_SEARCH_RESULTS} transactions of this address; search from another block`);
    }
    const txs: Json[] = [];
    const receipts: Json[] = [];
    for (const { height, index } of newestFirst(rows)) {
      const tx: Json = await eth(ethTable, 'eth_getTransactionByBlockNumberAndIndex', [hexNumber(height), hexNumber(BigInt(index))], ctx);
      const receipt: Json = await eth(ethTable, 'eth_getTransactionReceipt', [tx.hash], ctx);
      txs.push(tx);
      receipts.push({ ...receipt, timestamp: hexNumber(reader.blockByNumber(height)!.header.timestamp) });
    }
    return { txs, receipts, ...pageFlags(dir, range, best, rows, Number(size)) };
  }

  const table: Record<string, MethodSpec> = {
    ots_searchTransactionsBefore: method([address, uint, uint], ([a, n, size], ctx) => search('before', a, n, size, ctx)),
    ots_searchTransactionsAfter: method([address, uint, uint], ([a, n, size], ctx) => search('after', a, n, size, ctx)),
    ots_getApiLevel: method([], () => OTS_API_LEVEL),
    ots_hasCode: method([address, blockNumberOrTagOrHash], async ([a, sel], ctx) => {
      const code: string = await eth(ethTable, 'eth_getCode', [hexData(a), selectorJson(sel)], ctx);
      return code !== '0x';
    }),
    ots_getTransactionError: method([hash], async ([h], ctx) => {
      const top = await tree(h, ctx);
      return top.error === undefined ? '0x' : (top.output ?? '0x');
    }),
    ots_traceTransaction: method([hash], async ([h], ctx) => otsTrace(await tree(h, ctx))),
    ots_getInternalOperations: method([hash], async ([h], ctx) => internalOperations(await tree(h, ctx))),
    ots_getBlockDetails: method([blockNumberOrTag], async ([sel], ctx) => blockDetails(await eth(ethTable, 'eth_getBlockByNumber', [selectorJson(sel), false], ctx), ctx)),
    ots_getBlockDetailsByHash: method([hash], async ([h], ctx) => blockDetails(await eth(ethTable, 'eth_getBlockByHash', [hexData(h), false], ctx), ctx)),
    ots_getBlockTransactions: method([blockNumberOrTag, uint, uint], async ([sel, page, size], ctx) => {
      if (size === 0n || size > BigInt(MAX_OTS_PAGE_SIZE)) throw argumentError(2, `page size must be 1..${MAX_OTS_PAGE_SIZE}`);
      const block: Json | null = await eth(ethTable, 'eth_getBlockByNumber', [selectorJson(sel), true], ctx);
      if (block === null) throw notFound('block not found');
      const receipts: Json[] = await eth(ethTable, 'eth_getBlockReceipts', [block.number], ctx);
      const txs = block.transactions as Json[];
      // Erigon pages from the end of the block: page 0 holds the last `size` transactions
      const total = BigInt(txs.length);
      const end = total - page * size;
      const start = end - size < 0n ? 0n : end - size;
      const pick = end <= 0n ? [] : txs.slice(Number(start), Number(end)).map((_, i) => Number(start) + i);
      const { transactions, ...rest } = block;
      void transactions;
      return {
        fullblock: { ...rest, logsBloom: null, transactionCount: txs.length, transactions: pick.map((i) => ({ ...txs[i]!, input: (txs[i]!.input as string).slice(0, 10) })) },
        receipts: pick.map((i) => ({ ...receipts[i]!, logs: null, logsBloom: null, timestamp: block.timestamp })),
      };
    }),
    ots_getTransactionBySenderAndNonce: method([address, uint], async ([sender, nonce], ctx) => {
      const from = hexData(sender);
      const latest = reader.latestNumber();
      const count = async (n: bigint): Promise<bigint> => BigInt(await eth(ethTable, 'eth_getTransactionCount', [from, hexNumber(n)], ctx));
      if ((await count(latest)) <= nonce) return null;
      const n = await bisect(0n, latest, async (m) => (await count(m)) > nonce);
      const txs: Json[] = (await eth(ethTable, 'eth_getBlockByNumber', [hexNumber(n), true], ctx)).transactions;
      const tx = txs.find((t) => t.from.toLowerCase() === from && BigInt(t.nonce) === nonce);
      return tx?.hash ?? null;
    }),
    ots_getContractCreator: method([address], async ([a], ctx) => {
      const addr = hexData(a);
      const latest = reader.latestNumber();
      const hasCode = async (n: bigint): Promise<boolean> => (await eth(ethTable, 'eth_getCode', [addr, hexNumber(n)], ctx)) !== '0x';
      if (!(await hasCode(latest))) return null;
      const n = await bisect(0n, latest, hasCode);
      for (const e of await runs.traceBlock(n, CALL_TRACER, ctx)) {
        if (e.result === undefined) continue;
        let creator: string | undefined;
        walk(e.result as Frame, 0, (f) => {
          if (creator === undefined && (f.type === 'CREATE' || f.type === 'CREATE2') && f.to === addr && f.error === undefined) creator = f.from;
        });
        if (creator !== undefined) return { hash: hexData(e.txHash), creator };
      }
      // code from genesis (or a dev cheat): no creating transaction
      return null;
    }),
    erigon_getHeaderByNumber: method([blockNumberOrTag], async ([sel], ctx) => {
      const block: Json | null = await eth(ethTable, 'eth_getBlockByNumber', [selectorJson(sel), false], ctx);
      if (block === null) return null;
      const { transactions, uncles, size, totalDifficulty, withdrawals, ...header } = block;
      void transactions, uncles, size, totalDifficulty, withdrawals;
      return header;
    }),
  };
  return Object.freeze(table);
}

/** a decoded block selector back on the wire (the eth methods take wire params) */
function selectorJson(sel: BlockSelector): unknown {
  switch (sel.kind) {
    case 'tag':
      return sel.tag;
    case 'number':
      return hexNumber(sel.number);
    case 'hash':
      return { blockHash: hexData(sel.hash), requireCanonical: sel.requireCanonical };
  }
  throw invalidArgument('bad block selector');
}
