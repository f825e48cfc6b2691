/**
 * The RPC thread's client of the chain thread (src/node/chainworker.ts): starts the worker, sends the
 * typed requests of src/node/protocol.ts and matches each `reply` / `devReply` to its request, and
 * hands the chain thread's events (commits, pool changes, round steps, ABCI queries) to the node.
 *
 * Requests waiting for an answer are bounded (`MAX_PENDING_CHAIN_REQUESTS`): past it a request is
 * refused at once (`unavailable`) instead of queueing without end behind a stalled chain thread.
 * A request has no reply timeout on purpose: a CheckTx or a dev control that is still running will
 * still take effect, so answering "failed" before it ends would tell the client something untrue.
 * The one timeout is the shutdown grace (`CHAIN_STOP_GRACE_MS`).
 */
import type { Worker } from 'node:worker_threads';
import { fromDomainErrorData, unavailable, unsupported } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { AbciQueryRequest, AbciQueryResponse, RoundStepEvent } from '../types/cometbft.js';
import type { CheckTxResult } from '../types/abci.js';
import type { PendingCheat } from '../chain/cheats.js';
import type { HeldWorker } from './chainspawn.js';
import type { ChainReply, CheckTxReply, FromChain, ToChain } from './protocol.js';
import type { DevChannel, DevOpName, DevOpOf, DevResults } from '../types/dev.js';
import { accepted } from '../chain/checkcodes.js';
import { queryFailure, QueryCode } from '../chain/query.js';
import type { Signed } from '../chain/txdecode.js';
import { TurnBatch } from '../lib/turnbatch.js';

/** requests sent to the chain thread and not yet answered, at most */
export const MAX_PENDING_CHAIN_REQUESTS = 4096;
/** how long closing waits for the chain thread to stop (and close its store) before it is terminated */
export const CHAIN_STOP_GRACE_MS = 30_000;

/** What the chain thread tells the node besides answers; each is called on the RPC thread. */
export interface ChainListener {
  /** every message, before it is handled (metrics) */
  onMessage(m: FromChain): void;
  /** `cheatsApplied`: the sequence number up to which the block applied the pending dev cheats */
  onCommitted(height: bigint, cheatsApplied?: number): void;
  /** the dev cheats pending on the chain thread changed (chain/cheats.ts): the RPC thread's mirror follows */
  onCheats(m: Extract<FromChain, { type: 'cheats' }>): void;
  /** a dev revert rewound the chain (sent before its devReply and before any new block) */
  onRewound(m: Extract<FromChain, { type: 'rewound' }>): void;
  onPool(m: Extract<FromChain, { type: 'pool' }>): void;
  onRoundStep(event: RoundStepEvent): void;
  /** ABCI mode: CometBFT's Query, answered from the committed state */
  query(req: AbciQueryRequest): Promise<AbciQueryResponse>;
}

type DevReply = Extract<FromChain, { type: 'devReply' }>;

/** A started chain thread: its client, its latest height, and the dev cheats pending at start. */
export interface ChainStart {
  chain: ChainClient;
  height: bigint;
  cheats: PendingCheat[];
}

/** an ABCI Query answer for a query that could not be served */
const failedQuery = (text: string): AbciQueryResponse => queryFailure(QueryCode.internal, text);

export class ChainClient implements DevChannel {
  private nextId = 1;
  private readonly replies = new Map<number, (r: ChainReply) => void>();
  private readonly checks = new Map<number, (r: CheckTxReply) => void>();
  private readonly devReplies = new Map<number, (r: DevReply) => void>();
  private onStopped: (() => void) | undefined;
  private closing = false;
  /**
   * Requests to the chain thread, in the order they are made: CheckTx requests wait for the end of the
   * event loop's turn and go together as one `batch` message (a burst of eth_sendRawTransaction costs
   * each thread one postMessage and the chain thread one wake-up, not one per tx: docs/benchmarks.md
   * "Ingesting transfers"); any other request posts them first, then itself, at once.
   */
  private readonly outbox: TurnBatch<ToChain>;

