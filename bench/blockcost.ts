/**
 * Block cost on the chain thread, in process: the store (with its WAL checkpoint worker, as the node
 * opens it in dev mode: COMMIT not waiting for the disk), the application and the consensus engine in dev mode, as the chain thread runs them. The
 * txs (value transfers, or ERC-20 transfers of the bench token) are signed and admitted first; then
 * each block of `--block-txs` is mined alone, and the CPU of this thread (from /proc/self/task, so
 * the checkpoint worker and V8's helper threads are not counted) and of the process are summed over
 * the mining only: execution, commit, the store write and what follows — not CheckTx; the block's store
 * transaction (app.commit, the CometBFT record, the event index, COMMIT) is also timed alone. CPU time
 * compares two builds fairly on a busy machine (docs/benchmarks.md "The chain thread's cost after
 * execution").
 *
 *   npm run build && node dist/bench/blockcost.js [--kind transfers|erc20] [--txs N] [--block-txs N]
 */
import { openSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EvmApp } from '../src/chain/app.js';
import { devGenesis } from '../src/config/genesis.js';
import { generateValidatorKey } from '../src/consensus/cometbft/index.js';
import { Engine, genesisEngineOptions } from '../src/consensus/engine.js';
import { decodeTx } from '../src/evm/tx.js';
import { Store } from '../src/store/store.js';
import { benchTxs } from './chain.js';
import { openDevChain } from './devchain.js';

const MAX_FEE = 100n * 10n ** 9n;

const { values } = parseArgs({
  options: { kind: { type: 'string', default: 'transfers' }, txs: { type: 'string', default: '4000' }, 'block-txs': { type: 'string', default: '250' } },
});
const kind = values.kind!;
if (kind !== 'transfers' && kind !== 'erc20') throw new Error(`--kind is transfers or erc20, not ${kind}`);
const total = Number(values.txs);
const perBlock = Number(values['block-txs']);
if (!(total > 0 && perBlock > 0)) throw new Error('--txs and --block-txs must be positive');

/**
 * This thread's time on a CPU, ns (schedstat: nanosecond resolution, unlike stat's clock ticks), read
 * through one kept descriptor. The chain-thread figure was stat's utime + stime (10 ms clock ticks) and
 * every reading a readFileSync of /proc (8–10 µs of this thread's CPU, four of them inside each block
 * measured; a kept descriptor 3–5 µs): docs/benchmarks.md "The fixed cost of a dev block".
 */
const schedstat = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
const schedstatBytes = Buffer.alloc(128);
function threadRunNs(): number {
  const n = readSync(schedstat, schedstatBytes, 0, schedstatBytes.length, 0);
  return Number(schedstatBytes.toString('latin1', 0, n).split(' ')[0]);
}

const { genesis, store, app, engine, close } = await openDevChain({ EvmApp, Engine, Store, devGenesis, generateValidatorKey, genesisEngineOptions }, total);
// the block's store transaction (app.commit, the CometBFT record, the event index and COMMIT), timed alone
let storeNs = 0;
const transaction = store.transaction.bind(store);
store.transaction = <T>(fn: () => T): T => {
  const t0 = threadRunNs();
  try {
    return transaction(fn);
  } finally {
    storeNs += threadRunNs() - t0;
  }
};
const info = { chainId: genesis.evmChainId, maxFeePerGas: MAX_FEE };
async function admit(raw: string): Promise<void> {
  const r = await app.checkEvmTx(decodeTx(Buffer.from(raw.slice(2), 'hex'), app.common));
  if (r.code !== 0) throw new Error(`CheckTx refused a bench tx: ${r.log}`);
}
const { deploy, raws } = benchTxs(kind, total, info);
if (deploy !== undefined) {
  await admit(deploy);
  await engine.mine(1n);
}
let threadNs = 0;
let processUs = 0;
storeNs = 0;
let wallMs = 0;
for (let at = 0; at < total; at += perBlock) {
  for (const raw of raws.slice(at, at + perBlock)) await admit(raw);
  const t0 = threadRunNs();
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await engine.mine(1n);
  threadNs += threadRunNs() - t0;
  const c = process.cpuUsage(c0);
  processUs += c.user + c.system;
  wallMs += performance.now() - w0;
}
const last = store.evmBlock(store.latestHeight()!)!;
if (last.transactions.length !== (total % perBlock || perBlock)) {
  throw new Error(`the last block holds ${last.transactions.length} txs: some were not included`);
}
console.log(
  `${kind}: ${total} txs in blocks of ${perBlock}: ${(threadNs / 1000 / total).toFixed(0)} µs/tx chain-thread CPU, ` +
    `${(processUs / total).toFixed(0)} µs/tx process CPU, ${((wallMs * 1000) / total).toFixed(0)} µs/tx wall, ` +
    `${(storeNs / 1000 / total).toFixed(0)} µs/tx in the store transaction (this thread)`,
);
await close();
