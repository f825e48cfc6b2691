/**
 * Issue 22's last dev methods (docs/dev-mode.md "Methods"), each against a `ferry start --dev` and,
 * where Anvil 1.7.1 serves it, the pinned Anvil binary with the same requests:
 * anvil_setNextBlockPrevRandao / hardhat_setPrevRandao (Anvil 1.7.1 has neither: Ferry follows
 * Anvil's later one-shot override), evm_mine_detailed / anvil_mine_detailed, anvil_reorg (the chain
 * shape, and the removed logs reaching a log filter and a `logs` subscription with `removed: true`),
 * and anvil_dealERC20 / anvil_setERC20Allowance on test/contracts Token.sol.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import WebSocket from 'ws';
import { encodeFunctionData, decodeFunctionResult, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';
import { devNodesAgainstAnvil, type AnvilNode } from './debug-fixtures.js';

const token = compileToken();
const WORD = `0x${'ab'.repeat(31)}07`;
/** runtime: PREVRANDAO PUSH1 0 SSTORE STOP (stores the block's prevRandao in slot 0) */
const RANDAO_RUNTIME = '4460005500';
/** init code returning `runtime` (≤ 32 bytes) */
const deployer = (runtime: string) => {
  const n = (runtime.length / 2).toString(16).padStart(2, '0');
  return `0x60${n}600c60003960${n}6000f3${runtime}`;
};
/** init code reverting with Error("nope") */
const REVERT_NOPE = '0x6064600c60003960646000fd08c379a0' + '20'.padStart(64, '0') + '4'.padStart(64, '0') + Buffer.from('nope').toString('hex').padEnd(64, '0');
/** runtime: LOG0 of no data, then STOP */
const LOGGER_RUNTIME = '60006000a000';

interface Block {
  number: string;
  hash: string;
  parentHash: string;
  mixHash: string;
  transactions: any[];
}

const latest = (url: string) => call<Block>(url, 'eth_getBlockByNumber', ['latest', false]);

