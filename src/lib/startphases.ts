/**
 * When each phase of `ferry start` ended, in ms since the process started (performance.now()): logged
 * at debug level once the node listens (docs/benchmarks.md, cold start). Imports nothing.
 */
export const startPhases: Record<string, number> = {};

export function phaseDone(name: string): void {
  startPhases[name] = Math.round(performance.now());
}
