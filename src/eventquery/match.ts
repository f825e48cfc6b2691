/**
 * Matching a compiled query against an event (CometBFT libs/pubsub/query): the semantics of
 * WebSocket subscriptions. Also the value comparisons the kv indexer uses (numbers, dates, times),
 * so tx_search and block_search share them.
 *
 * Numbers are compared exactly as decimals (Go uses big.Float with ≥64 bits of precision; the two
 * agree on every value CometBFT's own tests use).
 */
import { Token, parseDate, parseQuery, parseTime, type Condition, type Query } from './syntax.js';

/** An exact decimal: `int / 10^scale`. */
export interface Decimal {
  int: bigint;
  scale: number;
}

const LEADING_NUMBER = /^\d+(\.\d+)?/;
const STRICT_INT = /^[+-]?\d+$/;
const STRICT_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function decimalOf(text: string): Decimal {
  let s = text;
  let sign = 1n;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1n;
    s = s.slice(1);
  }
  let exp = 0;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    exp = Number(s.slice(e + 1));
    s = s.slice(0, e);
  }
  const dot = s.indexOf('.');
  const digits = dot < 0 ? s : s.slice(0, dot) + s.slice(dot + 1);
  let scale = dot < 0 ? 0 : s.length - dot - 1;
  let int = BigInt(digits === '' ? '0' : digits) * sign;
  scale -= exp;
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int, scale };
}

export function compareDecimal(a: Decimal, b: Decimal): number {
  const s = Math.max(a.scale, b.scale);
  const x = a.int * 10n ** BigInt(s - a.scale);
  const y = b.int * 10n ** BigInt(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A query's number literal (`digits[.digits]`). */
export function literalNumber(text: string): Decimal | undefined {
  return /^\d+(\.\d+)?$/.test(text) ? decimalOf(text) : undefined;
}

/**
 * An event value as pubsub reads a number: an integer, or the leading `digits[.digits]` of the
 * value (`"100stake"` is 100). A signed integer does not match (upstream parses the unsigned prefix).
 */
export function eventNumber(value: string): Decimal | undefined {
  if (STRICT_INT.test(value) && !/^\d+$/.test(value)) return undefined;
  const m = LEADING_NUMBER.exec(value);
  return m ? decimalOf(m[0]) : undefined;
}

/** An indexed value as the kv indexer reads a number: a whole integer or float, nothing else. */
export function indexedNumber(value: string): Decimal | undefined {
  const v = value.trim();
  if (STRICT_INT.test(v) || STRICT_FLOAT.test(v)) return decimalOf(v);
  return undefined;
}

function timeOf(value: string, type: typeof Token.date | typeof Token.time): bigint | undefined {
  try {
    return (type === Token.date ? parseDate(value) : parseTime(value)).nanos;
  } catch {
    return undefined;
  }
}

const ORDER_OK: Readonly<Record<number, (c: number) => boolean>> = {
  [Token.eq]: (c) => c === 0,
  [Token.lt]: (c) => c < 0,
  [Token.leq]: (c) => c <= 0,
  [Token.gt]: (c) => c > 0,
  [Token.geq]: (c) => c >= 0,
};

/** A value predicate for one condition (pubsub semantics; the condition's tag is not checked). */
function valueMatcher(c: Condition): (value: string) => boolean {
  if (c.op === Token.exists || !c.arg) return () => true;
  const arg = c.arg;
  if (c.op === Token.contains) return (v) => v.includes(arg.text);
  const ok = ORDER_OK[c.op]!;
  switch (arg.type) {
    case Token.string:
      return (v) => v === arg.text;
    case Token.number: {
      const want = literalNumber(arg.text)!;
      return (v) => {
        const got = eventNumber(v);
        return got !== undefined && ok(compareDecimal(got, want));
      };
    }
    case Token.date:
    case Token.time: {
      const want = timeOf(arg.text, arg.type)!;
      return (v) => {
        const got = timeOf(v, arg.type as typeof Token.date);
        return got !== undefined && ok(got < want ? -1 : got > want ? 1 : 0);
      };
    }
  }
}

/** Events as pubsub carries them: `"type.key" → values`. */
export type EventMap = ReadonlyMap<string, readonly string[]>;

interface Expanded {
  type: string;
  key: string;
  values: readonly string[];
}

/** Splits each composite key at its last `.` into an event type and attribute key (ExpandEvents). */
function expand(events: EventMap): Expanded[] {
  const out: Expanded[] = [];
  for (const [composite, values] of events) {
    const dot = composite.lastIndexOf('.');
    out.push(dot < 0 ? { type: '', key: composite, values } : { type: composite.slice(0, dot), key: composite.slice(dot + 1), values });
  }
  return out;
}

interface CompiledCondition {
  tag: string;
  match: (v: string) => boolean;
}

/** A query ready to match events. */
export class CompiledQuery {
  readonly conditions: readonly CompiledCondition[];

  constructor(readonly query: Query) {
    this.conditions = query.conditions.map((c) => ({ tag: c.tag, match: valueMatcher(c) }));
  }

  /** Pubsub semantics: every condition matches some value of its tag; an empty event set never matches. */
  matches(events: EventMap): boolean {
    if (events.size === 0) return false;
    const expanded = expand(events);
    return this.conditions.every((c) => expanded.some((e) => conditionMatchesEvent(c, e)));
  }
}

function conditionMatchesEvent(c: CompiledCondition, e: Expanded): boolean {
  if (!c.tag.startsWith(e.type)) return false;
  // a tag that names the event type exactly is matched against "" (existence of a type)
  if (c.tag.length === e.type.length) return c.match('');
  if (`${e.type}.${e.key}` !== c.tag) return false;
  return e.values.some(c.match);
}

/** Parses and compiles; throws QuerySyntaxError. */
export function compileQuery(text: string): CompiledQuery {
  return new CompiledQuery(parseQuery(text));
}
