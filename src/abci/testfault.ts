/**
 * Faults injected on purpose, for end-to-end tests only (docs/abci.md, "Test faults"): they make a
 * crash happen at an exact point, so a test of crash recovery does not depend on when a kill -9
 * lands. `FERRY_TEST_FAULT` is read only when `FERRY_TEST_HOOKS=1` is set too; without it a fault is
 * refused at start, so a stray variable cannot crash a real node.
 *
 *   FERRY_TEST_FAULT=crash-in-commit:H   the process dies (SIGKILL) inside Commit's store
 *                                        transaction of height H, after the block's writes were
 *                                        queued and before the transaction commits
 *   FERRY_TEST_FAULT=corrupt-snapshot-chunks
 *                                        every state-sync chunk this node serves (LoadSnapshotChunk)
 *                                        has one byte flipped: the joining node must refuse it
 *   FERRY_TEST_SNAPSHOT_CHUNK_BYTES=N    snapshots are cut into chunks of N bytes (many chunks from a
 *                                        small test chain), also only with FERRY_TEST_HOOKS=1
 */
import { writeSync } from 'node:fs';

export const TEST_FAULT_ENV = 'FERRY_TEST_FAULT';
export const TEST_HOOKS_ENV = 'FERRY_TEST_HOOKS';

export type TestFault = { kind: 'crash-in-commit'; height: bigint } | { kind: 'corrupt-snapshot-chunks' };

export const TEST_SNAPSHOT_CHUNK_BYTES_ENV = 'FERRY_TEST_SNAPSHOT_CHUNK_BYTES';

export class TestFaultError extends Error {}

/** The fault the environment asks for; throws TestFaultError on a malformed or unguarded one. */
export function testFaultFromEnv(env: Record<string, string | undefined>): TestFault | undefined {
  const raw = env[TEST_FAULT_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (env[TEST_HOOKS_ENV] !== '1') throw new TestFaultError(`${TEST_FAULT_ENV} is for tests only: refused unless ${TEST_HOOKS_ENV}=1 is set`);
  if (raw === 'corrupt-snapshot-chunks') return { kind: 'corrupt-snapshot-chunks' };
  const m = /^crash-in-commit:([1-9][0-9]{0,18})$/.exec(raw);
  if (!m) throw new TestFaultError(`${TEST_FAULT_ENV}=${JSON.stringify(raw)}: expected crash-in-commit:HEIGHT (HEIGHT ≥ 1) or corrupt-snapshot-chunks`);
  return { kind: 'crash-in-commit', height: BigInt(m[1]!) };
}

/** The test chunk size of snapshots (undefined: the default); throws TestFaultError when malformed or unguarded. */
export function testSnapshotChunkBytes(env: Record<string, string | undefined>): number | undefined {
  const raw = env[TEST_SNAPSHOT_CHUNK_BYTES_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (env[TEST_HOOKS_ENV] !== '1') throw new TestFaultError(`${TEST_SNAPSHOT_CHUNK_BYTES_ENV} is for tests only: refused unless ${TEST_HOOKS_ENV}=1 is set`);
  if (!/^[1-9][0-9]{1,8}$/.test(raw)) throw new TestFaultError(`${TEST_SNAPSHOT_CHUNK_BYTES_ENV}=${JSON.stringify(raw)}: expected a byte count (10 or more)`);
  return Number(raw);
}

/** A copy of `chunk` with its middle byte flipped (corrupt-snapshot-chunks). */
export function corruptChunk(chunk: Uint8Array): Uint8Array {
  const out = new Uint8Array(chunk);
  if (out.length > 0) out[out.length >> 1] = out[out.length >> 1]! ^ 0xff;
  return out;
}

/** Dies at once, as kill -9 would: no handler runs, no transaction commits. */
export function crashNow(what: string): never {
  writeSync(2, `${TEST_FAULT_ENV}: ${what}: SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
}
