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
import { unavailable } from '../lib/errors.js';
import { JsonText, type CallContext, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';

/** The origin's side (fork/history.ts implements it; node/ethrpc.ts wires it). */
export interface ForkHistoryPort {
  /** the fork block: at or below it, history is the origin's */
  readonly forkBlock: bigint;
  ask(method: string, params: readonly unknown[]): Promise<unknown>;
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
  eth_call: 1,
  eth_getStorageAt: 2,
  eth_feeHistory: 1,
};

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

const quantity = (v: unknown): bigint | undefined => (typeof v === 'string' && QUANTITY.test(v) ? BigInt(v) : undefined);

export class ForkHistory {
  constructor(
    private readonly table: MethodTable,
    private readonly origin: ForkHistoryPort,
  ) {}

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

  /** eth_getLogs: the origin's logs up to the fork block, then the fork's own after it. */
  private async logs(raw: readonly unknown[], ctx: CallContext): Promise<unknown> {
    const f = raw[0] as Record<string, unknown>;
    if (typeof f.blockHash === 'string') {
      return (await this.originBlock(f.blockHash, ctx)) ? this.origin.ask('eth_getLogs', raw) : this.local('eth_getLogs', raw, ctx);
    }
    const from = blockParam(f.fromBlock ?? 'latest');
    if (from === 'local' || !('number' in from) || !this.below(from.number)) return this.local('eth_getLogs', raw, ctx);
    const to = blockParam(f.toBlock ?? 'latest');
    const toNumber = to !== 'local' && 'number' in to ? to.number : undefined;
    if (toNumber !== undefined && toNumber < from.number) return this.local('eth_getLogs', raw, ctx); // its own range error
    const fork = this.origin.forkBlock;
    const hex = (n: bigint) => '0x' + n.toString(16);
    const originTo = toNumber !== undefined && toNumber < fork ? toNumber : fork;
    const theirs = await this.origin.ask('eth_getLogs', [{ ...f, fromBlock: hex(from.number), toBlock: hex(originTo) }]);
    if (!Array.isArray(theirs)) throw unavailable('fork origin: eth_getLogs answered something that is not a list of logs');
    if (toNumber !== undefined && toNumber <= fork) return theirs;
    const own = await this.local('eth_getLogs', [{ ...f, fromBlock: hex(fork + 1n) }], ctx);
    // the local eth_getLogs answers JSON text (evmrpc/logjson.ts)
    const mine = (own instanceof JsonText ? JSON.parse(own.text) : own) as unknown[];
    return [...theirs, ...mine];
  }

  /** The table with its history methods answering from the origin at or below the fork block. */
  wrap(): MethodTable {
    const out: Record<string, MethodSpec> = { ...this.table };
    const names = [...BY_BLOCK, ...BY_BLOCK_HASH, ...BY_TX, ...Object.keys(STATE_AT), 'eth_getLogs'];
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
