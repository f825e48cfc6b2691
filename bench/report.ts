/**
 * The bench's markdown output: the issue-23 table (ferry beside the bare Node server, Anvil and Hardhat,
 * with the targets as met / not met), then every figure of every workload. Several runs (`--repeat N`)
 * show as ranges: each ratio is computed inside one run (both figures from the same run), and the range
 * is over the runs' ratios; a target is met only if it is met in every run.
 */
import { cpus, loadavg } from 'node:os';
import type { NodeName } from './nodes.js';
import { CONCURRENCY, WORKLOADS, WS_CLIENTS, type BenchConfig, type Figure, type WorkloadName } from './workloads.js';

export type Cell = Figure | { na: string };
/** one run: node → workload → figure */
export type Results = Map<NodeName, Map<WorkloadName, Cell>>;

const PEER_NODES: readonly NodeName[] = ['bare', 'anvil', 'hardhat'];
const FERRY_MODES: readonly NodeName[] = ['ferry', 'ferry-dev'];
/** `ferry-metrics` beside `ferry`: the cost of the metrics, as a ratio column (1.00× = free) */
const METRICS_RATIO_HEAD = 'metrics on ÷ off';

/** Rows of the issue-23 table, in its order, with its wording. */
const ISSUE_ROWS: ReadonlyArray<{ w: WorkloadName; label: string }> = [
  { w: 'blocknumber', label: 'eth_blockNumber req/s' },
  { w: 'balance', label: 'eth_getBalance req/s' },
  { w: 'call', label: 'eth_call ERC-20 balanceOf req/s' },
  { w: 'transfers', label: 'value transfers tx/s' },
  { w: 'erc20', label: 'ERC-20 transfers tx/s' },
  { w: 'logs', label: 'eth_getLogs 2,000 logs, median ms' },
  { w: 'newheads', label: `WS newHeads p50 ms (${WS_CLIENTS} clients)` },
];
const ISSUE_COLUMNS: ReadonlyArray<{ n: NodeName; label: string }> = [
  { n: 'bare', label: 'bare Node' },
  { n: 'anvil', label: 'Anvil' },
  { n: 'hardhat', label: 'Hardhat' },
  { n: 'ferry', label: 'ferry start (timeout_commit 0)' },
  { n: 'ferry-dev', label: 'ferry dev' },
  { n: 'ferry-dev-ejs', label: 'ferry dev, eth_call on ethereumjs' },
  { n: 'ferry-dev-revm', label: 'ferry dev, eth_call on revm' },
];

/**
 * The issue's targets: ferry ÷ Hardhat at least 1.0 (higher-is-better rows) or at most 1.0 (times), in
 * the listed ferry modes (`ferry start` with no pause between blocks, bench/nodes.ts FERRY_START_FLAGS).
 */
const TARGETS: ReadonlyArray<{ w: WorkloadName; modes: readonly NodeName[]; text: string }> = [
  { w: 'call', modes: FERRY_MODES, text: 'eth_call ≥ 1.0× Hardhat, ferry start and ferry dev' },
  { w: 'transfers', modes: FERRY_MODES, text: 'value transfers ≥ 1.0× Hardhat, ferry start and ferry dev' },
  { w: 'erc20', modes: FERRY_MODES, text: 'ERC-20 transfers ≥ 1.0× Hardhat, ferry start and ferry dev' },
  { w: 'logs', modes: FERRY_MODES, text: "eth_getLogs no slower than Hardhat (≤ 1.0× Hardhat's time)" },
  { w: 'newheads', modes: FERRY_MODES, text: "WS newHeads p50 no slower than Hardhat (≤ 1.0× Hardhat's time)" },
];

