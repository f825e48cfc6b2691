/**
 * Explorer benchmark (docs/benchmarks.md "The address index"): ots_searchTransactionsBefore/After and
 * trace_filter by address over a chain of 100,000 transactions. Target: each search ≤ 20 ms median.
 *
 * Sending 100,000 txs through a node's RPC would take most of the bench, so the chain is made in
 * process, the fastest way the benches have (bench/prune.ts): the real application (EvmApp:
 * FinalizeBlock executes each block with the address collector on, Commit writes it and its index rows
 * in one transaction) over a fresh store, BLOCK_TXS signed txs a block from the bench's 8 senders: 10 %
 * value sends to a router contract that forwards the value to TARGET (an address only internal calls
 * reach), 10 % transfers to HOT, the rest to 4,096 holders in turn. Then ferry's real read path is timed
 * on the reader thread's connection: the `ots` and `trace` method tables over ChainReader and the `eth`
 * table, the answer encoded as JSON — everything an HTTP client waits for except the socket; trace_filter
 * replays its blocks on the trace worker (chain/trace.ts), as in the node.
 *
 *   npm run build && node dist/bench/explorers.js [--txs N] [--block-txs N]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EvmApp } from '../src/chain/app.js';
import { wrapEthereumTx } from '../src/chain/nativetx.js';
import { ChainReader } from '../src/chain/reader.js';
import { TraceService } from '../src/chain/trace.js';
import { createEvmMethods } from '../src/evmrpc/methods.js';
import { createOtsMethods } from '../src/evmrpc/ots.js';
import { createTraceMethods } from '../src/evmrpc/trace.js';
import { ForkSchedule } from '../src/evm/forks.js';
import type { CallContext, MethodTable } from '../src/jsonrpc/types.js';
import type { Logger } from '../src/lib/log.js';
import { Store } from '../src/store/store.js';
import { chainGenesis } from '../test/helpers/chaingen.js';
import { HOLDERS, HOLDER_COUNT, SENDERS, TRANSFER_GAS, devWallet, signTx } from './chain.js';

export const EXPLORERS_TARGET_MS = 20;
const DEFAULT_TXS = 100_000;
const DEFAULT_BLOCK_TXS = 100;
const REPEATS = 21;
const PAGE_SIZE = 25;
const TRACE_FILTER_REPEATS = 3;
const CHAIN_ID = 9000n;
const GWEI = 10n ** 9n;
const MAX_FEE = 100n * GWEI;
const ROUTER_GAS = 60_000n;
const GENESIS_MS = Date.parse('2026-01-01T00:00:00Z');

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const ctx: CallContext = { transport: 'http', authenticated: false };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const TARGET = '0x' + 'a7'.repeat(20);
const ROUTER = '0x' + 'c1'.repeat(20);
const HOT = '0x' + 'b0'.repeat(20);
// CALL(gas, TARGET, CALLVALUE, 0, 0, 0, 0); STOP
const ROUTER_RUNTIME = '6000600060006000' + '34' + '73' + TARGET.slice(2) + '5a' + 'f1' + '00';

/** Makes the chain: `total` txs in blocks of `perBlock`; returns the fill's seconds. */
async function fill(path: string, total: number, perBlock: number): Promise<number> {
  const genesis = chainGenesis();
  genesis.evm.alloc.set(ROUTER, { balance: 0n, nonce: 1n, code: bytes(ROUTER_RUNTIME), storage: new Map() });
  const store = new Store(path);
  // only the fill: a crash here loses nothing of value, and fsync per block would dominate the run
  store.db.pragma('synchronous = OFF');
  const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } }, silent, { onPoolChange() {} });
  await app.initChain();
  const senders = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
  const nonces = senders.map(() => 0);
  const info = { chainId: CHAIN_ID, maxFeePerGas: MAX_FEE };
  const t0 = performance.now();
  let k = 0;
  for (let height = 1n; k < total; height++) {
    const natives: Uint8Array[] = [];
    for (let i = 0; i < perBlock && k < total; i++, k++) {
      const s = k % SENDERS;
      const kind = k % 10;
      const f = kind === 0 ? { to: ROUTER, gasLimit: ROUTER_GAS } : { to: kind === 1 ? HOT : HOLDERS[k % HOLDER_COUNT]!, gasLimit: TRANSFER_GAS };
      const { raw } = signTx(senders[s]!, info, { ...f, value: 1n, nonce: nonces[s]!++ });
      natives.push(wrapEthereumTx(bytes(raw), bytes(senders[s]!.address), f.gasLimit, MAX_FEE));
    }
    const r = await app.finalizeBlock({ height, timeMs: GENESIS_MS + Number(height) * 1000, hash: bytes(height.toString(16).padStart(64, '0')), proposerAddress: new Uint8Array(20), txs: natives });
    if (r.txResults.some((t) => t.code !== 0)) throw new Error(`block ${height}: a tx failed`);
    store.transaction(() => app.commit());
    await app.afterCommit();
    if (Number(height) % 100 === 0) process.stderr.write(`explorers bench: ${k} txs\r`);
  }
  const seconds = (performance.now() - t0) / 1000;
  store.close();
  return seconds;
}

