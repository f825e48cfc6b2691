/**
 * The consensus engine of a single ed25519 validator: a block every `timeout_commit` (or as soon as a
 * transaction arrives, in the dev mode), real CometBFT v0.38 headers, BlockIDs and signed commits.
 * Each height is written in ONE store transaction together with the application's commit.
 */
import type { Logger } from '../lib/log.js';
import { yieldToEventLoop } from '../lib/slices.js';
import type { Store } from '../store/store.js';
import { EventIndex } from '../store/eventindex.js';
import type { Application, FinalizeBlockResponse } from './abci.js';
import { DevTime, type DevClock } from './devclock.js';
import { AutomineRefill } from './refill.js';
import { applyValidatorUpdates } from './valupdates.js';
import {
  BLOCK_PROTOCOL,
  SignedMsgType,
  blockProto,
  commitHash,
  commitSigAbsent,
  ed25519Sign,
  partSetHeader,
  sortValidators,
  txHash,
  voteSignBytes,
  consensusParamsHash,
  evidenceHash,
  headerHash,
  lastResultsHash,
  signCommit,
  parseTime,
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
  /** the dev preset: no timer at start (automine alone, docs/dev-mode.md) */
  noTimer?: boolean;
  /** false: a height waits until the mempool has a tx (CometBFT's create_empty_blocks = false) */
  createEmptyBlocks: boolean;
}

import type { CometBlockRecord, RoundStepEvent, VoteEventData } from '../types/cometbft.js';
import type { Genesis } from '../config/genesis.js';

/** What a genesis (and the validator's key) fixes of an engine's options; the rest is configuration. */
export type GenesisEngineOptions = Pick<EngineOptions, 'chainId' | 'genesisTimeMs' | 'initialHeight' | 'validatorKey' | 'validators' | 'maxBytes' | 'maxGas' | 'appVersion'>;

export function genesisEngineOptions(genesis: Genesis, validatorKey: ValidatorKey, appVersion: bigint): GenesisEngineOptions {
  return {
    chainId: genesis.chainId,
    genesisTimeMs: timestampToMillis(parseTime(genesis.genesisTime)),
    initialHeight: genesis.initialHeight,
    validatorKey,
    validators: genesis.validators.map((v) => ({ address: v.address, pubKey: v.pubKey, votingPower: v.power })),
    maxBytes: genesis.maxBytes,
    maxGas: genesis.maxGas,
    appVersion,
  };
}

export type { CometBlockRecord, RoundStepEvent, VoteEventData };

export interface EngineHooks {
  /** `timing`: milliseconds spent in PrepareProposal, executing (FinalizeBlock) and writing (the block transaction) */
  onCommitted(height: bigint, rec: CometBlockRecord, timing: { prepareMs: number; executeMs: number; commitMs: number }): void;
  /** each step of the round, in CometBFT's order (see docs/cometbft-rpc.md) */
  onRoundStep?(e: RoundStepEvent): void;
  /** false: nobody observes the steps now, so the prevote (signed only for its Vote event) is not made; absent: true */
  roundStepsWanted?(): boolean;
}

/**
 * Delay before a block in block-on-tx mode, counted from the first tx to arrive at an idle node. 0: the
 * block starts at the end of that turn of the event loop, with every tx admitted in it (a batch of CheckTx
 * messages from the RPC thread lands in one block); txs arriving while it is made go into the next one,
 * started at once. (It was 5 ms; with automine answers held until the block (node/minedanswers.ts) senders
 * wait for their block anyway, and the wait only added to every answer: docs/benchmarks.md.)
 */
export const BLOCK_ON_TX_DELAY_MS = 0;

/** evidence_hash of a block without evidence (ferry's blocks carry none), computed once. */
const EMPTY_EVIDENCE_HASH = evidenceHash([]);

/** How blocks are made (docs/dev-mode.md): as soon as a tx arrives, on a timer, or only when asked (both off). */
export interface MiningMode {
  automine: boolean;
  /** milliseconds between blocks; null = no timer */
  intervalMs: number | null;
}

