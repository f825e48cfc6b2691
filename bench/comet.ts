/**
 * Surface B's bench (ferry only; CometBFT's RPC has no peer here to compare with):
 *
 * 1. index lookups with N indexed transactions (default 100,000): `tx_search` by EVM hash
 *    (`ethereum_tx.ethereumTxHash='0x…'`) and `tx` by native hash — median and p99 of sequential
 *    calls, one at a time over a keep-alive connection (target: median under 2 ms);
 * 2. WebSocket fan-out: 100 clients × 5 subscriptions (NewBlock, Tx and three others) over 100
 *    blocks that carry transactions — every client must receive every NewBlock and Tx event (none
 *    lost), and the fan-out latency (client receipt − the block's commit signature time) is reported.
 *
 * `runCometBench(options)` returns the figures; the bench harness can call it, and
 * `node dist/bench/comet.js [--quick] [--txs N] [--clients N] [--blocks N]` runs it alone.
 * It starts its own ferry (a temporary home, free loopback ports) and stops it at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDNodeWallet } from 'ethers';
import secp256k1 from 'secp256k1';
import WebSocket from 'ws';

export interface CometBenchOptions {
  /** transactions to index before the lookups (default 100,000) */
  indexedTxs: number;
  /** lookups of each kind (default 1,000) */
  lookups: number;
  /** WebSocket clients (default 100) and subscriptions each (5) */
  clients: number;
  subscriptionsPerClient: number;
  /** blocks the fan-out run watches (default 100), and txs sent per block during it */
  blocks: number;
  txsPerBlock: number;
  log(msg: string): void;
}

export interface CometBenchResult {
  indexedTxs: number;
  txSearchByEvmHash: { medianMs: number; p99Ms: number };
  txByNativeHash: { medianMs: number; p99Ms: number };
  fanout: {
    clients: number;
    subscriptions: number;
    blocks: number;
    newBlockEvents: number;
    txEvents: number;
    /** events a client should have received and did not */
    lost: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    latencyMaxMs: number;
  };
}

export const DEFAULTS: Omit<CometBenchOptions, 'log'> = {
  indexedTxs: 100_000,
  lookups: 1_000,
  clients: 100,
  subscriptionsPerClient: 5,
  blocks: 100,
  txsPerBlock: 10,
};
export const QUICK: Omit<CometBenchOptions, 'log'> = { ...DEFAULTS, indexedTxs: 10_000, lookups: 300, clients: 50, blocks: 30 };

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const SENDERS = 10;
const CHAIN_ID = 9000n;
const GWEI = 1_000_000_000n;
const MAX_FEE = 100n * GWEI;
const TIP = GWEI;
const TRANSFER_GAS = 21_000n;
/** txs submitted per JSON-RPC batch, and in flight before waiting for the pool to drain */
const SEND_BATCH = 500;
const WAVE = 5_000;
const START_TIMEOUT_MS = 90_000;
const FILL_TIMEOUT_MS = 30 * 60_000;
const FANOUT_TIMEOUT_MS = 10 * 60_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => res(p));
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

interface Ferry {
  evm: string;
  comet: string;
  proc: ChildProcess;
  home: string;
}

async function startFerry(log: (m: string) => void): Promise<Ferry> {
  const home = mkdtempSync(join(tmpdir(), 'ferry-bench-comet-'));
  const [evmPort, wsPort, cometPort] = [await freePort(), await freePort(), await freePort()];
  const proc = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin', 'ferry.js'), 'start', '--home', home,
      '--json-rpc.address', `127.0.0.1:${evmPort}`,
      '--json-rpc.ws-address', `127.0.0.1:${wsPort}`,
      '--rpc.laddr', `tcp://127.0.0.1:${cometPort}`,
      '--consensus.timeout_commit', '100ms',
      '--mempool.size', String(WAVE * 2),
      '--log_level', 'warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const f: Ferry = { evm: `http://127.0.0.1:${evmPort}`, comet: `http://127.0.0.1:${cometPort}`, proc, home };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`ferry exited with ${proc.exitCode}`);
    try {
      if ((await comet(f, 'status')).sync_info) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('ferry did not start');
    await sleep(POLL_MS);
  }
  log(`comet bench: ferry up (home ${home})`);
  return f;
}