export function fmt(v: number): string {
  if (v >= 100) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

const value = (c: Cell | undefined): number | undefined => (c && !('na' in c) ? c.value : undefined);

/**
 * A figure over the runs: one value, or "min–max"; n/a when no run has one, and "(k of N runs)" after
 * it when only some have (the notes say why the others failed).
 */
function range(xs: Array<number | undefined>, f: (v: number) => string): string {
  const v = xs.filter((x): x is number => x !== undefined);
  if (v.length === 0) return 'n/a';
  const lo = Math.min(...v);
  const hi = Math.max(...v);
  const text = f(lo) === f(hi) ? f(lo) : `${f(lo)}–${f(hi)}`;
  return v.length === xs.length ? text : `${text} (${v.length} of ${xs.length} runs)`;
}

const ratioFmt = (r: number): string => `${r.toFixed(2)}×`;

/** ferry ÷ peer of one workload in each run (undefined where either figure is missing) */
function ratios(runs: Results[], ferry: NodeName, peer: NodeName, w: WorkloadName): Array<number | undefined> {
  return runs.map((r) => {
    const f = value(r.get(ferry)?.get(w));
    const p = value(r.get(peer)?.get(w));
    return f !== undefined && p !== undefined && p > 0 ? f / p : undefined;
  });
}

function cellOf(runs: Results[], n: NodeName, w: WorkloadName): string {
  return range(runs.map((r) => value(r.get(n)?.get(w))), fmt);
}

/** the ferry columns that get a ÷ Hardhat ratio: both modes, and the dev node on each call engine */
const RATIO_NODES: readonly NodeName[] = [...FERRY_MODES, 'ferry-dev-ejs', 'ferry-dev-revm'];
const ratioColumns = (nodes: NodeName[]): NodeName[] => RATIO_NODES.filter((f) => nodes.includes(f) && nodes.includes('hardhat'));
const ratioHead = (f: NodeName): string => `${f === 'ferry' ? 'ferry' : ISSUE_COLUMNS.find((c) => c.n === f)!.label} ÷ Hardhat`;

function issueTable(runs: Results[], nodes: NodeName[]): string[] {
  const cols = ISSUE_COLUMNS.filter((c) => nodes.includes(c.n));
  const ratioCols = ratioColumns(nodes);
  const head = ['workload', ...cols.map((c) => c.label), ...ratioCols.map(ratioHead)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { w, label } of ISSUE_ROWS) {
    const row = [label, ...cols.map((c) => (c.n === 'bare' && !WORKLOADS.find((x) => x.name === w)!.onBare ? '—' : cellOf(runs, c.n, w)))];
    for (const f of ratioCols) row.push(range(ratios(runs, f, 'hardhat', w), ratioFmt));
    lines.push(`| ${row.join(' | ')} |`);
  }
  return lines;
}

const cpuOf = (c: Cell | undefined): number | undefined => (c && !('na' in c) ? c.cpuUs : undefined);

/** The node's CPU per request or tx in the same runs: what the rate would be without the machine's other load. */
function cpuTable(runs: Results[], nodes: NodeName[], only: WorkloadName[]): string[] {
  const rows = ISSUE_ROWS.filter((r) => only.includes(r.w) && runs.some((run) => [...run.values()].some((m) => cpuOf(m.get(r.w)) !== undefined)));
  if (rows.length === 0) return [];
  const cols = ISSUE_COLUMNS.filter((c) => nodes.includes(c.n));
  const ratioCols = ratioColumns(nodes);
  const head = ['node CPU, µs per request / tx', ...cols.map((c) => c.label), ...ratioCols.map(ratioHead)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const { w, label } of rows) {
    const row = [label.replace(/ (req|tx)\/s$/, ''), ...cols.map((c) => range(runs.map((r) => cpuOf(r.get(c.n)?.get(w))), fmt))];
    for (const f of ratioCols) {
      row.push(
        range(
          runs.map((r) => {
            const a = cpuOf(r.get(f)?.get(w));
            const b = cpuOf(r.get('hardhat')?.get(w));
            return a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
          }),
          ratioFmt,
        ),
      );
    }
    lines.push(`| ${row.join(' | ')} |`);
  }
  return [
    '',
    "CPU the node's processes used per request (rate workloads) or per transaction (transfers, including the",
    'receipt polling), in the same runs; lower is better. On a machine shared with other work this moves far',
    'less than the rates above, which measure what share of the cores each node got in its minutes.',
    '',
    ...lines,
  ];
}

function targetLines(runs: Results[], nodes: NodeName[]): string[] {
  const out: string[] = [];
  for (const t of TARGETS) {
    const modes = t.modes.filter((m) => nodes.includes(m));
    if (modes.length === 0 || !nodes.includes('hardhat')) {
      out.push(`- ${t.text}: not measured (needs hardhat and ${t.modes.join(', ')})`);
      continue;
    }
    if (modes.every((m) => ratios(runs, m, 'hardhat', t.w).every((r) => r === undefined))) {
      out.push(`- ${t.text}: not measured in this run`);
      continue;
    }
    const higher = WORKLOADS.find((x) => x.name === t.w)!.higherIsBetter;
    let met = 0;
    for (let i = 0; i < runs.length; i++) {
      const ok = modes.every((m) => {
        const r = ratios([runs[i]!], m, 'hardhat', t.w)[0];
        return r !== undefined && (higher ? r >= 1 : r <= 1);
      });
      if (ok) met++;
    }
    const seen = modes.map((m) => `${m} ${range(ratios(runs, m, 'hardhat', t.w), ratioFmt)}`).join(', ');
    // the count is always of the runs that met it: "**not met** (met in 2 of 3 runs; …)"
    const count = `${met} of ${runs.length} run${runs.length > 1 ? 's' : ''}`;
    out.push(met === runs.length ? `- ${t.text}: **met** in ${count} (${seen})` : `- ${t.text}: **not met** (met in ${count}; ${seen})`);
  }
  return out;
}

/** Every workload, every node, ferry's ratio to each peer. */
function fullTable(runs: Results[], nodes: NodeName[], only: WorkloadName[]): { lines: string[]; notes: string[] } {
  const ferries = FERRY_MODES.filter((f) => nodes.includes(f));
  const pairs = ferries.flatMap((f) => PEER_NODES.filter((p) => nodes.includes(p)).map((p) => [f, p] as const));
  const metricsRatio = nodes.includes('ferry') && nodes.includes('ferry-metrics');
  const head = ['workload', 'unit', 'better', ...nodes, ...pairs.map(([f, p]) => `${f} ÷ ${p}`), ...(metricsRatio ? [METRICS_RATIO_HEAD] : [])];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  const notes: string[] = [];
  for (const w of WORKLOADS.filter((x) => only.includes(x.name))) {
    const row = [w.name, w.unit, w.higherIsBetter ? 'higher' : 'lower'];
    for (const n of nodes) {
      if (n === 'bare' && !w.onBare) {
        row.push('—');
        continue;
      }
      row.push(cellOf(runs, n, w.name));
      runs.forEach((r, i) => {
        const c = r.get(n)?.get(w.name);
        const tag = runs.length > 1 ? ` (run ${i + 1})` : '';
        if (c && 'na' in c) notes.push(`- ${n} / ${w.name}${tag}: n/a — ${c.na}`);
        else if (c?.detail) notes.push(`- ${n} / ${w.name}${tag}: ${c.detail}`);
      });
    }
    for (const [f, p] of pairs) row.push(range(ratios(runs, f, p, w.name), ratioFmt));
    if (metricsRatio) row.push(range(ratios(runs, 'ferry-metrics', 'ferry', w.name), (r) => `${r.toFixed(3)}×`));
    lines.push(`| ${row.join(' | ')} |`);
  }
  return { lines, notes };
}

export interface ReportInput {
  runs: Results[];
  nodes: NodeName[];
  only: WorkloadName[];
  cfg: BenchConfig;
  versions: Map<NodeName, string>;
  pinned: Record<string, string>;
  /** `uptime`-style load averages sampled at the start of each run */
  loads: string[];
}

export function report(x: ReportInput): string {
  const { runs, nodes, only, cfg, versions } = x;
  const cpu = cpus();
  const runsText = runs.length > 1 ? `${runs.length} runs (each node started fresh in each; figures are min–max over the runs, each ratio is computed inside one run)` : 'one run';
  const header = [
    `# ferry bench — ${new Date().toISOString()}`,
    '',
    `Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}; bench client node ${process.version}; load average (1/5/15 min) at the start of each run: ${x.loads.join('; ')}, now ${loadText()}.`,
    `Mode: ${cfg.quick ? 'quick' : 'full'}, ${runsText} — ${cfg.durationMs / 1000} s per rate run (after ${cfg.warmupMs} ms warm-up), ${CONCURRENCY} connections, ` +
      `${cfg.transfers} transfers (Anvil ${cfg.anvilTransfers}: it stalls when ${cfg.transfers > cfg.anvilTransfers ? cfg.transfers : 2_000} arrive at once)${cfg.transferWarmup > 0 ? `, each transfer run after ${cfg.transferWarmup} untimed ones (every node)` : ''}, ` +
      `${cfg.wsTransfers} transfers × ${WS_CLIENTS} WebSocket clients for newHeads, ${cfg.bursts}×${cfg.burstSize}-transfer bursts for latency.`,
    `Nodes: ${nodes.map((n) => `${n} ${versions.get(n) ?? (x.pinned[n] ? `(pinned ${x.pinned[n]})` : '')}`.trim()).join('; ')}.`,
    '',
  ];
  const issueRows = ISSUE_ROWS.filter((r) => only.includes(r.w));
  const issue = issueRows.length
    ? [
        '## Beside the peers (issue 23)',
        '',
        ...issueTable(runs, nodes).filter((_, i) => i < 2 || issueRows.some((r) => r.w === ISSUE_ROWS[i - 2]!.w)),
        '',
        'Targets (issue 23, wall-clock rates of the table above):',
        ...targetLines(runs, nodes),
        ...cpuTable(runs, nodes, only),
        '',
      ]
    : [];
  const { lines, notes } = fullTable(runs, nodes, only);
  return [
    ...header,
    ...issue,
    '## Every workload',
    '',
    ...WORKLOADS.filter((w) => only.includes(w.name)).map((w) => `- ${w.name}: ${w.title}`),
    '',
    ...lines,
    '',
    'Notes:',
    ...(notes.length ? notes : ['- none']),
    '',
  ].join('\n');
}

export function loadText(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' / ');
}
