/**
 * The CometBFT event query language (libs/pubsub/query/syntax): a scanner and a parser that accept
 * exactly what CometBFT v0.38 accepts and report errors with the same texts and byte offsets.
 *
 *   query     = condition { "AND" condition }
 *   condition = tag ( "=" (string|number|date|time)
 *                   | ("<" | "<=" | ">" | ">=") (number|date|time)
 *                   | "CONTAINS" string
 *                   | "EXISTS" )
 *   tag       = a letter, digit or "_" first, then letters, digits, ".", "_" or "-"
 *               (an ASCII digit first scans as a number instead)
 *   string    = '...'  (no escapes)       number = digits [ "." digits ]
 *   date      = DATE 2006-01-02           time   = TIME 2006-01-02T15:04:05Z07:00
 *
 * Offsets are byte offsets into the UTF-8 text, as Go reports them. Pure: no I/O.
 */
import { daysFromCivil, daysInMonth } from '../lib/calendar.js';
import { DomainError, invalidArgument } from '../lib/errors.js';

export const Token = {
  invalid: 0,
  tag: 1,
  string: 2,
  number: 3,
  time: 4,
  date: 5,
  and: 6,
  contains: 7,
  exists: 8,
  eq: 9,
  lt: 10,
  leq: 11,
  gt: 12,
  geq: 13,
} as const;
export type Token = (typeof Token)[keyof typeof Token];

const TOKEN_NAMES: readonly string[] = [
  'invalid token',
  'tag',
  'string',
  'number',
  'timestamp',
  'datestamp',
  'AND operator',
  'CONTAINS operator',
  'EXISTS operator',
  '= operator',
  '< operator',
  '<= operator',
  '> operator',
  '>= operator',
];

function tokenName(t: Token): string {
  return TOKEN_NAMES[t] ?? 'unknown token type';
}

/** Years a DATE or TIME literal may name. */
export const MIN_LITERAL_YEAR = 1900;
export const MAX_LITERAL_YEAR = 2999;

/** A query that does not parse (an `invalidArgument`); `message` is CometBFT's text (`offset N: got X, wanted Y`). */
export class QuerySyntaxError extends DomainError<'invalidArgument'> {
  constructor(message: string) {
    super('invalidArgument', message, undefined);
    this.name = 'QuerySyntaxError';
  }
}

export type ArgType = typeof Token.string | typeof Token.number | typeof Token.time | typeof Token.date;

export interface Arg {
  type: ArgType;
  /** the literal's text: a string without its quotes, a number's digits, a date or time */
  text: string;
}

export type Operator =
  | typeof Token.eq
  | typeof Token.lt
  | typeof Token.leq
  | typeof Token.gt
  | typeof Token.geq
  | typeof Token.contains
  | typeof Token.exists;

export interface Condition {
  tag: string;
  op: Operator;
  /** the operator as written (`<=`, `CONTAINS`, ...) */
  opText: string;
  /** absent for EXISTS */
  arg?: Arg;
}

export interface Query {
  conditions: Condition[];
}

function argString(a: Arg): string {
  switch (a.type) {
    case Token.string:
      return `'${a.text}'`;
    case Token.time:
      return `TIME ${a.text}`;
    case Token.date:
      return `DATE ${a.text}`;
    default:
      return a.text;
  }
}

function conditionString(c: Condition): string {
  const s = `${c.tag} ${c.opText}`;
  return c.arg ? `${s} ${argString(c.arg)}` : s;
}

/** The normalised text of a query (CometBFT's `Query.String()`): conditions joined by ` AND `. */
export function queryString(q: Query): string {
  return q.conditions.map(conditionString).join(' AND ');
}

// ---- calendar literals ---------------------------------------------------------------------------

/** Nanoseconds since the Unix epoch of a UTC calendar time. */
function epochNanos(y: number, mo: number, d: number, h: number, mi: number, s: number, nanos: number, offsetSeconds: number): bigint {
  const days = daysFromCivil(y, mo, d);
  const seconds = BigInt(days) * 86400n + BigInt(h * 3600 + mi * 60 + s) - BigInt(offsetSeconds);
  return seconds * 1_000_000_000n + BigInt(nanos);
}


export interface ParsedTime {
  /** nanoseconds since the Unix epoch */
  nanos: bigint;
  year: number;
}

const DATE_LAYOUT = '2006-01-02';
const TIME_LAYOUT = '2006-01-02T15:04:05Z07:00';
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/;

/** Go's `time.Parse("2006-01-02", s)`; throws with a Go-style message. */
export function parseDate(s: string): ParsedTime {
  const m = DATE_RE.exec(s);
  if (!m) throw invalidArgument(`parsing time ${JSON.stringify(s)} as ${JSON.stringify(DATE_LAYOUT)}: cannot parse ${JSON.stringify(s)} as ${JSON.stringify(DATE_LAYOUT)}`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) throw invalidArgument(`parsing time ${JSON.stringify(s)}: month out of range`);
  if (d < 1 || d > daysInMonth(y, mo)) throw invalidArgument(`parsing time ${JSON.stringify(s)}: day out of range`);
  return { nanos: epochNanos(y, mo, d, 0, 0, 0, 0, 0), year: y };
}

