/**
 * The bench's report (bench/report.ts, docs/benchmarks.md "Current figures"): a ratio is computed inside
 * one run, several runs print as ranges, and a target counts as met only when it is met in every run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { report, type Results } from '../../bench/report.js';
import type { NodeName } from '../../bench/nodes.js';
import type { BenchConfig, WorkloadName } from '../../bench/workloads.js';

const CFG: BenchConfig = {
  quick: true, durationMs: 1_000, warmupMs: 100, transfers: 10, transferWarmup: 0, anvilTransfers: 10, bursts: 1, burstSize: 10,
  logsRepeats: 1, wsTransfers: 1, transferTimeoutMs: 1_000, coldStarts: 1,
};
const NODES: NodeName[] = ['hardhat', 'ferry', 'ferry-dev'];
const ONLY: WorkloadName[] = ['call'];

/** one run: eth_call req/s (and CPU µs per call) of each node */
function run(hardhat: number, ferry: number, dev: number): Results {
  const r: Results = new Map();
  r.set('hardhat', new Map([['call', { value: hardhat, cpuUs: 100 }]]));
  r.set('ferry', new Map([['call', { value: ferry, cpuUs: 200 }]]));
  r.set('ferry-dev', new Map([['call', { value: dev, cpuUs: 50 }]]));
  return r;
}

const render = (runs: Results[]): string =>
  report({ runs, nodes: NODES, only: ONLY, cfg: CFG, versions: new Map(), pinned: {}, loads: runs.map(() => '1 / 1 / 1') });

const line = (md: string, start: string): string => md.split('\n').find((l) => l.startsWith(start)) ?? '';

describe('bench report', () => {
  it('prints each ratio from one run and a target met only when every run meets it', () => {
    // run 1: ferry 2.0x and dev 1.5x Hardhat; run 2: ferry 0.5x, dev 1.0x — met in 1 of 2 runs
    const md = render([run(1_000, 2_000, 1_500), run(4_000, 2_000, 4_000)]);
    assert.equal(line(md, '| eth_call ERC-20 balanceOf req/s'), '| eth_call ERC-20 balanceOf req/s | 1,000–4,000 | 2,000 | 1,500–4,000 | 0.50×–2.00× | 1.00×–1.50× |');
    assert.match(line(md, '- eth_call'), /\*\*not met\*\* \(met in 1 of 2 runs; ferry 0\.50×–2\.00×, ferry-dev 1\.00×–1\.50×\)/);
    assert.equal(line(md, '| eth_call ERC-20 balanceOf |'), '| eth_call ERC-20 balanceOf | 100 | 200 | 50.0 | 2.00× | 0.50× |');
  });

  it('says met when every run meets the target', () => {
    const md = render([run(1_000, 1_000, 1_200), run(2_000, 3_000, 2_000)]);
    assert.match(line(md, '- eth_call'), /\*\*met\*\* in 2 of 2 runs/);
  });

  it('gives the runs that have a figure, and says how many, when a run failed', () => {
    const failed = run(1_000, 2_000, 2_000);
    failed.set('hardhat', new Map([['call', { na: 'other side closed' }]]));
    const md = render([run(1_000, 3_000, 2_000), failed]);
    assert.equal(line(md, '| eth_call ERC-20 balanceOf req/s'), '| eth_call ERC-20 balanceOf req/s | 1,000 (1 of 2 runs) | 2,000–3,000 | 2,000 | 3.00× (1 of 2 runs) | 2.00× (1 of 2 runs) |');
    assert.match(line(md, '- eth_call'), /\*\*not met\*\* \(met in 1 of 2 runs;/);
  });

  it('says not measured when a workload did not run', () => {
    const md = render([run(1_000, 2_000, 2_000)]);
    assert.match(line(md, '- value transfers'), /not measured/);
  });
});
