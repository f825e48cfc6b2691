/**
 * The test-only fault hook (docs/abci.md, "Test faults"): FERRY_TEST_FAULT is refused unless
 * FERRY_TEST_HOOKS=1, malformed values are refused, and the driver built over such an environment
 * refuses to exist.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AbciDriver } from '../../src/abci/driver.js';
import { TestFaultError, testFaultFromEnv } from '../../src/abci/testfault.js';

describe('FERRY_TEST_FAULT', () => {
  it('is nothing when unset or empty', () => {
    assert.equal(testFaultFromEnv({}), undefined);
    assert.equal(testFaultFromEnv({ FERRY_TEST_FAULT: '', FERRY_TEST_HOOKS: '1' }), undefined);
  });

  it('is refused without FERRY_TEST_HOOKS=1', () => {
    for (const hooks of [undefined, '0', 'true', '']) {
      assert.throws(() => testFaultFromEnv({ FERRY_TEST_FAULT: 'crash-in-commit:5', FERRY_TEST_HOOKS: hooks }), {
        name: 'Error',
        message: 'FERRY_TEST_FAULT is for tests only: refused unless FERRY_TEST_HOOKS=1 is set',
      });
    }
  });

  it('parses crash-in-commit:HEIGHT and corrupt-snapshot-chunks, and refuses anything else', () => {
    assert.deepEqual(testFaultFromEnv({ FERRY_TEST_FAULT: 'crash-in-commit:12', FERRY_TEST_HOOKS: '1' }), { kind: 'crash-in-commit', height: 12n });
    for (const bad of ['crash-in-commit:0', 'crash-in-commit:', 'crash-in-commit:-1', 'crash-in-commit:0x10', 'crash-in-commit:1 ', 'crash:5', 'crash-in-commit:99999999999999999999']) {
      assert.throws(() => testFaultFromEnv({ FERRY_TEST_FAULT: bad, FERRY_TEST_HOOKS: '1' }), (e) => {
        assert.ok(e instanceof TestFaultError);
        assert.equal(e.message, `FERRY_TEST_FAULT=${JSON.stringify(bad)}: expected crash-in-commit:HEIGHT (HEIGHT ≥ 1) or corrupt-snapshot-chunks`);
        return true;
      });
    }
  });

  it('the ABCI driver refuses an unguarded fault in its environment', () => {
    const saved = { fault: process.env.FERRY_TEST_FAULT, hooks: process.env.FERRY_TEST_HOOKS };
    process.env.FERRY_TEST_FAULT = 'crash-in-commit:3';
    delete process.env.FERRY_TEST_HOOKS;
    try {
      assert.throws(() => new AbciDriver({} as never), TestFaultError);
      process.env.FERRY_TEST_HOOKS = '1';
      assert.ok(new AbciDriver({} as never));
    } finally {
      if (saved.fault === undefined) delete process.env.FERRY_TEST_FAULT;
      else process.env.FERRY_TEST_FAULT = saved.fault;
      if (saved.hooks === undefined) delete process.env.FERRY_TEST_HOOKS;
      else process.env.FERRY_TEST_HOOKS = saved.hooks;
    }
  });
});
