/**
 * Dev mode and shutdown on the real node: with `--consensus.block_on_tx` and a timer of an hour, a
 * block is made because a tx arrived (so a client gets its receipt), and only then; SIGINT shuts
 * the node down cleanly (exit 0) and a restart continues from the same height with the same chain.
 * No wall-clock assertions: the hour-long timer means any block beyond genesis+1 was made by a tx.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { JsonRpcProvider, Wallet, type TransactionRequest } from 'ethers';
import { devAddress, devKeys, devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { blockNumber, call, rpc, sleep, toHex, waitForBlock, waitForReceipt } from '../helpers/rpc.js';

const CHAIN_ID = 9000n;
const GWEI = 10n ** 9n;
const HOUR = '1h';
const DEV_ARGS = ['--consensus.timeout_commit', HOUR, '--consensus.block_on_tx'];
/** the block the engine makes at first start, before any tx */
const FIRST_BLOCK = 1;
const SEQUENTIAL_TXS = 3;
const BURST_TXS = 8;

const sender = new Wallet(devKeys()[0]!);
let nonce = 0;

function transfer(fields: TransactionRequest = {}): Promise<string> {
  return sender.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: nonce++,
    to: devAddress(1),
    value: 1n,
    gasLimit: 21_000n,
    maxFeePerGas: 100n * GWEI,
    maxPriorityFeePerGas: GWEI,
    ...fields,
  });
}

/** Sends SIGINT and resolves to the exit code (128 + signal number if killed by a signal). */
function interrupt(node: FerryNode): Promise<number> {
  return new Promise((resolve) => {
    node.proc.once('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : 0)));
    node.proc.kill('SIGINT');
  });
}

describe('dev mode: a block as soon as a tx arrives', () => {
  let node: FerryNode;
  let base: number;

  before(async () => {
    node = await startFerry({ args: DEV_ARGS });
    base = await waitForBlock(node.url, FIRST_BLOCK);
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('each tx gets a receipt in a new block; no block is made without one', async () => {
    assert.equal(base, FIRST_BLOCK, 'no block after the first one without a tx');
    for (let i = 1; i <= SEQUENTIAL_TXS; i++) {
      const hash = await call<string>(node.url, 'eth_sendRawTransaction', [await transfer()]);
      const receipt = await waitForReceipt(node.url, hash);
      assert.equal(receipt.status, '0x1');
      assert.equal(Number(receipt.blockNumber), base + i, 'the tx is in the next block');
      assert.equal(await blockNumber(node.url), base + i, 'and that block is the head: no other block was made');
    }
  });

  it('a burst of txs is mined completely, in nonce order', async () => {
    const start = await blockNumber(node.url);
    const raws = await Promise.all(Array.from({ length: BURST_TXS }, () => transfer()));
    const res = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] }))),
    });
    const answers = (await res.json()) as { result?: string; error?: unknown }[];
    const receipts = [];
    for (const a of answers) {
      assert.ok(a.result, JSON.stringify(a));
      receipts.push(await waitForReceipt(node.url, a.result));
    }
    const positions = receipts.map((r) => [Number(r.blockNumber), Number(r.transactionIndex)] as const);
    for (let i = 1; i < positions.length; i++) {
      const [pb, pi] = positions[i - 1]!;
      const [b, ix] = positions[i]!;
      assert.ok(pb < b || (pb === b && pi < ix), `tx ${i} is after tx ${i - 1}: ${JSON.stringify(positions)}`);
    }
    const last = positions[positions.length - 1]![0];
    assert.ok(last <= start + BURST_TXS, 'at most one block per tx');
    assert.equal(await blockNumber(node.url), last, 'no empty block follows the burst');
    assert.equal(await call(node.url, 'eth_getTransactionCount', [sender.address, 'latest']), toHex(nonce));
  });
});

