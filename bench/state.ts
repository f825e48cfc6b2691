/**
 * State-access benchmark, in process, measured in CPU time (process.cpuUsage) so it compares two
 * builds fairly on a busy machine: ERC-20 `balanceOf` eth_calls (Simulator) and eth_getBalance
 * (ChainReader) over `--sample` distinct holders spread over the whole holder range, then value
 * transfers and ERC-20 transfers executed as blocks (FinalizeBlock + Commit, as the chain thread
 * does). Prints one line per workload: ops per CPU second and per wall second, then the database's
 * size on disk per genesis account and per storage slot.
 *
 * How cost grows with state size (docs/benchmarks.md "How cost grows"): run it with a generated
 * genesis of `--accounts` funded accounts and an ERC-20 whose `--holders` balances are all in state.
 *
 *   npm run build && node dist/bench/state.js [--accounts N] [--holders N] [--sample N]
 *     [--blocks N] [--block-txs N] [--call-rounds N] [--call-engine ethereumjs|revm]
 */
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Interface, Wallet } from 'ethers';
import { EvmApp } from '../src/chain/app.js';
import { wrapEthereumTx } from '../src/chain/nativetx.js';
import { ChainReader } from '../src/chain/reader.js';
import { Simulator } from '../src/chain/simulator.js';
import { devGenesis } from '../src/config/genesis.js';
import type { CallEngine } from '../src/config/options.js';
import { keccak256 } from '../src/evm/common.js';
import type { Logger } from '../src/lib/log.js';
import { Store } from '../src/store/store.js';
import { devKeys } from '../test/helpers/accounts.js';
import { compileToken, slotOf } from '../test/helpers/solc.js';

const { values } = parseArgs({
  options: { accounts: { type: 'string' }, holders: { type: 'string', default: '4096' }, sample: { type: 'string', default: '4096' }, blocks: { type: 'string', default: '10' }, 'block-txs': { type: 'string', default: '200' }, 'call-rounds': { type: 'string', default: '2' }, 'call-engine': { type: 'string', default: 'ethereumjs' } },
});
const HOLDERS = Number(values.holders);
/** funded EOAs in genesis (the holders by default) */
const ACCOUNTS = Number(values.accounts ?? values.holders);
/** distinct holders each read workload visits, spread evenly over the holders */
const SAMPLE = Math.min(Number(values.sample), HOLDERS);
const BLOCKS = Number(values.blocks);
const BLOCK_TXS = Number(values['block-txs']);
const SENDERS = 8;
const TOKEN = '0x' + '70'.repeat(20);
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const word = (n: bigint) => n.toString(16).padStart(64, '0');
const holder = (i: number) => '0x' + (0x10000000 + i).toString(16).padStart(40, '0');

/** the i-th of SAMPLE holders, spread evenly over all HOLDERS (i may exceed SAMPLE: wraps) */
const spread = (i: number): number => Math.floor(((i % SAMPLE) * HOLDERS) / SAMPLE);
const spreadAccounts = (i: number): number => Math.floor(((i % SAMPLE) * ACCOUNTS) / SAMPLE);
/** the database's files on disk (main file, WAL, shared memory) */
function dbBytes(path: string): number {
  let n = 0;
  for (const f of [path, path + '-wal', path + '-shm']) if (existsSync(f)) n += statSync(f).size;
  return n;
}
const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
const perItem = (n: number, items: number): string => (items > 0 ? Math.round(n / items).toLocaleString('en-US') : '-');

function measure(name: string, ops: number, fn: () => Promise<void>): Promise<void> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return fn().then(() => {
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(cpu0);
    const cpu = (c.user + c.system) / 1e6;
    console.log(`${name}: ${Math.round(ops / cpu).toLocaleString('en-US')} per CPU-s, ${Math.round(ops / wall).toLocaleString('en-US')} per s (${ops} ops, cpu ${cpu.toFixed(2)} s, wall ${wall.toFixed(2)} s)`);
  });
}