/** What a rewind does besides the engine's own records (docs/dev-mode.md, evm_revert). */
export interface RewindHooks {
  /** inside the rewinding store transaction: the application's rows above the new head */
  write(): void;
  /** after the transaction committed, before any new block: the in-memory state follows */
  after(): Promise<void>;
}

export class Engine {
  /**
   * the next block's timer (cancel() drops it); `burst`: the automine window a tx arriving at an idle node
   * opened; `refill`: the automine block waiting for its refill (a tx that completes it starts it at once)
   */
  private timer: { cancel(): void; burst?: boolean; refill?: boolean } | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  private last: CometBlockRecord | undefined;
  private appHash: Uint8Array = new Uint8Array();
  private readonly consensusHash: Uint8Array;
  /** validators_hash of each set in use, by the set's array (a set is kept while no update changes it) */
  private readonly validatorHashes = new WeakMap<readonly Validator[], Uint8Array>();
  private readonly index: EventIndex;
  private mode: MiningMode;
  /** the dev time controls (evm_increaseTime, evm_setNextBlockTimestamp) */
  private readonly devTime = new DevTime();
  /** what the next automine block waits for (refill.ts) */
  private readonly refill = new AutomineRefill();
  /** Date.now() at which the next height may start: timeout_commit after the last one began (interval mode) */
  private nextHeightAt = 0;

  constructor(
    private readonly store: Store,
    private readonly app: Application,
    private readonly opts: EngineOptions,
    private readonly log: Logger,
    private readonly hooks: EngineHooks,
  ) {
    this.index = new EventIndex(store.db, { writer: true });
    this.consensusHash = consensusParamsHash({ maxBytes: opts.maxBytes, maxGas: opts.maxGas });
    this.mode = { automine: opts.blockOnTx, intervalMs: opts.noTimer === true ? null : opts.timeoutCommitMs };
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
    const h = this.store.comet.latestHeight();
    if (h !== undefined) {
      this.last = this.store.comet.get(h);
      this.appHash = this.app.info().lastBlockAppHash;
    } else {
      this.appHash = genesisAppHash;
    }
    this.log.info({ height: Number(this.height) }, 'consensus engine started');
    if (!this.last) this.schedule(0);
    else this.scheduleNext();
  }

  /** After a committed block answered `txs` held automine sends: the next block waits for that many (refill.ts). */
  expectTxs(txs: number, withinMs?: number): void {
    this.refill.expect(txs, withinMs);
  }

  /** Called when a tx entered the mempool. */
  txAvailable(): void {
    if (this.inFlight || this.stopped) return;
    // the first arrival opens the burst window; later ones join it without pushing the block back
    if (this.mode.automine) {
      const wait = this.refill.wait(this.app.pendingCount());
      if (wait > 0) {
        if (!this.timer) this.schedule(wait, true, true);
      } else if (!this.timer?.burst || this.timer.refill) this.schedule(BLOCK_ON_TX_DELAY_MS, true);
    } else if (!this.opts.createEmptyBlocks && !this.timer && this.mode.intervalMs !== null) {
      // the height was waiting for a tx: it starts once timeout_commit has passed since the last commit
      this.schedule(Math.max(0, this.nextHeightAt - Date.now()));
    }
  }

  /**
   * The timer after a block, by the mining mode; none in the manual mode. With automine, txs that
   * entered the mempool while the block was made have waited for it already: the next block starts
   * at once (the pause before a block is only for a burst arriving at an idle node) — when it would
   * include one: txs behind a nonce gap or under the base fee wait, as in a Hardhat or Anvil automine. `roundStart`
   * (Date.now() when the block just made began): as CometBFT starts the next height
   * `timeout_commit` after it entered the commit step, before executing the block, the time the
   * block took counts toward the interval.
   */
  private scheduleNext(roundStart?: number): void {
    if (this.mode.automine && this.app.hasExecutable()) {
      const wait = this.refill.wait(this.app.pendingCount());
      this.schedule(wait, wait > 0, wait > 0);
    } else if (this.mode.intervalMs !== null) {
      const spent = roundStart === undefined ? 0 : Date.now() - roundStart;
      const wait = Math.max(0, this.mode.intervalMs - spent);
      this.nextHeightAt = Date.now() + wait;
      // without empty blocks and with an empty mempool no timer runs: txAvailable() starts the height
      // (CometBFT waits for the mempool's TxsAvailable; a timer here would wake the node for nothing,
      // and with timeout_commit = 0 spin)
      if (!this.opts.createEmptyBlocks && this.last && this.app.pendingCount() === 0) this.clearTimer();
      else this.schedule(wait);
    } else this.clearTimer();
  }

