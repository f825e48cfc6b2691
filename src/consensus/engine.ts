/**
 * The consensus engine of a single ed25519 validator: a block every `timeout_commit` (or as soon as a
 * transaction arrives, in the dev mode), real CometBFT v0.38 headers, BlockIDs and signed commits.
 * Each height is written in ONE store transaction together with the application's commit.
 */
import type { Logger } from '../lib/log.js';
import type { Store } from '../store/store.js';
import type { Application, FinalizeBlockResponse } from './abci.js';
import {
  BLOCK_PROTOCOL,
  commitHash,
  consensusParamsHash,
  evidenceHash,
  headerHash,
  lastResultsHash,
  makeBlockId,
  signCommit,
  timestampFromMillis,
  timestampToMillis,
  txsHash,
  validatorSetHash,
  zeroBlockId,
  type Block,
  type BlockID,
  type Commit,
  type Header,
  type Validator,
  type ValidatorKey,
} from './cometbft/index.js';

export interface EngineOptions {
  chainId: string;
  genesisTimeMs: number;
  initialHeight: bigint;
  validatorKey: ValidatorKey;
  validators: Validator[];
  maxBytes: bigint;
  maxGas: bigint;
  appVersion: bigint;
  timeoutCommitMs: number;
  blockOnTx: boolean;
}

/** What the engine stores per height (the `comet` record). */
export interface CometBlockRecord {
  block: Block;
  blockId: BlockID;
  /** the seen commit for this height (CometBFT's `commit?height=H` answer) */
  commit: Commit;
  results: FinalizeBlockResponse;
  /** byte size of the block's proto encoding */
  size: number;
}

export interface EngineHooks {
  onCommitted(height: bigint, rec: CometBlockRecord): void;
}

/** Delay before a block in block-on-tx mode, so a burst of txs lands in one block. */
export const BLOCK_ON_TX_DELAY_MS = 5;

export class Engine {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  private last: CometBlockRecord | undefined;
  private appHash: Uint8Array = new Uint8Array();
  private readonly validatorsHash: Uint8Array;
  private readonly consensusHash: Uint8Array;

  constructor(
    private readonly store: Store,
    private readonly app: Application,
    private readonly opts: EngineOptions,
    private readonly log: Logger,
    private readonly hooks: EngineHooks,
  ) {
    this.validatorsHash = validatorSetHash(opts.validators);
    this.consensusHash = consensusParamsHash({ maxBytes: opts.maxBytes, maxGas: opts.maxGas });
  }

  get height(): bigint {
    return this.last?.block.header.height ?? this.opts.initialHeight - 1n;
  }

  lastRecord(): CometBlockRecord | undefined {
    return this.last;
  }

  /** Replays nothing: the store is the truth. Loads the last committed height and starts the timer. */
  async start(): Promise<void> {
    const genesisAppHash = await this.app.initChain();
    const h = this.store.latestCometHeight();
    if (h !== undefined) {
      this.last = this.store.cometRecord(h) as unknown as CometBlockRecord;
      this.appHash = this.app.info().lastBlockAppHash;
    } else {
      this.appHash = genesisAppHash;
    }
    this.log.info({ height: Number(this.height) }, 'consensus engine started');
    this.schedule(this.last ? this.opts.timeoutCommitMs : 0);
  }

  /** Called when a tx entered the mempool. */
  txAvailable(): void {
    if (this.opts.blockOnTx && !this.inFlight && !this.stopped) this.schedule(BLOCK_ON_TX_DELAY_MS);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.produce()
        .catch((e) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'block production failed'))
        .finally(() => {
          this.inFlight = undefined;
          if (this.opts.blockOnTx && this.app.pendingCount() > 0) this.schedule(BLOCK_ON_TX_DELAY_MS);
          else this.schedule(this.opts.timeoutCommitMs);
        });
    }, ms);
  }

  /** Stops making blocks; the block in flight finishes (atomically) first. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private async produce(): Promise<void> {
    if (this.stopped) return;
    const height = this.height + 1n;
    const last = this.last;
    const timeMs = last ? timestampToMillis(last.commit.signatures[0]!.timestamp) : this.opts.genesisTimeMs;
    const maxTxBytes = Number(this.opts.maxBytes) - 1024 * 64;
    const txs = this.app.prepareProposal({ height, timeMs, maxTxBytes });
    const lastCommit: Commit = last?.commit ?? { height: 0n, round: 0, blockId: zeroBlockId(), signatures: [] };
    const header: Header = {
      version: { block: BLOCK_PROTOCOL, app: this.opts.appVersion },
      chainId: this.opts.chainId,
      height,
      time: timestampFromMillis(timeMs),
      lastBlockId: last?.blockId ?? zeroBlockId(),
      lastCommitHash: commitHash(lastCommit),
      dataHash: txsHash(txs),
      validatorsHash: this.validatorsHash,
      nextValidatorsHash: this.validatorsHash,
      consensusHash: this.consensusHash,
      appHash: this.appHash,
      lastResultsHash: last
        ? lastResultsHash(last.results.txResults.map((r) => ({ code: r.code, data: r.data, gasWanted: r.gasWanted, gasUsed: r.gasUsed })))
        : new Uint8Array(),
      evidenceHash: evidenceHash([]),
      proposerAddress: this.opts.validatorKey.address,
    };
    const block: Block = { header, data: { txs }, evidence: [], lastCommit };
    const blockId = makeBlockId(block);
    if (Buffer.compare(blockId.hash, headerHash(header)) !== 0) throw new Error('block id does not match header hash');
    let results: FinalizeBlockResponse;
    try {
      results = await this.app.finalizeBlock({
        height,
        timeMs,
        hash: blockId.hash,
        proposerAddress: header.proposerAddress,
        txs,
      });
    } catch (e) {
      await this.app.abortBlock();
      throw e;
    }
    // precommit: vote time is max(now, block time + 1ms), as CometBFT's voteTime
    const voteMs = Math.max(Date.now(), timeMs + 1);
    const sig = signCommit(this.opts.chainId, height, 0, blockId, timestampFromMillis(voteMs), this.opts.validatorKey.privKey);
    const commit: Commit = { height, round: 0, blockId, signatures: [sig] };
    const rec: CometBlockRecord = { block, blockId, commit, results, size: 0 };
    try {
      this.store.transaction(() => {
        this.app.commit();
        this.store.putComet(height, rec as never);
      });
    } catch (e) {
      await this.app.abortBlock();
      throw e;
    }
    this.last = rec;
    this.appHash = results.appHash;
    await this.app.afterCommit();
    this.hooks.onCommitted(height, rec);
  }
}
