/**
 * WebSocket notification workloads (Surface A eth_subscribe), for the bench harness or alone:
 *
 * - soak: `clients` WebSocket clients (default 200), each subscribed to `newHeads` and to the bench
 *   token's Transfer `logs`, while token transfers flow for `durationMs` (default 10 min). Checked
 *   afterwards against eth_getBlockByNumber / eth_getLogs: every client must have every block of
 *   the common window exactly once and in order, and every matching log exactly once and in order,
 *   none later than one block (a log of block N arriving after the head of N+2 is late). Reports
 *   fan-out latency (for each block, how long after the first client each client got its head:
 *   median and p99) and the node's RSS after warm-up and at the end (growth must stay within 10 %).
 * - load: `connections` WebSocket connections (default 1,000), each subscribed to `newHeads`, held
 *   for `blocks` blocks (default 100); every connection must get every block of the window.
 *
 * Both take a target ({ url, wsUrl, pid }) so the harness can point them at any node it started
 * (Anvil and Hardhat serve WebSocket on their HTTP port). Each returns a result object and a
 * `Figure` ({ value, detail }) shaped like bench/workloads.ts'. Everything is bounded: connection
 * count, duration, tx rate, and an overall deadline after which the run fails instead of hanging.
 *
 * Alone: `npm run build && node dist/bench/ws.js [--soak-seconds N] [--clients N]
 * [--connections N] [--blocks N] [--only soak|load]` starts its own ferry (1 s blocks).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { AbiCoder } from 'ethers';
import WebSocket from 'ws';
import { SENDERS, TOKEN_ABI, TOKENS_PER_SENDER, TRANSFER_TOPIC, devWallet, signTx, tokenBytecode, type ChainInfo } from './chain.js';

export interface WsTarget {
  /** HTTP JSON-RPC */
  url: string;
  wsUrl: string;
  /** node process, for RSS (optional) */
  pid?: number;
}

export interface Figure {
  value: number;
  detail?: string;
}

export const SOAK_DEFAULTS = { clients: 200, durationMs: 10 * 60_000, txPerSecond: 20, warmupMs: 30_000 } as const;
export const LOAD_DEFAULTS = { connections: 1_000, blocks: 100 } as const;
/** the soak samples the node's RSS this often (the curve in its report) */
const RSS_SAMPLE_MS = 60_000;
/** max RSS growth the soak accepts, percent */
export const MAX_RSS_GROWTH_PCT = 10;
/** connections opened at once while setting up */
const CONNECT_BATCH = 50;
const TOKEN_GAS = 70_000n;
const DEPLOY_GAS = 3_000_000n;
const RECEIPT_POLL_MS = 100;
const SETTLE_BLOCKS = 2;
/** eth_getLogs chunk (under the default block-range and logs caps) */
const LOGS_CHUNK_BLOCKS = 200;
/** time allowed per block the run must see, on top of a fixed margin */
const MS_PER_BLOCK_BOUND = 5_000;
const DEADLINE_MARGIN_MS = 120_000;

// ---------------------------------------------------------------------------------------------
// small clients

let nextId = 1;

async function rpcCall<T = any>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  const msg = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (msg.error) throw new Error(`${method}: ${msg.error.code} ${msg.error.message}`);
  return msg.result as T;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Current resident set of a process, MiB (undefined when unknown). */
export function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Head {
  n: number;
  t: number;
}

interface LogSeen {
  key: string;
  block: number;
  /** last head number this client had when the log arrived */
  lastHead: number;
}

/** One subscriber: newHeads (and optionally logs), everything recorded with arrival times. */
export class Subscriber {
  readonly heads: Head[] = [];
  readonly logs: LogSeen[] = [];
  private headSub = '';
  private logSub = '';
  closedEarly: string | undefined;
  private lastHead = -1;

  private constructor(private readonly ws: WebSocket) {}

  static async open(wsUrl: string, logCriteria: object | undefined): Promise<Subscriber> {
    const ws = new WebSocket(wsUrl);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const s = new Subscriber(ws);
    const pending = new Map<number, (r: any) => void>();
    ws.on('message', (data) => {
      const t = performance.now();
      const msg = JSON.parse(String(data));
      if (msg.method === 'eth_subscription') {
        const { subscription, result } = msg.params;
        if (subscription === s.headSub) {
          s.lastHead = Number(result.number);
          s.heads.push({ n: s.lastHead, t });
        } else if (subscription === s.logSub) {
          s.logs.push({ key: `${Number(result.blockNumber)}:${Number(result.logIndex)}`, block: Number(result.blockNumber), lastHead: s.lastHead });
        }
        return;
      }
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
    });
    ws.on('error', () => {});
    ws.on('close', (code, reason) => {
      s.closedEarly ??= `closed ${code} ${reason.toString()}`;
    });
    const subscribe = (id: number, params: unknown[]) =>
      new Promise<string>((resolve, reject) => {
        pending.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result)));
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params }));
      });
    s.headSub = await subscribe(1, ['newHeads']);
    if (logCriteria) s.logSub = await subscribe(2, ['logs', logCriteria]);
    return s;
  }

  close(): void {
    this.closedEarly = 'closed by the bench';
    this.ws.terminate();
  }
}

