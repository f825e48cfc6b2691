/**
 * The events Surface A's filters (filters.ts) and eth_subscribe (subscriptions.ts) are built from.
 *
 * evmrpc/ never imports chain/: it declares the port it needs (`EvmEventSource`: committed heights
 * and mempool changes) and node/ wires the chain reader's event hub to it. `EvmFeed` turns each
 * committed height into ONE `NewBlock` (block, logs, and their wire forms, formatted lazily and at
 * most once) and hands it to every listener, so a block fanned out to a thousand subscribers is read
 * from the store and serialized once.
 *
 * Heights are delivered in order with none skipped: if the source reports height h while the feed
 * last delivered h-3, blocks h-2, h-1 and h are delivered, in that order. A listener that throws is
 * reported (onError) and kept: one bad subscriber never silences the feed.
 */
import { randomBytes } from 'node:crypto';
import { equalBytes } from '../lib/bytes.js';
import { invalidArgument } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { Address, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash } from '../types/chain.js';
import type { EvmBackend } from './backend.js';
import type { LogFilter } from './codecs.js';
import { formatBlock, formatLog, formatReceipt, formatTransaction, hexData, type RpcLog, type RpcReceipt, type RpcTransaction } from './format.js';
import { GethText } from '../lib/gethtexts.js';

/** txs that entered (`added`) or left (`removed`, by hash) the mempool */
export interface PoolChange {
  added: EvmTx[];
  removed: Hash[];
}

/** The port: where committed blocks and mempool changes come from (node/ wires chain/'s event hub). */
export interface EvmEventSource {
  /** `listener` gets each committed height once the block is readable; returns the unsubscribe */
  onBlock(listener: (height: bigint) => void): () => void;
  /** `listener` gets each mempool change; returns the unsubscribe */
  onPool(listener: (change: PoolChange) => void): () => void;
  /**
   * `listener` gets each dev revert (docs/dev-mode.md): the new head and the logs of the rewound
   * blocks, oldest block first; returns the unsubscribe
   */
  onRewind?(listener: (e: { height: bigint; removedLogs: readonly EvmLog[] }) => void): () => void;
}

/** What the feed reads for each height. */
export type FeedBackend = Pick<EvmBackend, 'latestNumber' | 'blockByNumber' | 'blockReceipts'>;

/** A feed that falls further behind than this many blocks in one step skips ahead (and says so). */
export const MAX_CATCH_UP_BLOCKS = 1_000;

/** Header fields of eth_getBlockByNumber that are not header fields (body or derived values). */
const NON_HEADER_FIELDS = ['size', 'totalDifficulty', 'transactions', 'uncles'] as const;

/**
 * Filter and subscription ids: 16 random bytes as exactly 32 hex digits after `0x` (docs/websocket-and-filters.md), the
 * first digit non-zero so the id is also a valid quantity (geth's rpc.NewID trims leading zeros).
 */
export function newId(): string {
  for (;;) {
    const b = randomBytes(16);
    if (b[0]! >= 0x10) return hexData(b);
  }
}

/** The wire forms of a list of logs (as objects and as JSON text), made on first use and shared. */
class LogForms {
  private rpc: RpcLog[] | undefined;
  private texts: (string | undefined)[] | undefined;

  /** `removed`: the logs of rewound blocks (`removed: true`) */
  constructor(
    private readonly logs: () => readonly EvmLog[],
    private readonly removed: boolean,
  ) {}

  rpcLog(i: number): RpcLog {
    this.rpc ??= this.logs().map((l) => (this.removed ? { ...formatLog(l), removed: true } : formatLog(l)));
    return this.rpc[i]!;
  }

  logJson(i: number): string {
    this.texts ??= new Array<string | undefined>(this.logs().length);
    let text = this.texts[i];
    if (text === undefined) {
      text = JSON.stringify(this.rpcLog(i));
      this.texts[i] = text;
    }
    return text;
  }
}

/**
 * One committed block. The block itself and its logs are read on first use (a listener with nobody to
 * tell reads nothing: docs/benchmarks.md "The fixed cost of a block, part 2"; only log filters and log
 * subscriptions need the logs); wire forms are made on first use too, and shared by everyone.
 */
export class NewBlock {
  private heads: [string | undefined, string | undefined] = [undefined, undefined];
  private loadedBlock: EvmBlock | undefined;
  private hashText: string | undefined;
  private loadedReceipts: readonly EvmReceipt[] | undefined;
  private loaded: readonly EvmLog[] | undefined;
  private receiptForms: RpcReceipt[] | undefined;
  private readonly forms = new LogForms(() => this.logs, false);

  constructor(
    /** the block's number, known before the block is read */
    readonly number: bigint,
    /** reads the block (throws when the committed block is not readable) */
    private loadBlock: (() => EvmBlock) | undefined,
    private readonly loadReceipts: () => readonly EvmReceipt[],
  ) {}