  private constructor(
    private readonly worker: Worker,
    private readonly log: Logger,
  ) {
    this.outbox = new TurnBatch<ToChain>((messages) => worker.postMessage(messages.length === 1 ? messages[0] : ({ type: 'batch', messages } satisfies ToChain)));
  }

  /** Sends a request: a CheckTx request with the others of this turn, anything else at once (after those, in order). */
  private post(m: ToChain): void {
    this.outbox.push(m);
    if (m.type !== 'submit' && m.type !== 'submitNative') this.outbox.flush();
  }

  /**
   * The client of the chain thread spawned by node/chainspawn.ts; resolves once it is ready, with its latest height. A chain thread that
   * crashes or exits while the node is not closing ends the process (exit code 1).
   */
  static start(held: HeldWorker, listener: ChainListener, log: Logger): Promise<ChainStart> {
    const started = ChainClient.attach(held.worker, listener, log);
    // the listeners are on (attach adds them before its first await): what the thread sent meanwhile follows
    held.release();
    return started;
  }

  /** The client of a started worker that speaks the chain thread's protocol (tests give a stand-in). */
  static async attach(worker: Worker, listener: ChainListener, log: Logger): Promise<ChainStart> {
    const chain = new ChainClient(worker, log);
    let cheats: PendingCheat[] = [];
    const height = await new Promise<bigint>((resolve, reject) => {
      const handle = (m: FromChain): void => {
        listener.onMessage(m);
        switch (m.type) {
          case 'batch':
            for (const inner of m.messages) handle(inner);
            break;
          case 'ready':
            cheats = m.cheats ?? [];
            resolve(m.height);
            break;
          case 'committed':
            listener.onCommitted(m.height, m.cheatsApplied);
            break;
          case 'cheats':
            listener.onCheats(m);
            break;
          case 'rewound':
            listener.onRewound(m);
            break;
          case 'pool':
            listener.onPool(m);
            break;
          case 'reply':
            chain.settle(chain.replies, m);
            break;
          case 'checked':
            chain.settle(chain.checks, m);
            break;
          case 'devReply':
            chain.settle(chain.devReplies, m);
            break;
          case 'roundStep':
            listener.onRoundStep(m.event);
            break;
          case 'query':
            chain.answerQuery(m.id, listener.query(m.req));
            break;
          case 'stopped':
            chain.onStopped?.();
            break;
          case 'fatal':
            reject(new Error(m.message));
            break;
        }
      };
      worker.on('message', handle);
      worker.on('error', (e) => {
        log.error({ err: e.stack }, 'chain thread crashed');
        reject(e);
        if (!chain.closing) process.exit(1);
      });
      worker.on('exit', (code) => {
        if (!chain.closing) {
          log.error({ code }, 'chain thread exited');
          process.exit(1);
        }
      });
    });
    return { chain, height, cheats };
  }

  /**
   * eth_sendRawTransaction: decoded, checked and (when valid) added to the pool by the chain thread;
   * resolves to the tx hash. A refusal rejects with the domain error the chain thread threw, its kind
   * and reason kept (src/lib/errors.ts); each surface maps it once.
   */
  async submitEvm(raw: Uint8Array, signed?: Signed): Promise<Uint8Array> {
    const r = await this.check((id) => ({ type: 'submit', id, raw, rpc: true, sender: signed?.sender, hash: signed?.hash }));
    if (r.hash === undefined) throw new Error('the chain thread accepted a tx without its hash');
    return r.hash;
  }

  /**
   * Surface B's broadcast_tx_* and check_tx (`dryRun`: checked, never added to the mempool): the ABCI
   * CheckTx response, refusals included (Surface B reports their code and log).
   */
  async checkNative(tx: Uint8Array, dryRun: boolean, sender?: Uint8Array): Promise<CheckTxResult> {
    const r = await this.check((id) => ({ type: 'submitNative', id, tx, dryRun, sender }), true);
    if (r.check === undefined) throw new Error('the chain thread answered check_tx without its CheckTx response');
    return r.check;
  }

