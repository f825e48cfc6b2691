/**
 * Starts the real `ferry` process for end-to-end tests: free loopback ports, a temporary home,
 * output (of every run on that home) appended to `<home>/ferry-e2e.log`, readiness by polling
 * eth_blockNumber.
 *
 * Temporary directories are removed when the test process exits, unless a test failed
 * (process.exitCode != 0) or FERRY_E2E_KEEP=1 — then the path and the log tail are printed.
 *
 * FERRY_E2E_ANVIL=/path/to/anvil runs Anvil instead of ferry (only to check a test's own logic
 * against a reference node; restart/crash/golden tests need ferry).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FERRY_BIN } from './paths.js';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
export const EVM_CHAIN_ID = 9000;
export const CHAIN_ID = 'ferry_9000-1';
/** The dev chain as viem describes a chain (its URL comes from each client's transport). */
export const VIEM_CHAIN = {
  id: EVM_CHAIN_ID,
  name: 'ferry',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
} as const;

const START_TIMEOUT_MS = Number(process.env.FERRY_E2E_START_TIMEOUT_MS ?? 60_000);
const STOP_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 2_000;
const LOG_TAIL_LINES = 40;
const LOG_FILE = 'ferry-e2e.log';

export interface FerryNode {
  /** Surface A over HTTP */
  readonly url: string;
  /** Surface A over WebSocket */
  readonly wsUrl: string;
  /** Surface B (HTTP; WebSocket at /websocket) */
  readonly cometUrl: string;
  readonly home: string;
  readonly logFile: string;
  readonly proc: ChildProcess;
  /** SIGTERM, wait for exit; resolves to the exit code (128+signal when killed by a signal) */
  stop(): Promise<number>;
  /** SIGKILL, wait for exit */
  kill9(): Promise<void>;
  /** last lines of the captured output (all runs on this home) */
  logTail(lines?: number): string;
}

export interface StartOptions {
  /** reuse a home (restart); default: a new empty temporary home */
  home?: string;
  /** extra command-line arguments after the address flags */
  args?: string[];
}

const running = new Set<ChildProcess>();
const tempHomes = new Set<string>();
const logFiles = new Set<string>();

process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
  const keep = process.env.FERRY_E2E_KEEP === '1' || (process.exitCode !== undefined && process.exitCode !== 0);
  if (keep) {
    for (const f of logFiles) {
      process.stderr.write(`\n--- ferry output kept at ${f} (last ${LOG_TAIL_LINES} lines) ---\n${tail(f, LOG_TAIL_LINES)}\n`);
    }
    return;
  }
  for (const d of tempHomes) rmSync(d, { recursive: true, force: true });
});

/** A free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') return reject(new Error('no port'));
      srv.close(() => resolve(addr.port));
    });
  });
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no output)';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function probe(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (!res.ok) return false;
    const body = (await res.json()) as { result?: unknown };
    return typeof body.result === 'string';
  } catch {
    return false;
  }
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return 128 + (signal ? (signals[signal] ?? 0) : 0);
}

function anvilArgs(port: number, args: string[]): string[] {
  const out = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(EVM_CHAIN_ID)];
  const fork = args.indexOf('--hardfork');
  out.push('--mnemonic', DEV_MNEMONIC, '--hardfork', fork >= 0 ? args[fork + 1]! : 'cancun', '--balance', '10000', '--silent');
  const i = args.indexOf('--consensus.timeout_commit');
  if (i >= 0 && !args.includes('--consensus.block_on_tx')) {
    const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(args[i + 1] ?? '');
    const seconds = m ? Number(m[1]) / (m[2] === 'ms' ? 1000 : 1) : 1;
    if (seconds >= 1) out.push('--block-time', String(Math.round(seconds)));
  }
  return out;
}

/** Start attempts when a port picked free was taken by another process before ferry bound it. */
const PORT_RACE_ATTEMPTS = 3;

export async function startFerry(opts: StartOptions = {}): Promise<FerryNode> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startFerryOnce(opts);
    } catch (e) {
      // freePort() closes its probe before ferry binds: on a busy machine another process can take the
      // port in between; ferry then exits at start-up naming EADDRINUSE, and a retry picks new ports
      if (attempt < PORT_RACE_ATTEMPTS && e instanceof PortRaceError) continue;
      throw e;
    }
  }
}

