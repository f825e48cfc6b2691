/**
 * Where a transfer's CPU goes, per thread (docs/benchmarks.md "Ingesting transfers"):
 *
 *   node dist/bench/ingest.js [--node ferry-dev|ferry] [--count 2000] [--rounds 1] [--only transfers,erc20] [--senders 8]
 *
 * Starts one ferry node (as `npm run bench` does: bench/nodes.ts), then per workload and round sends
 * `count` pre-signed txs (value transfers to the bench's holders, or ERC-20 transfers) from 8 senders,
 * one in flight per sender (the bench's `transfers`/`erc20` workloads), and waits for the last receipts.
 * `--senders 1`: one tx at a time, so under `ferry dev` every block holds exactly one tx (the fixed cost
 * of a block plus one tx's, docs/benchmarks.md).
 * Reads every thread's utime + stime (/proc/<pid>/task/<tid>/stat) before and after and prints the CPU
 * per tx of each: the RPC thread, the chain thread, V8's platform threads (GC) and the rest (`roles`); plus the
 * eth_sendRawTransaction latency (p50 / p99) the client saw. A warm-up run of WARMUP_TXS goes first.
 * With BENCH_FERRY_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' and BENCH_FERRY_UNBUNDLED=1 each thread
 * writes a profile (bench/profile.ts reads them); BENCH_INGEST_THREADS=1 also prints each thread's µs/tx
 * by its tid's offset from the process id.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  HOLDERS, HOLDER_COUNT, SENDERS, TOKEN_ABI, TOKEN_TRANSFER_GAS, TRANSFER_GAS, chainInfo, deployToken, devWallet, pendingNonce, signTx,
  verifyReceipts, waitAllReceipts, type TxFields,
} from './chain.js';
import { runScript, startNode, threadCpuMs as threads, type NodeName } from './nodes.js';
import { loadHttpClient, makeClient, percentile, type RpcClient } from './rpc.js';
import { ensurePeers } from './setup.js';

/** txs sent (and mined) before each measured run */
const WARMUP_TXS = 400;
/** bound on one run: sending plus waiting for the receipts */
const RUN_TIMEOUT_MS = 300_000;

/** V8's platform worker threads (GC and compiler helpers; node's default --v8-pool-size is 4) and node's own start here */
const PLATFORM_THREADS = 5;

/**
 * Each thread's role. All of ferry's threads are named `node`, so they are told apart by the order node
 * starts them: the main thread is the RPC thread; the next PLATFORM_THREADS are node's signal thread and
 * V8's platform workers (GC, compiler); of the later ones (libuv's pool, the JavaScript workers: the
 * chain thread, the call workers, the WAL checkpointer) the one that used the most CPU in the run is
 * the chain thread (in a transfer run the call workers are idle).
 */
function roles(pid: number, delta: Map<number, number>): Map<number, string> {
  const m = new Map<number, string>();
  let chain: number | undefined;
  for (const [tid, ms] of delta) {
    if (tid === pid) m.set(tid, 'RPC thread');
    else if (tid <= pid + PLATFORM_THREADS) m.set(tid, 'V8 platform (GC, compiler)');
    else {
      m.set(tid, 'other threads');
      if (chain === undefined || ms > delta.get(chain)!) chain = tid;
    }
  }
  if (chain !== undefined) m.set(chain, 'chain thread');
  return m;
}

const { values: args } = parseArgs({
  options: {
    node: { type: 'string', default: 'ferry-dev' },
    count: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '1' },
    only: { type: 'string', default: 'transfers,erc20' },
    senders: { type: 'string', default: String(SENDERS) },
  },
});

async function sendTimed(c: RpcClient, streams: string[][], lat: number[]): Promise<void> {
  await Promise.all(
    streams.map(async (raws) => {
      for (const raw of raws) {
        const t0 = performance.now();
        await c.call('eth_sendRawTransaction', [raw]);
        lat.push(performance.now() - t0);
      }
    }),
  );
}

async function main(): Promise<void> {
  const peers = ensurePeers();
  await loadHttpClient();
  const node = await startNode(args.node as NodeName, peers);
  const c = makeClient(node.url, 32);
  try {
    const info = await chainInfo(c);
    const sending = Number(args.senders);
    if (!Number.isInteger(sending) || sending < 1 || sending > SENDERS) throw new Error(`--senders: 1 to ${SENDERS}`);
    const senders = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
    const token = await deployToken(c, info, senders, 60_000);
    let holderAt = 0;
    const fieldsOf = (w: string) => (k: number): Omit<TxFields, 'nonce'> =>
      w === 'erc20'
        ? { to: token.address, gasLimit: TOKEN_TRANSFER_GAS, data: TOKEN_ABI.encodeFunctionData('transfer', [HOLDERS[(holderAt + k) % HOLDER_COUNT], 1n]) }
        : { to: HOLDERS[(holderAt + k) % HOLDER_COUNT]!, value: 1n, gasLimit: TRANSFER_GAS };
    const run = async (w: string, count: number, measure: boolean): Promise<void> => {
      const nonces = await Promise.all(senders.map((s) => pendingNonce(c, s.address)));
      const streams: string[][] = senders.map(() => []);
      const hashes: string[] = [];
      const last: string[] = [];
      const f = fieldsOf(w);
      for (let k = 0; k < count; k++) {
        const s = k % sending;
        const { raw, hash } = signTx(senders[s]!, info, { ...f(k), nonce: nonces[s]! + Math.floor(k / sending) });
        streams[s]!.push(raw);
        hashes.push(hash);
        last[s] = hash;
      }
      holderAt += count;
      const before = threads(node.pid);
      const lat: number[] = [];
      const t0 = performance.now();
      await sendTimed(c, streams, lat);
      const failure = await waitAllReceipts(c, last.filter(Boolean), Date.now() + RUN_TIMEOUT_MS);
      const elapsed = performance.now() - t0;
      const after = threads(node.pid);
      if (failure) throw new Error(failure);
      const { missing, failed } = await verifyReceipts(c, hashes);
      if (missing + failed > 0) throw new Error(`${missing} missing, ${failed} failed`);
      if (!measure) return;
      const delta = new Map([...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)]));
      const role = roles(node.pid, delta);
      const per = new Map<string, number>();
      let total = 0;
      for (const [tid, d] of delta) {
        total += d;
        const r = role.get(tid)!;
        per.set(r, (per.get(r) ?? 0) + d);
      }
      lat.sort((a, b) => a - b);
      const us = (ms: number) => Math.round((ms * 1000) / count);
      const parts = [...per].filter(([, ms]) => ms > 0).map(([r, ms]) => `${r} ${us(ms)}`);
      if (process.env.BENCH_INGEST_THREADS === '1') console.log([...delta].map(([tid, d]) => `+${tid - node.pid}:${us(d)}`).join(' '));
      console.log(
        `${args.node} ${w} n=${count}: ${Math.round((count * 1000) / elapsed)} tx/s, sendRaw p50 ${percentile(lat, 50).toFixed(1)} / p99 ${percentile(lat, 99).toFixed(1)} ms; ` +
          `CPU µs/tx: total ${us(total)}; ${parts.join('; ')} (load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
      );
    };
    const count = Number(args.count);
    for (const w of args.only!.split(',')) {
      await run(w, WARMUP_TXS, false);
      for (let i = 0; i < Number(args.rounds); i++) await run(w, count, true);
    }
  } finally {
    c.close();
    await node.stop();
  }
}

runScript(main);