export async function openAll(n: number, wsUrl: string, criteria: object | undefined): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  for (let i = 0; i < n; i += CONNECT_BATCH) {
    const batch = Math.min(CONNECT_BATCH, n - i);
    out.push(...(await Promise.all(Array.from({ length: batch }, () => Subscriber.open(wsUrl, criteria)))));
  }
  return out;
}

/** Per-client check of heads over [from, to]: counts of missed and duplicated blocks. */
function checkHeads(s: Subscriber, from: number, to: number): { missed: number; duplicated: number; outOfOrder: number } {
  const inWindow = s.heads.filter((h) => h.n >= from && h.n <= to).map((h) => h.n);
  const distinct = new Set(inWindow);
  let outOfOrder = 0;
  for (let i = 1; i < inWindow.length; i++) if (inWindow[i]! <= inWindow[i - 1]!) outOfOrder++;
  return { missed: to - from + 1 - distinct.size, duplicated: inWindow.length - distinct.size, outOfOrder };
}

/** Fan-out: per block, each client's delay after the first client that got it (ms, sorted). */
function fanout(subs: Subscriber[], from: number, to: number): number[] {
  const byBlock = new Map<number, number[]>();
  for (const s of subs) {
    for (const h of s.heads) {
      if (h.n < from || h.n > to) continue;
      let list = byBlock.get(h.n);
      if (!list) byBlock.set(h.n, (list = []));
      list.push(h.t);
    }
  }
  const out: number[] = [];
  for (const times of byBlock.values()) {
    const first = Math.min(...times);
    for (const t of times) out.push(t - first);
  }
  return out.sort((a, b) => a - b);
}

