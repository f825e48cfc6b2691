/**
 * `npm run bench` — ferry side by side with Anvil, Hardhat 3 and a bare node:http server.
 *
 *   npm run bench -- [--nodes bare,anvil,hardhat,ferry,ferry-dev,ferry-metrics] [--only blocknumber,balance,...] [--quick]
 *                    [--suites rpc,trace,comet,ws,logindex,explorers,metrics] [--duration SECONDS] [--transfers N] [--anvil-transfers N] [--transfer-warmup N] [--repeat N]
 *
 * The same options can come from the environment: BENCH_NODES, BENCH_ONLY, BENCH_QUICK=1, BENCH_SUITES,
 * BENCH_DURATION, BENCH_TRANSFERS, BENCH_ANVIL_TRANSFERS, BENCH_TRANSFER_WARMUP, BENCH_REPEAT. The output opens with the
 * issue-23 table (bench/report.ts) and the targets as met or not. Nodes run one after another (never two at
 * once), each on free loopback ports; a node that fails to start or a workload that fails prints
 * `n/a` with the reason and the run goes on. The final table is printed and written to
 * bench/.peers/last-run.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_NODES, NODE_NAMES, coldStartMs, killStartedNodes, startNode, type NodeName, type RunningNode } from './nodes.js';
import { loadHttpClient } from './rpc.js';
import { PEERS_DIR, ensurePeers, type PeerPaths } from './setup.js';
import { NodeContext, WORKLOADS, WORKLOAD_NAMES, type BenchConfig, type Figure, type WorkloadName } from './workloads.js';
import { fmt, loadText, report, type Cell, type Results } from './report.js';

const FULL: BenchConfig = {
  quick: false, durationMs: 5_000, warmupMs: 500, transfers: 2_000, transferWarmup: 0, anvilTransfers: 1_000,
  bursts: 2, burstSize: 1_000, logsRepeats: 21, wsTransfers: 20, transferTimeoutMs: 180_000, coldStarts: 5,
};
const QUICK: BenchConfig = {
  quick: true, durationMs: 2_000, warmupMs: 200, transfers: 500, transferWarmup: 0, anvilTransfers: 500,
  bursts: 1, burstSize: 500, logsRepeats: 7, wsTransfers: 10, transferTimeoutMs: 60_000, coldStarts: 3,
};
/** bound on --repeat: each repeat starts every node again */
const MAX_REPEAT = 20;
const OUTPUT_FILE = join(PEERS_DIR, 'last-run.md');


function parseList<T extends string>(raw: string | undefined, allowed: readonly T[], what: string, defaults: readonly T[] = allowed): T[] {
  if (!raw) return [...defaults];
  const items = raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const it of items) if (!allowed.includes(it as T)) throw new Error(`unknown ${what} "${it}" (choose from ${allowed.join(', ')})`);
  return allowed.filter((a) => items.includes(a));
}

function positive(raw: string | undefined, what: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${what} must be a positive number, got "${raw}"`);
  return n;
}

/**
 * Suites beside the request workloads, each its own program (bench/<suite>.ts) run as a child process:
 * trace (debug tracing vs Anvil), comet (Surface B index and fan-out), ws (WebSocket soak and load),
 * logindex (eth_getLogs by topic 2 over 1,000,000 logs of one token), explorers (ots_searchTransactions*
 * and trace_filter by address over 100,000 txs), metrics (the JSON-RPC metrics' cost in the dispatcher,
 * on vs off), fork (a swap through a Uniswap V2-style pair on a cold and a warm fork beside Anvil forking the same origin:
 * time and origin requests).
 */
const SUITES = ['rpc', 'trace', 'comet', 'ws', 'logindex', 'explorers', 'metrics', 'fork'] as const;
type Suite = (typeof SUITES)[number];

function suiteArgs(suite: Exclude<Suite, 'rpc'>, quick: boolean): string[] {
  switch (suite) {
    case 'trace':
      return quick ? ['--repeats', '2'] : [];
    case 'comet':
      return quick ? ['--quick'] : [];
    case 'ws':
      return quick ? ['--soak-seconds', '60', '--clients', '50', '--connections', '200', '--blocks', '20'] : [];
    case 'logindex':
      return quick ? ['--quick'] : [];
    case 'explorers':
      return quick ? ['--quick'] : [];
    case 'metrics':
      return quick ? ['--rounds', '7'] : [];
    case 'fork':
      return quick ? ['--rounds', '1'] : [];
  }
}

function runSuite(suite: Exclude<Suite, 'rpc'>, quick: boolean): string {
  const script = join(dirname(fileURLToPath(import.meta.url)), `${suite}.js`);
  log(`bench: suite ${suite} (${script})`);
  const r = spawnSync(process.execPath, [script, ...suiteArgs(suite, quick)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const status = r.status === 0 ? '' : `\n\n(suite ${suite} exited with ${r.status ?? r.signal}: a check failed or it could not run)`;
  return `## ${suite}\n\n${(r.stdout ?? '').trim()}${status}`;
}

