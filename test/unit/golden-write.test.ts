/**
 * The golden regeneration mode's file handling (test/helpers/golden.ts): rewriting keeps every byte
 * but the changed answers, keeps each answer's layout (one line or laid out), keeps patterns that
 * still match, and writes nothing when nothing changed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoldenRecorder, jsonSpans, refresh, rewriteJson, writeGoldenMode } from '../helpers/golden.js';

const HAND_LAID = `{
  "description": "a \\"quoted\\" text, \\u2014 escaped",
  "cases": [
    {
      "name": "one",
      "request": { "jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": [] },
      "response": { "jsonrpc": "2.0", "id": 1, "result": "0x2328" }
    },
    {
      "name": "two",
      "response": {
        "jsonrpc": "2.0",
        "id": 2,
        "result": [1, 2]
      }
    }
  ]
}
`;

describe('golden regeneration helpers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-golden-write-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('FERRY_WRITE_GOLDEN=1 records, except under CI=true, where it refuses', () => {
    assert.equal(writeGoldenMode({}), false);
    assert.equal(writeGoldenMode({ CI: 'true' }), false);
    assert.equal(writeGoldenMode({ FERRY_WRITE_GOLDEN: '1' }), true);
    assert.equal(writeGoldenMode({ FERRY_WRITE_GOLDEN: '1', CI: 'false' }), true);
    assert.throws(() => writeGoldenMode({ FERRY_WRITE_GOLDEN: '1', CI: 'true' }), {
      message: 'FERRY_WRITE_GOLDEN=1 under CI=true: golden transcripts are checked in CI, never recorded',
    });
  });

  it('jsonSpans finds each value by path', () => {
    const spans = jsonSpans(HAND_LAID);
    const at = (path: (string | number)[]) => {
      const s = spans.get(JSON.stringify(path))!;
      return HAND_LAID.slice(s.start, s.end);
    };
    assert.equal(at(['cases', 0, 'response', 'result']), '"0x2328"');
    assert.equal(at(['cases', 1, 'response', 'result', 1]), '2');
    assert.equal(at(['description']), '"a \\"quoted\\" text, \\u2014 escaped"');
    assert.deepEqual(JSON.parse(at([])), JSON.parse(HAND_LAID));
  });

  it('rewriteJson replaces only the edited values: one-line stays one line, laid out stays laid out', () => {
    const out = rewriteJson(HAND_LAID, [
      { path: ['cases', 0, 'response'], value: { jsonrpc: '2.0', id: 1, result: '0x1' } },
      { path: ['cases', 1, 'response'], value: { jsonrpc: '2.0', id: 2, result: [3] } },
    ]);
    const expected = HAND_LAID.replace('"result": "0x2328" }', '"result": "0x1" }').replace(
      '"result": [1, 2]\n      }',
      '"result": [\n          3\n        ]\n      }',
    );
    assert.equal(out, expected);
    assert.equal(rewriteJson(HAND_LAID, []), HAND_LAID);
  });

  it('refresh keeps the patterns that still match and takes the live value elsewhere', () => {
    const keep = (w: string, g: unknown) => w === '$hex' && typeof g === 'string' && /^[0-9A-F]+$/.test(g);
    const want = { hash: '$hex', other: '$hex', n: 1, list: ['$hex', 'x'] };
    const got = { hash: 'ABCD', other: 'not hex', n: 2, list: ['00FF', 'y', 'z'], extra: true };
    assert.deepEqual(refresh(want, got, keep), { hash: '$hex', other: 'not hex', n: 2, list: ['$hex', 'y', 'z'], extra: true });
  });

  it('GoldenRecorder writes only when an answer changed', () => {
    const file = join(dir, 'case.json');
    writeFileSync(file, HAND_LAID);
    const same = new GoldenRecorder(file);
    same.record(['cases', 0, 'response'], { jsonrpc: '2.0', id: 1, result: '0x2328' });
    assert.equal(same.flush(), 0);
    assert.equal(readFileSync(file, 'utf8'), HAND_LAID);
    const changed = new GoldenRecorder(file);
    changed.record(['cases', 1, 'response', 'id'], 7);
    assert.equal(changed.flush(), 1);
    assert.equal(readFileSync(file, 'utf8'), HAND_LAID.replace('"id": 2,', '"id": 7,'));
  });
});