async function stopFerry(f: Ferry): Promise<void> {
  if (f.proc.exitCode === null) {
    f.proc.kill('SIGTERM');
    await new Promise((r) => f.proc.once('exit', r));
  }
  rmSync(f.home, { recursive: true, force: true });
}

async function comet(f: Ferry, route: string): Promise<any> {
  const res = await fetch(`${f.comet}/${route}`);
  const body = (await res.json()) as { result?: unknown; error?: { data?: string } };
  if (body.error) throw new Error(`${route}: ${body.error.data}`);
  return body.result;
}

async function evmBatch(f: Ferry, calls: { method: string; params: unknown[] }[]): Promise<any[]> {
  const res = await fetch(f.evm, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i, ...c }))),
  });
  return (await res.json()) as any[];
}

// ---- fast transfers: EIP-1559 txs signed with native secp256k1 ------------------------------------

const bigBytes = (n: bigint): Uint8Array => (n === 0n ? new Uint8Array() : Uint8Array.from(Buffer.from(n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, '0'), 'hex')));

interface Sender {
  key: Uint8Array;
  address: string;
  nonce: bigint;
}

function senders(): Sender[] {
  const root = HDNodeWallet.fromPhrase(DEV_MNEMONIC, '', "m/44'/60'/0'/0");
  return Array.from({ length: SENDERS }, (_, i) => {
    const w = root.deriveChild(i);
    return { key: Uint8Array.from(Buffer.from(w.privateKey.slice(2), 'hex')), address: w.address, nonce: 0n };
  });
}

/** A signed transfer from `s` (its next nonce) to a per-tx address; returns the raw tx and its EVM hash. */
function transfer(s: Sender, seq: number): { raw: string; hash: string } {
  const to = keccak_256(Buffer.from(`comet-bench-${seq}`)).subarray(12);
  const fields = [bigBytes(CHAIN_ID), bigBytes(s.nonce), bigBytes(TIP), bigBytes(MAX_FEE), bigBytes(TRANSFER_GAS), to, bigBytes(1n), new Uint8Array(), []];
  const unsigned = Uint8Array.from([2, ...RLP.encode(fields)]);
  const sig = secp256k1.ecdsaSign(keccak_256(unsigned), s.key);
  const r = sig.signature.subarray(0, 32);
  const sv = sig.signature.subarray(32);
  const signed = Uint8Array.from([2, ...RLP.encode([...fields, bigBytes(BigInt(sig.recid)), bigBytes(BigInt('0x' + hex(r))), bigBytes(BigInt('0x' + hex(sv)))])]);
  s.nonce++;
  return { raw: '0x' + hex(signed), hash: '0x' + hex(keccak_256(signed)) };
}

async function poolSize(f: Ferry): Promise<number> {
  return Number((await comet(f, 'num_unconfirmed_txs')).total);
}

/** Sends `count` transfers in waves the mempool can hold; resolves when all are in blocks. */
async function fill(f: Ferry, ss: Sender[], count: number, log: (m: string) => void): Promise<string[]> {
  const hashes: string[] = [];
  const deadline = Date.now() + FILL_TIMEOUT_MS;
  let seq = 0;
  while (seq < count) {
    const wave = Math.min(WAVE, count - seq);
    for (let sent = 0; sent < wave; sent += SEND_BATCH) {
      const n = Math.min(SEND_BATCH, wave - sent);
      const txs = Array.from({ length: n }, () => transfer(ss[seq % SENDERS]!, seq++));
      const answers = await evmBatch(f, txs.map((t) => ({ method: 'eth_sendRawTransaction', params: [t.raw] })));
      const bad = answers.find((a) => a.error);
      if (bad) throw new Error(`eth_sendRawTransaction: ${bad.error.message}`);
      hashes.push(...txs.map((t) => t.hash));
    }
    while ((await poolSize(f)) > 0) {
      if (Date.now() > deadline) throw new Error('filling the index took too long');
      await sleep(POLL_MS * 5);
    }
    log(`comet bench: ${seq} txs indexed`);
  }
  return hashes;
}

async function timed(n: number, fn: (i: number) => Promise<void>): Promise<{ medianMs: number; p99Ms: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { medianMs: percentile(times, 0.5), p99Ms: percentile(times, 0.99) };
}

