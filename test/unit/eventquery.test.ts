/**
 * The query language against CometBFT v0.38's own test tables (libs/pubsub/query/syntax/syntax_test.go
 * and libs/pubsub/query/query_test.go), ported as fixtures, plus the error texts clients see.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Scanner,
  Token,
  compileQuery,
  eventNumber,
  indexedNumber,
  parseQuery,
  queryString,
  QuerySyntaxError,
  type EventMap,
} from '../../src/eventquery/index.js';

function scanAll(input: string): { tokens: Token[]; err: string } {
  const s = new Scanner(input);
  const tokens: Token[] = [];
  for (;;) {
    const err = s.tryNext();
    if (err !== '') return { tokens, err };
    tokens.push(s.token());
  }
}

describe('eventquery scanner (syntax_test.go TestScanner)', () => {
  const T = Token;
  const cases: [string, Token[]][] = [
    ['', []],
    ['  ', []],
    ['\t\n ', []],
    ['0 123', [T.number, T.number]],
    ['0.32 3.14', [T.number, T.number]],
    ['foo foo.bar', [T.tag, T.tag]],
    ['foo foo-foo.bar', [T.tag, T.tag]],
    ['foo foo._bar_bar', [T.tag, T.tag]],
    [` '' x 'x' 'x y'`, [T.string, T.tag, T.string, T.string]],
    [` 'you are not your job' `, [T.string]],
    ['< <= = > >=', [T.lt, T.leq, T.eq, T.gt, T.geq]],
    ['x AND y', [T.tag, T.and, T.tag]],
    [`x.y CONTAINS 'z'`, [T.tag, T.contains, T.string]],
    ['foo EXISTS', [T.tag, T.exists]],
    ['and AND', [T.tag, T.and]],
    ['TIME 2021-11-23T15:16:17Z', [T.time]],
    ['DATE 2021-11-23', [T.date]],
  ];
  for (const [input, want] of cases) {
    it(JSON.stringify(input), () => {
      const got = scanAll(input);
      assert.equal(got.err, 'EOF');
      assert.deepEqual(got.tokens, want);
    });
  }

  const errors = [
    `'incomplete string`,
    '-23',
    '&',
    'DATE xyz-pdq',
    'DATE xyzp-dq-zv',
    'DATE 0000-00-00',
    'DATE 0000-00-000',
    'DATE 2021-01-99',
    'TIME 2021-01-01T34:56:78Z',
    'TIME 2021-01-99T14:56:08Z',
    'TIME 2021-01-99T34:56:08',
    'TIME 2021-01-99T34:56:11+3',
  ];
  for (const input of errors) {
    it(`error: ${input}`, () => {
      const s = new Scanner(input);
      assert.notEqual(s.tryNext(), '');
    });
  }

  it('reports byte offsets of UTF-8 text and the texts CometBFT uses', () => {
    assert.equal(new Scanner('&').tryNext(), 'invalid input & at offset 1');
    assert.equal(new Scanner('é &').tryNext(), ''); // a letter starts a tag
    const s = new Scanner('é &');
    s.tryNext();
    assert.equal(s.tryNext(), 'invalid input & at offset 4');
    assert.equal(new Scanner('DATE 1899-12-31').tryNext(), 'datestamp year 1899 out of range');
    assert.equal(new Scanner('TIME 3000-01-01T00:00:00Z').tryNext(), 'timestamp year 3000 out of range');
  });
});

describe('eventquery parser (syntax_test.go TestParseValid)', () => {
  const cases: [string, boolean][] = [
    ["tm.events.type='NewBlock'", true],
    ["tm.events.type = 'NewBlock'", true],
    ["tm.events.name = ''", true],
    ["tm.events.type='TIME'", true],
    ["tm.events.type='DATE'", true],
    ["tm.events.type='='", true],
    ["tm.events.type='TIME", false],
    ["tm.events.type=TIME'", false],
    ['tm.events.type==', false],
    ['tm.events.type=NewBlock', false],
    ['>==', false],
    ["tm.events.type 'NewBlock' =", false],
    ["tm.events.type>'NewBlock'", false],
    ['', false],
    ['=', false],
    ["='NewBlock'", false],
    ['tm.events.type=', false],
    ['tm.events.typeNewBlock', false],
    ["tm.events.type'NewBlock'", false],
    ["'NewBlock'", false],
    ['NewBlock', false],
    ["tm.events.type='NewBlock' AND abci.account.name='Igor'", true],
    ["tm.events.type='NewBlock' AND", false],
    ["tm.events.type='NewBlock' AN", false],
    ["tm.events.type='NewBlock' AN tm.events.type='NewBlockHeader'", false],
    ["AND tm.events.type='NewBlock' ", false],
    ["abci.account.name CONTAINS 'Igor'", true],
    ['tx.date > DATE 2013-05-03', true],
    ['tx.date < DATE 2013-05-03', true],
    ['tx.date <= DATE 2013-05-03', true],
    ['tx.date >= DATE 2013-05-03', true],
    ['tx.date >= DAT 2013-05-03', false],
    ['tx.date <= DATE2013-05-03', false],
    ['tx.date <= DATE -05-03', false],
    ['tx.date >= DATE 20130503', false],
    ['tx.date >= DATE 2013+01-03', false],
    ['tx.date >= DATE 0013-01-03', false],
    ['tx.date >= DATE 2013-31-03', false],
    ['tx.date >= DATE 2013-01-83', false],
    ['tx.date > TIME 2013-05-03T14:45:00+07:00', true],
    ['tx.date < TIME 2013-05-03T14:45:00-02:00', true],
    ['tx.date <= TIME 2013-05-03T14:45:00Z', true],
    ['tx.date >= TIME 2013-05-03T14:45:00Z', true],
    ['tx.date >= TIME2013-05-03T14:45:00Z', false],
    ['tx.date = IME 2013-05-03T14:45:00Z', false],
    ['tx.date = TIME 2013-05-:45:00Z', false],
    ['tx.date >= TIME 2013-05-03T14:45:00', false],
    ['tx.date >= TIME 0013-00-00T14:45:00Z', false],
    ['tx.date >= TIME 2013+05=03T14:45:00Z', false],
    ['account.balance=100', true],
    ['account.balance >= 200', true],
    ['account.balance >= -300', false],
    ['account.balance >>= 400', false],
    ['account.balance=33.22.1', false],
    ['slashing.amount EXISTS', true],
    ['slashing.amount EXISTS AND account.balance=100', true],
    ['account.balance=100 AND slashing.amount EXISTS', true],
    ['slashing EXISTS', true],
    ["hash='136E18F7E4C348B780CF873A0BF43922E5BAFA63'", true],
    ['hash=136E18F7E4C348B780CF873A0BF43922E5BAFA63', false],
    ['cosm-wasm.transfer_amount=100', true],
  ];
  for (const [input, valid] of cases) {
    it(`${valid ? 'valid' : 'invalid'}: ${JSON.stringify(input)}`, () => {
      if (!valid) {
        assert.throws(() => parseQuery(input), QuerySyntaxError);
        return;
      }
      const q = parseQuery(input);
      const text = queryString(q);
      assert.equal(queryString(parseQuery(text)), text, 'round-trips');
    });
  }

  it('error texts match CometBFT', () => {
    const msg = (q: string) => {
      try {
        parseQuery(q);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    assert.equal(msg(''), 'offset 0: EOF');
    assert.equal(msg("tm.event='Tx' AND"), 'offset 17: EOF');
    assert.equal(msg('tm.event=NewBlock'), 'offset 9: got tag, wanted number, timestamp, datestamp or string');
    assert.equal(msg("tm.event>'NewBlock'"), 'offset 9: got string, wanted number, timestamp or datestamp');
    assert.equal(msg("x='a' y='b'"), 'offset 6: got tag, want AND operator');
    assert.equal(msg('x = &'), 'offset 4: invalid input & at offset 5');
    assert.equal(msg("=x"), 'offset 0: got = operator, wanted tag');
    assert.equal(msg("x CONTAINS 5"), 'offset 11: got number, wanted string');
    assert.equal(msg("x.y 'z'"), 'offset 4: got string, wanted <= operator, >= operator, < operator, > operator, = operator, CONTAINS operator or EXISTS operator');
  });

  it('normalises whitespace and keeps literal kinds', () => {
    const q = parseQuery("  tm.event  =  'Tx'  AND  tx.height>=5 AND d < DATE 2020-01-02 AND t = TIME 2020-01-02T03:04:05Z AND x EXISTS");
    assert.equal(queryString(q), "tm.event = 'Tx' AND tx.height >= 5 AND d < DATE 2020-01-02 AND t = TIME 2020-01-02T03:04:05Z AND x EXISTS");
  });
});

/** query_test.go's newTestEvents: "type|k=v|k=v" templates into an event map. */
function events(...templates: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const t of templates) {
    const [type, ...kvs] = t.split('|');
    for (const kv of kvs) {
      const i = kv.indexOf('=');
      const key = `${type}.${kv.slice(0, i)}`;
      out.set(key, [...(out.get(key) ?? []), kv.slice(i + 1)]);
    }
  }
  return out;
}