function parseCli(): { nodes: NodeName[]; only: WorkloadName[]; cfg: BenchConfig; suites: Suite[]; quick: boolean; repeat: number } {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string' },
      only: { type: 'string' },
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      transfers: { type: 'string' },
      'anvil-transfers': { type: 'string' },
      'transfer-warmup': { type: 'string' },
      repeat: { type: 'string' },
      suites: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(`usage: npm run bench -- [--nodes ${NODE_NAMES.join(',')}] [--only ${WORKLOAD_NAMES.join(',')}]
                       [--suites ${SUITES.join(',')}] [--quick] [--duration SECONDS] [--transfers N] [--anvil-transfers N]
                       [--transfer-warmup N]   (untimed transfers to every node before each transfers/erc20 run)
                       [--repeat N]   (N runs of the request workloads, figures as ranges)
default nodes: ${DEFAULT_NODES.join(',')} (ferry-metrics only when named)`);
    process.exit(0);
  }
  const quick = values.quick ?? ['1', 'true'].includes(env.BENCH_QUICK ?? '');
  const cfg = { ...(quick ? QUICK : FULL) };
  const duration = positive(values.duration ?? env.BENCH_DURATION, 'duration');
  if (duration !== undefined) cfg.durationMs = duration * 1000;
  const transfers = positive(values.transfers ?? env.BENCH_TRANSFERS, 'transfers');
  if (transfers !== undefined) {
    cfg.transfers = Math.floor(transfers);
    cfg.anvilTransfers = Math.min(cfg.anvilTransfers, cfg.transfers);
  }
  const anvil = positive(values['anvil-transfers'] ?? env.BENCH_ANVIL_TRANSFERS, 'anvil-transfers');
  if (anvil !== undefined) cfg.anvilTransfers = Math.floor(anvil);
  const warm = values['transfer-warmup'] ?? env.BENCH_TRANSFER_WARMUP;
  if (warm !== undefined) {
    const n = Number(warm);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--transfer-warmup must be a whole number ≥ 0, got "${warm}"`);
    cfg.transferWarmup = n;
  }
  const repeat = Math.floor(positive(values.repeat ?? env.BENCH_REPEAT, 'repeat') ?? 1);
  if (repeat > MAX_REPEAT) throw new Error(`--repeat must be at most ${MAX_REPEAT}, got ${repeat}`);
  return {
    repeat,
    nodes: parseList(values.nodes ?? env.BENCH_NODES, NODE_NAMES, 'node', DEFAULT_NODES),
    only: parseList(values.only ?? env.BENCH_ONLY, WORKLOAD_NAMES, 'workload'),
    cfg,
    suites: parseList(values.suites ?? env.BENCH_SUITES, SUITES, 'suite'),
    quick,
  };
}

const log = (msg: string): void => console.error(msg);

async function benchNode(name: NodeName, only: WorkloadName[], cfg: BenchConfig, peers: PeerPaths, versions: Map<NodeName, string>): Promise<Map<WorkloadName, Cell>> {
  const cells = new Map<WorkloadName, Cell>();
  if (only.includes('coldstart')) {
    try {
      const fig = await coldStart(name, cfg, peers);
      cells.set('coldstart', fig);
      log(`   coldstart: ${fmt(fig.value)} ms (${fig.detail})`);
    } catch (e) {
      const reason = (e as Error).message.split('\n')[0]!.slice(0, 300);
      cells.set('coldstart', { na: reason });
      log(`   coldstart: n/a — ${reason}`);
    }
  }
  const workloads = WORKLOADS.filter((w) => w.name !== 'coldstart' && only.includes(w.name) && (name !== 'bare' || w.onBare));
  if (workloads.length === 0) return cells;
  log(`\n== ${name}: starting`);
  let node: RunningNode;
  try {
    node = await startNode(name, peers);
  } catch (e) {
    const reason = `did not start: ${(e as Error).message.split('\n')[0]}`;
    log(`== ${name}: ${reason}`);
    for (const w of workloads) cells.set(w.name, { na: reason });
    return cells;
  }
  versions.set(name, node.version);
  log(`== ${name} ${node.version}: ${node.url} (pid ${node.pid}, log ${node.logFile})`);
  const ctx = new NodeContext(node, cfg);
  try {
    for (const w of workloads) {
      try {
        const fig = await w.run(ctx);
        cells.set(w.name, fig);
        log(`   ${w.name}: ${fmt(fig.value)} ${w.unit}${fig.detail ? ` (${fig.detail})` : ''}`);
      } catch (e) {
        const reason = (e as Error).message.split('\n')[0]!.slice(0, 300);
        cells.set(w.name, { na: reason });
        log(`   ${w.name}: n/a — ${reason}`);
      }
    }
  } finally {
    ctx.close();
    await node.stop();
  }
  return cells;
}

/** median of `cfg.coldStarts` cold starts; ferry's detail adds the median on an existing home */
async function coldStart(name: NodeName, cfg: BenchConfig, peers: PeerPaths): Promise<Figure> {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const runs = async (existing: boolean) => {
    const out: number[] = [];
    for (let i = 0; i < cfg.coldStarts; i++) out.push(await coldStartMs(name, peers, existing));
    return out;
  };
  const fresh = await runs(false);
  const list = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
  if (!name.startsWith('ferry')) return { value: median(fresh), detail: `runs ${list(fresh)} ms` };
  const existing = await runs(true);
  return { value: median(fresh), detail: `existing home median ${Math.round(median(existing))} ms (runs ${list(existing)}); fresh runs ${list(fresh)}` };
}

async function main(): Promise<void> {
  const { nodes, only, cfg, suites, quick, repeat } = parseCli();
  // the peers tree also holds the bench's HTTP client (undici), so it is needed for any node
  const peers = ensurePeers(log);
  await loadHttpClient();
  const versions = new Map<NodeName, string>();
  const parts: string[] = [];
  if (suites.includes('rpc')) {
    const runs: Results[] = [];
    const loads: string[] = [];
    for (let i = 0; i < repeat; i++) {
      if (repeat > 1) log(`\n###### bench: run ${i + 1} of ${repeat}`);
      loads.push(loadText());
      const results: Results = new Map();
      for (const n of nodes) results.set(n, await benchNode(n, only, cfg, peers, versions));
      runs.push(results);
    }
    parts.push(report({ runs, nodes, only, cfg, versions, pinned: { anvil: peers.versions.anvil, hardhat: peers.versions.hardhat }, loads }));
  }
  for (const suite of suites) if (suite !== 'rpc') parts.push(runSuite(suite, quick));
  const md = parts.join('\n\n');
  console.log('\n' + md);
  mkdirSync(PEERS_DIR, { recursive: true });
  writeFileSync(OUTPUT_FILE, md);
  log(`bench: written to ${OUTPUT_FILE}`);
}

process.on('exit', killStartedNodes);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killStartedNodes();
    process.exit(130);
  });
}

main().catch((e: unknown) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exitCode = 1;
});