function bytesOf(store: Store, tables: string[]): number {
  const q = store.db.prepare<[string], { n: number | null }>('SELECT sum(pgsize) AS n FROM dbstat WHERE name = ?');
  let n = 0;
  for (const t of tables) n += q.get(t)?.n ?? 0;
  return n;
}

async function run(table: MethodTable, name: string, params: unknown[]): Promise<unknown> {
  const spec = table[name]!;
  return spec.handler(spec.params.map((c, i) => c.decode(params[i], i)), ctx);
}

export interface ExplorersResult {
  txs: number;
  blocks: number;
  fillSeconds: number;
  dbBytes: number;
  indexBytes: number;
  indexRows: number;
  /** label → median ms of the search (handler + JSON) */
  searches: { label: string; ms: number; txs: number }[];
  traceFilter: { label: string; ms: number; traces: number; blocks: number };
  load: string;
}

export async function runExplorersBench(total: number, perBlock: number): Promise<ExplorersResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-explorers-'));
  const traces = new TraceService({ dbPath: join(dir, 'ferry.db'), chainId: CHAIN_ID, hardfork: 'prague', maxResultSize: 0 });
  // the trace worker does not keep the process alive (the node's listeners do): this timer does
  const alive = setInterval(() => {}, 1_000);
  try {
    const path = join(dir, 'ferry.db');
    const fillSeconds = await fill(path, total, perBlock);
    const store = new Store(path, { reader: true });
    const reader = await ChainReader.create(store, {
      chainId: CHAIN_ID, hardfork: 'prague', gasCap: 25_000_000n, logsCap: 10_000, coinbase: new Uint8Array(20),
      simulator: { call: () => Promise.reject(new Error('unused')), estimateGas: () => Promise.reject(new Error('unused')), createAccessList: () => Promise.reject(new Error('unused')) },
      submit: () => Promise.reject(new Error('unused')),
    });
    const latest = store.latestHeight()!;
    reader.onCommitted(latest);
    const core = createEvmMethods(reader, { clientVersion: 'bench', gasCap: 25_000_000n, blockRangeCap: 0, logsCap: 10_000, feeHistoryCap: 100, evmTimeoutMs: 0 });
    const runs = traces as never;
    const ots = createOtsMethods({ reader, runs }, core);
    const forks = new ForkSchedule(CHAIN_ID, { hardfork: 'prague' });
    const trace = createTraceMethods({ reader, runs }, { gasCap: 25_000_000n, commonNow: () => forks.commonAt(0n) });

    const mid = Number(latest / 2n);
    const sender = devWallet(0).address.toLowerCase();
    const holder = HOLDERS[7]!.toLowerCase();
    const cases: [string, string, string, number][] = [
      ['Before, a sender (1/8 of all txs), from the head', 'ots_searchTransactionsBefore', sender, 0],
      ['Before, a sender, from the middle block', 'ots_searchTransactionsBefore', sender, mid],
      ['After, a sender, from block 1', 'ots_searchTransactionsAfter', sender, 0],
      ['After, a sender, from the middle block', 'ots_searchTransactionsAfter', sender, mid],
      ['Before, TARGET (reached only by internal calls), from the head', 'ots_searchTransactionsBefore', TARGET, 0],
      ['Before, HOT (1/10 of all txs), from the head', 'ots_searchTransactionsBefore', HOT, 0],
      ['Before, a holder (a few dozen txs), from the head: its whole history', 'ots_searchTransactionsBefore', holder, 0],
    ];
    const searches: ExplorersResult['searches'] = [];
    for (const [label, m, addr, n] of cases) {
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i <= REPEATS; i++) {
        const s = performance.now();
        const r = (await run(ots, m, [addr, n, PAGE_SIZE])) as { txs: unknown[] };
        JSON.stringify(r);
        if (i > 0) times.push(performance.now() - s);
        count = r.txs.length;
      }
      if (count === 0) throw new Error(`${label}: no txs found`);
      searches.push({ label: `${label}, pageSize ${PAGE_SIZE}`, ms: median(times), txs: count });
    }
    // trace_filter by address over the whole chain: the index names the blocks to replay
    const filter = { fromBlock: '0x1', toBlock: '0x' + latest.toString(16), toAddress: [holder] };
    const tf: number[] = [];
    let found = 0;
    for (let i = 0; i < TRACE_FILTER_REPEATS; i++) {
      const s = performance.now();
      const r = (await run(trace, 'trace_filter', [filter])) as unknown[];
      JSON.stringify(r);
      tf.push(performance.now() - s);
      found = r.length;
    }
    const blocks = reader.addressBlocks(bytes(holder), 1n, latest, 100_000).length;
    const writer = new Store(path);
    const result: ExplorersResult = {
      txs: total,
      blocks: Number(latest),
      fillSeconds,
      dbBytes: statSync(path).size,
      indexBytes: bytesOf(writer, ['addr_txs', 'addr_blocks']),
      indexRows: (writer.db.prepare('SELECT count(*) AS n FROM addr_txs').get() as { n: number }).n,
      searches,
      traceFilter: { label: `trace_filter toAddress [a holder], blocks 1…${latest}`, ms: median(tf), traces: found, blocks },
      load: loadavg().map((l) => l.toFixed(1)).join(' '),
    };
    writer.close();
    store.close();
    return result;
  } finally {
    clearInterval(alive);
    await traces.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatExplorers(r: ExplorersResult): string {
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  return [
    `${r.txs.toLocaleString('en-US')} txs in ${r.blocks.toLocaleString('en-US')} blocks (made in ${r.fillSeconds.toFixed(0)} s); load average ${r.load}`,
    '',
    `| measure | value | target |`,
    `|---|---|---|`,
    `| database file | ${mb(r.dbBytes)} | |`,
    `| address index (addr_txs + addr_blocks) | ${mb(r.indexBytes)}, ${r.indexRows.toLocaleString('en-US')} rows (${(r.indexBytes / r.txs).toFixed(0)} bytes a tx) | |`,
    ...r.searches.map((s) => `| ${s.label} (${s.txs} txs answered), median of ${REPEATS} | ${s.ms.toFixed(2)} ms | ≤ ${EXPLORERS_TARGET_MS} ms: ${s.ms <= EXPLORERS_TARGET_MS ? 'met' : 'NOT met'} |`),
    `| ${r.traceFilter.label}: ${r.traceFilter.blocks} blocks replayed, ${r.traceFilter.traces} traces, median of ${TRACE_FILTER_REPEATS} | ${r.traceFilter.ms.toFixed(0)} ms | |`,
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { txs: { type: 'string' }, 'block-txs': { type: 'string' }, quick: { type: 'boolean' } } });
  const total = values.txs !== undefined ? Number(values.txs) : values.quick ? 20_000 : DEFAULT_TXS;
  const perBlock = values['block-txs'] !== undefined ? Number(values['block-txs']) : DEFAULT_BLOCK_TXS;
  if (!Number.isSafeInteger(total) || total < 1_000 || !Number.isSafeInteger(perBlock) || perBlock < 1) throw new Error('--txs must be ≥ 1000 and --block-txs ≥ 1');
  const r = await runExplorersBench(total, perBlock);
  console.log(formatExplorers(r));
  if (r.searches.some((s) => s.ms > EXPLORERS_TARGET_MS)) process.exitCode = 1;
}