const apiEvents: EventMap = new Map(
  Object.entries({
    'tm.event': ['Tx'],
    'tm.hash': ['XYZ'],
    'tm.height': ['5'],
    'rewards.withdraw.address': ['AddrA', 'AddrB'],
    'rewards.withdraw.source': ['SrcX', 'SrcY'],
    'rewards.withdraw.amount': ['100', '45'],
    'rewards.withdraw.balance': ['1500', '999'],
    'transfer.sender': ['AddrC'],
    'transfer.recipient': ['AddrD'],
    'transfer.amount': ['160'],
  }),
);

function todayDate(): string {
  return new Date().toISOString().slice(0, 10);
}
function nowTime(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

describe('eventquery matching (query_test.go TestCompiledMatches, TestBigNumbers)', () => {
  const cases: [string, EventMap, boolean][] = [
    ["tm.events.type='NewBlock'", events('tm|events.type=NewBlock'), true],
    ['tx.gas > 7', events('tx|gas=8'), true],
    ['transfer.amount > 7', events('transfer|amount=8stake'), true],
    ['transfer.amount > 7', events('transfer|amount=8.045'), true],
    ['transfer.amount > 7.043', events('transfer|amount=8.045stake'), true],
    ['transfer.amount > 8.045', events('transfer|amount=8.045stake'), false],
    ['tx.gas > 7 AND tx.gas < 9', events('tx|gas=8'), true],
    ['body.weight >= 3.5', events('body|weight=3.5'), true],
    ['account.balance < 1000.0', events('account|balance=900'), true],
    ['apples.kg <= 4', events('apples|kg=4.0'), true],
    ['body.weight >= 4.5', events('body|weight=4.5'), true],
    ['oranges.kg < 4 AND watermellons.kg > 10', events('oranges|kg=3', 'watermellons|kg=12'), true],
    ['peaches.kg < 4', events('peaches|kg=5'), false],
    ['tx.date > DATE 2017-01-01', events(`tx|date=${todayDate()}`), true],
    ['tx.date = DATE 2017-01-01', events('tx|date=2017-01-01'), true],
    ['tx.date = DATE 2018-01-01', events('tx|date=2017-01-01'), false],
    ['tx.time >= TIME 2013-05-03T14:45:00Z', events(`tx|time=${nowTime()}`), true],
    ['tx.time = TIME 2013-05-03T14:45:00Z', events('tx|time=2018-05-03T14:45:00Z'), false],
    ["abci.owner.name CONTAINS 'Igor'", events('abci|owner.name=Igor|owner.name=Ivan'), true],
    ["abci.owner.name CONTAINS 'Igor'", events('abci|owner.name=Pavel|owner.name=Ivan'), false],
    ["abci.owner.name = 'Igor'", events('abci|owner.name=Igor|owner.name=Ivan'), true],
    ["abci.owner.name = 'Ivan'", events('abci|owner.name=Igor|owner.name=Ivan'), true],
    ["abci.owner.name = 'Ivan' AND abci.owner.name = 'Igor'", events('abci|owner.name=Igor|owner.name=Ivan'), true],
    ["abci.owner.name = 'Ivan' AND abci.owner.name = 'John'", events('abci|owner.name=Igor|owner.name=Ivan'), false],
    ["tm.events.type='NewBlock'", events('tm|events.type=NewBlock', 'app|name=fuzzed'), true],
    ["app.name = 'fuzzed'", events('tm|events.type=NewBlock', 'app|name=fuzzed'), true],
    ["tm.events.type='NewBlock' AND app.name = 'fuzzed'", events('tm|events.type=NewBlock', 'app|name=fuzzed'), true],
    ["tm.events.type='NewHeader' AND app.name = 'fuzzed'", events('tm|events.type=NewBlock', 'app|name=fuzzed'), false],
    ['slash EXISTS', events('slash|reason=missing_signature|power=6000'), true],
    ['slash EXISTS', events('transfer|recipient=cosmos1gu6y2a0ffteesyeyeesk23082c6998xyzmt9mz|sender=cosmos1crje20aj4gxdtyct7z3knxqry2jqt2fuaey6u5'), false],
    ['slash.reason EXISTS AND slash.power > 1000', events('slash|reason=missing_signature|power=6000'), true],
    ['slash.reason EXISTS AND slash.power > 1000', events('slash|reason=missing_signature|power=500'), false],
    ['slash.reason EXISTS', events('transfer|recipient=cosmos1gu6y2a0ffteesyeyeesk23082c6998xyzmt9mz|sender=cosmos1crje20aj4gxdtyct7z3knxqry2jqt2fuaey6u5'), false],
    ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrA'", apiEvents, true],
    ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrA' AND rewards.withdraw.source = 'SrcY'", apiEvents, true],
    ["tm.event = 'Tx' AND transfer.sender = 'AddrA'", apiEvents, false],
    ["tm.event = 'Tx' AND transfer.sender = 'AddrC'", apiEvents, true],
    ["tm.event = 'Tx' AND transfer.sender = 'AddrZ'", apiEvents, false],
    ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrZ'", apiEvents, false],
    ["tm.event = 'Tx' AND rewards.withdraw.source = 'W'", apiEvents, false],
  ];
  cases.forEach(([q, ev, want], i) => {
    it(`${String(i + 1).padStart(2, '0')} ${q}`, () => assert.equal(compileQuery(q).matches(ev), want));
  });

  const big: EventMap = new Map(
    Object.entries({
      'big.value': ['99999999999999999999'],
      'big2.value': ['18446744073709551615'],
      'big.floatvalue': ['99999999999999999999.10'],
      'big2.floatvalue': ['18446744073709551615.6'],
    }),
  );
  const bigCases = [
    'big.value >= 99999999999999999999',
    'big.value > 99999999999999999998',
    'big2.value <= 18446744073709551615',
    'big.floatvalue >= 99999999999999999999',
    'big.floatvalue > 99999999999999999998.10',
    'big.floatvalue > 99999999999999999998',
    'big2.floatvalue <= 18446744073709551615.6',
    'big2.floatvalue >= 18446744073709551615',
    'big2.floatvalue >= 12.5',
    'big.value >= 10',
  ];
  for (const q of bigCases) it(`big: ${q}`, () => assert.equal(compileQuery(q).matches(big), true));

  it('an empty event set never matches; a missing tag never matches', () => {
    assert.equal(compileQuery('a EXISTS').matches(new Map()), false);
    assert.equal(compileQuery("tm.event='Tx' AND b.c EXISTS").matches(events('tm|event=Tx')), false);
  });

  it('numbers: pubsub reads a leading number, the kv index only whole numbers', () => {
    assert.deepEqual(eventNumber('100stake'), { int: 100n, scale: 0 });
    assert.equal(eventNumber('-5'), undefined);
    assert.equal(eventNumber('abc'), undefined);
    assert.equal(indexedNumber('100stake'), undefined);
    assert.deepEqual(indexedNumber('-5'), { int: -5n, scale: 0 });
    assert.deepEqual(indexedNumber('1.50'), { int: 150n, scale: 2 });
  });
});
