/**
 * Log-index benchmark: eth_getLogs by topic 2 (ERC-20 Transfers *to* one holder) over one token's
 * 1,000,000 Transfer logs. Target: ≤ 20 ms per query (median), answered from the topic-2 index.
 *
 * Writing a million logs through the real node would take longer than the whole bench, so this suite
 * fills a temporary store directly (the chain thread's Store.putBlock, BLOCKS blocks of LOGS_PER_BLOCK
 * logs, recipients cycling over HOLDERS addresses) and times ferry's real read path on it: the chain
 * reader's hex rows and evmrpc's findLogsJson (logs-cap 10,000, block-range cap off), which writes
 * the answer's JSON text — everything an HTTP client waits for except the socket. It also times the topic-0-only
 * query shape that walks the token's whole Transfer index, capped, as a reference.
 *
 * Run alone: `npm run build && node dist/bench/logindex.js [--logs N] [--db FILE]` (--db: fill FILE once,
 * reuse it on later runs); `npm run bench` runs it as the
 * `logindex` suite.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ChainReader } from '../src/chain/reader.js';
import { findLogsJson } from '../src/evmrpc/methods.js';
import { Store } from '../src/store/store.js';
import { FlatState } from '../src/store/flatstate.js';
import type { EvmHeader, EvmLog, EvmReceipt } from '../src/types/chain.js';

export const LOGINDEX_TARGET_MS = 20;
const DEFAULT_LOGS = 1_000_000;
const LOGS_PER_BLOCK = 1_000;
const LOGS_PER_TX = 100;
const HOLDERS = 1_000;
const REPEATS = 21;
const LOGS_CAP = 10_000;

const bytes = (n: number, seed: number): Uint8Array => {
  const b = new Uint8Array(n);
  new DataView(b.buffer).setUint32(n - 4, seed);
  b[0] = 0xfe;
  return b;
};
const TOKEN = bytes(20, 0x70c3);
const TRANSFER = Uint8Array.from(Buffer.from('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', 'hex'));
const holderTopic = (i: number): Uint8Array => bytes(32, 1_000 + i);

function header(height: number): EvmHeader {
  const z = (n: number) => new Uint8Array(n);
  return {
    number: BigInt(height), hash: bytes(32, 0xb10c0000 + height), parentHash: z(32), stateRoot: z(32), transactionsRoot: z(32),
    receiptsRoot: z(32), logsBloom: z(256), miner: z(20), gasLimit: 30_000_000n, gasUsed: 0n, timestamp: BigInt(height),
    extraData: z(0), baseFeePerGas: 0n, mixHash: z(32), size: 0n,
  };
}

/** Writes `total` Transfer logs of TOKEN: log k goes from holder k % HOLDERS to holder (k * 7 + 3) % HOLDERS. */
export function fill(store: Store, total: number): void {
  const data = new Uint8Array(32);
  data[31] = 1;
  let k = 0;
  for (let height = 1; k < total; height++) {
    const h = header(height);
    const receipts: EvmReceipt[] = [];
    const nativeHashes: Uint8Array[] = [];
    for (let tx = 0; tx * LOGS_PER_TX < LOGS_PER_BLOCK && k < total; tx++) {
      const txHash = bytes(32, height * 1_000 + tx);
      const logs: EvmLog[] = [];
      for (let j = 0; j < LOGS_PER_TX && k < total; j++, k++) {
        logs.push({
          address: TOKEN, topics: [TRANSFER, holderTopic(k % HOLDERS), holderTopic((k * 7 + 3) % HOLDERS)], data,
          blockNumber: h.number, blockHash: h.hash, transactionHash: txHash, transactionIndex: tx, logIndex: tx * LOGS_PER_TX + j,
        });
      }
      receipts.push({
        transactionHash: txHash, transactionIndex: tx, blockHash: h.hash, blockNumber: h.number, from: TOKEN, to: TOKEN, type: 2,
        status: 1, cumulativeGasUsed: 0n, gasUsed: 0n, effectiveGasPrice: 0n, contractAddress: undefined, logs,
        logsBloom: new Uint8Array(256), vmError: undefined, revertData: undefined,
      });
      nativeHashes.push(txHash);
    }
    store.transaction(() => store.putBlock({ height: h.number, hash: h.hash, evm: { header: h, transactions: [] }, receipts, nativeHashes }));
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

export interface LogIndexResult {
  logs: number;
  fillSeconds: number;
  /** median ms of a topic-2 query (token, Transfer, to = one holder): store, reader, format, JSON */
  topic2Ms: number;
  /** the same queries' CPU time (user + system) of this process: what a busy machine does not inflate */
  topic2CpuMs: number;
  topic2Answer: number;
  /** median ms of the topic-0-only query over the whole range, which must stop at the cap */
  capErrorMs: number;
}

/** `keep`: a database file to fill once and reuse on later runs (same --logs), instead of a temporary one */
export async function runLogIndexBench(total: number, keep?: string): Promise<LogIndexResult> {
  const dir = keep === undefined ? mkdtempSync(join(tmpdir(), 'ferry-logindex-')) : undefined;
  try {
    const path = keep ?? join(dir!, 'chain.db');
    let fillSeconds = 0;
    if (!existsSync(path)) {
      const writer = new Store(path);
      // the chain thread's FlatState creates the flat state tables the reader opens
      new FlatState(writer);
      // only the fill: a crash here loses nothing of value, and fsync per block would dominate the run
      writer.db.pragma('synchronous = OFF');
      const t0 = performance.now();
      fill(writer, total);
      fillSeconds = (performance.now() - t0) / 1000;
      writer.close();
    }
    // the RPC thread's connection, as in the node
    const store = new Store(path, { reader: true });
    const reader = await ChainReader.create(store, {
      chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap: LOGS_CAP, coinbase: new Uint8Array(20),
      simulator: { call: () => Promise.reject(new Error('unused')), estimateGas: () => Promise.reject(new Error('unused')), createAccessList: () => Promise.reject(new Error('unused')) },
      submit: () => Promise.reject(new Error('unused')),
    });
    reader.onCommitted(store.latestHeight()!);
    const latest = reader.latestNumber();
    const caps = { blockRangeCap: 0, logsCap: LOGS_CAP };
    const filter = (topics: (Uint8Array[] | null)[]) => ({ addresses: [TOKEN], topics, blockHash: undefined, fromBlock: { kind: 'number' as const, number: 0n }, toBlock: { kind: 'number' as const, number: latest } });

    const times: number[] = [];
    const cpuTimes: number[] = [];
    let answer = 0;
    for (let i = 0; i <= REPEATS; i++) {
      const to = holderTopic((i * 37) % HOLDERS);
      const s = performance.now();
      const cpu = process.cpuUsage();
      // the answer as eth_getLogs writes it (JSON text, evmrpc/logjson.ts)
      const text = findLogsJson(reader, caps, filter([[TRANSFER], null, [to]])).text;
      const ms = performance.now() - s;
      const used = process.cpuUsage(cpu);
      const logs = JSON.parse(text) as unknown[];
      // the first one warms the caches
      if (i > 0) {
        times.push(ms);
        cpuTimes.push((used.user + used.system) / 1000);
      }
      if (!text.includes(hex(to))) throw new Error('a topic-2 answer without the holder');
      answer = logs.length;
      const expected = Math.ceil(total / HOLDERS);
      if (Math.abs(logs.length - expected) > 1) throw new Error(`topic-2 query returned ${logs.length} logs, expected about ${expected}`);
    }
    const capTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      try {
        findLogsJson(reader, caps, filter([[TRANSFER]]));
        throw new Error('the topic-0 query over every Transfer did not hit the logs cap');
      } catch (e) {
        if (!/query returned more than/.test((e as Error).message)) throw e;
      }
      capTimes.push(performance.now() - s);
    }
    store.close();
    return { logs: total, fillSeconds, topic2Ms: median(times), topic2CpuMs: median(cpuTimes), topic2Answer: answer, capErrorMs: median(capTimes) };
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export function formatLogIndex(r: LogIndexResult): string {
  const pass = r.topic2Ms <= LOGINDEX_TARGET_MS;
  return [
    `| measure | value | target |`,
    `|---|---|---|`,
    `| logs of one token in the store | ${r.logs.toLocaleString('en-US')}${r.fillSeconds > 0 ? ` (filled in ${r.fillSeconds.toFixed(1)} s)` : ''} | |`,
    `| eth_getLogs by topic 2 (Transfer to one holder, ${r.topic2Answer} logs), median of ${REPEATS} | ${r.topic2Ms.toFixed(2)} ms | ≤ ${LOGINDEX_TARGET_MS} ms: ${pass ? 'met' : 'NOT met'} |`,
    `| the same, CPU time of the process (user + system) | ${r.topic2CpuMs.toFixed(2)} ms | |`,
    `| eth_getLogs by topic 0 over every Transfer → logs-cap error (${LOGS_CAP}) | ${r.capErrorMs.toFixed(2)} ms | |`,
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { logs: { type: 'string' }, quick: { type: 'boolean' }, db: { type: 'string' } } });
  const total = values.logs !== undefined ? Number(values.logs) : values.quick ? 200_000 : DEFAULT_LOGS;
  if (!Number.isSafeInteger(total) || total < HOLDERS) throw new Error(`--logs must be an integer ≥ ${HOLDERS}`);
  const r = await runLogIndexBench(total, values.db);
  console.log(formatLogIndex(r));
  if (r.topic2Ms > LOGINDEX_TARGET_MS) process.exitCode = 1;
}
