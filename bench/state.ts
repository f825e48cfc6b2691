/**
 * State-access benchmark, in process, measured in CPU time (process.cpuUsage) so it compares two
 * builds fairly on a busy machine: ERC-20 `balanceOf` eth_calls (Simulator) and eth_getBalance
 * (ChainReader) over 4,096 holders, then value transfers and ERC-20 transfers executed as blocks
 * (FinalizeBlock + Commit, as the chain thread does). Prints one line per workload: ops per CPU
 * second and per wall second.
 *
 *   npm run build && node dist/bench/state.js [--holders N] [--blocks N] [--block-txs N] [--call-rounds N]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Interface, Wallet } from 'ethers';
import { EvmApp } from '../src/chain/app.js';
import { wrapEthereumTx } from '../src/chain/nativetx.js';
import { ChainReader } from '../src/chain/reader.js';
import { Simulator } from '../src/chain/simulator.js';
import { devGenesis } from '../src/config/genesis.js';
import { keccak256 } from '../src/evm/common.js';
import type { Logger } from '../src/lib/log.js';
import { Store } from '../src/store/store.js';
import { devKeys } from '../test/helpers/accounts.js';
import { compileToken, slotOf } from '../test/helpers/solc.js';

const { values } = parseArgs({
  options: { holders: { type: 'string', default: '4096' }, blocks: { type: 'string', default: '10' }, 'block-txs': { type: 'string', default: '200' }, 'call-rounds': { type: 'string', default: '2' } },
});
const HOLDERS = Number(values.holders);
const BLOCKS = Number(values.blocks);
const BLOCK_TXS = Number(values['block-txs']);
const SENDERS = 8;
const TOKEN = '0x' + '70'.repeat(20);
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const word = (n: bigint) => n.toString(16).padStart(64, '0');
const holder = (i: number) => '0x' + (0x10000000 + i).toString(16).padStart(40, '0');

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
  for (let i = 0; i < HOLDERS; i++) g.evm.alloc.set(holder(i), { balance: BigInt(i + 1), nonce: 0n });
  g.evm.alloc.set(TOKEN, { balance: 0n, nonce: 1n, code: bytes(token.deployedBytecode), storage });
  const path = join(mkdtempSync(join(tmpdir(), 'ferry-state-bench-')), 'db');
  const store = new Store(path);
  const app = await EvmApp.create(store, g, { minGasPrice: 0n, mempool: { size: 100_000, maxTxBytes: 131_072, priceBumpPercent: 10, accountQueue: 64 } }, silent, { onPoolChange() {} });
  await app.initChain();

  // pre-signed blocks: value transfers, then ERC-20 transfers
  const nonces = senders.map(() => 0);
  const sign = async (kind: 'value' | 'erc20', b: number): Promise<Uint8Array[]> => {
    const txs: Uint8Array[] = [];
    for (let i = 0; i < BLOCK_TXS; i++) {
      const s = i % SENDERS;
      const to = holder((b * BLOCK_TXS + i) % HOLDERS);
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
  const sim = await Simulator.create(reader, { chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, evmTimeoutMs: 0 });
  const chain = await ChainReader.create(reader, {
    chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap: 10_000, coinbase: new Uint8Array(20), simulator: sim as never,
    submit: async () => ({ code: 1, log: 'no' }),
  });
  chain.onCommitted(height);
  const calls = Array.from({ length: HOLDERS }, (_, i) => bytes(iface.encodeFunctionData('balanceOf', [holder(i)])));
  for (let round = 1; round <= Number(values['call-rounds']); round++) {
    await measure(`eth_call balanceOf, round ${round}`, HOLDERS, async () => {
      for (const data of calls) await sim.call({ to: bytes(TOKEN), data }, height, undefined);
    });
  }
  await measure('eth_call balanceOf at an old height', HOLDERS, async () => {
    for (const data of calls) await sim.call({ to: bytes(TOKEN), data }, 1n, undefined);
  });
  for (const round of [1, 2]) {
    await measure(`eth_getBalance, round ${round}`, HOLDERS, async () => {
      for (let i = 0; i < HOLDERS; i++) await chain.balance(bytes(holder(i)), height);
    });
  }
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
}

await main();
