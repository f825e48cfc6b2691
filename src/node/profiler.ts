/**
 * The debug profiling methods' implementation (evmrpc/profiling.ts) for the RPC thread: V8 CPU
 * profiles through an inspector session, heap snapshots through node:v8, memory and garbage
 * collection figures, the JavaScript stack. Files go under `<home>/profiles/` only: a client's
 * file name is reduced to its base name and checked (PROFILE_NAME).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { basename, join } from 'node:path';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { invalidRequest } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { Profiler } from '../evmrpc/profiling.js';

/** folder under the node's home that profiles and snapshots are written to */
export const PROFILES_DIR = 'profiles';
/** a base name a profile may have */
const PROFILE_NAME = /^[A-Za-z0-9._-]+$/;
/** garbage collections whose pause debug_gcStats remembers (most recent) */
export const GC_PAUSE_HISTORY = 256;
const NS_PER_MS = 1e6;

/** Where a client's file name is written: `<dir>/<base name>`; refuses names that are no file name. */
function profilePath(dir: string, file: string): string {
  const path = file.replaceAll('\\', '/');
  const base = basename(path);
  // a name ending in a separator names a folder, not a file
  if (path.endsWith('/') || base === '.' || base === '..' || !PROFILE_NAME.test(base)) {
    throw invalidRequest(`invalid profile file name ${JSON.stringify(file)}: use letters, digits, '.', '_' and '-' (written under <home>/${PROFILES_DIR}/)`);
  }
  return join(dir, base);
}

export class NodeProfiler implements Profiler {
  private cpu: { session: Session; path: string } | undefined;
  private starting = false;
  private readonly gc = { count: 0, pauseTotalNs: 0, pauses: [] as { ns: number; end: number }[] };
  private readonly observer: PerformanceObserver;

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.onGc(e);
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  private onGc(e: PerformanceEntry): void {
    const ns = Math.round(e.duration * NS_PER_MS);
    this.gc.count++;
    this.gc.pauseTotalNs += ns;
    this.gc.pauses.unshift({ ns, end: performance.timeOrigin + e.startTime + e.duration });
    if (this.gc.pauses.length > GC_PAUSE_HISTORY) this.gc.pauses.length = GC_PAUSE_HISTORY;
  }

  private target(file: string): string {
    const path = profilePath(this.dir, file);
    mkdirSync(this.dir, { recursive: true });
    return path;
  }

  async startCpuProfile(file: string): Promise<void> {
    if (this.cpu !== undefined || this.starting) throw invalidRequest('CPU profiling already in progress');
    const path = this.target(file);
    this.starting = true;
    const session = new Session();
    try {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    } catch (e) {
      session.disconnect();
      throw e;
    } finally {
      this.starting = false;
    }
    this.cpu = { session, path };
    this.log.info({ dump: path }, 'CPU profiling started');
  }

  async stopCpuProfile(): Promise<void> {
    const cpu = this.cpu;
    if (cpu === undefined) throw invalidRequest('CPU profiling not in progress');
    this.cpu = undefined;
    try {
      const { profile } = await cpu.session.post('Profiler.stop');
      writeFileSync(cpu.path, JSON.stringify(profile));
    } finally {
      cpu.session.disconnect();
    }
    this.log.info({ dump: cpu.path }, 'Done writing CPU profile');
  }

  writeHeapSnapshot(file: string): void {
    const path = this.target(file);
    writeHeapSnapshot(path);
    this.log.info({ dump: path }, 'heap snapshot written');
  }

  memStats(): Record<string, unknown> {
    return { ...process.memoryUsage(), heap: getHeapStatistics() };
  }

  /** geth's GCStats field names; durations in nanoseconds, times as RFC 3339, since the node started */
  gcStats(): Record<string, unknown> {
    const last = this.gc.pauses[0];
    return {
      LastGC: new Date(last === undefined ? 0 : last.end).toISOString(),
      NumGC: this.gc.count,
      PauseTotal: this.gc.pauseTotalNs,
      Pause: this.gc.pauses.map((p) => p.ns),
      PauseEnd: this.gc.pauses.map((p) => new Date(p.end).toISOString()),
      PauseQuantiles: null,
    };
  }

  /** the RPC thread's JavaScript stack (the frames containing `filter`, when given) */
  stacks(filter: string | undefined): string {
    const report = process.report.getReport() as unknown as { javascriptStack?: { message?: string; stack?: string[] } };
    const js = report.javascriptStack ?? {};
    const frames = (js.stack ?? []).filter((f) => filter === undefined || f.includes(filter));
    return [`thread main: ${js.message ?? ''}`, ...frames.map((f) => `    ${f.trim()}`)].join('\n') + '\n';
  }

  async close(): Promise<void> {
    this.observer.disconnect();
    const cpu = this.cpu;
    this.cpu = undefined;
    if (cpu !== undefined) {
      await cpu.session.post('Profiler.stop').catch(() => undefined);
      cpu.session.disconnect();
    }
  }
}