/** Waits until every subscriber has head `n` (or the deadline passes). */
async function waitForHead(subs: Subscriber[], n: number, deadline: number): Promise<void> {
  while (subs.some((s) => (s.heads.at(-1)?.n ?? -1) < n && s.closedEarly === undefined)) {
    if (Date.now() > deadline) throw new Error(`deadline passed waiting for block ${n} on every client`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------
// soak

export interface SoakOptions {
  clients?: number;
  durationMs?: number;
  /** token transfers per second while the soak runs */
  txPerSecond?: number;
  /** RSS "start" is read after this long */
  warmupMs?: number;
  log?: (msg: string) => void;
}

export interface SoakResult {
  clients: number;
  window: { from: number; to: number };
  txs: number;
  logsPerClient: number;
  missedBlocks: number;
  duplicatedBlocks: number;
  missedLogs: number;
  duplicatedLogs: number;
  outOfOrder: number;
  lateLogs: number;
  closedEarly: number;
  fanoutMedianMs: number;
  fanoutP99Ms: number;
  rssStartMiB: number | undefined;
  rssEndMiB: number | undefined;
  /** RSS every RSS_SAMPLE_MS from the start of the load (before the warm-up) to the end: the curve */
  rssCurveMiB: number[];
  /** every check passed */
  ok: boolean;
  problems: string[];
}

async function deployBenchToken(url: string, info: ChainInfo): Promise<string> {
  const deployer = devWallet(0);
  const holders = Array.from({ length: SENDERS }, (_, i) => devWallet(i).address);
  const args = AbiCoder.defaultAbiCoder().encode(['address[]', 'uint256'], [holders, TOKENS_PER_SENDER]);
  const nonce = Number(await rpcCall(url, 'eth_getTransactionCount', [deployer.address, 'pending']));
  const { raw, hash } = signTx(deployer, info, { to: null, nonce, gasLimit: DEPLOY_GAS, data: tokenBytecode() + args.slice(2) });
  await rpcCall(url, 'eth_sendRawTransaction', [raw]);
  for (;;) {
    const r = await rpcCall<{ status: string; contractAddress: string } | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (r) {
      if (r.status !== '0x1') throw new Error('bench token deployment failed');
      return r.contractAddress.toLowerCase();
    }
    await sleep(RECEIPT_POLL_MS);
  }
}

/** Sends token transfers at `perSecond` from the SENDERS dev accounts until `stop()`; returns the hashes. */
function startTransfers(url: string, info: ChainInfo, token: string, perSecond: number, onError: (e: string) => void) {
  const senders = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
  const nonces: number[] = [];
  const hashes: string[] = [];
  let running = true;
  const loop = (async () => {
    for (const w of senders) nonces.push(Number(await rpcCall(url, 'eth_getTransactionCount', [w.address, 'pending'])));
    const gap = 1000 / perSecond;
    let k = 0;
    let next = performance.now();
    while (running) {
      const i = k % senders.length;
      const to = '0x' + (k + 1).toString(16).padStart(40, '0');
      const data = TOKEN_ABI.encodeFunctionData('transfer', [to, BigInt(k + 1)]);
      const { raw, hash } = signTx(senders[i]!, info, { to: token, nonce: nonces[i]!, gasLimit: TOKEN_GAS, data });
      nonces[i]!++;
      k++;
      hashes.push(hash);
      rpcCall(url, 'eth_sendRawTransaction', [raw]).catch((e: Error) => onError(e.message));
      next += gap;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  })();
  return {
    hashes,
    async stop(): Promise<void> {
      running = false;
      await loop;
    },
  };
}

export async function runWsSoak(target: WsTarget, opts: SoakOptions = {}): Promise<SoakResult> {
  const clients = opts.clients ?? SOAK_DEFAULTS.clients;
  const durationMs = opts.durationMs ?? SOAK_DEFAULTS.durationMs;
  const txPerSecond = opts.txPerSecond ?? SOAK_DEFAULTS.txPerSecond;
  const warmupMs = Math.min(opts.warmupMs ?? SOAK_DEFAULTS.warmupMs, durationMs / 4);
  const log = opts.log ?? (() => {});
  const problems: string[] = [];
  const chainId = BigInt(await rpcCall(target.url, 'eth_chainId'));
  const gasPrice = BigInt(await rpcCall(target.url, 'eth_gasPrice'));
  const info: ChainInfo = { chainId, maxFeePerGas: gasPrice * 4n > 100n * 10n ** 9n ? gasPrice * 4n : 100n * 10n ** 9n };
  const token = await deployBenchToken(target.url, info);
  log(`soak: token ${token}; opening ${clients} clients`);
  const subs = await openAll(clients, target.wsUrl, { address: token, topics: [TRANSFER_TOPIC] });
  const startHead = Number(await rpcCall(target.url, 'eth_blockNumber'));
  const from = startHead + 2; // every client subscribed before this block was made
  const sendErrors: string[] = [];
  const sender = startTransfers(target.url, info, token, txPerSecond, (e) => sendErrors.length < 5 && sendErrors.push(e));
  const started = Date.now();
  const rssCurveMiB: number[] = [];
  const sampleRss = () => {
    const v = rssMiB(target.pid);
    if (v !== undefined) rssCurveMiB.push(Math.round(v));
  };
  sampleRss();
  const sampler = setInterval(sampleRss, RSS_SAMPLE_MS);
  await sleep(warmupMs);
  const rssStartMiB = rssMiB(target.pid);
  log(`soak: warm (${subs[0]?.heads.length ?? 0} blocks so far), RSS ${rssStartMiB?.toFixed(1) ?? '?'} MiB; running ${Math.round(durationMs / 1000)} s`);
  await sleep(Math.max(0, durationMs - (Date.now() - started)));
  clearInterval(sampler);
  const rssEndMiB = rssMiB(target.pid);
  sampleRss();
  await sender.stop();
  // wait until every sent tx is mined (or give up), then until every client has seen SETTLE_BLOCKS more
  let lastTxBlock = Number(await rpcCall(target.url, 'eth_blockNumber'));
  const deadline = Date.now() + DEADLINE_MARGIN_MS;
  const lastHash = sender.hashes.at(-1);
  if (lastHash) {
    for (;;) {
      const r = await rpcCall<{ blockNumber: string } | null>(target.url, 'eth_getTransactionReceipt', [lastHash]);
      if (r) {
        lastTxBlock = Number(r.blockNumber);
        break;
      }
      if (Date.now() > deadline) {
        problems.push('the last transfer was not mined in time');
        break;
      }
      await sleep(RECEIPT_POLL_MS);
    }
  }
  const to = lastTxBlock;
  await waitForHead(subs, to + SETTLE_BLOCKS, deadline);
  for (const s of subs) s.close();

  // the truth, from the node
  const expected: string[] = [];
  for (let a = from; a <= to; a += LOGS_CHUNK_BLOCKS) {
    const b = Math.min(to, a + LOGS_CHUNK_BLOCKS - 1);
    const logs = await rpcCall<{ blockNumber: string; logIndex: string }[]>(target.url, 'eth_getLogs', [
      { fromBlock: `0x${a.toString(16)}`, toBlock: `0x${b.toString(16)}`, address: token, topics: [TRANSFER_TOPIC] },
    ]);
    for (const l of logs) expected.push(`${Number(l.blockNumber)}:${Number(l.logIndex)}`);
  }
  let missedBlocks = 0, duplicatedBlocks = 0, missedLogs = 0, duplicatedLogs = 0, outOfOrder = 0, lateLogs = 0, closedEarly = 0;
  for (const s of subs) {
    const h = checkHeads(s, from, to);
    missedBlocks += h.missed;
    duplicatedBlocks += h.duplicated;
    outOfOrder += h.outOfOrder;
    const got = s.logs.filter((l) => l.block >= from && l.block <= to);
    const keys = got.map((l) => l.key);
    const distinct = new Set(keys);
    duplicatedLogs += keys.length - distinct.size;
    missedLogs += expected.filter((k) => !distinct.has(k)).length;
    if (keys.join() !== expected.filter((k) => distinct.has(k)).join()) outOfOrder++;
    lateLogs += got.filter((l) => l.lastHead > l.block + 1).length;
    if (s.closedEarly !== 'closed by the bench') closedEarly++;
  }
  const lat = fanout(subs, from, to);
  const result: SoakResult = {
    clients,
    window: { from, to },
    txs: sender.hashes.length,
    logsPerClient: expected.length,
    missedBlocks, duplicatedBlocks, missedLogs, duplicatedLogs, outOfOrder, lateLogs, closedEarly,
    fanoutMedianMs: percentile(lat, 50),
    fanoutP99Ms: percentile(lat, 99),
    rssStartMiB,
    rssEndMiB,
    rssCurveMiB,
    ok: false,
    problems,
  };
  if (sendErrors.length > 0) problems.push(`sending failed: ${sendErrors[0]}`);
  if (to - from < 1) problems.push(`the window is empty (blocks ${from}..${to})`);
  for (const k of ['missedBlocks', 'duplicatedBlocks', 'missedLogs', 'duplicatedLogs', 'outOfOrder', 'lateLogs', 'closedEarly'] as const) {
    if (result[k] > 0) problems.push(`${k}: ${result[k]}`);
  }
  if (rssStartMiB !== undefined && rssEndMiB !== undefined && rssEndMiB > rssStartMiB * (1 + MAX_RSS_GROWTH_PCT / 100)) {
    problems.push(`RSS grew from ${rssStartMiB.toFixed(1)} to ${rssEndMiB.toFixed(1)} MiB (over ${MAX_RSS_GROWTH_PCT} %)`);
  }
  result.ok = problems.length === 0;
  return result;
}

// ---------------------------------------------------------------------------------------------
// load

export interface LoadOptions {
  connections?: number;
  blocks?: number;
  log?: (msg: string) => void;
}

export interface LoadResult {
  connections: number;
  window: { from: number; to: number };
  connectMs: number;
  missedBlocks: number;
  duplicatedBlocks: number;
  outOfOrder: number;
  closedEarly: number;
  fanoutMedianMs: number;
  fanoutP99Ms: number;
  rssMiB: number | undefined;
  ok: boolean;
  problems: string[];
}

export async function runWsLoad(target: WsTarget, opts: LoadOptions = {}): Promise<LoadResult> {
  const connections = opts.connections ?? LOAD_DEFAULTS.connections;
  const blocks = opts.blocks ?? LOAD_DEFAULTS.blocks;
  const log = opts.log ?? (() => {});
  const t0 = performance.now();
  const subs = await openAll(connections, target.wsUrl, undefined);
  const connectMs = performance.now() - t0;
  const from = Number(await rpcCall(target.url, 'eth_blockNumber')) + 2;
  const to = from + blocks - 1;
  log(`load: ${connections} connections open in ${Math.round(connectMs)} ms; holding blocks ${from}..${to}`);
  const deadline = Date.now() + DEADLINE_MARGIN_MS + blocks * MS_PER_BLOCK_BOUND;
  const problems: string[] = [];
  try {
    await waitForHead(subs, to, deadline);
  } catch (e) {
    problems.push((e as Error).message);
  }
  const rss = rssMiB(target.pid);
  for (const s of subs) s.close();
  let missedBlocks = 0, duplicatedBlocks = 0, outOfOrder = 0, closedEarly = 0;
  for (const s of subs) {
    const h = checkHeads(s, from, to);
    missedBlocks += h.missed;
    duplicatedBlocks += h.duplicated;
    outOfOrder += h.outOfOrder;
    if (s.closedEarly !== 'closed by the bench') closedEarly++;
  }
  const lat = fanout(subs, from, to);
  const result: LoadResult = {
    connections, window: { from, to }, connectMs, missedBlocks, duplicatedBlocks, outOfOrder, closedEarly,
    fanoutMedianMs: percentile(lat, 50), fanoutP99Ms: percentile(lat, 99), rssMiB: rss, ok: false, problems,
  };
  for (const k of ['missedBlocks', 'duplicatedBlocks', 'outOfOrder', 'closedEarly'] as const) {
    if (result[k] > 0) problems.push(`${k}: ${result[k]}`);
  }
  result.ok = problems.length === 0;
  return result;
}

// ---------------------------------------------------------------------------------------------
// harness adapters: a Figure per workload, throwing when a check fails (run.ts prints n/a + reason)

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '?');
const mib = (v: number | undefined) => (v === undefined ? '?' : v.toFixed(0));

/** Soak figure: fan-out p99 in ms (lower is better). */
export async function wsSoakFigure(target: WsTarget, opts: SoakOptions = {}): Promise<Figure> {
  const r = await runWsSoak(target, opts);
  const detail =
    `${r.clients} clients, blocks ${r.window.from}..${r.window.to}, ${r.txs} txs, ${r.logsPerClient} logs/client; ` +
    `fan-out median ${ms(r.fanoutMedianMs)} ms, p99 ${ms(r.fanoutP99Ms)} ms; RSS ${mib(r.rssStartMiB)} → ${mib(r.rssEndMiB)} MiB ` +
    `(each minute: ${r.rssCurveMiB.join(', ')}); missed/dup blocks ${r.missedBlocks}/${r.duplicatedBlocks}, missed/dup/late logs ${r.missedLogs}/${r.duplicatedLogs}/${r.lateLogs}`;
  if (!r.ok) throw new Error(`ws soak failed: ${r.problems.join('; ')} (${detail})`);
  return { value: r.fanoutP99Ms, detail };
}

/** Load figure: connections that got every block (higher is better; must equal the connections). */
export async function wsLoadFigure(target: WsTarget, opts: LoadOptions = {}): Promise<Figure> {
  const r = await runWsLoad(target, opts);
  const detail =
    `${r.connections} connections (open in ${Math.round(r.connectMs)} ms) × blocks ${r.window.from}..${r.window.to}; ` +
    `fan-out median ${ms(r.fanoutMedianMs)} ms, p99 ${ms(r.fanoutP99Ms)} ms; RSS ${mib(r.rssMiB)} MiB; ` +
    `missed ${r.missedBlocks}, duplicated ${r.duplicatedBlocks}`;
  if (!r.ok) throw new Error(`ws load failed: ${r.problems.join('; ')} (${detail})`);
  return { value: r.connections - r.closedEarly, detail };
}

// ---------------------------------------------------------------------------------------------
// alone: starts its own ferry

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'soak-seconds': { type: 'string' },
      clients: { type: 'string' },
      connections: { type: 'string' },
      blocks: { type: 'string' },
      'tx-per-second': { type: 'string' },
      only: { type: 'string' },
    },
  });
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const { startFerry } = await import('../test/helpers/node.js');
  const node = await startFerry();
  const log = (m: string) => console.error(m);
  const target = { url: node.url, wsUrl: node.wsUrl, pid: node.proc.pid };
  let failed = false;
  try {
    if (values.only !== 'load') {
      const soakSeconds = num(values['soak-seconds']);
      const r = await runWsSoak(target, {
        clients: num(values.clients),
        durationMs: soakSeconds === undefined ? undefined : soakSeconds * 1000,
        txPerSecond: num(values['tx-per-second']),
        log,
      });
      console.log(JSON.stringify({ soak: r }, null, 2));
      failed ||= !r.ok;
    }
    if (values.only !== 'soak') {
      const r = await runWsLoad(target, { connections: num(values.connections), blocks: num(values.blocks), log });
      console.log(JSON.stringify({ load: r }, null, 2));
      failed ||= !r.ok;
    }
  } finally {
    await node.stop();
  }
  if (failed) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(`bench ws: ${(e as Error).stack ?? e}`);
    process.exitCode = 1;
  });
}
