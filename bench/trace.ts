/**
 * Trace benchmark: debug_traceTransaction of one ~1,000,000-gas transaction (Burner.burn from
 * test/contracts/Tracing.sol: a keccak/abi.encode loop) with the struct logger and with
 * callTracer, on ferry and on Anvil in the same run, as a ratio ferry/Anvil of the median
 * wall-clock time per trace (HTTP round trip included: what a client waits). Targets: struct
 * logger ≤ 3× Anvil, callTracer ≤ 2× Anvil.
 *
 * The nodes run one after the other. Run alone: `npm run build && node dist/bench/trace.js
 * [--repeats N]`; the bench harness calls `runTraceBench()`.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runFixture, sendBurn, startAnvil } from '../test/e2e/debug-fixtures.js';
import { startFerry } from '../test/helpers/node.js';
import { call } from '../test/helpers/rpc.js';

export const TRACE_TARGET_GAS = 1_000_000n;
/** struct logger ≤ 3× Anvil, callTracer ≤ 2× Anvil */
export const TRACE_TARGETS = { structLogger: 3, callTracer: 2 } as const;
const DEFAULT_REPEATS = 5;
const TX_GAS_LIMIT = 1_500_000n;
const CALIBRATION_ROUNDS = 1000n;
const TRACE_TIMEOUT = '60s';

export interface TraceBenchRow {
  tracer: 'structLogger' | 'callTracer';
  /** median ms per trace */
  ferryMs: number;
  anvilMs: number;
  ratio: number;
  target: number;
  pass: boolean;
}

export interface TraceBenchResult {
  gasUsed: { ferry: bigint; anvil: bigint };
  structLogSteps: number;
  rows: TraceBenchRow[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function timeTraces(url: string, hash: string, cfg: object, repeats: number): Promise<{ ms: number; result: any }> {
  let result: any;
  const times: number[] = [];
  // one warm-up (caches, JIT), then the timed runs
  for (let i = 0; i <= repeats; i++) {
    const t0 = performance.now();
    result = await call(url, 'debug_traceTransaction', [hash, { ...cfg, timeout: TRACE_TIMEOUT }]);
    if (i > 0) times.push(performance.now() - t0);
  }
  return { ms: median(times), result };
}

/** Rounds of Burner.burn that use about TRACE_TARGET_GAS, measured on the node itself. */
async function roundsFor(url: string, burner: string): Promise<bigint> {
  const one = await sendBurn(url, burner, CALIBRATION_ROUNDS, TX_GAS_LIMIT);
  const two = await sendBurn(url, burner, 2n * CALIBRATION_ROUNDS, TX_GAS_LIMIT);
  const perRound = (two.gasUsed - one.gasUsed) / CALIBRATION_ROUNDS;
  const base = one.gasUsed - perRound * CALIBRATION_ROUNDS;
  return (TRACE_TARGET_GAS - base) / perRound;
}

async function measure(url: string, repeats: number, rounds: bigint | undefined) {
  const fx = await runFixture(url);
  const n = rounds ?? (await roundsFor(url, fx.deployed.burner));
  const tx = await sendBurn(url, fx.deployed.burner, n, TX_GAS_LIMIT);
  const structLogger = await timeTraces(url, tx.hash, {}, repeats);
  const callTracer = await timeTraces(url, tx.hash, { tracer: 'callTracer' }, repeats);
  return { rounds: n, gasUsed: tx.gasUsed, structLogger, callTracer };
}

export async function runTraceBench(opts: { repeats?: number; log?: (m: string) => void } = {}): Promise<TraceBenchResult> {
  const repeats = opts.repeats ?? DEFAULT_REPEATS;
  const log = opts.log ?? ((m: string) => console.error(m));
  log('trace bench: ferry ...');
  const ferry = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.api', 'eth,net,web3,debug'] });
  let f;
  try {
    f = await measure(ferry.url, repeats, undefined);
  } finally {
    await ferry.stop();
  }
  log('trace bench: anvil ...');
  const anvil = await startAnvil();
  let a;
  try {
    a = await measure(anvil.url, repeats, f.rounds);
  } finally {
    await anvil.stop();
  }
  const fSteps = f.structLogger.result.structLogs.length;
  const aSteps = a.structLogger.result.structLogs.length;
  if (fSteps !== aSteps) throw new Error(`struct logs differ: ferry ${fSteps} steps, anvil ${aSteps}`);
  const row = (tracer: TraceBenchRow['tracer'], fm: number, am: number): TraceBenchRow => {
    const ratio = fm / am;
    return { tracer, ferryMs: fm, anvilMs: am, ratio, target: TRACE_TARGETS[tracer], pass: ratio <= TRACE_TARGETS[tracer] };
  };
  return {
    gasUsed: { ferry: f.gasUsed, anvil: a.gasUsed },
    structLogSteps: fSteps,
    rows: [row('structLogger', f.structLogger.ms, a.structLogger.ms), row('callTracer', f.callTracer.ms, a.callTracer.ms)],
  };
}

/** Markdown table of a result. */
export function formatTraceBench(r: TraceBenchResult): string {
  const lines = [
    `trace of one ${r.gasUsed.ferry}-gas tx (${r.structLogSteps} steps), median per debug_traceTransaction:`,
    '',
    '| tracer | ferry ms | anvil ms | ferry/anvil | target | |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const x of r.rows) {
    lines.push(`| ${x.tracer} | ${x.ferryMs.toFixed(1)} | ${x.anvilMs.toFixed(1)} | ${x.ratio.toFixed(2)}× | ≤ ${x.target}× | ${x.pass ? 'ok' : 'MISSED'} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { repeats: { type: 'string' } } });
  const repeats = values.repeats === undefined ? undefined : Number(values.repeats);
  runTraceBench({ repeats })
    .then((r) => console.log(formatTraceBench(r)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