// ---- fan-out -------------------------------------------------------------------------------------

interface Client {
  ws: WebSocket;
  blocks: Map<number, number>;
  txs: number;
  /** per Tx event: its height and receipt time */
  txTimes: [number, number][];
}

const FANOUT_QUERIES = (i: number): string[] => [
  "tm.event='NewBlock'",
  "tm.event='Tx'",
  "tm.event='NewBlockHeader'",
  `tm.event='Tx' AND ethereum_tx.txIndex='${i % 10}'`,
  "tm.event='NewRoundStep'",
];

async function openClient(f: Ferry, i: number, subs: number): Promise<Client> {
  const ws = new WebSocket(f.comet.replace(/^http/, 'ws') + '/websocket', { perMessageDeflate: false });
  await new Promise((res, rej) => {
    ws.once('open', res);
    ws.once('error', rej);
  });
  const c: Client = { ws, blocks: new Map(), txs: 0, txTimes: [] };
  const queries = FANOUT_QUERIES(i).slice(0, subs);
  let acks = 0;
  const acked = new Promise<void>((res, rej) => {
    ws.on('message', (data) => {
      const now = Date.now();
      const m = JSON.parse(data.toString());
      if (m.error) rej(new Error(`client ${i}: ${m.error.data}`));
      if (m.result && m.result.query === undefined) {
        if (++acks === queries.length) res();
        return;
      }
      if (m.id === 0) c.blocks.set(Number(m.result.data.value.block.header.height), now);
      else if (m.id === 1) {
        c.txs++;
        c.txTimes.push([Number(m.result.data.value.TxResult.height), now]);
      }
    });
  });
  queries.forEach((q, id) => ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'subscribe', params: { query: q } })));
  await acked;
  return c;
}

/** Unix ms of a block's commit signature (when the engine committed it). */
async function commitTimeMs(f: Ferry, h: number): Promise<number> {
  const c = await comet(f, `commit?height=${h}`);
  const ts: string = c.signed_header.commit.signatures.find((s: any) => s.block_id_flag === 2).timestamp;
  return Date.parse(ts);
}

