/**
 * Go `time.Duration` strings (`5s`, `2m0s`, `1m30s`, `500ms`, `1.5h`, `-1s`, `0`), the form Evmos's
 * app.toml and CometBFT's config.toml use. Values are milliseconds here.
 */

const NS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const NS_PER_MS = 1e6;
/** one `<number><unit>` element: digits with an optional fraction, then letters */
const ELEMENT = /^(\d+\.?\d*|\.\d+)([a-zµμ]+)/;

/** Parses a Go duration string to milliseconds (may be fractional or negative). Throws a plain Error. */
export function parseDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`invalid duration "${text}"`);
  let ns = 0;
  while (rest !== '') {
    const m = ELEMENT.exec(rest);
    if (!m) throw new Error(`invalid duration "${text}"`);
    const perUnit = NS_PER_UNIT[m[2]!];
    if (perUnit === undefined) throw new Error(`unknown unit "${m[2]}" in duration "${text}"`);
    ns += Number(m[1]) * perUnit;
    rest = rest.slice(m[0].length);
  }
  if (!Number.isFinite(ns)) throw new Error(`invalid duration "${text}"`);
  return (sign * ns) / NS_PER_MS;
}

/** Formats milliseconds like Go's `Duration.String()`: `0s`, `500ms`, `5s`, `2m0s`, `1h0m0s`, `1m30.5s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1) return sign + trimFraction(abs * 1000) + 'µs';
  if (abs < 1000) return sign + trimFraction(abs) + 'ms';
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.floor((abs % 3_600_000) / 60_000);
  const seconds = (abs % 60_000) / 1000;
  let out = trimFraction(seconds) + 's';
  if (hours > 0 || minutes > 0) out = `${minutes}m` + out;
  if (hours > 0) out = `${hours}h` + out;
  return sign + out;
}

/** Decimal with at most 9 fraction digits (Go prints nanosecond precision), no trailing zeros. */
function trimFraction(n: number): string {
  return String(Number(n.toFixed(9)));
}
