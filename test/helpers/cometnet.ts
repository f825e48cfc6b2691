/**
 * Real CometBFT networks for end-to-end tests: `ferry testnet` writes the homes (a real ferry
 * process run once), then each node runs as two real processes on loopback — `ferry start` (the
 * application, --with-cometbft=false) and `cometbft start`. Output goes to `<dir>/<node>-<proc>.log`.
 *
 * The suite runs two CometBFT lines (docs/abci.md "CometBFT versions"): v0.38 and v0.39. A line's binary
 * is, in order: $FERRY_COMETBFT_BIN (v0.38) or $FERRY_COMETBFT_039_BIN (v0.39); the cache `.ci/run`
 * fills, $(go env GOPATH)/cometbft-<version>/cometbft; and for v0.38 also $(go env GOPATH)/bin/cometbft
 * and PATH. Every candidate's `cometbft version` must be of the wanted line, so a v0.39 binary on PATH
 * never stands in for v0.38. Without one, `cometbftOrSkip` skips loudly — except under CI=true, where it fails.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { NetnsNetwork } from './netns.js';
import { FERRY_BIN } from './paths.js';

/** Extra Node options for the ferry processes (bench: `FERRY_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'`). */
export function ferryNodeArgs(): string[] {
  return (process.env.FERRY_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

const PORTS_PER_NODE = 10;
const START_TIMEOUT_MS = 90_000;
/** how long a process may take to exit after SIGTERM before it is killed */
const STOP_TIMEOUT_MS = 20_000;
/** lowest base port tried; the range up to the kernel's ephemeral ports is never handed out by it */
const LOWEST_PORT = 10_000;
/** Linux's default first ephemeral port, when /proc does not say */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const POLL_MS = 100;
const LOG_TAIL = 40;

/** The CometBFT lines the suite runs, each with the release `.ci/run` installs. */
export const COMETBFT_LINES = {
  '0.38': { version: 'v0.38.26', env: 'FERRY_COMETBFT_BIN' },
  '0.39': { version: 'v0.39.4', env: 'FERRY_COMETBFT_039_BIN' },
} as const;
export type CometLine = keyof typeof COMETBFT_LINES;

/** `cometbft version` of a binary, e.g. "0.38.26", or undefined when it does not run. */
export function cometbftVersion(bin: string): string | undefined {
  try {
    return execFileSync(bin, ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().replace(/^v/, '');
  } catch {
    return undefined;
  }
}

function goPath(): string | undefined {
  try {
    return execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined; // no go toolchain
  }
}

/** The cometbft binary of a line (see the file's comment for the order), or undefined. */
export function findCometbft(line: CometLine = '0.38'): string | undefined {
  const { version, env } = COMETBFT_LINES[line];
  const gopath = goPath();
  const candidates: string[] = [];
  const fromEnv = process.env[env];
  if (fromEnv) candidates.push(fromEnv);
  if (gopath) candidates.push(join(gopath, `cometbft-${version}`, 'cometbft'));
  if (line === '0.38') {
    if (gopath) candidates.push(join(gopath, 'bin', 'cometbft'));
    for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'cometbft'));
  }
  return candidates.find((p) => existsSync(p) && cometbftVersion(p)?.startsWith(`${line}.`) === true);
}

/**
 * The cometbft binary of a line, or a skip reason (printed loudly) when there is none outside CI. Under
 * CI=true a missing binary throws: the suite must not pass without running these tests.
 */
export function cometbftOrSkip(line: CometLine = '0.38'): { bin: string; skip: false } | { bin: undefined; skip: string } {
  const bin = findCometbft(line);
  if (bin) return { bin, skip: false };
  const { version, env } = COMETBFT_LINES[line];
  const msg = `no cometbft v${line} binary ($${env}, $(go env GOPATH)/cometbft-${version}/cometbft${line === '0.38' ? ', $(go env GOPATH)/bin/cometbft, PATH' : ''}): install it with \`GOBIN=$(go env GOPATH)/cometbft-${version} go install github.com/cometbft/cometbft/cmd/cometbft@${version}\``;
  if (process.env.CI === 'true') throw new Error(`${msg} — required under CI`);
  process.stderr.write(`\n!!!!!!!!!! SKIPPING the CometBFT v${line} network tests: ${msg} !!!!!!!!!!\n\n`);
  return { bin: undefined, skip: msg };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The first port the kernel hands out for outgoing connections and `listen(0)` (Linux: ip_local_port_range). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

/**
 * A base port whose next `count` ports are all free on 127.0.0.1, below the ephemeral range: a port
 * found free there cannot be taken before CometBFT binds it by an outgoing connection or another
 * test's `listen(0)` (both draw from the ephemeral range).
 */
async function freeRange(count: number): Promise<number> {
  const span = ephemeralLow() - count - LOWEST_PORT;
  if (span <= 0) throw new Error(`no room for ${count} ports below the ephemeral range`);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = LOWEST_PORT + Math.floor(Math.random() * span);
    let ok = true;
    for (let p = base; p < base + count && ok; p++) ok = await portFree(p);
    if (ok) return base;
  }
  throw new Error('no free port range');
}

function tail(file: string, lines = LOG_TAIL): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no output)';
  }
}