/** Go's `time.Parse(time.RFC3339, s)` (fractional seconds accepted, as Go does); throws with a Go-style message. */
export function parseTime(s: string): ParsedTime {
  const m = TIME_RE.exec(s);
  if (!m) throw invalidArgument(`parsing time ${JSON.stringify(s)} as ${JSON.stringify(TIME_LAYOUT)}: cannot parse ${JSON.stringify(s)} as ${JSON.stringify(TIME_LAYOUT)}`);
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12) throw invalidArgument(`parsing time ${JSON.stringify(s)}: month out of range`);
  if (d < 1 || d > daysInMonth(y, mo)) throw invalidArgument(`parsing time ${JSON.stringify(s)}: day out of range`);
  if (h > 23) throw invalidArgument(`parsing time ${JSON.stringify(s)}: hour out of range`);
  if (mi > 59) throw invalidArgument(`parsing time ${JSON.stringify(s)}: minute out of range`);
  if (sec > 59) throw invalidArgument(`parsing time ${JSON.stringify(s)}: second out of range`);
  let offset = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 24 || om > 59) throw invalidArgument(`parsing time ${JSON.stringify(s)}: time zone offset out of range`);
    offset = (oh * 3600 + om * 60) * (m[9] === '-' ? -1 : 1);
  }
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  return { nanos: epochNanos(y, mo, d, h, mi, sec, nanos, offset), year: y };
}

// ---- scanner -------------------------------------------------------------------------------------

const EOF = 'EOF';

/** A scanner error (Go's io.EOF is the text `EOF`); tryNext reports its text. */
class ScanError extends QuerySyntaxError {}

const isAsciiDigit = (ch: string): boolean => ch >= '0' && ch <= '9';
const isSpace = (ch: string): boolean => /^\p{White_Space}$/u.test(ch);
const isLetter = (ch: string): boolean => /^\p{L}$/u.test(ch);
const isUnicodeDigit = (ch: string): boolean => /^\p{Nd}$/u.test(ch);
const isTagRune = (ch: string): boolean => ch === '.' || ch === '_' || ch === '-' || isLetter(ch) || isUnicodeDigit(ch);
const isFirstTagRune = (ch: string): boolean => ch === '_' || isLetter(ch) || isUnicodeDigit(ch);
const isTimeRune = (ch: string): boolean => '-T:+Z'.includes(ch) || isAsciiDigit(ch);
const isDateRune = (ch: string): boolean => isAsciiDigit(ch) || ch === '-';