  /**
   * A CheckTx request: resolves to the chain thread's `checked` answer, or rejects with its refusal
   * (unless `keepRefusal`: Surface B answers with the ABCI response, refusals included) or its failure.
   */
  private check(make: (id: number) => ToChain, keepRefusal = false): Promise<CheckTxReply> {
    return new Promise<CheckTxReply>((resolve, reject) => {
      const id = this.reserve(this.checks, (r) => {
        if (r.failed !== undefined) return reject(new Error(`CheckTx failed on the chain thread: ${r.failed}`));
        if (r.refused !== undefined && !(keepRefusal && r.check !== undefined)) return reject(fromDomainErrorData(r.refused));
        resolve(r);
      });
      this.post(make(id));
    });
  }

  /** miner_setEtherbase: the fee recipient of the next blocks (persisted by the chain thread) */
  async setCoinbase(address: Uint8Array): Promise<void> {
    const r = await this.ask((id) => ({ type: 'setCoinbase', id, address }));
    // refused only where the node does not offer it (under CometBFT blocks pay their proposer, docs/abci.md)
    if (!accepted(r.code)) throw unsupported(r.log);
  }

  /** A dev operation (src/types/dev.ts, docs/dev-mode.md); a domain error (e.g. a backwards time) keeps its kind. */
  dev<K extends DevOpName>(op: DevOpOf<K>): Promise<DevResults[K]> {
    return new Promise<DevResults[K]>((resolve, reject) => {
      const id = this.reserve(this.devReplies, (r) => {
        if (r.error === undefined) return resolve(r.result as DevResults[K]);
        reject(r.error.kind === 'domain' ? fromDomainErrorData(r.error.error) : new Error(`dev control ${op.op} failed: ${r.error.message}`));
      });
      this.post({ type: 'dev', id, op });
    });
  }

  /** Whether some Surface B subscription could want the round steps' events (cometrpc/events.ts EventBus.onStepsWanted); no answer. */
  wantRoundSteps(wanted: boolean): void {
    if (!this.closing) this.post({ type: 'roundSteps', wanted });
  }

  /** A request the chain thread answers with a `reply`; `make` builds it around its id. */
  private ask(make: (id: number) => ToChain): Promise<ChainReply> {
    return new Promise<ChainReply>((resolve) => {
      const id = this.reserve(this.replies, resolve);
      this.post(make(id));
    });
  }

  /** requests waiting for an answer (metrics, tests) */
  pending(): number {
    return this.replies.size + this.checks.size + this.devReplies.size;
  }

  /** Stops the chain thread (it closes its store), waiting at most CHAIN_STOP_GRACE_MS, then ends it. */
  async close(): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.onStopped = resolve;
      timer = setTimeout(() => {
        this.log.warn({ graceMs: CHAIN_STOP_GRACE_MS }, 'chain thread did not stop in time: terminating it');
        resolve();
      }, CHAIN_STOP_GRACE_MS);
      this.post({ type: 'stop' });
    });
    clearTimeout(timer);
    await this.worker.terminate();
  }

  /** Takes an id for a request; refuses when MAX_PENDING_CHAIN_REQUESTS are already waiting. */
  private reserve<R>(waiting: Map<number, (r: R) => void>, settle: (r: R) => void): number {
    if (this.closing) throw unavailable('the node is shutting down');
    if (this.pending() >= MAX_PENDING_CHAIN_REQUESTS) {
      this.log.warn({ pending: this.pending(), limit: MAX_PENDING_CHAIN_REQUESTS }, 'chain thread busy: request refused');
      throw unavailable(`chain thread busy: ${MAX_PENDING_CHAIN_REQUESTS} requests are waiting`);
    }
    const id = this.nextId++;
    waiting.set(id, settle);
    return id;
  }

  private settle<R extends { id: number }>(waiting: Map<number, (r: R) => void>, m: R): void {
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  }

  private answerQuery(id: number, answer: Promise<AbciQueryResponse>): void {
    void answer.then(
      (res) => this.post({ type: 'queryReply', id, res }),
      (e: unknown) => {
        this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'abci query failed');
        this.post({ type: 'queryReply', id, res: failedQuery('internal error') });
      },
    );
  }

  /** the answer to a query that arrives before the node can serve it */
  static readonly notReady = (): Promise<AbciQueryResponse> => Promise.resolve(failedQuery('node starting'));
}