export async function rpc<T = unknown>(url: string, method: string, params: unknown = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string; data?: unknown } };
  if (body.error) throw new Error(`${method}: ${body.error.message}${body.error.data ? ` (${JSON.stringify(body.error.data)})` : ''}`);
  return body.result as T;
}

class Proc {
  private child: ChildProcess | undefined;
  private exit: Promise<void> = Promise.resolve();

  constructor(
    readonly label: string,
    readonly logFile: string,
    private readonly cmd: string,
    private readonly args: string[],
    private readonly registry: Set<ChildProcess>,
    /** a command the process runs under, e.g. `ip netns exec NS` (which execs it: the pid is the process's) */
    private readonly prefix: string[] = [],
  ) {}

  /** Sends a signal without waiting (SIGSTOP/SIGCONT pause and resume); false when not running. */
  signal(sig: NodeJS.Signals): boolean {
    return this.child?.kill(sig) ?? false;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** the running process's id (bench/abci.ts reads its threads' CPU time) */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** `env` and `extraArgs`: added to this process's environment and arguments for this run only */
  start(env: Record<string, string> = {}, extraArgs: string[] = []): void {
    if (this.child) throw new Error(`${this.label} already running`);
    const fd = openSync(this.logFile, 'a');
    const argv = [...this.prefix, this.cmd, ...this.args, ...extraArgs];
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
    closeSync(fd);
    this.child = child;
    this.registry.add(child);
    this.exit = new Promise((resolve) =>
      child.on('exit', () => {
        this.registry.delete(child);
        if (this.child === child) this.child = undefined;
        resolve();
      }),
    );
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.child) return;
    this.child.kill(signal);
    await this.exit;
  }

  /** SIGTERM, then SIGKILL when the process is still running after `ms`; true when SIGTERM sufficed */
  async stop(ms = STOP_TIMEOUT_MS): Promise<boolean> {
    if (!this.child) return true;
    this.child.kill('SIGTERM');
    if (await this.exited(ms)) return true;
    process.stderr.write(`${this.label} did not exit ${ms} ms after SIGTERM: SIGKILL\n`);
    await this.kill('SIGKILL');
    return false;
  }

  /** resolves true when the process exits (by itself) within `ms`, false otherwise */
  async exited(ms: number): Promise<boolean> {
    if (!this.child) return true;
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exit.then(() => true), new Promise<boolean>((res) => (timer = setTimeout(() => res(false), ms)))]);
    clearTimeout(timer);
    return r;
  }

  logTail(): string {
    return `--- ${this.label} (${this.logFile}) ---\n${tail(this.logFile)}`;
  }
}

export class NetNode {
  readonly ferry: Proc;
  readonly comet: Proc;
  constructor(
    readonly name: string,
    readonly validator: boolean,
    readonly ethUrl: string,
    readonly cometUrl: string,
    readonly ferryHome: string,
    readonly cometHome: string,
    dir: string,
    cometBin: string,
    registry: Set<ChildProcess>,
    prefix: string[] = [],
  ) {
    this.ferry = new Proc(`${name} ferry`, join(dir, `${name}-ferry.log`), process.execPath, [...ferryNodeArgs(), FERRY_BIN, 'start', '--home', ferryHome], registry, prefix);
    this.comet = new Proc(`${name} cometbft`, join(dir, `${name}-cometbft.log`), cometBin, ['start', '--home', cometHome], registry, prefix);
  }

