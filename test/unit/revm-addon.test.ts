/**
 * The revm call engine's addon (native/revm-call, built by `npm run build:native`): under CI=true it must
 * have been built and load (a machine with Rust that silently fell back to ethereumjs is a failure);
 * elsewhere its absence only skips the checks. One call through it reads state from the callbacks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak256 } from '../../src/evm/common.js';
import { haltError, loadRevm, revmSpec, type RevmCallInput } from '../../src/evm/revm.js';

const { addon, why } = loadRevm();

describe('revm addon', () => {
  it('is built and loads under CI=true', { skip: process.env.CI === 'true' ? false : 'CI is not true' }, () => {
    assert.ok(addon, `the revm addon is missing under CI=true: ${why}`);
  });

  const z = (n: number): Buffer => Buffer.alloc(n);
  const target = Buffer.alloc(20, 0xaa);
  const input = (over: Partial<RevmCallInput>): RevmCallInput => ({
    spec: revmSpec('cancun'), chainId: 9000, from: z(20), to: target, value: z(32), data: z(0), gas: 100_000,
    gasPrice: z(32), number: 5, timestamp: 1000, coinbase: z(20), baseFee: z(32), gasLimit: 30_000_000, prevrandao: z(32),
    deadline: Infinity, console: false, ...over,
  });
  /** `code` at `target`, nothing else in the state */
  const run = (code: Buffer, over: Partial<RevmCallInput>) => {
    const codeHash = Buffer.alloc(32, 0x77);
    return addon!.call(
      input(over),
      (a) => (a.equals(target) ? Buffer.concat([z(40), codeHash]) : null),
      (h) => (h.equals(codeHash) ? code : z(0)),
      () => z(32),
      () => z(32),
    );
  };

  it('stops a call at its deadline (json-rpc.evm-timeout) in nested frames too', { skip: addon ? false : why }, () => {
    // JUMPDEST PUSH1 0 JUMP: an endless loop, 12 gas a turn; 2^32 gas lasts seconds, the deadline 20 ms
    const loop = Buffer.from('5b600056', 'hex');
    const out = run(loop, { gas: 2 ** 32, deadline: Date.now() + 20 });
    assert.equal(out.status, 'timeout');
    // each frame CALLs itself with all its gas (1,024 frames deep), then loops: every frame must stop
    // PUSH1 0 DUP1 DUP1 DUP1 DUP1 ADDRESS GAS CALL, then JUMPDEST PUSH1 9 JUMP
    const nested = Buffer.from('60008080808030' + '5af1' + '5b600956', 'hex');
    assert.equal(run(nested, { gas: 2 ** 32, deadline: Date.now() + 20 }).status, 'timeout');
  });

  it('keeps the input of each console.log call when asked', { skip: addon ? false : why }, () => {
    // PUSH4 deadbeef PUSH1 224 SHL PUSH1 0 MSTORE; CALL(gas, console, 0, 0, 4, 0, 0); STOP
    const code = Buffer.from('63deadbeef60e01b600052' + '6000600060046000600073000000000000000000636f6e736f6c652e6c6f675af100', 'hex');
    assert.deepEqual(run(code, { console: true }).console.map((b) => b.toString('hex')), ['deadbeef']);
    assert.deepEqual(run(code, { console: false }).console, []);
  });

  it('runs a call against state answered by callbacks', { skip: addon ? false : why }, () => {
    // PUSH1 0x01 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: answers storage slot 1
    const code = Buffer.from('600154600052602060' + '00f3', 'hex');
    const codeHash = Buffer.alloc(32, 0x77);
    const reads: string[] = [];
    const out = addon!.call(
      input({}),
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

  it('reads a code once per hash, and each call sees only its own state', { skip: addon ? false : why }, () => {
    // PUSH1 0x01 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: answers storage slot 1
    const code = Buffer.from('600154600052602060' + '00f3', 'hex');
    const codeHash = Buffer.from(keccak256(code));
    const fake = Buffer.alloc(32, 0x55);
    let codeReads = 0;
    const call = (hash: Buffer, codeOf: Buffer, slot1: number) =>
      addon!.call(
        input({}),
        (a) => {
          if (!a.equals(target)) return null;
          const acct = Buffer.alloc(72);
          hash.copy(acct, 40);
          return acct;
        },
        (h) => (codeReads++, h.equals(hash) ? codeOf : Buffer.alloc(0)),
        (_a, slot) => Buffer.alloc(32, slot[31] === 1 ? slot1 : 0),
        () => Buffer.alloc(32),
      );
    for (const slot1 of [0x11, 0x22, 0x33]) assert.equal(call(codeHash, code, slot1).output.toString('hex'), slot1.toString(16).repeat(32));
    // the code under its true hash was read once; storage is read again on each call
    assert.equal(codeReads, 1);
    // a made-up hash is asked each time, so the code it stands for in one call is not reused in another
    assert.equal(call(fake, code, 0x44).output.toString('hex'), '44'.repeat(32));
    // STOP under the same made-up hash: an empty answer
    assert.equal(call(fake, Buffer.from('00', 'hex'), 0x44).output.length, 0);
    assert.equal(codeReads, 3);
  });

  it('names the halts whose geth text ferry knows, and no others', () => {
    assert.equal(haltError('OutOfGas(Basic)'), 'out of gas');
    assert.equal(haltError('InvalidJump'), 'invalid JUMP');
    assert.equal(haltError('CreateCollision'), undefined);
  });
});
