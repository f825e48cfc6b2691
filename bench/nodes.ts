/**
 * Starts each node the bench compares on free loopback ports, waits until it answers JSON-RPC,
 * and stops it again. Every node is a child process of the bench, so its peak RSS can be read.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeClient, sleep } from './rpc.js';
import { PEERS_DIR, REPO_ROOT, type PeerPaths } from './setup.js';

/**
 * `ferry`: `ferry start` with no pause between blocks (FERRY_START_FLAGS); `ferry-dev`: `ferry dev` (a block as soon as txs arrive,
 * like the peers' automine); `ferry-metrics`: ferry with both Prometheus listeners on (--metrics,
 * [instrumentation] prometheus); `ferry-dev-ejs` / `ferry-dev-revm`: `ferry dev` with its plain eth_calls and
 * its blocks' txs on one engine (--json-rpc.call-engine, --block-engine; docs/benchmarks.md "eth_call on
 * revm", "Block txs on revm")
 */
export const NODE_NAMES = ['bare', 'anvil', 'hardhat', 'ferry', 'ferry-dev', 'ferry-metrics', 'ferry-dev-ejs', 'ferry-dev-revm'] as const;
export type NodeName = (typeof NODE_NAMES)[number];
/** the nodes of the issue-23 table, run when --nodes is not given (ferry-metrics is asked for by name) */
export const DEFAULT_NODES: readonly NodeName[] = ['bare', 'anvil', 'hardhat', 'ferry', 'ferry-dev'];

/**
 * `ferry start`'s fastest setting: no pause between heights (timeout_commit 0) and a height only when
 * the mempool has a tx (create_empty_blocks false), so a block follows the last as soon as txs wait,
 * each through the whole engine (proposal, signed vote, commit), as the peers automine. With the
 * default 1 s timeout_commit the transfer workloads measure the block interval, not the node
 * (docs/benchmarks.md "ferry start in the bench").
 */
export const FERRY_START_FLAGS: readonly string[] = ['--consensus.timeout_commit', '0s', '--consensus.create_empty_blocks', 'false'];

const START_TIMEOUT_MS: Record<NodeName, number> = { anvil: 30_000, hardhat: 60_000, ferry: 90_000, 'ferry-dev': 90_000, 'ferry-metrics': 90_000, 'ferry-dev-ejs': 90_000, 'ferry-dev-revm': 90_000, bare: 10_000 };
const STOP_TIMEOUT_MS = 10_000;
const READY_POLL_MS = 200;
const LOG_TAIL_CHARS = 1_500;

/** children still running, so an interrupted bench can end them (and only them) */
const live = new Map<ChildProcess, string | undefined>();

/** Kills every node this process started that is still running (on SIGINT/SIGTERM/exit). */
export function killStartedNodes(): void {
  for (const [child, scratch] of live) {
    child.kill('SIGKILL');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  live.clear();
}

export interface RunningNode {
  name: NodeName;
  url: string;
  /** WebSocket JSON-RPC (Anvil and Hardhat serve it on their HTTP port; ferry on its own); undefined for bare */
  wsUrl?: string;
  pid: number;
  /** version and the settings that matter for speed (e.g. Hardhat's request logging off) */
  version: string;
  /** false for the bare server: it only answers a constant reply */
  isChain: boolean;
  logFile: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

function tail(file: string): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-LOG_TAIL_CHARS).trim();
  } catch {
    return '';
  }
}

interface LaunchSpec {
  name: NodeName;
  cmd: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  port: number;
  wsPort?: number;
  version: string;
  isChain: boolean;
  /** removed after stop */
  scratch?: string;
  /** how often to ask whether the node answers yet (default READY_POLL_MS) */
  pollMs?: number;
}