describe('graceful shutdown on SIGINT, and restart', () => {
  it('SIGINT exits 0; a restart continues from the same height with every block, receipt and balance', async () => {
    nonce = 0;
    const first = await startFerry({ args: DEV_ARGS });
    let second: FerryNode | undefined;
    try {
      await waitForBlock(first.url, FIRST_BLOCK);
      const hashes: string[] = [];
      for (let i = 0; i < SEQUENTIAL_TXS; i++) {
        const hash = await call<string>(first.url, 'eth_sendRawTransaction', [await transfer()]);
        await waitForReceipt(first.url, hash);
        hashes.push(hash);
      }
      const height = await blockNumber(first.url);
      const head = await call<{ hash: string }>(first.url, 'eth_getBlockByNumber', [toHex(height), false]);
      const balance = await call<string>(first.url, 'eth_getBalance', [devAddress(1), 'latest']);
      const receipts = await Promise.all(hashes.map((h) => call(first.url, 'eth_getTransactionReceipt', [h])));

      assert.equal(await interrupt(first), 0, `SIGINT exits 0\n${first.logTail()}`);

      second = await startFerry({ home: first.home, args: DEV_ARGS });
      assert.equal(await blockNumber(second.url), height, 'the restarted node is at the same height');
      assert.deepEqual(await call(second.url, 'eth_getBlockByNumber', [toHex(height), false]), head, 'with the same head block');
      assert.equal(await call(second.url, 'eth_getBalance', [devAddress(1), 'latest']), balance);
      for (let i = 0; i < hashes.length; i++) {
        assert.deepEqual(await call(second.url, 'eth_getTransactionReceipt', [hashes[i]]), receipts[i], `receipt ${i}`);
      }
      // nothing was pending at shutdown: the pending nonce is the chain's
      assert.equal(await call(second.url, 'eth_getTransactionCount', [sender.address, 'pending']), toHex(nonce));

      // and the chain goes on from there
      const hash = await call<string>(second.url, 'eth_sendRawTransaction', [await transfer()]);
      const receipt = await waitForReceipt(second.url, hash);
      assert.equal(Number(receipt.blockNumber), height + 1);
      const next = await call<{ parentHash: string }>(second.url, 'eth_getBlockByNumber', [toHex(height + 1), false]);
      assert.equal(next.parentHash, head.hash);

      assert.equal(await interrupt(second), 0, `SIGINT exits 0 after the restart\n${second.logTail()}`);
      const r = await rpc(second.url, 'eth_blockNumber').catch((e: Error) => e);
      assert.ok(r instanceof Error, 'the listener is closed after shutdown');
    } finally {
      await first.stop().catch(() => undefined);
      await second?.stop().catch(() => undefined);
    }
  });
});

/** CPU seconds the process has used, all its threads (/proc/<pid>/stat utime + stime, at Linux's 100 ticks a second) */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds a process spends per second while it should be idle, over `ms` */
async function idleCpu(pid: number, ms: number): Promise<number> {
  const before = cpuSeconds(pid);
  await sleep(ms);
  return (cpuSeconds(pid) - before) / (ms / 1000);
}

/** far below the one core a spinning timer loop takes, far above an idle node's timers and GC */
const IDLE_CPU_MAX = 0.3;

describe('create_empty_blocks = false', () => {
  it('at timeout_commit 0 an idle node does not spin, and each tx still gets its block at once', async () => {
    // the bench's `ferry start` (bench/nodes.ts FERRY_START_FLAGS): blocks back to back while txs wait
    const node = await startFerry({ args: ['--consensus.create_empty_blocks', 'false', '--consensus.timeout_commit', '0s'] });
    try {
      await waitForBlock(node.url, 1);
      const pid = node.proc.pid!;
      const idle = await idleCpu(pid, 1_500);
      assert.ok(idle < IDLE_CPU_MAX, `an idle node used ${idle.toFixed(2)} CPU seconds a second`);
      // cacheTimeout -1: ethers reuses a result for 250 ms by default, and these blocks come sooner (its
      // second send would reuse the first's pending nonce)
      const wallet = devWallet(1, new JsonRpcProvider(node.url, Number(EVM_CHAIN_ID), { staticNetwork: true, cacheTimeout: -1 }));
      const before = await blockNumber(node.url);
      for (let i = 0; i < 3; i++) {
        const receipt = await (await wallet.sendTransaction({ to: devAddress(2), value: 1n })).wait();
        assert.equal(receipt!.status, 1);
        assert.equal(receipt!.blockNumber, before + i + 1, 'one block per tx, none empty between');
      }
      const after = await idleCpu(pid, 1_500);
      assert.ok(after < IDLE_CPU_MAX, `idle again after its blocks, the node used ${after.toFixed(2)} CPU seconds a second`);
      assert.equal(await blockNumber(node.url), before + 3, 'no empty blocks');
    } finally {
      await node.stop();
    }
  });


  it('the height does not move without transactions, and a tx still gets mined', async () => {
    const node = await startFerry({ args: ['--consensus.create_empty_blocks', 'false', '--consensus.timeout_commit', '100ms'] });
    try {
      await waitForBlock(node.url, 1);
      const before = await blockNumber(node.url);
      // twenty timeout_commit periods pass with no tx
      for (let i = 0; i < 20; i++) await sleep(50);
      assert.equal(await blockNumber(node.url), before, 'no empty blocks');
      const wallet = devWallet(1, new JsonRpcProvider(node.url, Number(EVM_CHAIN_ID), { staticNetwork: true }));
      const tx = await wallet.sendTransaction({ to: devAddress(2), value: 1n });
      const receipt = await tx.wait();
      assert.equal(receipt!.status, 1);
      assert.ok(receipt!.blockNumber > before);
    } finally {
      await node.stop();
    }
  });
});