export async function runCometBench(opts: CometBenchOptions): Promise<CometBenchResult> {
  const log = opts.log;
  const f = await startFerry(log);
  try {
    const ss = senders();
    log(`comet bench: indexing ${opts.indexedTxs} transfers`);
    const hashes = await fill(f, ss, opts.indexedTxs, log);

    // 1. lookups
    const picks = Array.from({ length: opts.lookups }, (_, i) => hashes[Math.floor(((i + 0.5) / opts.lookups) * hashes.length)]!);
    const nativeHashes: string[] = [];
    const search = await timed(picks.length, async (i) => {
      const q = encodeURIComponent(`"ethereum_tx.ethereumTxHash='${picks[i]}'"`);
      const r = await comet(f, `tx_search?query=${q}`);
      if (r.total_count !== '1') throw new Error(`tx_search found ${r.total_count} txs for ${picks[i]}`);
      nativeHashes.push(r.txs[0].hash);
    });
    const byHash = await timed(nativeHashes.length, async (i) => {
      const r = await comet(f, `tx?hash=0x${nativeHashes[i]}`);
      if (r.hash !== nativeHashes[i]) throw new Error('tx answered another hash');
    });
    log(`comet bench: tx_search median ${search.medianMs.toFixed(2)} ms, tx median ${byHash.medianMs.toFixed(2)} ms`);

    // 2. fan-out
    const clients: Client[] = [];
    for (let i = 0; i < opts.clients; i++) clients.push(await openClient(f, i, opts.subscriptionsPerClient));
    const start = Number((await comet(f, 'status')).sync_info.latest_block_height) + 1;
    const end = start + opts.blocks - 1;
    log(`comet bench: ${clients.length} clients × ${opts.subscriptionsPerClient} subscriptions; watching blocks ${start}..${end}`);
    const deadline = Date.now() + FANOUT_TIMEOUT_MS;
    let seq = opts.indexedTxs;
    for (;;) {
      const top = Number((await comet(f, 'status')).sync_info.latest_block_height);
      if (top >= end) break;
      if (Date.now() > deadline) throw new Error('the fan-out run took too long');
      const txs = Array.from({ length: opts.txsPerBlock }, () => transfer(ss[seq % SENDERS]!, seq++));
      await evmBatch(f, txs.map((t) => ({ method: 'eth_sendRawTransaction', params: [t.raw] })));
      await sleep(POLL_MS);
    }
    await sleep(1_000);
    let expectedTxs = 0;
    const commitAt = new Map<number, number>();
    for (let h = start; h <= end; h++) {
      expectedTxs += (await comet(f, `block?height=${h}`)).block.data.txs.length;
      commitAt.set(h, await commitTimeMs(f, h));
    }
    let lost = 0;
    let newBlockEvents = 0;
    let txEvents = 0;
    const latencies: number[] = [];
    for (const c of clients) {
      for (let h = start; h <= end; h++) {
        const at = c.blocks.get(h);
        if (at === undefined) lost++;
        else {
          newBlockEvents++;
          latencies.push(at - commitAt.get(h)!);
        }
      }
      const inRange = c.txTimes.filter(([h]) => h >= start && h <= end);
      txEvents += inRange.length;
      lost += Math.max(0, expectedTxs - inRange.length);
      for (const [h, at] of inRange) latencies.push(at - commitAt.get(h)!);
      c.ws.terminate();
    }
    latencies.sort((a, b) => a - b);
    const result: CometBenchResult = {
      indexedTxs: opts.indexedTxs,
      txSearchByEvmHash: search,
      txByNativeHash: byHash,
      fanout: {
        clients: clients.length,
        subscriptions: clients.length * opts.subscriptionsPerClient,
        blocks: opts.blocks,
        newBlockEvents,
        txEvents,
        lost,
        latencyP50Ms: percentile(latencies, 0.5),
        latencyP99Ms: percentile(latencies, 0.99),
        latencyMaxMs: latencies[latencies.length - 1] ?? NaN,
      },
    };
    log(`comet bench: fan-out ${newBlockEvents} NewBlock + ${txEvents} Tx events delivered, ${lost} lost; latency p50 ${result.fanout.latencyP50Ms} ms, p99 ${result.fanout.latencyP99Ms} ms`);
    return result;
  } finally {
    await stopFerry(f);
  }
}

/** The figures as Markdown table rows (| workload | value | detail |). */
export function cometBenchRows(r: CometBenchResult): string[] {
  const f = (n: number) => n.toFixed(2);
  return [
    `| tx_search by EVM hash (${r.indexedTxs} txs indexed) | median ${f(r.txSearchByEvmHash.medianMs)} ms | p99 ${f(r.txSearchByEvmHash.p99Ms)} ms |`,
    `| tx by native hash (${r.indexedTxs} txs indexed) | median ${f(r.txByNativeHash.medianMs)} ms | p99 ${f(r.txByNativeHash.p99Ms)} ms |`,
    `| WebSocket fan-out: ${r.fanout.clients} clients × ${r.fanout.subscriptions / r.fanout.clients} subscriptions, ${r.fanout.blocks} blocks | ${r.fanout.lost} events lost of ${r.fanout.newBlockEvents + r.fanout.txEvents + r.fanout.lost} | latency p50 ${r.fanout.latencyP50Ms} ms, p99 ${r.fanout.latencyP99Ms} ms, max ${r.fanout.latencyMaxMs} ms |`,
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, txs: { type: 'string' }, clients: { type: 'string' }, blocks: { type: 'string' } } });
  const base = values.quick ? QUICK : DEFAULTS;
  const opts: CometBenchOptions = {
    ...base,
    indexedTxs: values.txs ? Number(values.txs) : base.indexedTxs,
    clients: values.clients ? Number(values.clients) : base.clients,
    blocks: values.blocks ? Number(values.blocks) : base.blocks,
    log: (m) => console.error(m),
  };
  const r = await runCometBench(opts);
  console.log(['| Surface B workload | result | detail |', '|---|---|---|', ...cometBenchRows(r)].join('\n'));
  if (r.txSearchByEvmHash.medianMs >= 2 || r.txByNativeHash.medianMs >= 2 || r.fanout.lost > 0) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(`comet bench: ${(e as Error).stack ?? e}`);
    process.exitCode = 1;
  });
}
