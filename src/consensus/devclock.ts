/**
 * The engine's dev clock (docs/dev-mode.md "Time"): what evm_increaseTime and evm_setNextBlockTimestamp
 * ask of the next block's time, and the offset they put on the wall clock that vote times are read
 * from. evm_snapshot saves it, evm_revert puts it back, anvil_reset clears it ("Snapshots, revert and
 * reset"). Without dev time controls a block's time is BFT time: its parent commit's vote time.
 */
import { invalidArgument, type DomainError } from '../lib/errors.js';
import type { CometBlockRecord } from '../types/cometbft.js';
import { BlockIDFlag, timestampToMillis } from './cometbft/index.js';

/** The dev clock of the engine (evm_snapshot keeps one, evm_revert puts it back). */
export interface DevClock {
  clockOffsetMs: number;
  pendingIncreaseMs: number;
  increasedSeconds: bigint;
  nextTimeMs: number | undefined;
  intervalMs: number | undefined;
  /** Date.now() when it was saved */
  savedAtMs: number;
}

/** A dev time request that would make time go backwards (Anvil's message): the client's argument is wrong. */
const timestampError = (seconds: bigint): DomainError<'invalidArgument'> =>
  invalidArgument(`Timestamp error: ${seconds} is lower than previous block's timestamp`);

export class DevTime {
  /** added to the wall clock for vote times (evm_increaseTime, evm_setNextBlockTimestamp) */
  private clockOffsetMs = 0;
  /** evm_increaseTime since the last block: added to that block's time */
  private pendingIncreaseMs = 0;
  /** total of evm_increaseTime, seconds (its answer, as Anvil) */
  private increasedSeconds = 0n;
  /** evm_setNextBlockTimestamp: the time of the next block, milliseconds */
  private nextTimeMs: number | undefined;
  /** anvil_setBlockTimestampInterval: each block `intervalMs` after the last one */
  private intervalMs: number | undefined;

  /** The wall clock moved by the dev time controls. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /** evm_setNextBlockTimestamp: refused below the last block's second (time never goes backwards). */
  setNextTimestamp(seconds: bigint, lastTimeMs: number): void {
    if (seconds * 1000n < BigInt(Math.floor(lastTimeMs / 1000) * 1000)) throw timestampError(seconds);
    this.nextTimeMs = Number(seconds) * 1000;
  }

  /**
   * anvil_setTime / evm_setTime: the clock reads `seconds` now and the next block has that time;
   * refused below the last block's second (CometBFT block time never goes backwards; Anvil allows
   * it). Answers as Anvil 1.7.1 (foundry crates/anvil/src/eth/api.rs evm_set_time): the seconds from
   * the clock before the call to `seconds`, 0 when not ahead.
   */
  setTime(seconds: bigint, lastTimeMs: number): bigint {
    this.setNextTimestamp(seconds, lastTimeMs);
    const before = BigInt(Math.floor(this.now() / 1000));
    this.clockOffsetMs = Number(seconds) * 1000 - Date.now();
    this.pendingIncreaseMs = 0;
    return seconds > before ? seconds - before : 0n;
  }

  /** anvil_setBlockTimestampInterval (milliseconds) / removeBlockTimestampInterval (undefined): whether one was set. */
  setInterval(ms: number | undefined): boolean {
    const had = this.intervalMs !== undefined;
    this.intervalMs = ms;
    return had;
  }

  /** anvil_mine's interval: the next block comes `intervalSec` after the last one. */
  setNextAfter(lastTimeMs: number, intervalSec: bigint): void {
    this.nextTimeMs = lastTimeMs + Number(intervalSec) * 1000;
  }

  /** evm_increaseTime: moves the clock forward; the next block's time grows by `seconds`. Returns the total, seconds. */
  increaseTime(seconds: bigint): bigint {
    const ms = Number(seconds) * 1000;
    this.clockOffsetMs += ms;
    this.pendingIncreaseMs += ms;
    this.increasedSeconds += seconds;
    return this.increasedSeconds;
  }

  /** The next block's time: BFT time (the last commit's vote time) unless a dev time control asks otherwise. */
  nextBlockTime(last: CometBlockRecord | undefined, genesisTimeMs: number): number {
    if (!last) return genesisTimeMs;
    const bftTime = timestampToMillis(last.commit.signatures.find((s) => s.blockIdFlag === BlockIDFlag.commit)!.timestamp);
    const floor = timestampToMillis(last.block.header.time) + 1;
    if (this.nextTimeMs !== undefined) return Math.max(this.nextTimeMs, floor);
    if (this.intervalMs !== undefined) return Math.max(timestampToMillis(last.block.header.time) + this.intervalMs + this.pendingIncreaseMs, floor);
    if (this.pendingIncreaseMs !== 0) return Math.max(bftTime + this.pendingIncreaseMs, floor);
    return bftTime;
  }

  /** A block made at `timeMs` used the requests: later blocks go on from its time. */
  used(timeMs: number): void {
    if (this.nextTimeMs !== undefined || this.intervalMs !== undefined) this.clockOffsetMs = timeMs - Date.now();
    this.nextTimeMs = undefined;
    this.pendingIncreaseMs = 0;
  }

  /** The dev clock now (evm_snapshot). */
  save(): DevClock {
    return {
      clockOffsetMs: this.clockOffsetMs,
      pendingIncreaseMs: this.pendingIncreaseMs,
      increasedSeconds: this.increasedSeconds,
      nextTimeMs: this.nextTimeMs,
      intervalMs: this.intervalMs,
      savedAtMs: Date.now(),
    };
  }

  /**
   * evm_revert: the dev clock reads again what it read when `saved` was taken (as Hardhat does; Anvil
   * resets it to the snapshot block's time, a moment earlier), with the pending increase and the next
   * block's timestamp of that moment.
   */
  restore(saved: DevClock): void {
    this.clockOffsetMs = saved.clockOffsetMs - (Date.now() - saved.savedAtMs);
    this.pendingIncreaseMs = saved.pendingIncreaseMs;
    this.increasedSeconds = saved.increasedSeconds;
    this.nextTimeMs = saved.nextTimeMs;
    this.intervalMs = saved.intervalMs;
  }

  /** anvil_reset: the clock of a fresh node (no offset, no pending time request). */
  reset(): void {
    this.clockOffsetMs = 0;
    this.pendingIncreaseMs = 0;
    this.increasedSeconds = 0n;
    this.nextTimeMs = undefined;
    this.intervalMs = undefined;
  }
}
