/**
 * The fixed transaction set of the tracing tests and benchmark, sent the same way to ferry and to
 * Anvil: a value transfer, an ERC-20 transfer, a contract creation, a CREATE2, a revert with a
 * reason, a nested call chain with a reverted inner call, precompile calls and a self-destruct
 * (plus a create-and-destroy in one tx). Every tx goes from dev account 0 in the same order, so
 * both nodes see the same nonces and contract addresses.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ContractFactory, Interface, JsonRpcProvider, NonceManager, keccak256, type Wallet, type TransactionRequest } from 'ethers';
import { devWallet } from '../helpers/accounts.js';
import { startFerryOn } from '../helpers/hardfork.js';
import { DEV_MNEMONIC, EVM_CHAIN_ID, freePort, startFerry, type FerryNode } from '../helpers/node.js';
import { call, sleep } from '../helpers/rpc.js';
import { compileContract, compileToken, type CompiledContract } from '../helpers/solc.js';

export const SCENARIOS = [
  'transfer',
  'erc20',
  'create',
  'create2',
  'revert',
  'nested',
  'precompile',
  'selfdestruct',
  'createDestroy',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Deployed {
  token: string;
  callee: string;
  caller: string;
  factory: string;
  child: string;
  burner: string;
}

export interface FixtureRun {
  deployed: Deployed;
  /** scenario → tx hash */
  txs: Record<Scenario, string>;
}

/** gas limit for every scenario tx (fixed, so no estimate differences leak into the traces) */
export const SCENARIO_GAS = 500_000n;
const RECEIPT_TIMEOUT_MS = 30_000;