class PortRaceError extends Error {}

async function startFerryOnce(opts: StartOptions): Promise<FerryNode> {
  let home = opts.home;
  if (home === undefined) {
    home = mkdtempSync(join(tmpdir(), 'ferry-e2e-'));
    tempHomes.add(home);
  }
  mkdirSync(home, { recursive: true });
  const logFile = join(home, LOG_FILE);
  logFiles.add(logFile);

  const [httpPort, wsPort, cometPort] = [await freePort(), await freePort(), await freePort()];
  // a home this start creates runs Cancun unless the test names its forks: the transcripts and the Anvil
  // comparisons were recorded on Cancun (a new home's default is Osaka: docs/configuration.md "Hardforks")
  const fresh = !existsSync(join(home, 'config', 'genesis.json'));
  const forkFlags = (opts.args ?? []).some((a) => a === '--hardfork' || a.endsWith('-time'));
  const extra = fresh && !forkFlags ? [...(opts.args ?? []), '--hardfork', 'cancun'] : (opts.args ?? []);
  const anvil = process.env.FERRY_E2E_ANVIL;
  const [cmd, argv] = anvil
    ? [anvil, anvilArgs(httpPort, extra)]
    : [
        process.execPath,
        [
          FERRY_BIN,
          'start',
          '--home',
          home,
          '--json-rpc.address',
          `127.0.0.1:${httpPort}`,
          '--json-rpc.ws-address',
          `127.0.0.1:${wsPort}`,
          '--rpc.laddr',
          `tcp://127.0.0.1:${cometPort}`,
          ...extra,
        ],
      ];

  const fd = openSync(logFile, 'a');
  const proc = spawn(cmd, argv, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  running.add(proc);
  let exited: number | undefined;
  const exit = new Promise<number>((resolve) => {
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      exited = exitCodeOf(code, signal);
      resolve(exited);
    });
  });

  const url = `http://127.0.0.1:${httpPort}`;
  const node: FerryNode = {
    url,
    wsUrl: `ws://127.0.0.1:${anvil ? httpPort : wsPort}`,
    cometUrl: `http://127.0.0.1:${cometPort}`,
    home,
    logFile,
    proc,
    logTail: (lines = LOG_TAIL_LINES) => tail(logFile, lines),
    async stop() {
      if (exited !== undefined) return exited;
      proc.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), STOP_TIMEOUT_MS)));
      const code = await Promise.race([exit, timeout]);
      clearTimeout(timer);
      if (code === undefined) {
        proc.kill('SIGKILL');
        await exit;
        throw new Error(`ferry did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\n${node.logTail()}`);
      }
      return code;
    },
    async kill9() {
      if (exited !== undefined) return;
      proc.kill('SIGKILL');
      await exit;
    },
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exited !== undefined) {
      const tailText = node.logTail();
      const Err = !anvil && tailText.includes('EADDRINUSE') ? PortRaceError : Error;
      throw new Err(`ferry exited with code ${exited} before it was ready\n${tailText}`);
    }
    if (await probe(url)) return node;
    if (Date.now() > deadline) {
      await node.kill9();
      throw new Error(`ferry was not ready within ${START_TIMEOUT_MS} ms\n${node.logTail()}`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

/**
 * One ferry per distinct argument list, started on first use and shared by the tests of a file
 * (the golden transcripts run many cases against a few configurations). `stopAll` stops them and
 * returns their exit codes.
 */
export function nodePool(): { nodeFor(args?: string[]): Promise<FerryNode>; stopAll(): Promise<number[]> } {
  const nodes = new Map<string, Promise<FerryNode>>();
  return {
    nodeFor(args: string[] = []): Promise<FerryNode> {
      const key = JSON.stringify(args);
      let n = nodes.get(key);
      if (!n) {
        n = startFerry({ args });
        nodes.set(key, n);
      }
      return n;
    },
    async stopAll(): Promise<number[]> {
      const codes: number[] = [];
      for (const n of nodes.values()) {
        const node = await n.catch(() => undefined);
        if (node) codes.push(await node.stop());
      }
      return codes;
    },
  };
}
