/**
 * src/evmrpc/profiling.ts's tables: the reports that write no file (debug_memStats, debug_gcStats,
 * debug_stacks) stand apart from the methods that write profiles, so the node can serve them under
 * `debug` alone, as geth does (docs/compatibility.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { profileFileMethods, createProfilingMethods, runtimeStatsMethods, type Profiler } from '../../src/evmrpc/profiling.js';

const written: string[] = [];
const profiler: Profiler = {
  startCpuProfile: async (f) => void written.push(`cpu:${f}`),
  stopCpuProfile: async () => undefined,
  writeHeapSnapshot: (f) => void written.push(`heap:${f}`),
  memStats: () => ({ rss: 1 }),
  gcStats: () => ({ NumGC: 2 }),
  stacks: (filter) => `thread main: ${filter ?? ''}\n`,
};

describe('profiling method tables', () => {
  it('the reports: exactly the three methods that write nothing, answering through the port', async () => {
    const t = runtimeStatsMethods(profiler);
    assert.deepEqual(Object.keys(t).sort(), ['debug_gcStats', 'debug_memStats', 'debug_stacks']);
    assert.deepEqual(await t.debug_memStats!.handler([], {} as never), { rss: 1 });
    assert.deepEqual(await t.debug_gcStats!.handler([], {} as never), { NumGC: 2 });
    assert.equal(await t.debug_stacks!.handler(['x'], {} as never), 'thread main: x\n');
    assert.deepEqual(written, []);
  });

  it('the file writers: the four methods behind json-rpc.enable-profiling, none of the reports', () => {
    assert.deepEqual(Object.keys(profileFileMethods(profiler)).sort(), ['debug_cpuProfile', 'debug_startCPUProfile', 'debug_stopCPUProfile', 'debug_writeMemProfile']);
    assert.deepEqual(Object.keys(createProfilingMethods(profiler)).sort(), [
      'debug_cpuProfile', 'debug_gcStats', 'debug_memStats', 'debug_stacks', 'debug_startCPUProfile', 'debug_stopCPUProfile', 'debug_writeMemProfile',
    ]);
  });
});
