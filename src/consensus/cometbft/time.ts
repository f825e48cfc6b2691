/**
 * CometBFT timestamps without Date: `{seconds, nanos}` since the Unix epoch (google.protobuf.Timestamp),
 * printed as Go prints `time.Time` in RFC3339Nano, UTC, trailing fractional zeros trimmed.
 */
import { civilFromDays, daysFromCivil, daysInMonth } from '../../lib/calendar.js';
import type { Timestamp } from '../../types/cometbft.js';

export type { Timestamp };

const SECONDS_PER_DAY = 86400n;
const NANOS_PER_SECOND = 1_000_000_000;
/** Seconds from 0001-01-01 to 1970-01-01. */
const ZERO_TIME_SECONDS = -62135596800n;

/** Go's zero `time.Time` (0001-01-01T00:00:00Z): the timestamp of an absent CommitSig. */
export const ZERO_TIME: Timestamp = Object.freeze({ seconds: ZERO_TIME_SECONDS, nanos: 0 });

/** Negative, zero or positive as a is before, equal to or after b. */
export function compareTime(a: Timestamp, b: Timestamp): number {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
  return a.nanos - b.nanos;
}

/** Timestamp of a JS millisecond epoch value (e.g. Date.now()). */
export function timestampFromMillis(ms: number): Timestamp {
  if (!Number.isSafeInteger(ms)) throw new RangeError(`timestamp: not an integer millisecond value: ${ms}`);
  const seconds = Math.floor(ms / 1000);
  return { seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/** Milliseconds since the epoch, truncated toward -∞. */
export function timestampToMillis(t: Timestamp): number {
  return Number(t.seconds) * 1000 + Math.floor(t.nanos / 1_000_000);
}



const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function checkNanos(t: Timestamp): void {
  if (!Number.isInteger(t.nanos) || t.nanos < 0 || t.nanos >= NANOS_PER_SECOND) {
    throw new RangeError(`timestamp nanos out of range: ${t.nanos}`);
  }
}

/** RFC3339Nano in UTC as CometBFT's JSON prints it: `2024-01-01T00:00:04.9Z`, `2024-01-01T00:00:00Z`. */
export function formatTime(t: Timestamp): string {
  checkNanos(t);
  let days = t.seconds / SECONDS_PER_DAY;
  let secOfDay = t.seconds % SECONDS_PER_DAY;
  if (secOfDay < 0n) {
    secOfDay += SECONDS_PER_DAY;
    days -= 1n;
  }
  const [year, month, day] = civilFromDays(Number(days));
  if (year < 0 || year > 9999) throw new RangeError(`timestamp year outside of range [0,9999]: ${year}`);
  const s = Number(secOfDay);
  let out = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}`;
  if (t.nanos !== 0) out += '.' + pad(t.nanos, 9).replace(/0+$/, '');
  return out + 'Z';
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/;

/** Parses an RFC3339 time (fraction of up to 9 digits, `Z` or a `±hh:mm` offset) to UTC. */
export function parseTime(s: string): Timestamp {
  const m = RFC3339.exec(s);
  if (!m) throw new RangeError(`invalid RFC3339 time: ${JSON.stringify(s)}`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new RangeError(`invalid RFC3339 time: ${JSON.stringify(s)}`);
  }
  let offset = 0n;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw new RangeError(`invalid RFC3339 time offset: ${JSON.stringify(s)}`);
    offset = BigInt((oh * 60 + om) * 60) * (m[9] === '-' ? -1n : 1n);
  }
  const seconds =
    BigInt(daysFromCivil(year, month, day)) * SECONDS_PER_DAY + BigInt(hour * 3600 + minute * 60 + second) - offset;
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  return { seconds, nanos };
}
