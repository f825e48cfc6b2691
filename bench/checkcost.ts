/**
 * CheckTx on the chain thread, two builds side by side in one process (docs/benchmarks.md "CheckTx on the
 * chain thread"):
 *
 *   node dist/bench/checkcost.js --a <dist of build A> --b <dist of build B> [--kind transfers|erc20] [--txs 4000]
 *
 * Each build gets its own store, application and dev-mode engine (its own modules, loaded from its
 * dist). The same signed txs (8 senders, as bench/blockcost.ts signs them) go to both in blocks of 8, as
 * `ferry dev` makes them, alternating which build goes first per block: CheckTx as the chain thread runs
 * it for eth_sendRawTransaction (decodeTx with the sender and hash the RPC thread found, then checkEvmTx)
 * and the block (engine.mine) are timed on this thread's CPU (schedstat), over the last three quarters
 * of the txs. Both builds run in the same minutes, so the machine's load moves both alike.
 */
import { openSync, readSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SENDERS, benchTxs } from './chain.js';
import { openDevChain } from './devchain.js';

const { values } = parseArgs({
  options: { a: { type: 'string' }, b: { type: 'string' }, kind: { type: 'string', default: 'erc20' }, txs: { type: 'string', default: '4000' } },
});
const kind = values.kind!;
if (kind !== 'transfers' && kind !== 'erc20') throw new Error(`--kind is transfers or erc20, not ${kind}`);
if (values.a === undefined || values.b === undefined) throw new Error('--a and --b name the dist folders of the two builds');
const total = Number(values.txs);
if (!(total >= 64)) throw new Error('--txs must be at least 64');

/** this thread's CPU time, ns (bench/blockcost.ts threadRunNs) */
const schedstat = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
const schedstatBytes = Buffer.alloc(128);
function threadRunNs(): number {
  const n = readSync(schedstat, schedstatBytes, 0, schedstatBytes.length, 0);
  return Number(schedstatBytes.toString('latin1', 0, n).split(' ')[0]);
}

/** one build's chain, from its own dist folder */
async function open(dist: string) {
  const load = <T>(path: string) => import(pathToFileURL(join(resolve(dist), path)).href) as Promise<T>;
  const { EvmApp } = await load<typeof import('../src/chain/app.js')>('src/chain/app.js');
  const { devGenesis } = await load<typeof import('../src/config/genesis.js')>('src/config/genesis.js');
  const { generateValidatorKey } = await load<typeof import('../src/consensus/cometbft/index.js')>('src/consensus/cometbft/index.js');
  const { Engine, genesisEngineOptions } = await load<typeof import('../src/consensus/engine.js')>('src/consensus/engine.js');
  const { Store } = await load<typeof import('../src/store/store.js')>('src/store/store.js');
  const { decodeTx } = await load<typeof import('../src/evm/tx.js')>('src/evm/tx.js');
  const { typedSigned } = await load<typeof import('../src/chain/txsigner.js')>('src/chain/txsigner.js');
  const { genesis, app, engine, close } = await openDevChain({ EvmApp, Engine, Store, devGenesis, generateValidatorKey, genesisEngineOptions }, total);
  const stats = { checkNs: 0, blockNs: 0, txs: 0 };
  /** CheckTx of each tx (with the RPC thread's sender and hash, found untimed), then the block */
  async function block(raws: Uint8Array[], measure: boolean): Promise<void> {
    const signed = raws.map((raw) => ({ raw: raw.slice(), ...typedSigned(raw, app.common)! }));
    let checkNs = 0;
    for (const s of signed) {
      const t0 = threadRunNs();
      const r = await app.checkEvmTx(decodeTx(s.raw, app.common, s.sender, s.hash));
      checkNs += threadRunNs() - t0;
      if (r.code !== 0) throw new Error(`CheckTx refused a bench tx: ${r.log}`);
    }
    const t0 = threadRunNs();
    await engine.mine(1n);
    if (!measure) return;
    stats.blockNs += threadRunNs() - t0;
    stats.checkNs += checkNs;
    stats.txs += raws.length;
  }
  return { genesis, stats, block, close };
}

const builds = [await open(values.a), await open(values.b)] as const;
const info = { chainId: builds[0].genesis.evmChainId, maxFeePerGas: 100n * 10n ** 9n };
const bytes = (hex: string) => new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
const { deploy, raws: signed } = benchTxs(kind, total, info);
if (deploy !== undefined) for (const b of builds) await b.block([bytes(deploy)], false);
const raws = signed.map(bytes);
for (let at = 0, i = 0; at < total; at += SENDERS, i++) {
  const slice = raws.slice(at, at + SENDERS);
  const measure = at >= total / 4;
  const [first, second] = i % 2 === 0 ? builds : [builds[1], builds[0]];
  await first.block(slice, measure);
  await second.block(slice, measure);
}
for (const [name, b] of [['A', builds[0]], ['B', builds[1]]] as const) {
  const { checkNs, blockNs, txs } = b.stats;
  console.log(`${name} ${kind}: ${txs} txs in blocks of ${SENDERS}: CheckTx ${(checkNs / 1000 / txs).toFixed(1)} µs/tx, block ${(blockNs / 1000 / txs).toFixed(0)} µs/tx (chain-thread CPU)`);
  await b.close();
}
