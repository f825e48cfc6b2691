/**
 * The revm call engine's addon (native/revm-call, built by `npm run build:native`): under CI=true it must
 * have been built and load (a machine with Rust that silently fell back to ethereumjs is a failure);
 * elsewhere its absence only skips the checks. One call through it reads state from the callbacks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { haltError, loadRevm, revmSpec } from '../../src/evm/revm.js';

const { addon, why } = loadRevm();

describe('revm addon', () => {
  it('is built and loads under CI=true', { skip: process.env.CI === 'true' ? false : 'CI is not true' }, () => {
    assert.ok(addon, `the revm addon is missing under CI=true: ${why}`);
  });

  it('runs a call against state answered by callbacks', { skip: addon ? false : why }, () => {
    const z = (n: number): Buffer => Buffer.alloc(n);
    const target = Buffer.alloc(20, 0xaa);
    // PUSH1 0x01 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: answers storage slot 1
    const code = Buffer.from('600154600052602060' + '00f3', 'hex');
    const codeHash = Buffer.alloc(32, 0x77);
    const reads: string[] = [];
    const out = addon!.call(
      {
        spec: revmSpec('cancun'), chainId: 9000, from: z(20), to: target, value: z(32), data: z(0), gas: 100_000,
        gasPrice: z(32), number: 5, timestamp: 1000, coinbase: z(20), baseFee: z(32), gasLimit: 30_000_000, prevrandao: z(32),
      },
      (a) => {
        reads.push('account');
        if (!a.equals(target)) return null;
        const acct = Buffer.alloc(72);
        codeHash.copy(acct, 40);
        return acct;
      },
      (h) => (h.equals(codeHash) ? code : Buffer.alloc(0)),
      (_a, slot) => {
        reads.push('storage');
        return slot[31] === 1 ? Buffer.alloc(32, 0x11) : Buffer.alloc(32);
      },
      () => Buffer.alloc(32),
    );
    assert.equal(out.status, 'success');
    assert.equal(out.output.toString('hex'), '11'.repeat(32));
    assert.ok(reads.includes('storage'));
  });

  it('names the halts whose geth text ferry knows, and no others', () => {
    assert.equal(haltError('OutOfGas(Basic)'), 'out of gas');
    assert.equal(haltError('InvalidJump'), 'invalid JUMP');
    assert.equal(haltError('CreateCollision'), undefined);
  });
});