  /**
   * ferry first (CometBFT connects to its ABCI address at start-up), then CometBFT; `ferryEnv` and
   * `ferryArgs` are added to ferry's environment and flags for this run (e.g. a test fault, docs/abci.md)
   */
  async start(o: { ferryEnv?: Record<string, string>; ferryArgs?: string[] } = {}): Promise<void> {
    if (!this.ferry.running) {
      this.ferry.start(o.ferryEnv, o.ferryArgs);
      await this.waitFerry();
    }
    if (!this.comet.running) {
      this.comet.start();
      await this.waitComet();
    }
  }

  /** CometBFT's RPC answers once its ABCI handshake with ferry is done */
  async waitComet(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (!this.comet.running) throw new Error(`${this.name}: cometbft exited before it was ready\n${this.comet.logTail()}`);
      try {
        await rpc(this.cometUrl, 'health');
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`${this.name}: cometbft not ready\n${this.comet.logTail()}`);
        await sleep(POLL_MS);
      }
    }
  }

  async waitFerry(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (!this.ferry.running) throw new Error(`${this.name}: ferry exited before it was ready\n${this.ferry.logTail()}`);
      try {
        await rpc(this.ethUrl, 'eth_blockNumber');
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`${this.name}: ferry not ready\n${this.ferry.logTail()}`);
        await sleep(POLL_MS);
      }
    }
  }

  async height(): Promise<bigint> {
    return BigInt(await rpc<string>(this.ethUrl, 'eth_blockNumber'));
  }

  /** kill -9 of both processes */
  async kill9(): Promise<void> {
    await this.comet.kill('SIGKILL');
    await this.ferry.kill('SIGKILL');
  }

  /** CometBFT first (it holds ferry's ABCI connections), then ferry; each SIGTERM with a SIGKILL deadline */
  async stop(): Promise<void> {
    await this.comet.stop();
    await this.ferry.stop();
  }

  logs(): string {
    return `${this.ferry.logTail()}\n${this.comet.logTail()}`;
  }
}

/** `0x` + lower-case hex of CometBFT's upper-case hex */
const evmHex = (h: string): string => '0x' + h.toLowerCase();

/**
 * The identities docs/abci.md promises, for every height 0..upTo of `node`: EVM block h's hash is
 * CometBFT block h's id (h ≥ 1), and its state root is the `app_hash` of CometBFT header h+1.
 */
