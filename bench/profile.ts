/**
 * Where a thread's time goes, from V8 CPU profiles (`node --cpu-prof`, one file per thread):
 *
 *   node dist/bench/profile.js DIR [--per N] [--last S]
 *
 * For each .cpuprofile in DIR it prints the thread's sampled time split into the buckets of the
 * eth_call breakdown in docs/benchmarks.md (HTTP and socket, JSON, the hop between threads, the
 * dispatcher, per-call EVM setup, the interpreter, state reads, SQLite, GC, idle, other), by each
 * sample's own function (self time) and its script. With `--per N` (the calls or txs the run served)
 * each bucket is also given in µs per call; `--last S` counts only the samples of each profile's last
 * S seconds (the load, without the start-up's module loading). The scripts must be the unbundled modules
 * (`node dist/src/bin/ferry.js`, not bin/ferry.js): in the bundle every function has the same script.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export const BUCKETS = [
  'idle', 'GC', 'HTTP parse + socket', 'JSON', 'thread hop (postMessage)', 'dispatcher + eth codecs', 'call scheduling (call worker)',
  'per-call EVM setup (tx, message, journal)', 'interpreter (opcodes, gas)', 'state reads (flat layer, caches)', 'SQLite', 'bytes, RLP, keccak',
  'V8/native other', 'other JS',
] as const;
export type Bucket = (typeof BUCKETS)[number];

const has = (url: string, ...parts: string[]): boolean => parts.some((p) => url.includes(p));

/** The bucket of one sampled function, by its name and script. */
export function bucketOf(fn: string, url: string): Bucket {
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'GC';
  if (url === '') {
    if (fn === 'parse' || fn === 'stringify') return 'JSON';
    if (has(fn, 'writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'onStreamRead', 'execute', 'HTTPParser')) return 'HTTP parse + socket';
    if (has(fn, 'postMessage', 'receiveMessageOnPort', 'MessagePort')) return 'thread hop (postMessage)';
    if (has(fn, 'keccak', 'Keccak', 'digest')) return 'bytes, RLP, keccak';
    if (has(fn, 'prepare', 'all', 'get', 'iterate', 'raw', 'pluck', 'Statement')) return 'SQLite';
    return 'V8/native other';
  }
  if (has(url, 'node:_http', 'node:http', 'node:net', 'node:internal/stream', 'node:stream', 'node:internal/http', 'node:_stream', 'node:events', 'node:internal/streams', 'node:internal/abort', 'node:internal/timers', 'node:timers')) return 'HTTP parse + socket';
  if (has(url, 'node:internal/worker', 'node:worker_threads', 'node:internal/per_context/messageport', '/lib/turnbatch.js')) return 'thread hop (postMessage)';
  if (has(url, 'better-sqlite3', '/store/')) return 'SQLite';
  if (has(url, '/server/', '/jsonrpc/', '/rpc/', '/evmrpc/', '/codec', '/node/callpool.js')) return 'dispatcher + eth codecs';
  if (has(url, '/node/callworker.js', '/lib/slices.js')) return 'call scheduling (call worker)';
  if (has(url, '@ethereumjs/evm/dist/esm/interpreter', '@ethereumjs/evm/dist/esm/opcodes', '/evm/syncsteps.js', '/evm/jumpdests.js', '@ethereumjs/evm/dist/esm/memory', '@ethereumjs/evm/dist/esm/stack')) return 'interpreter (opcodes, gas)';
  if (has(url, '/evm/flatstate.js', '@ethereumjs/statemanager', '/state/', '/lib/lru', '/lib/cache')) return 'state reads (flat layer, caches)';
  // src/evm/common.ts' only anonymous hot function is its keccak256 (the native addon)
  if (has(url, '@ethereumjs/rlp', '@ethereumjs/util', 'ethereum-cryptography', '@noble', 'keccak', '/lib/bytes', '/evm/ethrlp', '/evm/common.js')) return 'bytes, RLP, keccak';
  if (has(url, '@ethereumjs/', '/evm/', '/chain/simulator', '/chain/')) return 'per-call EVM setup (tx, message, journal)';
  return 'other JS';
}

export interface ThreadSummary {
  file: string;
  totalMs: number;
  byBucket: Map<Bucket, number>;
  /** top self-time functions, ms */
  top: Array<{ fn: string; url: string; ms: number }>;
}

export function summarize(file: string, lastMs = Infinity): ThreadSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const fromUs = p.endTime - lastMs * 1000;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < fromUs) continue;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const byBucket = new Map<Bucket, number>();
  const byFn = new Map<string, { fn: string; url: string; ms: number }>();
  for (const [id, us] of selfUs) {
    const { functionName, url } = byId.get(id)!.callFrame;
    const b = bucketOf(functionName, url);
    byBucket.set(b, (byBucket.get(b) ?? 0) + us / 1000);
    const key = `${functionName}@${url}`;
    const e = byFn.get(key) ?? { fn: functionName || '(anonymous)', url, ms: 0 };
    e.ms += us / 1000;
    byFn.set(key, e);
  }
  const top = [...byFn.values()].filter((e) => e.fn !== '(idle)').sort((a, b) => b.ms - a.ms).slice(0, 15);
  return { file, totalMs: Math.min(lastMs, (p.endTime - p.startTime) / 1000), byBucket, top };
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { per: { type: 'string' }, last: { type: 'string' } } });
  const dir = positionals[0];
  if (!dir) throw new Error('usage: node dist/bench/profile.js DIR [--per N]');
  const per = values.per === undefined ? undefined : Number(values.per);
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile')).sort()) {
    const s = summarize(join(dir, f), values.last === undefined ? Infinity : Number(values.last) * 1000);
    const busy = s.totalMs - (s.byBucket.get('idle') ?? 0);
    console.log(`\n### ${f}: ${(s.totalMs / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(2)} s busy`);
    console.log(`| bucket | ms | % of busy |${per ? ' µs per call |' : ''}`);
    console.log(`|---|---|---|${per ? '---|' : ''}`);
    for (const b of BUCKETS) {
      const ms = s.byBucket.get(b) ?? 0;
      if (ms === 0 || b === 'idle') continue;
      console.log(`| ${b} | ${ms.toFixed(0)} | ${((100 * ms) / busy).toFixed(1)} % |${per ? ` ${((ms * 1000) / per).toFixed(1)} |` : ''}`);
    }
    console.log('top functions (self ms):');
    for (const t of s.top) console.log(`  ${t.ms.toFixed(0).padStart(6)}  ${t.fn}  ${t.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
