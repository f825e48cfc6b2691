/**
 * evm/memwords.ts: the fast loop's MLOAD/MSTORE convert words exactly as ethereumjs' handlers do
 * (bigIntToBytes + setLengthLeft, bytesToBigInt), at every bit width, and move the stack and memory alike.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bigIntToBytes, bytesToBigInt, setLengthLeft } from '@ethereumjs/util';
import { mload, mstore, wordBytes, wordValue, type WordRunState } from '../../src/evm/memwords.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const MAX = (1n << 256n) - 1n;

function values(): bigint[] {
  const out = [0n, 1n, 0xffn, MAX, MAX - 1n, 1n << 255n, (1n << 64n) - 1n, 1n << 64n, (1n << 128n) + 7n, (1n << 192n) - 1n, 1n << 192n];
  let x = 0x9e3779b97f4a7c15n;
  for (let k = 0; k < 256; k++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & MAX;
    out.push(x >> BigInt(k), (1n << BigInt(k)) | 1n);
  }
  return out;
}

test('wordBytes and wordValue are setLengthLeft(bigIntToBytes(v), 32) and bytesToBigInt', () => {
  for (const v of values()) {
    const lib = setLengthLeft(bigIntToBytes(v), 32);
    assert.equal(hex(wordBytes(v)), hex(lib), `bytes of ${v}`);
    assert.equal(wordValue(lib), bytesToBigInt(lib), `value of ${hex(lib)}`);
    assert.equal(wordValue(lib), v);
  }
});

test('mstore then mload moves the stack and memory as the library handlers do', () => {
  const mem = new Uint8Array(256);
  const stack: bigint[] = [];
  const rs: WordRunState = {
    stack: {
      pop: () => stack.pop()!,
      popN: (n) => stack.splice(stack.length - n, n).reverse(),
      push: (v) => void stack.push(v),
    },
    memory: {
      read: (o, n) => mem.subarray(o, o + n),
      write: (o, n, v) => {
        assert.equal(v.length, n);
        mem.set(v, o);
      },
    },
  };
  for (const [i, v] of values().entries()) {
    const at = (i * 7) % 200;
    stack.push(v, BigInt(at)); // MSTORE pops the offset first (top), then the word
    mstore(rs);
    assert.equal(stack.length, 0);
    assert.equal(hex(mem.subarray(at, at + 32)), hex(setLengthLeft(bigIntToBytes(v), 32)), `word ${i} stored`);
    stack.push(BigInt(at));
    mload(rs);
    assert.deepEqual(stack.splice(0), [v], `word ${i} loaded`);
  }
});