  get block(): EvmBlock {
    if (this.loadedBlock === undefined) {
      this.loadedBlock = this.loadBlock!();
      this.loadBlock = undefined;
    }
    return this.loadedBlock;
  }

  /** the block hash, wire form */
  get hash(): string {
    this.hashText ??= hexData(this.block.header.hash);
    return this.hashText;
  }

  /** the block's receipts, in block order (read on first use) */
  get receipts(): readonly EvmReceipt[] {
    this.loadedReceipts ??= this.loadReceipts();
    return this.loadedReceipts;
  }

  /** every log of the block, in block order */
  get logs(): readonly EvmLog[] {
    this.loaded ??= this.receipts.flatMap((r) => r.logs);
    return this.loaded;
  }

  /** receipt i as eth_getTransactionReceipt writes it (made once, shared) */
  rpcReceipt(i: number): RpcReceipt {
    this.receiptForms ??= this.receipts.map(formatReceipt);
    return this.receiptForms[i]!;
  }

  /**
   * The newHeads payload as JSON text: exactly the header fields eth_getBlockByNumber answers for
   * this block (same hash, gas fields, base fee, bloom, roots); with `fullTx` also `transactions`
   * as full objects.
   */
  headJson(fullTx: boolean): string {
    const i = fullTx ? 1 : 0;
    let text = this.heads[i];
    if (text === undefined) {
      const rpc: Record<string, unknown> = { ...formatBlock(this.block, fullTx) };
      const transactions = rpc.transactions;
      for (const k of NON_HEADER_FIELDS) delete rpc[k];
      if (fullTx) rpc.transactions = transactions;
      text = JSON.stringify(rpc);
      this.heads[i] = text;
    }
    return text;
  }

  /** the wire form of log i */
  rpcLog(i: number): RpcLog {
    return this.forms.rpcLog(i);
  }

  /** the wire form of log i as JSON text */
  logJson(i: number): string {
    return this.forms.logJson(i);
  }
}

/**
 * A dev revert (evm_revert, anvil_reset) as a reorg: the chain went back to `height`; `logs` are the
 * logs of the rewound blocks in geth's order for removed logs (oldest block first, block order),
 * sent with `removed: true`. Wire forms are made once and shared, as NewBlock's.
 */
export class Rewind {
  private readonly forms = new LogForms(() => this.logs, true);

  constructor(
    readonly height: bigint,
    readonly logs: readonly EvmLog[],
  ) {}

  /** the wire form of removed log i (`removed: true`) */
  rpcLog(i: number): RpcLog {
    return this.forms.rpcLog(i);
  }

  /** the wire form of removed log i as JSON text */
  logJson(i: number): string {
    return this.forms.logJson(i);
  }
}

/** A pending transaction as notifications and filters carry it; wire forms shared like NewBlock's. */
export class PendingTx {
  readonly hash: string;
  private full: RpcTransaction | undefined;
  private fullText: string | undefined;

  constructor(readonly tx: EvmTx) {
    this.hash = hexData(tx.hash);
  }

  /** geth's RPCTransaction of a pending tx (null block fields) */
  rpc(): RpcTransaction {
    this.full ??= formatTransaction(this.tx, undefined);
    return this.full;
  }

  /** hash only (`false`) or the full object (`true`) as JSON text */
  json(full: boolean): string {
    if (!full) return JSON.stringify(this.hash);
    this.fullText ??= JSON.stringify(this.rpc());
    return this.fullText;
  }
}

type Listener<T> = (e: T) => void;

export class EvmFeed {
  private readonly blockListeners = new Set<Listener<NewBlock>>();
  private readonly poolListeners = new Set<Listener<PendingTx[]>>();
  private readonly rewindListeners = new Set<Listener<Rewind>>();
  private readonly unsubscribe: (() => void)[];
  private last: bigint;

  constructor(
    private readonly backend: FeedBackend,
    source: EvmEventSource,
    private readonly log: Logger,
  ) {
    this.last = backend.latestNumber();
    this.unsubscribe = [source.onBlock((h) => this.onHeight(h)), source.onPool((c) => this.onPool(c))];
    if (source.onRewind) this.unsubscribe.push(source.onRewind((e) => this.rewound(e.height, e.removedLogs)));
  }

  /** `fn` gets every dev revert, before the blocks made after it; returns the unsubscribe */
  onRewind(fn: Listener<Rewind>): () => void {
    this.rewindListeners.add(fn);
    return () => this.rewindListeners.delete(fn);
  }

  /** `fn` gets every block committed from now on, in order; returns the unsubscribe */
  onBlock(fn: Listener<NewBlock>): () => void {
    this.blockListeners.add(fn);
    return () => this.blockListeners.delete(fn);
  }

  /** `fn` gets the txs that entered the mempool, in arrival order; returns the unsubscribe */
  onPendingTxs(fn: Listener<PendingTx[]>): () => void {
    this.poolListeners.add(fn);
    return () => this.poolListeners.delete(fn);
  }

