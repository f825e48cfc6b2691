/**
 * Which rules apply at a block time: the genesis hardfork, then each fork of `app_state.evm.chain_config`
 * from its activation time on (docs/configuration.md "Hardforks"). Every fork of the schedule gets one
 * fixed Common (evm/common.ts makeCommon: made once, never copied), and a block, a call or a replay picks
 * the one of its block's timestamp — the CometBFT block time, which every node agrees on.
 */
import type { Common } from '@ethereumjs/common';
import { SUPPORTED_HARDFORKS, type ForkTimes } from '../config/genesis.js';
import { makeCommon } from './common.js';

/** A fork and the first block time its rules apply at (0 for the genesis fork). */
export interface ForkActivation {
  fork: string;
  time: bigint;
}

/** The serializable description of a chain's forks (worker threads rebuild the schedule from it). */
export interface ForkRules {
  hardfork: string;
  forkTimes?: ForkTimes;
}

export class ForkSchedule {
  /** oldest first; the first is the genesis fork at time 0 */
  readonly activations: readonly ForkActivation[];
  private readonly commons = new Map<string, Common>();

  constructor(
    readonly chainId: bigint,
    readonly rules: ForkRules,
    /** a Common of the genesis fork already made (ForkSchedule.single) */
    made?: Common,
  ) {
    const start = SUPPORTED_HARDFORKS.indexOf(rules.hardfork);
    if (start < 0) throw new Error(`unsupported hardfork ${JSON.stringify(rules.hardfork)}`);
    const list: ForkActivation[] = [{ fork: rules.hardfork, time: 0n }];
    for (const fork of SUPPORTED_HARDFORKS.slice(start + 1)) {
      const time = rules.forkTimes?.[fork];
      if (time === undefined) break;
      list.push({ fork, time });
    }
    this.activations = list;
    for (const a of list) this.commons.set(a.fork, made?.hardfork() === a.fork ? made : makeCommon(chainId, a.fork));
  }

  /** The schedule of one Common made elsewhere: its fork at every block time. */
  static single(common: Common): ForkSchedule {
    return new ForkSchedule(common.chainId(), { hardfork: common.hardfork() }, common);
  }

  /** the fork whose rules a block with this timestamp (unix seconds) runs */
  forkAt(timestamp: bigint): string {
    let fork = this.activations[0]!.fork;
    for (const a of this.activations) if (a.time <= timestamp) fork = a.fork;
    return fork;
  }

  /** the fixed Common of the rules at `timestamp` (the same object every time) */
  commonAt(timestamp: bigint): Common {
    return this.commons.get(this.forkAt(timestamp))!;
  }

  /** the Common of a fork of this schedule */
  commonOf(fork: string): Common {
    const c = this.commons.get(fork);
    if (c === undefined) throw new Error(`fork ${fork} is not in this chain's schedule`);
    return c;
  }

  /** every fork's Common, oldest first */
  allCommons(): Common[] {
    return this.activations.map((a) => this.commons.get(a.fork)!);
  }

  /** the newest fork of the schedule (it can decode everything any of them can) */
  latestCommon(): Common {
    return this.commons.get(this.activations[this.activations.length - 1]!.fork)!;
  }

  /** the activation after `timestamp`, if one is scheduled */
  nextAfter(timestamp: bigint): ForkActivation | undefined {
    return this.activations.find((a) => a.time > timestamp);
  }
}
