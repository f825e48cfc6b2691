/**
 * lib/jsontext.ts: jsonText writes what JSON.stringify writes for parsed JSON, also where
 * JSON.stringify overflows the stack; nestingTooDeep finds the first container past the limit in
 * text order, ignoring brackets inside strings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonText, nestingTooDeep } from '../../src/lib/jsontext.js';

describe('jsonText', () => {
  it('writes what JSON.stringify writes for parsed JSON values', () => {
    for (const text of [
      'null',
      'true',
      '-1.5e+300',
      '"a\\"b\\\\c\\u0000é"',
      '[]',
      '{}',
      '[1,[2,[3,{}]],{"a":[],"b":{"c":null}}]',
      '{"z":1,"a":[true,false],"1":"x","":""}',
    ]) {
      const v = JSON.parse(text);
      assert.equal(jsonText(v), JSON.stringify(v), text);
    }
  });

  it('does not overflow where JSON.stringify does', () => {
    const depth = 100_000;
    const text = '['.repeat(depth) + '{"k":1}' + ']'.repeat(depth);
    const v = JSON.parse(text);
    assert.throws(() => JSON.stringify(v), RangeError);
    assert.equal(jsonText(v), text);
  });
});

describe('nestingTooDeep', () => {
  it('names the first bracket past the limit, in text order', () => {
    assert.equal(nestingTooDeep('[[1]]', 2), undefined);
    assert.equal(nestingTooDeep('[[[1]]]', 2), '[');
    assert.equal(nestingTooDeep('[{"a":{}}]', 2), '{');
    assert.equal(nestingTooDeep('[[],[],[]]', 2), undefined, 'siblings do not add up');
  });

  it('ignores brackets inside strings, with escaped quotes', () => {
    assert.equal(nestingTooDeep('["[[[[", "\\"[[[[\\\\", {"k": "{{{{"}]', 2), undefined);
    assert.equal(nestingTooDeep('["\\\\", [[1]]]', 2), '[', 'an escaped backslash ends before the quote');
  });
});
