/**
 * Surface A's debug profiling methods, geth's names with Node's equivalents (docs/compatibility.md):
 * debug_startCPUProfile / debug_stopCPUProfile / debug_cpuProfile write a V8 CPU profile
 * (`.cpuprofile` JSON), debug_writeMemProfile a V8 heap snapshot, debug_memStats, debug_gcStats and
 * debug_stacks report the RPC thread's memory, garbage collections and JavaScript stack.
 *
 * Two tables. The methods that write files (CPU profile, heap snapshot: profileFileMethods) are
 * registered only when `json-rpc.enable-profiling` is on; otherwise they do not exist. The ones that
 * only report (debug_memStats, debug_gcStats, debug_stacks: runtimeStatsMethods) write nothing,
 * so they follow the `debug` namespace alone, as in geth (docs/compatibility.md); createProfilingMethods
 * is both, for a node that serves the reports only with the flag. A file name from
 * the client is reduced to its base name and written under the node's `<home>/profiles/`; a base
 * name that is empty, `.`/`..` or has characters beyond [A-Za-z0-9._-] is refused.
 */
import { argumentError, jsonKind } from '../lib/hex.js';
import { optional, string } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';

/** The port: node/profiler.ts implements it over node:inspector and node:v8. */
export interface Profiler {
  /** throws `CPU profiling already in progress` */
  startCpuProfile(file: string): Promise<void>;
  /** throws `CPU profiling not in progress` */
  stopCpuProfile(): Promise<void>;
  writeHeapSnapshot(file: string): void;
  memStats(): Record<string, unknown>;
  gcStats(): Record<string, unknown>;
  stacks(filter: string | undefined): string;
}

/** the longest debug_cpuProfile a client may ask for, seconds */
export const MAX_CPU_PROFILE_SECONDS = 600;

/** Go's uint from a JSON number */
const seconds: ParamCodec<number> = {
  name: 'seconds',
  decode: (v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      throw argumentError(i, `json: cannot unmarshal ${typeof v === 'number' ? 'number ' + String(v) : jsonKind(v)} into Go value of type uint`);
    }
    if (v > MAX_CPU_PROFILE_SECONDS) throw argumentError(i, `at most ${MAX_CPU_PROFILE_SECONDS} seconds`);
    return v;
  },
};

/** The reports that write no file. */
export type RuntimeStats = Pick<Profiler, 'memStats' | 'gcStats' | 'stacks'>;

/** debug_memStats, debug_gcStats, debug_stacks: they write nothing, so they may follow `debug` alone. */
export function runtimeStatsMethods(stats: RuntimeStats): MethodTable {
  const table: Record<string, MethodSpec> = {
    debug_memStats: method([], () => stats.memStats()),
    debug_gcStats: method([], () => stats.gcStats()),
    debug_stacks: method([optional(string)], ([filter]) => stats.stacks(filter)),
  };
  return Object.freeze(table);
}

/** The methods that write profiles under `<home>/profiles/`: only behind json-rpc.enable-profiling. */
export function profileFileMethods(profiler: Profiler): MethodTable {
  const table: Record<string, MethodSpec> = {
    debug_startCPUProfile: method([string], async ([file]) => {
      await profiler.startCpuProfile(file);
      return null;
    }),
    debug_stopCPUProfile: method([], async () => {
      await profiler.stopCpuProfile();
      return null;
    }),
    debug_cpuProfile: method([string, seconds], async ([file, nsec]) => {
      await profiler.startCpuProfile(file);
      await new Promise((resolve) => setTimeout(resolve, nsec * 1000));
      await profiler.stopCpuProfile();
      return null;
    }),
    debug_writeMemProfile: method([string], ([file]) => {
      profiler.writeHeapSnapshot(file);
      return null;
    }),
  };
  return Object.freeze(table);
}

/** Both tables: every profiling method behind the flag (node/run.ts's wiring until the reports follow `debug`). */
export function createProfilingMethods(profiler: Profiler): MethodTable {
  return Object.freeze({ ...profileFileMethods(profiler), ...runtimeStatsMethods(profiler) });
}
