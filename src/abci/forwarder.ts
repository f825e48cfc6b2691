/**
 * The forward queue of eth_sendRawTransaction under CometBFT (docs/abci.md "Mempool and txpool_* under
 * CometBFT"): ferry admits a submitted tx with its own CheckTx checks and answers at once (as geth's
 * local pool does before gossip), and this queue hands the admitted native bytes to the local CometBFT
 * in submission order: JSON-RPC batches of `broadcast_tx_async`, one batch in flight at a time (CometBFT
 * runs a batch's requests in order and each queues its CheckTx), so one sender's nonces reach CometBFT's
 * mempool in order.
 *
 * Bounded: past MAX_FORWARD_QUEUE txs waiting or in flight, `push` is refused (the caller answers
 * geth's `txpool is full` and admits nothing). A tx CometBFT refuses (its mempool full, too large, any
 * other error) is handed to `onDrop`; `already known` (CometBFT's cache holds it: a peer gossiped it
 * first) is not a refusal. No answer at all (connection refused, timeout) is retried after
 * FORWARD_RETRY_MS, doubled each time, FORWARD_RETRIES times, then the batch is dropped; while the last
 * attempt got no answer, `unreachable` says why, until a `probe` (CometBFT's `health`) is answered.
 */
import { broadcastTxBatch, cometHealth, CometUnreachable, type BatchAnswer } from './cometclient.js';

/** Txs admitted locally and not yet answered by CometBFT (waiting or in the batch in flight). */
export const MAX_FORWARD_QUEUE = 4096;
/** Broadcasts in one batch: CometBFT's default `rpc.max_request_batch_size` (config/config.go DefaultRPCConfig). */
export const MAX_FORWARD_BATCH = 10;
/** Base64 tx bytes in one batch, under CometBFT's default `rpc.max_body_bytes` (1,000,000); a larger tx goes alone. */
export const MAX_FORWARD_BATCH_BYTES = 512 * 1024;
/** Retries of a batch that got no answer from CometBFT before its txs are dropped. */
export const FORWARD_RETRIES = 5;
/** Wait before the first retry, milliseconds (doubled for each later one). */
export const FORWARD_RETRY_MS = 100;

export interface ForwardItem {
  native: Uint8Array;
}

export interface ForwarderOptions<T extends ForwardItem> {
  /** the broadcasts of one batch, answered in order (default: broadcastTxBatch to `url`) */
  send?(txs: Uint8Array[]): Promise<BatchAnswer[]>;
  /** whether CometBFT answers now; throws CometUnreachable when not (default: cometHealth of `url`) */
  probe?(): Promise<void>;
  /** CometBFT took the tx (its CheckTx queued), or its cache holds it already (`known`: no CheckTx comes) */
  onForwarded?(item: T, known: boolean): void;
  /** CometBFT refused the tx or never answered: `why` in words */
  onDrop(item: T, why: string): void;
  maxQueue?: number;
  maxBatch?: number;
  maxBatchBytes?: number;
  retries?: number;
  retryMs?: number;
}

/** base64 length of `n` bytes */
const base64Length = (n: number) => Math.ceil(n / 3) * 4;

export class TxForwarder<T extends ForwardItem> {
  private readonly queue: T[] = [];
  /** index of the first waiting item in `queue` (taken items are cut off in bulk) */
  private head = 0;
  private inFlight = 0;
  private running: Promise<void> | undefined;
  private probing: Promise<void> | undefined;
  private lastFailure: string | undefined;
  private readonly send: (txs: Uint8Array[]) => Promise<BatchAnswer[]>;
  private readonly probeFn: () => Promise<void>;

  constructor(
    url: string,
    private readonly o: ForwarderOptions<T>,
  ) {
    this.send = o.send ?? ((txs) => broadcastTxBatch(url, txs));
    this.probeFn = o.probe ?? (() => cometHealth(url));
  }

  /** txs waiting or in flight */
  get size(): number {
    return this.queue.length - this.head + this.inFlight;
  }

