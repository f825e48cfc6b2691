/**
 * BFT time (state.MedianTime): the time of block H+1 is the voting-power-weighted median of the
 * timestamps in the commit for block H. Absent signatures do not count.
 */
import { bytesEqual } from './merkle.js';
import { compareTime } from './time.js';
import type { Timestamp } from './time.js';
import { BlockIDFlag } from './types.js';
import type { Commit, Validator } from './types.js';

export function bftTime(commit: Commit, validators: readonly Validator[]): Timestamp {
  const weighted: { time: Timestamp; power: bigint }[] = [];
  let total = 0n;
  for (const sig of commit.signatures) {
    if (sig.blockIdFlag === BlockIDFlag.absent) continue;
    const v = validators.find((val) => bytesEqual(val.address, sig.validatorAddress));
    if (!v) throw new Error(`commit validator not found in validator set: ${Buffer.from(sig.validatorAddress).toString('hex').toUpperCase()}`);
    total += v.votingPower;
    weighted.push({ time: sig.timestamp, power: v.votingPower });
  }
  if (weighted.length === 0) throw new Error('bftTime: the commit has no signatures');
  weighted.sort((a, b) => compareTime(a.time, b.time));
  let median = total / 2n;
  for (const w of weighted) {
    if (median <= w.power) return w.time;
    median -= w.power;
  }
  // Unreachable: the powers sum to total > median.
  return weighted[weighted.length - 1]!.time;
}