export async function assertEvmMatchesComet(node: NetNode, upTo: bigint): Promise<void> {
  type CometBlock = { block_id: { hash: string }; block: { header: { app_hash: string } } };
  let atH: CometBlock | undefined; // CometBFT block h (none at h = 0)
  for (let h = 0n; h <= upTo; h++) {
    const evm = await rpc<{ hash: string; stateRoot: string }>(node.ethUrl, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
    const following = await rpc<CometBlock>(node.cometUrl, 'block', { height: String(h + 1n) });
    if (atH) assert.equal(evm.hash, evmHex(atH.block_id.hash), `${node.name}: EVM block ${h} hash = CometBFT block id ${h}`);
    assert.equal(evm.stateRoot, evmHex(following.block.header.app_hash), `${node.name}: EVM block ${h} state root = app_hash of CometBFT header ${h + 1n}`);
    atH = following;
  }
}

const registry = new Set<ChildProcess>();
const dirs = new Set<string>();
process.on('exit', () => {
  for (const p of registry) p.kill('SIGKILL');
  if (process.env.FERRY_E2E_KEEP === '1' || (process.exitCode !== undefined && process.exitCode !== 0)) {
    for (const d of dirs) process.stderr.write(`\n--- CometBFT network files kept at ${d} ---\n`);
    return;
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Rewrites the homes `ferry testnet` wrote for loopback so node i runs in its namespace: CometBFT's P2P
 * and RPC and ferry's JSON-RPC listen on every address, and each peer is dialled at its namespace's
 * address (the ports stay as `ferry testnet` gave them; the ABCI socket stays on the namespace's loopback).
 */
function placeInNamespaces(out: string, total: number, base: number, netns: NetnsNetwork): void {
  const peerAddress = (port: number) => netns.address(Math.floor((port - base) / PORTS_PER_NODE));
  for (let i = 0; i < total; i++) {
    const comet = join(out, `node${i}`, 'cometbft', 'config', 'config.toml');
    writeFileSync(
      comet,
      readFileSync(comet, 'utf8')
        .replace(/^laddr = "tcp:\/\/127\.0\.0\.1:/gm, 'laddr = "tcp://0.0.0.0:')
        .replace(/@127\.0\.0\.1:(\d+)/g, (_m, port: string) => `@${peerAddress(Number(port))}:${port}`),
    );
    const app = join(out, `node${i}`, 'ferry', 'config', 'app.toml');
    writeFileSync(app, readFileSync(app, 'utf8').replace(/^address = "127\.0\.0\.1:/m, 'address = "0.0.0.0:'));
  }
}

export class CometNet {
  private constructor(
    readonly dir: string,
    readonly nodes: NetNode[],
  ) {}

  /**
   * Writes a network with `ferry testnet` (not started). With `netns` (test/helpers/netns.ts) node i
   * runs in namespace i at its own address: the homes' listen addresses become 0.0.0.0 and the peers'
   * addresses the namespaces' (`placeInNamespaces`). `transport: 'grpc'`: ABCI over gRPC; `mempool:
   * 'app'`: CometBFT v0.39's application-side mempool (both `ferry testnet` flags; docs/abci.md).
   * `forkArgs`: `ferry testnet`'s fork flags (default `--hardfork cancun`, the rules the network tests
   * were written for).
   */
  static create(o: { cometBin: string; validators: number; fullNodes?: number; timeoutCommit?: string; netns?: NetnsNetwork; transport?: 'socket' | 'grpc'; mempool?: 'flood' | 'app'; forkArgs?: string[] }): Promise<CometNet> {
    return (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ferry-cometnet-'));
      dirs.add(dir);
      const total = o.validators + (o.fullNodes ?? 0);
      const base = await freeRange(total * PORTS_PER_NODE);
      const out = join(dir, 'net');
      execFileSync(process.execPath, [
        FERRY_BIN, 'testnet',
        '--validators', String(o.validators),
        '--full-nodes', String(o.fullNodes ?? 0),
        '--output', out,
        '--base-port', String(base),
        '--timeout-commit', o.timeoutCommit ?? '300ms',
        ...(o.transport ? ['--abci-transport', o.transport] : []),
        ...(o.mempool ? ['--mempool', o.mempool] : []),
        ...(o.forkArgs ?? ['--hardfork', 'cancun']),
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      const nodes: NetNode[] = [];
      if (o.netns) placeInNamespaces(out, total, base, o.netns);
      for (let i = 0; i < total; i++) {
        const b = base + i * PORTS_PER_NODE;
        const host = o.netns ? o.netns.address(i) : '127.0.0.1';
        const prefix = o.netns ? o.netns.exec(i) : [];
        nodes.push(new NetNode(`node${i}`, i < o.validators, `http://${host}:${b + 3}`, `http://${host}:${b + 1}`, join(out, `node${i}`, 'ferry'), join(out, `node${i}`, 'cometbft'), dir, o.cometBin, registry, prefix));
      }
      return new CometNet(dir, nodes);
    })();
  }

  async start(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.start()));
  }

  /** A network written, started and past height 2: a network test's `before`. */
  static async started(o: Parameters<typeof CometNet.create>[0]): Promise<CometNet> {
    const net = await CometNet.create(o);
    await net.start();
    await net.waitHeight(2n);
    return net;
  }

  /** A network test's `after`: every node's log when the run failed, then the nodes stopped. */
  async finish(): Promise<void> {
    if (process.exitCode) process.stderr.write(this.logs());
    await this.stop();
  }

  /** Waits until every given node (default: all) reports at least `height`. */
  async waitHeight(height: bigint, nodes: NetNode[] = this.nodes, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const n of nodes) {
      for (;;) {
        try {
          if ((await n.height()) >= height) break;
        } catch {
          // restarting
        }
        if (Date.now() > deadline) throw new Error(`${n.name} did not reach height ${height}\n${n.logs()}`);
        await sleep(POLL_MS);
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }

  logs(): string {
    return this.nodes.map((n) => n.logs()).join('\n');
  }
}