async function sendAndWait(url: string, tx: Record<string, unknown>): Promise<any> {
  const hash = await call<string>(url, 'eth_sendTransaction', [tx]);
  for (;;) {
    const r = await call(url, 'eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** A signed raw EIP-1559 tx of dev account `i` (chain id 9000, on both nodes). */
async function rawTx(i: number, nonce: number, to: string, value: bigint): Promise<Hex> {
  const account = privateKeyToAccount(devKeys()[i] as Hex);
  return account.signTransaction({ chainId: EVM_CHAIN_ID, type: 'eip1559', nonce, to: to as Hex, value, gas: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n });
}

describe('dev blocks and ERC20 setters: ferry start --dev against Anvil', () => {
  const nodes = devNodesAgainstAnvil();
  let node: FerryNode;
  let anvil: AnvilNode;
  beforeEach(() => ({ ferry: node, anvil } = nodes));

  it('anvil_setNextBlockPrevRandao: the next block only has the mixHash, and PREVRANDAO reads it; then the parent hash again', async () => {
    const created = await sendAndWait(node.url, { from: devAddress(0), data: deployer(RANDAO_RUNTIME) });
    assert.equal(await call(node.url, 'anvil_setNextBlockPrevRandao', [WORD]), null);
    const r = await sendAndWait(node.url, { from: devAddress(0), to: created.contractAddress, gas: '0x10000' });
    const block = await call<Block>(node.url, 'eth_getBlockByNumber', [r.blockNumber, false]);
    assert.equal(block.mixHash, WORD);
    assert.equal(await call(node.url, 'eth_getStorageAt', [created.contractAddress, '0x0', r.blockNumber]), WORD);
    await call(node.url, 'evm_mine');
    const next = await latest(node.url);
    assert.equal(next.mixHash, next.parentHash, 'one block only: later blocks take their parent hash');
    // Hardhat's name answers true; a value that is not 32 bytes is refused and changes nothing
    assert.equal(await call(node.url, 'hardhat_setPrevRandao', [WORD]), true);
    await call(node.url, 'evm_mine');
    assert.equal((await latest(node.url)).mixHash, WORD);
    const bad = await rpc(node.url, 'anvil_setNextBlockPrevRandao', ['0x01']);
    assert.equal(bad.error?.code, -32602);
    await call(node.url, 'evm_mine');
    const after = await latest(node.url);
    assert.equal(after.mixHash, after.parentHash);
    // Anvil 1.7.1 does not serve it (its later versions do, as a one-shot override)
    assert.equal((await rpc(anvil.url, 'anvil_setNextBlockPrevRandao', [WORD])).error?.code, -32601);
  });

  it('evm_mine_detailed / anvil_mine_detailed: the mined blocks with full txs, output and revertReason, as Anvil', async () => {
    const shapes: unknown[] = [];
    for (const url of [node.url, anvil.url]) {
      await call(url, 'evm_setAutomine', [false]);
      try {
        await call(url, 'eth_sendTransaction', [{ from: devAddress(1), data: deployer('00'), gas: '0x20000' }]);
        await call(url, 'eth_sendTransaction', [{ from: devAddress(2), data: REVERT_NOPE, gas: '0x20000' }]);
        await call(url, 'eth_sendTransaction', [{ from: devAddress(3), to: devAddress(4), value: '0x5' }]);
        const blocks = await call<Block[]>(url, 'evm_mine_detailed', [{ timestamp: null, blocks: 2 }]);
        assert.equal(blocks.length, 2);
        assert.equal(blocks[1]!.parentHash, blocks[0]!.hash);
        assert.equal(blocks[1]!.number, (await latest(url)).number);
        const txs = blocks[0]!.transactions.map((t) => ({ from: t.from, output: t.output, revertReason: t.revertReason, blockHash: t.blockHash === blocks[0]!.hash }));
        txs.sort((a, b) => a.from.localeCompare(b.from));
        shapes.push({ txs, second: blocks[1]!.transactions });
        const one = await call<Block[]>(url, 'anvil_mine_detailed', []);
        assert.equal(one.length, 1);
        assert.deepEqual(one[0]!.transactions, []);
      } finally {
        await call(url, 'evm_setAutomine', [true]);
      }
    }
    assert.deepEqual(shapes[0], shapes[1]);
    assert.deepEqual((shapes[0] as any).txs.map((t: any) => t.output).sort(), ['0x', '0x00', `0x08c379a0${REVERT_NOPE.slice(-192)}`].sort());
  });

  it('anvil_reorg: depth blocks replaced by new ones holding the given txs at their offsets, as Anvil', async () => {
    const shapes: unknown[] = [];
    for (const url of [node.url, anvil.url]) {
      await call(url, 'anvil_mine', [3]);
      const head = BigInt((await latest(url)).number);
      const old = await call<Block>(url, 'eth_getBlockByNumber', [`0x${(head - 1n).toString(16)}`, false]);
      const nonce5 = Number(await call(url, 'eth_getTransactionCount', [devAddress(5), 'latest']));
      const raw = await rawTx(5, nonce5, devAddress(7), 3n);
      assert.equal(await call(url, 'anvil_reorg', [2, [[raw, 1], [{ from: devAddress(6), to: devAddress(7), value: '0x2' }, 0], [{ from: devAddress(6), to: devAddress(7), value: '0x4' }, 1]]]), null);
      const now = await latest(url);
      assert.equal(BigInt(now.number), head, 'the chain is as long as before');
      const b1 = await call<Block>(url, 'eth_getBlockByNumber', [`0x${(head - 1n).toString(16)}`, true]);
      assert.notEqual(b1.hash, old.hash, 'a new block at the height');
      assert.equal(now.parentHash, b1.hash);
      const view = (b: Block) => b.transactions.map((t) => [t.from, t.to, t.value, t.nonce]);
      shapes.push([view(b1), view(await call<Block>(url, 'eth_getBlockByNumber', ['latest', true]))]);
    }
    assert.deepEqual(shapes[0], shapes[1]);
    const [first, second] = shapes[0] as unknown[][];
    assert.equal(first!.length, 1);
    assert.equal(second!.length, 2);
    // Anvil's refusals, word for word, and nothing changes
    for (const [params, message] of [
      [[1_000_000, []], /^Reorg depth must not exceed current chain height: current height \d+, depth 1000000$/],
      [[2, [[{ from: devAddress(6), to: devAddress(7) }, 2]]], /^Block number for reorg tx will exceed the reorged chain height. Block number 2 must not exceed \(depth-1\) 1$/],
    ] as const) {
      const head = (await latest(node.url)).hash;
      const [f, a] = [await rpc(node.url, 'anvil_reorg', [...params]), await rpc(anvil.url, 'anvil_reorg', [...params])];
      assert.match(f.error?.message ?? '', message);
      assert.match(a.error?.message ?? '', message);
      assert.equal(f.error?.code, a.error?.code);
      assert.equal((await latest(node.url)).hash, head);
    }
    // bytes that are not a transaction: refused before any block is removed
    const head = (await latest(node.url)).hash;
    assert.ok((await rpc(node.url, 'anvil_reorg', [1, [['0x01', 0]]])).error);
    assert.equal((await latest(node.url)).hash, head);
  });

  it('anvil_reorg: the removed logs reach a log filter and a logs subscription with removed: true, then the new ones', async () => {
    const logger = (await sendAndWait(node.url, { from: devAddress(0), data: deployer(LOGGER_RUNTIME) })).contractAddress as string;
    const filter = await call<string>(node.url, 'eth_newFilter', [{ address: logger }]);
    const ws = new WebSocket(node.wsUrl);
    await new Promise<void>((res, rej) => (ws.once('open', () => res()), ws.once('error', rej)));
    const notes: any[] = [];
    const subscribed = new Promise<string>((res) =>
      ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (m.id === 1) res(m.result);
        else if (m.method === 'eth_subscription') notes.push(m.params.result);
      }),
    );
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['logs', { address: logger }] }));
    await subscribed;
    try {
      const hit = await sendAndWait(node.url, { from: devAddress(8), to: logger, gas: '0x10000' });
      const added = await call<any[]>(node.url, 'eth_getFilterChanges', [filter]);
      assert.deepEqual(added.map((l) => [l.transactionHash, l.removed]), [[hit.transactionHash, false]]);
      // the logging tx again, in the first new block
      assert.equal(await call(node.url, 'anvil_reorg', [1, [[{ from: devAddress(9), to: logger, gas: '0x10000' }, 0]]]), null);
      const changes = await call<any[]>(node.url, 'eth_getFilterChanges', [filter]);
      assert.deepEqual(changes[0], { ...added[0], removed: true });
      assert.equal(changes.length, 2);
      assert.equal(changes[1].removed, false);
      assert.equal(changes[1].blockNumber, hit.blockNumber);
      assert.notEqual(changes[1].blockHash, hit.blockHash);
      for (let i = 0; notes.length < 3 && i < 100; i++) await new Promise((res) => setTimeout(res, 50));
      assert.deepEqual(notes.map((l) => [l.blockHash, l.removed]), [[hit.blockHash, false], [hit.blockHash, true], [changes[1].blockHash, false]]);
    } finally {
      ws.close();
    }
  });

  it('anvil_dealERC20 / anvil_setERC20Allowance find the Token slots and set them, as Anvil', async () => {
    const results: unknown[] = [];
    const read = (url: string, t: string, fn: 'balanceOf' | 'allowance', args: Hex[]) =>
      call<Hex>(url, 'eth_call', [{ to: t, data: encodeFunctionData({ abi: token.abi, functionName: fn, args }) }, 'latest']).then(
        (out) => decodeFunctionResult({ abi: token.abi, functionName: fn, data: out }) as bigint,
      );
    for (const url of [node.url, anvil.url]) {
      const t = (await sendAndWait(url, { from: devAddress(0), data: token.bytecode + encodeArgs() })).contractAddress as string;
      assert.equal(await call(url, 'anvil_dealERC20', [devAddress(3), t, '0x1234']), null);
      assert.equal(await call(url, 'anvil_setERC20Allowance', [devAddress(3), devAddress(4), t, '0x99']), null);
      await call(url, 'evm_mine');
      assert.equal(await call(url, 'hardhat_dealERC20', [devAddress(5), t, '0x7']), null);
      assert.equal(await call(url, 'anvil_setERC20Balance', [devAddress(6), t, '0x8']), null);
      await call(url, 'evm_mine');
      const balances = await Promise.all([3, 5, 6].map((i) => read(url, t, 'balanceOf', [devAddress(i) as Hex])));
      results.push([balances, await read(url, t, 'allowance', [devAddress(3) as Hex, devAddress(4) as Hex])]);
      // a contract with no balance slot: Anvil's refusal
      const e = await rpc(url, 'anvil_dealERC20', [devAddress(3), devAddress(9), '0x1']);
      results.push([e.error?.message]);
    }
    assert.deepEqual(results[0], [[0x1234n, 7n, 8n], 0x99n]);
    assert.deepEqual(results[0], results[2]);
    assert.deepEqual(results[1], ['Unable to set ERC20 balance, no slot found']);
    assert.deepEqual(results[1], results[3]);
  });
});

/** Token's constructor args ("Test", "TST", 10**24), ABI-encoded */
function encodeArgs(): string {
  const deploy = encodeFunctionData({ abi: [{ type: 'function', name: 'x', inputs: [{ type: 'string' }, { type: 'string' }, { type: 'uint256' }], outputs: [] }], functionName: 'x', args: ['Test', 'TST', 10n ** 24n] });
  return deploy.slice(10);
}
