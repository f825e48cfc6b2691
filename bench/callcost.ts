/**
 * Where an eth_call's CPU goes, per thread (docs/benchmarks.md "eth_call per thread"):
 *
 *   node dist/bench/callcost.js [--node ferry-dev|ferry] [--seconds 5] [--rounds 3] [--concurrency 32]
 *
 * Starts one ferry node (as `npm run bench` does: bench/nodes.ts), deploys the bench's ERC-20, then per
 * round runs the `call` workload of `npm run bench` (eth_call balanceOf over the 4,096 holders,
 * `concurrency` keep-alive connections flat out) for `seconds`, after one warm-up round. Reads every
 * thread's utime + stime (/proc/<pid>/task/<tid>/stat) before and after and prints the CPU per call of
 * each: the RPC thread, the busiest other thread (the call worker), V8's platform threads (GC,
 * compiler) and the rest, with the node's whole process tree (CometBFT too in `ferry start`).
 * BENCH_FERRY_NODE_ARGS / BENCH_FERRY_UNBUNDLED work as in bench/ingest.ts (profiles per thread).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { HOLDERS, HOLDER_COUNT, SENDERS, TOKEN_ABI, chainInfo, deployToken, devWallet } from './chain.js';
import { cpuMs, runScript, startNode, threadCpuMs as threads, type NodeName } from './nodes.js';
import { checkSingle, loadHttpClient, makeClient, runLoad } from './rpc.js';
import { ensurePeers } from './setup.js';

/** V8's platform worker threads and node's signal thread (as bench/ingest.ts counts them) */
const PLATFORM_THREADS = 5;
/** bound on the requests of one round */
const MAX_ROUND_REQUESTS = 2_000_000;

const { values: args } = parseArgs({
  options: {
    node: { type: 'string', default: 'ferry-dev' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
  },
});

async function main(): Promise<void> {
  const peers = ensurePeers();
  await loadHttpClient();
  const node = await startNode(args.node as NodeName, peers);
  const concurrency = Number(args.concurrency);
  const c = makeClient(node.url, concurrency);
  try {
    const info = await chainInfo(c);
    const senders = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
    const token = await deployToken(c, info, senders, 60_000);
    const data = HOLDERS.map((h) => TOKEN_ABI.encodeFunctionData('balanceOf', [h]));
    const body = (i: number): string =>
      JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_call', params: [{ to: token.address, data: data[i % HOLDER_COUNT] }, 'latest'] });
    const spec = { concurrency, durationMs: Number(args.seconds) * 1000, maxRequests: MAX_ROUND_REQUESTS, body, check: checkSingle };
    await runLoad(c, spec);
    for (let round = 0; round < Number(args.rounds); round++) {
      const before = threads(node.pid);
      const tree0 = cpuMs(node.pid);
      const r = await runLoad(c, spec);
      const tree = cpuMs(node.pid) - tree0;
      const after = threads(node.pid);
      if (r.errors > 0) throw new Error(`${r.errors} failed calls: ${r.firstError}`);
      const us = (ms: number): number => Math.round((ms * 1000) / r.ok);
      const delta = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const);
      let worker: number | undefined;
      for (const [tid, d] of delta) if (tid > node.pid + PLATFORM_THREADS && (worker === undefined || d > delta.find(([t]) => t === worker)![1])) worker = tid;
      const per = new Map<string, number>();
      for (const [tid, d] of delta) {
        const role = tid === node.pid ? 'RPC' : tid <= node.pid + PLATFORM_THREADS ? 'V8 platform' : tid === worker ? 'call worker' : 'other';
        per.set(role, (per.get(role) ?? 0) + d);
      }
      const threadsTotal = delta.reduce((s, [, d]) => s + d, 0);
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      console.log(
        `${args.node} call: ${Math.round(r.perSecond)} req/s; CPU µs/call: tree ${us(tree)}, node ${us(threadsTotal)}; ` +
          [...per].map(([k, ms]) => `${k} ${us(ms)}`).join('; ') +
          ` (load ${load})`,
      );
      if (process.env.BENCH_INGEST_THREADS === '1') console.log(delta.map(([tid, d]) => `+${tid - node.pid}:${us(d)}`).join(' '));
    }
  } finally {
    c.close();
    await node.stop();
  }
}

runScript(main);