async function launch(spec: LaunchSpec): Promise<RunningNode> {
  const logDir = join(PEERS_DIR, 'logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${spec.name}.log`);
  const fd = openSync(logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(spec.cmd, spec.args, { cwd: spec.cwd, env: spec.env ?? process.env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  live.set(child, spec.scratch);
  let exited: string | undefined;
  const exitPromise = new Promise<void>((r) => {
    child.once('exit', (code, signal) => {
      exited = `exited with ${code ?? signal}`;
      live.delete(child);
      r();
    });
    child.once('error', (e) => {
      exited = `failed to spawn: ${e.message}`;
      live.delete(child);
      r();
    });
  });
  const stop = async (): Promise<void> => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exitPromise;
      clearTimeout(timer);
    }
    if (spec.scratch) rmSync(spec.scratch, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${spec.port}/`;
  const probe = makeClient(url, 1);
  const deadline = Date.now() + START_TIMEOUT_MS[spec.name];
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`${spec.name} ${exited}: ${tail(logFile)}`);
      if (Date.now() > deadline) throw new Error(`${spec.name} did not answer within ${START_TIMEOUT_MS[spec.name]} ms: ${tail(logFile)}`);
      try {
        await probe.call('eth_chainId');
        break;
      } catch {
        await sleep(spec.pollMs ?? READY_POLL_MS);
      }
    }
  } catch (e) {
    await stop();
    throw e;
  } finally {
    probe.close();
  }
  const wsUrl = spec.wsPort === undefined ? undefined : `ws://127.0.0.1:${spec.wsPort}/`;
  return { name: spec.name, url, wsUrl, pid: child.pid!, version: spec.version, isChain: spec.isChain, logFile, stop };
}

function anvilVersion(bin: string): string {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return /Version:\s*(\S+)/.exec(r.stdout ?? '')?.[1] ?? 'unknown';
}

function ferryVersion(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout?.trim();
  return rev ? `${pkg.version} (${rev})` : pkg.version;
}

/** A Hardhat 3 project must resolve `hardhat` locally: it lives inside bench/.peers/. */
function hardhatProject(): string {
  const dir = join(PEERS_DIR, 'hardhat-project');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ferry-bench-hardhat', private: true, type: 'module' }) + '\n');
  // Defaults: in-process EDR network, automine, 20 accounts from "test test ... junk", chain id 31337.
  writeFileSync(join(dir, 'hardhat.config.js'), 'export default {};\n');
  return dir;
}

export interface StartOptions {
  /** ferry only: this home directory (kept after stop) instead of a fresh scratch one */
  home?: string;
  pollMs?: number;
}

export async function startNode(name: NodeName, peers: PeerPaths, start: StartOptions = {}): Promise<RunningNode> {
  const spec = await nodeSpec(name, peers, start);
  const node = await launch({ ...spec, pollMs: start.pollMs });
  if (name === 'hardhat') {
    try {
      await hardhatLoggingOff(node);
    } catch (e) {
      await node.stop();
      throw e;
    }
  }
  return node;
}

/**
 * `hardhat node` prints every request it serves (method, and for transactions and calls a summary)
 * unless told otherwise; that costs it 2-4x on every request workload (issue 23). The
 * `hardhat_setLoggingEnabled` method turns it off (Hardhat docs, "Hardhat Network reference",
 * hardhat_setLoggingEnabled). The bench refuses to measure Hardhat if the node does not confirm.
 */
async function hardhatLoggingOff(node: RunningNode): Promise<void> {
  const c = makeClient(node.url, 1);
  try {
    const r = await c.call<unknown>('hardhat_setLoggingEnabled', [false]);
    if (r !== true) throw new Error(`hardhat_setLoggingEnabled(false) answered ${JSON.stringify(r)}, not true`);
  } finally {
    c.close();
  }
  node.version += ', request logging off (hardhat_setLoggingEnabled false)';
}

/** Poll interval of a cold-start measurement: the figure's resolution. */
export const COLD_START_POLL_MS = 5;

/**
 * Spawn → first JSON-RPC answer (`eth_chainId`), in ms, of a new instance of `name` started fresh (a new
 * home), or for ferry with `existingHome`, on a home made by an earlier start. Ports are picked before
 * the clock starts.
 */
export async function coldStartMs(name: NodeName, peers: PeerPaths, existingHome: boolean): Promise<number> {
  let home: string | undefined;
  if (existingHome) {
    home = mkdtempSync(join(tmpdir(), 'ferry-bench-home-'));
    await (await startNode(name, peers, { home })).stop();
  }
  try {
    const spec = await nodeSpec(name, peers, { home });
    const t0 = performance.now();
    const node = await launch({ ...spec, pollMs: COLD_START_POLL_MS });
    const ms = performance.now() - t0;
    await node.stop();
    return ms;
  } finally {
    if (home) rmSync(home, { recursive: true, force: true });
  }
}

async function nodeSpec(name: NodeName, peers: PeerPaths, start: StartOptions): Promise<LaunchSpec> {
  const port = await freePort();
  switch (name) {
    case 'anvil': {
      const scratch = mkdtempSync(join(tmpdir(), 'ferry-bench-anvil-'));
      return ({
        name, port, cwd: scratch, scratch, isChain: true,
        cmd: peers.anvil,
        // --quiet: no log output at all (anvil --help: "Do not print log messages"), its fastest setting
        args: ['--port', String(port), '--host', '127.0.0.1', '--quiet'],
        version: `${anvilVersion(peers.anvil)}, --quiet`,
        wsPort: port,
      });
    }
    case 'hardhat': {
      return ({
        name, port, wsPort: port, cwd: hardhatProject(), isChain: true,
        cmd: peers.node22,
        args: [peers.hardhatCli, 'node', '--port', String(port), '--hostname', '127.0.0.1'],
        env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: 'true' },
        version: `${peers.versions.hardhat} on node ${peers.versions.node22}`,
      });
    }
    case 'ferry':
    case 'ferry-dev':
    case 'ferry-dev-ejs':
    case 'ferry-dev-revm':
    case 'ferry-metrics': {
      const metricsArgs =
        name === 'ferry-metrics'
          ? ['--metrics', '--json-rpc.metrics-address', `127.0.0.1:${await freePort()}`, '--instrumentation.prometheus', '--instrumentation.prometheus_listen_addr', `127.0.0.1:${await freePort()}`]
          : name === 'ferry-dev-ejs' || name === 'ferry-dev-revm'
            ? ['--json-rpc.call-engine', name === 'ferry-dev-ejs' ? 'ethereumjs' : 'revm', '--block-engine', name === 'ferry-dev-ejs' ? 'ethereumjs' : 'revm']
            : [];
      const dev = name.startsWith('ferry-dev');
      const entry = join(REPO_ROOT, 'dist', 'src', 'bin', 'ferry.js');
      if (!existsSync(entry)) throw new Error('dist/src/bin/ferry.js is not built yet');
      const scratch = start.home === undefined ? mkdtempSync(join(tmpdir(), 'ferry-bench-home-')) : undefined;
      const [cometPort, wsPort] = [await freePort(), await freePort()];
      return ({
        name, port, wsPort, cwd: REPO_ROOT, scratch, isChain: true,
        cmd: process.execPath,
        args: [
          // node flags for ferry's process, e.g. BENCH_FERRY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
          // (NODE_OPTIONS refuses --cpu-prof; every thread writes its own profile)
          ...(process.env.BENCH_FERRY_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== ''),
          // BENCH_FERRY_UNBUNDLED=1: the unbundled modules, so a --cpu-prof names each function's own script (bench/profile.ts)
          process.env.BENCH_FERRY_UNBUNDLED === '1' ? entry : join(REPO_ROOT, 'bin', 'ferry.js'), dev ? 'dev' : 'start', '--home', start.home ?? scratch!,
          '--json-rpc.address', `127.0.0.1:${port}`,
          '--rpc.laddr', `tcp://127.0.0.1:${cometPort}`,
          '--json-rpc.ws-address', `127.0.0.1:${wsPort}`,
          // no line per block (info): its quietest setting, as Anvil runs with --quiet and Hardhat with its logging off
          '--log_level', 'warn',
          ...metricsArgs,
          ...(dev ? [] : FERRY_START_FLAGS),
          // extra ferry flags, e.g. BENCH_FERRY_ARGS="--consensus.block_on_tx" for automine-like dev mode
          ...(process.env.BENCH_FERRY_ARGS ?? '').split(/\s+/).filter((a) => a !== ''),
        ],
        version: `${ferryVersion()}, --log_level warn${dev ? '' : ` ${FERRY_START_FLAGS.join(' ')}`}`,
      });
    }
    case 'bare':
      return ({
        name, port, cwd: REPO_ROOT, isChain: false,
        cmd: process.execPath,
        args: [join(REPO_ROOT, 'dist', 'bench', 'bare-server.js'), String(port)],
        version: `node ${process.version}`,
      });
  }
}

/** pid and all its descendants, from /proc. */
function processTree(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // the comm field may hold spaces: fields after the closing parenthesis
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parentOf) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}

/** clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux) */
const USER_HZ = 100;

/** CPU time (user + system, ms) used so far by the node's process and its descendants, from /proc. */
export function cpuMs(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // fields after the comm's closing parenthesis start at field 3 (state); utime and stime are 14 and 15
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return (ticks * 1000) / USER_HZ;
}

/** Runs a bench script's `main`: the nodes it started are killed on Ctrl-C and when it fails. */
export function runScript(main: () => Promise<void>): void {
  process.on('SIGINT', () => {
    killStartedNodes();
    process.exit(130);
  });
  main().catch((e: unknown) => {
    console.error(e);
    killStartedNodes();
    process.exit(1);
  });
}

/** Every thread of `pid` (by tid) with the CPU it used so far, ms (utime + stime of /proc/<pid>/task/<tid>/stat). */
export function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(Number(t), ((Number(f[11]) + Number(f[12])) * 1000) / USER_HZ);
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** Peak resident set (VmHWM) of the node's process and its descendants, in MiB. */
export function peakRssMiB(pid: number): { mib: number; processes: number } {
  let kib = 0;
  let processes = 0;
  for (const p of processTree(pid)) {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) {
        kib += Number(m[1]);
        processes++;
      }
    } catch {
      // gone
    }
  }
  return { mib: kib / 1024, processes };
}