  close(): void {
    for (const u of this.unsubscribe) u();
    this.blockListeners.clear();
    this.poolListeners.clear();
    this.rewindListeners.clear();
  }

  private emit<T>(listeners: Set<Listener<T>>, e: T, what: string): void {
    for (const l of listeners) {
      try {
        l(e);
      } catch (err) {
        this.log.error({ err: err instanceof Error ? err.stack : String(err) }, `${what} listener failed`);
      }
    }
  }

  private onHeight(height: bigint): void {
    try {
      if (height <= this.last) return;
      let from = this.last + 1n;
      if (height - from >= BigInt(MAX_CATCH_UP_BLOCKS)) {
        this.log.warn({ from: Number(from), to: Number(height) }, 'event feed fell behind; skipping blocks');
        from = height - BigInt(MAX_CATCH_UP_BLOCKS) + 1n;
      }
      for (let n = from; n <= height; n++) {
        this.last = n;
        if (this.blockListeners.size === 0) continue;
        // read when a listener needs it: with no filter, subscription or receipt waiter, a block costs no read
        const block = () => {
          const b = this.backend.blockByNumber(n);
          if (b === undefined) throw new Error(`committed block ${n} not readable`);
          return b;
        };
        const receipts = () => this.backend.blockReceipts(n) ?? [];
        this.emit(this.blockListeners, new NewBlock(n, block, receipts), 'block');
      }
    } catch (err) {
      this.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'event feed failed on a block');
    }
  }

  /** A dev revert: the next block delivered is height + 1 (a reused height, a new block), none skipped or repeated. */
  private rewound(height: bigint, logs: readonly EvmLog[]): void {
    if (height < this.last) this.last = height;
    if (this.rewindListeners.size > 0) this.emit(this.rewindListeners, new Rewind(height, logs), 'rewind');
  }

  private onPool(change: PoolChange): void {
    if (change.added.length === 0 || this.poolListeners.size === 0) return;
    this.emit(this.poolListeners, change.added.map((tx) => new PendingTx(tx)), 'pending tx');
  }
}

// ---------------------------------------------------------------------------------------------
// Live log criteria (eth_newFilter, eth_subscribe("logs"))

/** A log filter as it applies to logs of blocks committed from now on. */
export interface LiveCriteria {
  addresses: Address[];
  topics: (Hash[] | null)[];
  /** lowest block number whose logs match (undefined: any) */
  fromBlock: bigint | undefined;
  /** highest block number whose logs match (undefined: any) */
  toBlock: bigint | undefined;
  /** EIP-234: only logs of this block (a committed block: no new log ever matches) */
  blockHash: Hash | undefined;
}

type Bound = bigint | 'latest';

function bound(sel: LogFilter['fromBlock']): Bound {
  if (sel === undefined) return 'latest';
  if (sel.kind === 'number') return sel.number;
  if (sel.kind === 'tag') {
    if (sel.tag === 'pending') throw invalidArgument('pending logs are not supported');
    if (sel.tag === 'earliest') return 0n;
  }
  // latest, safe and finalized are one block in ferry (instant finality)
  return 'latest';
}

/**
 * geth's SubscribeLogs range rules: both bounds latest; or from ≤ to, both numbers; or a number
 * up to latest. Anything else is -32602 `invalid block range params`; `pending` is -32602
 * `pending logs are not supported`.
 */
export function liveCriteria(f: LogFilter): LiveCriteria {
  const from = bound(f.fromBlock);
  const to = bound(f.toBlock);
  const ok = (from === 'latest' && to === 'latest') || (from !== 'latest' && (to === 'latest' || to >= from));
  if (!ok) throw invalidArgument(GethText.invalidBlockRange);
  return {
    addresses: f.addresses,
    topics: f.topics,
    fromBlock: from === 'latest' ? undefined : from,
    toBlock: to === 'latest' ? undefined : to,
    blockHash: f.blockHash,
  };
}

/** Whether a log of a newly committed block matches: address any-of, topics positional any-of. */
export function matchesLog(c: LiveCriteria, log: EvmLog): boolean {
  if (c.fromBlock !== undefined && log.blockNumber < c.fromBlock) return false;
  if (c.toBlock !== undefined && log.blockNumber > c.toBlock) return false;
  if (c.blockHash !== undefined && !equalBytes(c.blockHash, log.blockHash)) return false;
  if (c.addresses.length > 0 && !c.addresses.some((a) => equalBytes(a, log.address))) return false;
  if (c.topics.length > log.topics.length) {
    // a log with fewer topics than the filter names matches only if the extra positions are wildcards
    for (let i = log.topics.length; i < c.topics.length; i++) if (c.topics[i] !== null) return false;
  }
  for (let i = 0; i < c.topics.length && i < log.topics.length; i++) {
    const want = c.topics[i];
    if (want === null || want === undefined) continue;
    const have = log.topics[i]!;
    if (!want.some((t) => equalBytes(t, have))) return false;
  }
  return true;
}