  get full(): boolean {
    return this.size >= (this.o.maxQueue ?? MAX_FORWARD_QUEUE);
  }

  /** why the last attempt to reach CometBFT got no answer; undefined once one did */
  get unreachable(): string | undefined {
    return this.lastFailure;
  }

  /** Queues a tx for CometBFT; throws when the queue is full (check `full` first). */
  push(item: T): void {
    if (this.full) throw new Error(`forward queue full (${this.size} txs)`);
    this.queue.push(item);
    this.kick();
  }

  /** Starts the forwarding loop unless it runs (and again if a tx came in as it ended). */
  private kick(): void {
    if (this.running !== undefined) return;
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.head < this.queue.length) this.kick();
    });
  }

  /**
   * While CometBFT is unreachable and nothing is being forwarded, asks it whether it answers again
   * (one probe at a time, shared by the callers meanwhile); `unreachable` clears when it does.
   */
  probe(): Promise<void> {
    if (this.lastFailure === undefined || this.running !== undefined) return Promise.resolve();
    this.probing ??= this.probeFn()
      .then(
        () => (this.lastFailure = undefined),
        (e: unknown) => (this.lastFailure = e instanceof Error ? e.message : String(e)),
      )
      .then(() => (this.probing = undefined));
    return this.probing;
  }

  /** Resolves once every queued tx is forwarded or dropped. */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  private async run(): Promise<void> {
    while (this.head < this.queue.length) {
      const batch = this.take();
      this.inFlight = batch.length;
      try {
        await this.forward(batch);
      } finally {
        this.inFlight = 0;
      }
    }
  }

  /** The next batch, in queue order, within MAX_FORWARD_BATCH txs and MAX_FORWARD_BATCH_BYTES. */
  private take(): T[] {
    const maxBatch = this.o.maxBatch ?? MAX_FORWARD_BATCH;
    const maxBytes = this.o.maxBatchBytes ?? MAX_FORWARD_BATCH_BYTES;
    const batch: T[] = [];
    let bytes = 0;
    while (this.head < this.queue.length && batch.length < maxBatch) {
      const item = this.queue[this.head]!;
      const size = base64Length(item.native.length);
      if (batch.length > 0 && bytes + size > maxBytes) break;
      batch.push(item);
      bytes += size;
      this.head++;
    }
    if (this.head === this.queue.length || this.head > 1024) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return batch;
  }

  private async forward(batch: T[]): Promise<void> {
    const retries = this.o.retries ?? FORWARD_RETRIES;
    for (let attempt = 0; ; attempt++) {
      let answers: BatchAnswer[];
      try {
        answers = await this.send(batch.map((b) => b.native));
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        if (!(e instanceof CometUnreachable)) return this.dropAll(batch, why);
        this.lastFailure = why;
        if (attempt >= retries) return this.dropAll(batch, `${why} (after ${retries} retries)`);
        await new Promise((r) => setTimeout(r, (this.o.retryMs ?? FORWARD_RETRY_MS) * 2 ** attempt));
        continue;
      }
      this.lastFailure = undefined;
      batch.forEach((item, i) => {
        const a = answers[i];
        if (a === undefined) return this.o.onDrop(item, 'CometBFT did not answer this broadcast');
        if ('rejected' in a) {
          // CometBFT's cache holds these bytes already: its mempool has (or had) them
          if (a.rejected.detail.reason === 'known') return this.o.onForwarded?.(item, true);
          return this.o.onDrop(item, a.rejected.message);
        }
        if ('error' in a) return this.o.onDrop(item, a.error);
        if (a.code !== 0) return this.o.onDrop(item, a.log === '' ? `CheckTx code ${a.code}` : a.log);
        this.o.onForwarded?.(item, false);
      });
      return;
    }
  }

  private dropAll(batch: T[], why: string): void {
    for (const item of batch) this.o.onDrop(item, why);
  }
}