function utf8Length(ch: string): number {
  const cp = ch.codePointAt(0)!;
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** Reads tokens of the query language; mirrors syntax.Scanner (offsets in UTF-8 bytes). */
export class Scanner {
  private readonly runes: string[];
  private at = 0;
  private buf = '';
  private tok: Token = Token.invalid;
  private err: ScanError | undefined;
  private pos = 0;
  private end = 0;
  /** byte size of the last rune read (0 at end of input) */
  private last = 0;

  constructor(input: string) {
    this.runes = Array.from(input);
  }

  /** Advances to the next token; throws ScanError (`EOF` at the end of input). */
  next(): void {
    this.buf = '';
    this.pos = this.end;
    this.tok = Token.invalid;
    this.err = undefined;
    for (;;) {
      const ch = this.rune();
      if (ch === undefined) this.fail(EOF);
      if (isSpace(ch)) {
        this.pos = this.end;
        continue;
      }
      if (isAsciiDigit(ch)) return this.scanNumber(ch);
      if (isFirstTagRune(ch)) return this.scanTagLike(ch);
      if (ch === "'") return this.scanString(ch);
      if (ch === '<' || ch === '>' || ch === '=') return this.scanCompare(ch);
      this.fail(`invalid input ${ch} at offset ${this.end}`);
    }
  }

  /** next() that reports the error text instead of throwing ('' on success). */
  tryNext(): string {
    try {
      this.next();
      return '';
    } catch (e) {
      if (e instanceof ScanError) return e.message;
      throw e;
    }
  }

  token(): Token {
    return this.tok;
  }

  text(): string {
    return this.buf;
  }

  /** start offset of the current token */
  position(): number {
    return this.pos;
  }

  error(): string | undefined {
    return this.err?.message;
  }

  private rune(): string | undefined {
    const ch = this.runes[this.at];
    if (ch === undefined) {
      this.last = 0;
      return undefined;
    }
    this.at++;
    this.last = utf8Length(ch);
    this.end += this.last;
    return ch;
  }

  private unrune(): void {
    if (this.last > 0) this.at--;
    this.end -= this.last;
    this.last = 0;
  }

  private fail(message: string): never {
    this.err = new ScanError(message);
    throw this.err;
  }

  private scanNumber(first: string): void {
    this.buf += first;
    this.scanWhile(isAsciiDigit);
    const ch = this.rune();
    if (ch === '.') {
      this.buf += ch;
      this.scanWhile(isAsciiDigit);
    } else {
      this.unrune();
    }
    this.tok = Token.number;
  }

  private scanString(quote: string): void {
    for (;;) {
      const ch = this.rune();
      if (ch === undefined) this.fail(EOF);
      if (ch === quote) {
        this.tok = Token.string;
        return;
      }
      this.buf += ch;
    }
  }

  private scanCompare(first: string): void {
    this.buf += first;
    if (first === '=') {
      this.tok = Token.eq;
      return;
    }
    this.tok = first === '<' ? Token.lt : Token.gt;
    const ch = this.rune();
    if (ch === undefined) return;
    if (ch === '=') {
      this.buf += ch;
      this.tok = first === '<' ? Token.leq : Token.geq;
      return;
    }
    this.unrune();
  }

  private scanTagLike(first: string): void {
    this.buf += first;
    let hasSpace = false;
    for (;;) {
      const ch = this.rune();
      if (ch === undefined) break;
      if (!isTagRune(ch)) {
        hasSpace = ch === ' ';
        break;
      }
      this.buf += ch;
    }
    switch (this.buf) {
      case 'TIME':
        if (hasSpace) return this.scanLiteral(isTimeRune, 'TIME', 'timestamp', parseTime, Token.time);
        this.tok = Token.tag;
        break;
      case 'DATE':
        if (hasSpace) return this.scanLiteral(isDateRune, 'DATE', 'datestamp', parseDate, Token.date);
        this.tok = Token.tag;
        break;
      case 'AND':
        this.tok = Token.and;
        break;
      case 'EXISTS':
        this.tok = Token.exists;
        break;
      case 'CONTAINS':
        this.tok = Token.contains;
        break;
      default:
        this.tok = Token.tag;
    }
    this.unrune();
  }

  private scanLiteral(ok: (ch: string) => boolean, label: string, noun: string, parse: (s: string) => ParsedTime, tok: Token): void {
    this.buf = '';
    this.scanWhile(ok);
    let year: number;
    try {
      year = parse(this.buf).year;
    } catch (e) {
      this.fail(`invalid ${label} value: ${(e as Error).message}`);
    }
    if (year < MIN_LITERAL_YEAR || year > MAX_LITERAL_YEAR) this.fail(`${noun} year ${year} out of range`);
    this.tok = tok;
  }

  private scanWhile(ok: (ch: string) => boolean): void {
    for (;;) {
      const ch = this.rune();
      if (ch === undefined) return;
      if (!ok(ch)) {
        this.unrune();
        return;
      }
      this.buf += ch;
    }
  }
}

// ---- parser --------------------------------------------------------------------------------------

function tokLabel(tokens: readonly Token[]): string {
  if (tokens.length === 1) return tokenName(tokens[0]!);
  const names = tokens.map(tokenName);
  return names.slice(0, -1).join(', ') + ' or ' + names[names.length - 1];
}

/** Parses a query; throws QuerySyntaxError with CometBFT's message (e.g. `offset 0: EOF`). */
export function parseQuery(input: string): Query {
  const s = new Scanner(input);

  const require = (...tokens: Token[]): void => {
    const err = s.tryNext();
    if (err !== '') throw new QuerySyntaxError(`offset ${s.position()}: ${err}`);
    if (!tokens.includes(s.token())) {
      throw new QuerySyntaxError(`offset ${s.position()}: got ${tokenName(s.token())}, wanted ${tokLabel(tokens)}`);
    }
  };

  const parseCondition = (): Condition => {
    require(Token.tag);
    const tag = s.text();
    require(Token.leq, Token.geq, Token.lt, Token.gt, Token.eq, Token.contains, Token.exists);
    const op = s.token() as Operator;
    const opText = s.text();
    switch (op) {
      case Token.leq:
      case Token.geq:
      case Token.lt:
      case Token.gt:
        require(Token.number, Token.time, Token.date);
        break;
      case Token.eq:
        require(Token.number, Token.time, Token.date, Token.string);
        break;
      case Token.contains:
        require(Token.string);
        break;
      case Token.exists:
        return { tag, op, opText };
    }
    return { tag, op, opText, arg: { type: s.token() as ArgType, text: s.text() } };
  };

  const conditions = [parseCondition()];
  // as upstream: any scanner error ends the loop only when it is EOF; other errors leave an
  // invalid token, which is reported as "want AND"
  while (s.tryNext() !== EOF) {
    if (s.token() !== Token.and) {
      throw new QuerySyntaxError(`offset ${s.position()}: got ${tokenName(s.token())}, want ${tokenName(Token.and)}`);
    }
    conditions.push(parseCondition());
  }
  return { conditions };
}