async function receipt(url: string, hash: string): Promise<any> {
  const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
  for (;;) {
    const r = await call(url, 'eth_getTransactionReceipt', [hash]);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash}`);
    await sleep(50);
  }
}

export const contracts = () => ({
  token: compileToken(),
  callee: compileContract('Tracing.sol', 'Callee'),
  caller: compileContract('Tracing.sol', 'Caller'),
  factory: compileContract('Tracing.sol', 'Factory'),
  child: compileContract('Tracing.sol', 'Child'),
  burner: compileContract('Tracing.sol', 'Burner'),
});

async function send(url: string, w: NonceManager, tx: TransactionRequest): Promise<{ hash: string; receipt: any }> {
  const sent = await w.sendTransaction({ gasLimit: SCENARIO_GAS, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, ...tx });
  return { hash: sent.hash, receipt: await receipt(url, sent.hash) };
}

async function deploy(url: string, w: NonceManager, c: CompiledContract, args: unknown[] = [], value = 0n): Promise<{ hash: string; address: string }> {
  const data = new ContractFactory(c.abi, c.bytecode).interface.encodeDeploy(args);
  const { hash, receipt: r } = await send(url, w, { data: c.bytecode + data.slice(2), value, gasLimit: 3_000_000n });
  if (r.status !== '0x1') throw new Error(`deploy failed: ${hash}`);
  return { hash, address: r.contractAddress };
}

/** Deploys the contracts and sends every scenario tx, one at a time. */
export async function runFixture(url: string): Promise<FixtureRun> {
  const provider = new JsonRpcProvider(url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
  const wallet: Wallet = devWallet(0, provider);
  const w = new NonceManager(wallet);
  const c = contracts();
  const other = devWallet(1).address;

  const token = await deploy(url, w, c.token, ['Trace', 'TRC', 1_000_000n]);
  const callee = await deploy(url, w, c.callee);
  const caller = await deploy(url, w, c.caller, [callee.address]);
  const factory = await deploy(url, w, c.factory);
  const child = await deploy(url, w, c.child, [7n], 12345n);
  const burner = await deploy(url, w, c.burner);

  const tokenI = new Interface(c.token.abi);
  const callerI = new Interface(c.caller.abi);
  const factoryI = new Interface(c.factory.abi);
  const childI = new Interface(c.child.abi);

  const txs = {} as Record<Scenario, string>;
  txs.transfer = (await send(url, w, { to: other, value: 10n ** 18n, gasLimit: 21_000n })).hash;
  txs.erc20 = (await send(url, w, { to: token.address, data: tokenI.encodeFunctionData('transfer', [other, 1000n]) })).hash;
  txs.create = child.hash;
  txs.create2 = (await send(url, w, { to: factory.address, data: factoryI.encodeFunctionData('make2', ['0x' + '11'.repeat(32), 5n]) })).hash;
  txs.revert = (await send(url, w, { to: caller.address, data: callerI.encodeFunctionData('mustFail', [3n]) })).hash;
  txs.nested = (await send(url, w, { to: caller.address, data: callerI.encodeFunctionData('chain', [21n]) })).hash;
  txs.precompile = (await send(url, w, { to: caller.address, data: callerI.encodeFunctionData('precompiles', ['0xdeadbeef']) })).hash;
  txs.selfdestruct = (await send(url, w, { to: child.address, data: childI.encodeFunctionData('destroy', [other]) })).hash;
  txs.createDestroy = (await send(url, w, { to: factory.address, data: factoryI.encodeFunctionData('makeAndDestroy', [9n]), value: 777n })).hash;
  provider.destroy();
  return {
    deployed: { token: token.address, callee: callee.address, caller: caller.address, factory: factory.address, child: child.address, burner: burner.address },
    txs,
  };
}

/** Sends Burner.burn(rounds) from dev account 0 and returns the tx hash and gas used. */
export async function sendBurn(url: string, burner: string, rounds: bigint, gasLimit: bigint): Promise<{ hash: string; gasUsed: bigint }> {
  const provider = new JsonRpcProvider(url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
  const w = new NonceManager(devWallet(0, provider));
  const i = new Interface(contracts().burner.abi);
  const { hash, receipt: r } = await send(url, w, { to: burner, data: i.encodeFunctionData('burn', [rounds]), gasLimit });
  provider.destroy();
  return { hash, gasUsed: BigInt(r.gasUsed) };
}

/**
 * A prestate (or diffMode pre/post) made comparable between ferry and Anvil (docs/debug-tracing.md):
 * the coinbase entry dropped, geth's `codeHash` checked against the code then dropped, the balances of
 * `feePayers` (lower-case addresses; fees depend on the base fee) dropped, and with `dropEmpty` the
 * accounts that were empty (geth leaves them out, Anvil lists them).
 */
export function normAccounts(accts: Record<string, any>, coinbase: string, dropEmpty: boolean, feePayers: string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [addr, a0] of Object.entries(accts)) {
    if (addr === coinbase) continue;
    const a = { ...a0 };
    if (a.codeHash !== undefined) {
      if (a.code !== undefined) assert.equal(a.codeHash, keccak256(a.code), `codeHash of ${addr}`);
      delete a.codeHash;
    }
    const empty = (a.balance === undefined || a.balance === '0x0') && !a.nonce && (a.code === undefined || a.code === '0x');
    if (dropEmpty && empty) continue;
    if (feePayers.includes(addr)) delete a.balance;
    out[addr] = a;
  }
  return out;
}

// ---- Anvil ----------------------------------------------------------------------------------

const ANVIL_START_TIMEOUT_MS = 30_000;
const anvils = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of anvils) p.kill('SIGKILL');
});

export interface AnvilNode {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A `ferry start --dev` and an Anvil for the suite this is called in (started before its tests, stopped
 * after), for tests that send both the same requests; `nodes.ferry` / `nodes.anvil` are set once started.
 */
export function devNodesAgainstAnvil(): { ferry: FerryNode; anvil: AnvilNode } {
  const nodes = {} as { ferry: FerryNode; anvil: AnvilNode };
  before(async () => {
    nodes.ferry = await startFerry({ args: ['--dev'] });
    nodes.anvil = await startAnvil();
  });
  after(async () => {
    await nodes.anvil?.stop();
    if (nodes.ferry) assert.equal(await nodes.ferry.stop(), 0);
  });
  return nodes;
}

/** The anvil binary of the pinned @foundry-rs/anvil-linux-amd64 devDependency. */
export function anvilBinary(): string {
  const pkg = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(pkg), 'bin', 'anvil');
}

/** Anvil on loopback: ferry's dev mnemonic and chain id, Cancun (or `hardfork`), automine, step tracing on, plus `extra` flags (e.g. --fork-url). */
export async function startAnvil(hardfork = 'cancun', extra: readonly string[] = []): Promise<AnvilNode> {
  const port = await freePort();
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(EVM_CHAIN_ID), '--mnemonic', DEV_MNEMONIC];
  args.push('--hardfork', hardfork, '--balance', '10000', '--steps-tracing', '--silent', ...extra);
  const proc = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'ignore'] });
  anvils.add(proc);
  let exited = false;
  const exit = new Promise<void>((r) => proc.on('exit', () => ((exited = true), anvils.delete(proc), r())));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + ANVIL_START_TIMEOUT_MS;
  for (;;) {
    if (exited) throw new Error('anvil exited before it was ready');
    try {
      await call(url, 'eth_blockNumber');
      break;
    } catch {
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error('anvil was not ready in time');
      }
      await sleep(100);
    }
  }
  return {
    url,
    proc,
    async stop() {
      if (exited) return;
      proc.kill('SIGTERM');
      await exit;
    },
  };
}

/** ferry and Anvil side by side on one hardfork, after the same steps ran on each. */
export interface SideBySide<R> {
  ferry: FerryNode;
  anvil: AnvilNode;
  onFerry: R;
  onAnvil: R;
  /** node url → the lower-case coinbase of the block the steps' `blockOf` names (each node has its own) */
  coinbase: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Starts Anvil (`hardfork`, plus `anvilFlags`) and ferry on a fresh home of the same hardfork with the
 * debug namespace (and the namespaces `extraApi` adds, e.g. `,trace,ots`), runs `steps` on Anvil and then
 * on ferry, and reads each node's coinbase; stops both when anything fails.
 */
export async function sideBySide<R>(hardfork: string, anvilFlags: string[], steps: (url: string) => Promise<R>, blockOf: (r: R) => string, extraApi = ''): Promise<SideBySide<R>> {
  const [anvil, ferry] = await Promise.all([startAnvil(hardfork, anvilFlags), startFerryOn(hardfork, ['--dev', '--json-rpc.api', 'eth,net,web3,debug,txpool' + extraApi])]);
  const stop = async () => {
    await Promise.all([anvil.stop(), ferry.stop()]);
  };
  try {
    const onAnvil = await steps(anvil.url);
    const onFerry = await steps(ferry.url);
    const coinbase: Record<string, string> = {};
    for (const [url, r] of [[ferry.url, onFerry], [anvil.url, onAnvil]] as const) {
      const b = await call(url, 'eth_getBlockByHash', [blockOf(r), false]);
      coinbase[url] = b.miner.toLowerCase();
    }
    return { ferry, anvil, onFerry, onAnvil, coinbase, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