  private clearTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * The next block in `ms` milliseconds; 0: at the end of this turn of the event loop (setImmediate),
   * after the messages already waiting (CheckTx) are handled, so the txs they admit are in it.
   */
  private schedule(ms: number, burst = false, refill = false): void {
    if (this.stopped) return;
    this.clearTimer();
    const fire = () => {
      this.timer = undefined;
      this.refill.clear();
      const roundStart = Date.now();
      this.inFlight = this.produce(false)
        .catch((e) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'block production failed'))
        .finally(() => {
          this.inFlight = undefined;
          this.scheduleNext(roundStart);
        });
    };
    if (ms === 0) {
      const immediate = setImmediate(fire);
      this.timer = { cancel: () => clearImmediate(immediate), burst, refill };
    } else {
      const timeout = setTimeout(fire, ms);
      this.timer = { cancel: () => clearTimeout(timeout), burst, refill };
    }
  }

  // --- dev controls (docs/dev-mode.md) -------------------------------------------------------

  miningMode(): MiningMode {
    return { ...this.mode };
  }

  /** Switches the mining mode; the timer restarts by the new mode. */
  setMiningMode(mode: MiningMode): void {
    this.mode = { ...mode };
    if (this.inFlight || this.stopped) return; // the block in flight reschedules by the new mode
    this.scheduleNext();
  }

  /** The time of the last block, milliseconds (genesis time before the first block). */
  private lastTimeMs(): number {
    return this.last ? timestampToMillis(this.last.block.header.time) : this.opts.genesisTimeMs;
  }

  /** evm_setNextBlockTimestamp: refused below the last block's second (time never goes backwards). */
  setNextTimestamp(seconds: bigint): void {
    this.devTime.setNextTimestamp(seconds, this.lastTimeMs());
  }

  /** anvil_setTime / evm_setTime (devclock.ts): the seconds ahead of the clock before, as Anvil. */
  setTime(seconds: bigint): bigint {
    return this.devTime.setTime(seconds, this.lastTimeMs());
  }

  /** anvil_setBlockTimestampInterval (ms) / removeBlockTimestampInterval: whether one was set. */
  setTimestampInterval(ms: number | undefined): boolean {
    return this.devTime.setInterval(ms);
  }

  /** evm_increaseTime: moves the clock forward; the next block's time grows by `seconds`. Returns the total, seconds. */
  increaseTime(seconds: bigint): bigint {
    return this.devTime.increaseTime(seconds);
  }

  /**
   * evm_mine / anvil_mine: makes `blocks` blocks now, with or without txs. `timestamp` (seconds) is
   * the first one's time; `intervalSec` spaces the following ones. Resolves when the last is committed.
   */
  async mine(blocks: bigint, intervalSec?: bigint, timestamp?: bigint): Promise<void> {
    if (timestamp !== undefined) this.setNextTimestamp(timestamp);
    for (let i = 0n; i < blocks; i++) {
      while (this.inFlight) await this.inFlight;
      if (this.stopped) return;
      this.clearTimer();
      if (i > 0n && intervalSec !== undefined && intervalSec > 0n) {
        this.devTime.setNextAfter(this.lastTimeMs(), intervalSec);
      }
      await this.exclusive(this.produce(true));
    }
    this.scheduleNext();
  }

  /** Holds the engine for `run` (no block starts meanwhile); call when nothing is in flight. */
  private async exclusive(run: Promise<void>): Promise<void> {
    this.inFlight = run.then(
      () => undefined,
      () => undefined,
    );
    try {
      await run;
    } finally {
      this.inFlight = undefined;
    }
  }

  /** Waits until no block is being made (a dev snapshot is taken between blocks). */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** The dev clock now (evm_snapshot). */
  saveClock(): DevClock {
    return this.devTime.save();
  }

  /** evm_revert: the dev clock of `saved` (devclock.ts). */
  restoreClock(saved: DevClock): void {
    this.devTime.restore(saved);
  }

  /** anvil_reset: the clock of a fresh node (no offset, no pending time request). */
  resetClock(): void {
    this.devTime.reset();
  }

  /**
   * Dev revert (evm_revert, anvil_reset): the chain goes back to `height` (the initial height - 1:
   * before the first block). Waits for the block in flight, then in ONE store transaction deletes
   * the CometBFT records and index rows above `height` together with the application's rows
   * (hooks.write): a crash leaves either the old chain or the new one. Then the engine continues
   * from the record at `height` (its commit, validators, BFT time) and hooks.after brings the
   * in-memory state along before the next block can start. New blocks reuse the heights.
   */
  async rewind(height: bigint, hooks: RewindHooks): Promise<void> {
    await this.idle();
    this.clearTimer();
    const run = (async () => {
      const top = this.height;
      this.store.transaction(() => {
        for (let h = top; h > height; h--) {
          const rec = this.store.comet.get(h);
          if (rec) this.index.unindexBlock(h, rec.block.data.txs, rec.results.txResults, rec.results.events);
        }
        this.index.rewindTxs(height);
        this.store.comet.deleteAbove(height);
        hooks.write();
      });
      this.store.forgetCaches();
      this.last = height >= this.opts.initialHeight ? this.store.comet.get(height) : undefined;
      await hooks.after();
      this.appHash = this.app.info().lastBlockAppHash;
    })();
    try {
      await this.exclusive(run);
    } finally {
      if (!this.stopped) this.scheduleNext();
    }
  }

  /** Stops making blocks; the block in flight finishes (atomically) first. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.inFlight;
  }

  /** `force`: a block even without txs (evm_mine). */
  private async produce(force: boolean): Promise<void> {
    if (this.stopped) return;
    // without empty blocks the height waits for a tx; txAvailable() schedules it (the initial height is always made)
    if (!force && !this.opts.createEmptyBlocks && this.last && this.app.pendingCount() === 0) return;
    const height = this.height + 1n;
    const last = this.last;
    const timeMs = this.devTime.nextBlockTime(last, this.opts.genesisTimeMs);
    // the sets of this height and the next: updates returned at H-1 show in next_validators_hash of H
    const validators = last?.nextValidators ?? sortValidators(this.opts.validators);
    const nextValidators = last
      ? applyValidatorUpdates(validators, last.results.validatorUpdates ?? [], this.opts.validatorKey.address, this.log)
      : validators;
    const ownIndex = validators.findIndex((v) => Buffer.compare(v.address, this.opts.validatorKey.address) === 0);
    if (ownIndex < 0) throw new Error(`the validator key is not in the validator set of height ${height}`);
    const step = (type: string, stepName: string, extra: Partial<RoundStepEvent> = {}) =>
      this.hooks.onRoundStep?.({ type, height, round: 0, step: stepName, ...extra });
    step('NewRound', 'RoundStepNewRound', { proposer: { address: this.opts.validatorKey.address, index: ownIndex } });
    step('NewRoundStep', 'RoundStepPropose');
    const maxTxBytes = Number(this.opts.maxBytes) - 1024 * 64;
    const prepareStart = performance.now();
    const txs = this.app.prepareProposal({ height, timeMs, maxTxBytes });
    const prepareMs = performance.now() - prepareStart;
    const lastCommit: Commit = last?.commit ?? { height: 0n, round: 0, blockId: zeroBlockId(), signatures: [] };
    const header: Header = {
      version: { block: BLOCK_PROTOCOL, app: this.opts.appVersion },
      chainId: this.opts.chainId,
      height,
      time: timestampFromMillis(timeMs),
      lastBlockId: last?.blockId ?? zeroBlockId(),
      lastCommitHash: commitHash(lastCommit),
      dataHash: txsHash(txs),
      validatorsHash: this.validatorsHash(validators),
      nextValidatorsHash: this.validatorsHash(nextValidators),
      consensusHash: this.consensusHash,
      appHash: this.appHash,
      lastResultsHash: last
        ? lastResultsHash(last.results.txResults.map((r) => ({ code: r.code, data: r.data, gasWanted: r.gasWanted, gasUsed: r.gasUsed })))
        : new Uint8Array(),
      evidenceHash: EMPTY_EVIDENCE_HASH,
      proposerAddress: this.opts.validatorKey.address,
    };
    const block: Block = { header, data: { txs }, evidence: [], lastCommit };
    const blockBytes = blockProto(block);
    const blockId: BlockID = { hash: headerHash(header), partSetHeader: partSetHeader(blockBytes) };
    step('CompleteProposal', 'RoundStepPropose', { blockId });
    step('NewRoundStep', 'RoundStepPrevote');
    if (this.hooks.onRoundStep && this.hooks.roundStepsWanted?.() !== false) step('Vote', 'RoundStepPrevote', { vote: this.prevote(height, blockId, timeMs, ownIndex) });
    step('ValidBlock', 'RoundStepPrevote');
    step('Polka', 'RoundStepPrevote');
    step('Lock', 'RoundStepPrevote');
    step('NewRoundStep', 'RoundStepPrecommit');
    let results: FinalizeBlockResponse;
    const executeStart = performance.now();
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
    // the CheckTx requests that came in during execution are answered before the block is written
    await yieldToEventLoop();
    // precommit: vote time is max(now, block time + 1ms), as CometBFT's voteTime
    const voteMs = Math.max(this.devTime.now(), timeMs + 1);
    const sig = signCommit(this.opts.chainId, height, 0, blockId, timestampFromMillis(voteMs), this.opts.validatorKey.privKey);
    const signatures = validators.map((_, i) => (i === ownIndex ? sig : commitSigAbsent()));
    const commit: Commit = { height, round: 0, blockId, signatures };
    const rec: CometBlockRecord = { block, blockId, commit, results, size: blockBytes.length, validators, nextValidators };
    step('Vote', 'RoundStepPrecommit', {
      vote: { type: SignedMsgType.precommit, height, round: 0, blockId, timestamp: sig.timestamp, validatorAddress: sig.validatorAddress, validatorIndex: ownIndex, signature: sig.signature },
    });
    step('NewRoundStep', 'RoundStepCommit');
    const commitStart = performance.now();
    const executeMs = commitStart - executeStart;
    try {
      this.store.transaction(() => {
        this.app.commit();
        this.store.comet.put(height, rec);
        this.index.indexBlock(height, txs.map(txHash), txs, results.txResults, results.events);
      });
    } catch (e) {
      await this.app.abortBlock();
      throw e;
    }
    this.last = rec;
    this.appHash = results.appHash;
    // the dev time controls are used: later blocks go on from this one's time
    this.devTime.used(timeMs);
    await this.app.afterCommit();
    this.hooks.onCommitted(height, rec, { prepareMs, executeMs, commitMs: performance.now() - commitStart });
    this.hooks.onRoundStep?.({ type: 'NewRoundStep', height: height + 1n, round: 0, step: 'RoundStepNewHeight' });
  }

  private validatorsHash(set: readonly Validator[]): Uint8Array {
    let hash = this.validatorHashes.get(set);
    if (!hash) this.validatorHashes.set(set, (hash = validatorSetHash(set)));
    return hash;
  }

  /** This validator's signed prevote for `blockId` (published as a Vote event; a commit carries precommits only). */
  private prevote(height: bigint, blockId: BlockID, timeMs: number, index: number): VoteEventData {
    const timestamp = timestampFromMillis(Math.max(this.devTime.now(), timeMs + 1));
    const bytes = voteSignBytes(this.opts.chainId, { type: SignedMsgType.prevote, height, round: 0, blockId, timestamp });
    return {
      type: SignedMsgType.prevote,
      height,
      round: 0,
      blockId,
      timestamp,
      validatorAddress: this.opts.validatorKey.address,
      validatorIndex: index,
      signature: ed25519Sign(this.opts.validatorKey.privKey, bytes),
    };
  }
}