async function main(): Promise<void> {
  const token = compileToken();
  const iface = new Interface(token.abi);
  const balSlot = slotOf(token, 'balanceOf');
  const g = devGenesis({ chainId: 'ferry_9000-1', validatorPubKey: new Uint8Array(32), genesisTime: '2026-01-01T00:00:00Z' });
  const storage = new Map<string, Uint8Array>();
  const senders = devKeys().slice(0, SENDERS).map((k) => new Wallet(k));
  const addrs = [...senders.map((w) => w.address.toLowerCase()), ...Array.from({ length: HOLDERS }, (_, i) => holder(i))];
  for (const a of addrs) storage.set('0x' + Buffer.from(keccak256(bytes(word(BigInt(a)) + word(balSlot)))).toString('hex'), bytes(word(10n ** 21n)));
  for (let i = 0; i < ACCOUNTS; i++) g.evm.alloc.set(holder(i), { balance: BigInt(i + 1), nonce: 0n });
  g.evm.alloc.set(TOKEN, { balance: 0n, nonce: 1n, code: bytes(token.deployedBytecode), storage });
  const path = join(mkdtempSync(join(tmpdir(), 'ferry-state-bench-')), 'db');
  const store = new Store(path);
  const app = await EvmApp.create(store, g, { minGasPrice: 0n, mempool: { size: 100_000, maxTxBytes: 131_072, priceBumpPercent: 10, accountQueue: 64 } }, silent, { onPoolChange() {} });
  const g0 = performance.now();
  await app.initChain();
  const genesisSeconds = (performance.now() - g0) / 1000;
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  const genesisBytes = dbBytes(path);
  console.log(`genesis: ${ACCOUNTS.toLocaleString('en-US')} funded accounts, ${HOLDERS.toLocaleString('en-US')} ERC-20 holders (slots), written in ${genesisSeconds.toFixed(1)} s; database ${mib(genesisBytes)} MiB`);

  // pre-signed blocks: value transfers, then ERC-20 transfers
  const nonces = senders.map(() => 0);
  const sign = async (kind: 'value' | 'erc20', b: number): Promise<Uint8Array[]> => {
    const txs: Uint8Array[] = [];
    for (let i = 0; i < BLOCK_TXS; i++) {
      const s = i % SENDERS;
      const to = holder(spread(b * BLOCK_TXS + i));
      const req = kind === 'value'
        ? { to, value: 1n, gasLimit: 21_000 }
        : { to: TOKEN, data: iface.encodeFunctionData('transfer', [to, 1n]), gasLimit: 70_000 };
      const raw = bytes(await senders[s]!.signTransaction({ ...req, chainId: 9000, nonce: nonces[s]!++, type: 2, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }));
      txs.push(wrapEthereumTx(raw, bytes(senders[s]!.address), BigInt(req.gasLimit), 10n ** 10n));
    }
    return txs;
  };
  const valueBlocks: Uint8Array[][] = [];
  const erc20Blocks: Uint8Array[][] = [];
  for (let b = 0; b < BLOCKS; b++) valueBlocks.push(await sign('value', b));
  for (let b = 0; b < BLOCKS; b++) erc20Blocks.push(await sign('erc20', BLOCKS + b));
  let height = 0n;
  const runBlocks = async (blocks: Uint8Array[][]) => {
    for (const txs of blocks) {
      height++;
      const res = await app.finalizeBlock({ height, timeMs: Date.parse('2026-01-01T00:00:00Z') + Number(height) * 1000, hash: bytes(word(height)), proposerAddress: new Uint8Array(20), txs });
      if (res.txResults.some((r) => r.code !== 0)) throw new Error(`block ${height}: a tx failed: ${res.txResults.find((r) => r.code !== 0)!.log}`);
      store.transaction(() => app.commit());
      await app.afterCommit();
    }
  };
  await measure('value transfers (execute + commit)', BLOCKS * BLOCK_TXS, () => runBlocks(valueBlocks));
  await measure('ERC-20 transfers (execute + commit)', BLOCKS * BLOCK_TXS, () => runBlocks(erc20Blocks));

  const reader = new Store(path, { reader: true });
  const sim = await Simulator.create(reader, { chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, evmTimeoutMs: 0, callEngine: values['call-engine'] as CallEngine });
  console.log(`eth_call engine: ${sim.engine()}`);
  const chain = await ChainReader.create(reader, {
    chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap: 10_000, coinbase: new Uint8Array(20), simulator: sim as never,
    submit: () => Promise.reject(new Error('no submissions in this bench')),
  });
  chain.onCommitted(height);
  const calls = Array.from({ length: SAMPLE }, (_, i) => bytes(iface.encodeFunctionData('balanceOf', [holder(spread(i))])));
  for (let round = 1; round <= Number(values['call-rounds']); round++) {
    await measure(`eth_call balanceOf, round ${round}`, SAMPLE, async () => {
      for (const data of calls) await sim.call({ to: bytes(TOKEN), data }, height, undefined);
    });
  }
  await measure('eth_call balanceOf at an old height', SAMPLE, async () => {
    for (const data of calls) await sim.call({ to: bytes(TOKEN), data }, 1n, undefined);
  });
  for (const round of [1, 2]) {
    await measure(`eth_getBalance, round ${round}`, SAMPLE, async () => {
      for (let i = 0; i < SAMPLE; i++) await chain.balance(bytes(holder(spreadAccounts(i))), height);
    });
  }
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  const total = dbBytes(path);
  console.log(`database after genesis: ${mib(genesisBytes)} MiB = ${perItem(genesisBytes, ACCOUNTS + HOLDERS)} bytes per genesis entry (account or slot); after ${height} blocks: ${mib(total)} MiB`);
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
}

await main();
