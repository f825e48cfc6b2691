/**
 * Faults injected on purpose, for end-to-end tests only (docs/abci.md, "Test faults"): they make a
 * crash happen at an exact point, so a test of crash recovery does not depend on when a kill -9
 * lands. `FERRY_TEST_FAULT` is read only when `FERRY_TEST_HOOKS=1` is set too; without it a fault is
 * refused at start, so a stray variable cannot crash a real node.
 *
 *   FERRY_TEST_FAULT=crash-in-commit:H   the process dies (SIGKILL) inside Commit's store
 *                                        transaction of height H, after the block's writes were
 *                                        queued and before the transaction commits
 */
import { writeSync } from 'node:fs';

export const TEST_FAULT_ENV = 'FERRY_TEST_FAULT';
export const TEST_HOOKS_ENV = 'FERRY_TEST_HOOKS';

export interface TestFault {
  kind: 'crash-in-commit';
  height: bigint;
}

export class TestFaultError extends Error {}

/** The fault the environment asks for; throws TestFaultError on a malformed or unguarded one. */
export function testFaultFromEnv(env: Record<string, string | undefined>): TestFault | undefined {
  const raw = env[TEST_FAULT_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (env[TEST_HOOKS_ENV] !== '1') throw new TestFaultError(`${TEST_FAULT_ENV} is for tests only: refused unless ${TEST_HOOKS_ENV}=1 is set`);
  const m = /^crash-in-commit:([1-9][0-9]{0,18})$/.exec(raw);
  if (!m) throw new TestFaultError(`${TEST_FAULT_ENV}=${JSON.stringify(raw)}: expected crash-in-commit:HEIGHT (HEIGHT ≥ 1)`);
  return { kind: 'crash-in-commit', height: BigInt(m[1]!) };
}

/** Dies at once, as kill -9 would: no handler runs, no transaction commits. */
export function crashNow(what: string): never {
  writeSync(2, `${TEST_FAULT_ENV}: ${what}: SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
}
