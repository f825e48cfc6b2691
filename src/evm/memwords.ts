/**
 * MLOAD and MSTORE for the synchronous fast loop (evm/syncsteps.ts): the same stack and memory effects
 * as ethereumjs' handlers (@ethereumjs/evm opcodes/functions.js 0x51, 0x52), with the 256-bit word
 * converted through four 64-bit halves of one scratch buffer. The library converts through a hex
 * string and two fresh arrays per word (`bigIntToBytes` + `setLengthLeft`, `bytesToBigInt`), which for
 * an ERC-20 transfer was about a tenth of what the chain thread allocates (docs/benchmarks.md "The
 * chain thread per transfer"). Memory expansion and gas stay with the library's gas handlers.
 */

const WORD = 32;
const scratch = new Uint8Array(WORD);
const view = new DataView(scratch.buffer);
const MASK64 = (1n << 64n) - 1n;

/** what the handlers use of ethereumjs' run state */
export interface WordRunState {
  stack: { pop(): bigint; popN(n: number): bigint[]; push(v: bigint): void };
  memory: { read(offset: number, size: number, avoidCopy?: boolean): Uint8Array; write(offset: number, size: number, value: Uint8Array): void };
}

/** `v` (0 ≤ v < 2^256) as 32 big-endian bytes, in the shared scratch buffer (valid until the next call) */
export function wordBytes(v: bigint): Uint8Array {
  view.setBigUint64(24, v & MASK64);
  view.setBigUint64(16, (v >> 64n) & MASK64);
  view.setBigUint64(8, (v >> 128n) & MASK64);
  view.setBigUint64(0, v >> 192n);
  return scratch;
}

/** 32 big-endian bytes as an integer */
export function wordValue(b: Uint8Array): bigint {
  scratch.set(b);
  const hi = (view.getBigUint64(0) << 64n) | view.getBigUint64(8);
  const lo = (view.getBigUint64(16) << 64n) | view.getBigUint64(24);
  return hi === 0n ? lo : (hi << 128n) | lo;
}

/** MLOAD: pops an offset, pushes the word of memory there */
export function mload(rs: WordRunState): void {
  const pos = rs.stack.pop();
  rs.stack.push(wordValue(rs.memory.read(Number(pos), WORD, true)));
}

/** MSTORE: pops an offset and a word, writes the word there (memory.write copies it) */
export function mstore(rs: WordRunState): void {
  const [offset, word] = rs.stack.popN(2);
  rs.memory.write(Number(offset), WORD, wordBytes(word!));
}
