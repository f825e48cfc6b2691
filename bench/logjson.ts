/**
 * eth_getLogs' answer of the `logs` workload's size (2,008 Transfer logs of one token), in process, in
 * CPU time (docs/benchmarks.md "Reads"): the node's path (the store's hex rows, `findLogsJson`, the
 * reply envelope) against the objects path it replaced (`findLogs`: Buffer rows, `formatLog`, then
 * `JSON.stringify`), interleaved, on one store filled with bench/logindex.ts's `fill`. Both answers
 * must be the same bytes.
 *
 *   npm run build && node dist/bench/logjson.js [--logs N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ChainReader } from '../src/chain/reader.js';
import { findLogs, findLogsJson } from '../src/evmrpc/methods.js';
import { FlatState } from '../src/store/flatstate.js';
import { Store } from '../src/store/store.js';
import { fill } from './logindex.js';

const { values } = parseArgs({ options: { logs: { type: 'string', default: '2008' }, rounds: { type: 'string', default: '60' } } });
const total = Number(values.logs);
const rounds = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'ferry-logjson-'));
try {
  const path = join(dir, 'chain.db');
  const writer = new Store(path);
  new FlatState(writer);
  writer.db.pragma('synchronous = OFF');
  fill(writer, total);
  writer.close();
  const store = new Store(path, { reader: true });
  const unused = () => Promise.reject(new Error('unused'));
  const reader = await ChainReader.create(store, {
    chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap: 0, coinbase: new Uint8Array(20),
    simulator: { call: unused, estimateGas: unused, createAccessList: unused }, submit: unused,
  });
  reader.onCommitted(store.latestHeight()!);
  // logindex.ts's token and Transfer topic: every log of the store
  const filter = { addresses: [], topics: [], blockHash: undefined, fromBlock: { kind: 'number' as const, number: 0n }, toBlock: { kind: 'number' as const, number: reader.latestNumber() } };
  const caps = { blockRangeCap: 0, logsCap: 0 };
  const paths = {
    objects: () => JSON.stringify({ jsonrpc: '2.0', id: 1, result: findLogs(reader, caps, filter) }),
    text: () => `{"jsonrpc":"2.0","id":1,"result":${findLogsJson(reader, caps, filter).text}}`,
  };
  if (paths.objects() !== paths.text()) throw new Error('the two paths answer different bytes');
  const cpu = { objects: [] as number[], text: [] as number[] };
  for (let i = 0; i < rounds + 5; i++) {
    for (const k of i % 2 === 0 ? (['objects', 'text'] as const) : (['text', 'objects'] as const)) {
      const before = process.cpuUsage();
      paths[k]();
      const used = process.cpuUsage(before);
      if (i >= 5) cpu[k].push((used.user + used.system) / 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2);
  console.log(`eth_getLogs of ${total} logs, CPU ms per answer (median of ${rounds}): objects + JSON.stringify ${median(cpu.objects)}, JSON text ${median(cpu.text)}`);
  store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
