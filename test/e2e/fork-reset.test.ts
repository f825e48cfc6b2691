/**
 * A fork's dev surface and filters over the origin's history (docs/fork-mode.md "Reset", "Numbering and
 * history"), against a second local ferry dev and against the Anvil 1.7.1 binary as origins:
 * anvil_nodeInfo's forkConfig and hardhat_metadata's forkedNetwork as Anvil answers them when it forks
 * the same origin; eth_newFilter + eth_getFilterLogs and trace_filter from below the fork block answer the
 * origin's part, then the fork's; anvil_reset / hardhat_reset naming the fork's own origin and block go
 * back to the fork block; an origin that does not answer or a block above its head is refused with the
 * reason, changing nothing; another block or origin re-forks in place (the same endpoint answers for the
 * new fork at once, and a restart of the home continues it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { createPublicClient, createTestClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { DEV_MNEMONIC, freePort, startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';
import { anvilBinary, startAnvil } from './debug-fixtures.js';

const token = compileContract('Token.sol', 'Token');
const SENDER_KEY = 5;
const hex = (n: number) => '0x' + n.toString(16);

function clients(url: string) {
  const account = privateKeyToAccount(devKeys()[SENDER_KEY] as Hex);
  return {
    pub: createPublicClient({ chain: VIEM_CHAIN, transport: http(url), cacheTime: 0 }),
    wallet: createWalletClient({ chain: VIEM_CHAIN, account, transport: http(url) }),
  };
}

/** A token transfer on `url`, mined: its hash. */
async function transfer(url: string, tokenAddr: Address, to: Address, amount: bigint): Promise<Hex> {
  const { pub, wallet } = clients(url);
  const hash = await wallet.sendTransaction({ to: tokenAddr, data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, amount] }) });
  assert.equal((await pub.waitForTransactionReceipt({ hash })).status, 'success');
  return hash;
}

/** A token deployed and one transfer made on `url`: logs and call traces at the origin. */
async function deployToken(url: string): Promise<Address> {
  const { pub, wallet } = clients(url);
  const deploy = await wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: ['Reset', 'RST', 10n ** 21n] });
  const addr = (await pub.waitForTransactionReceipt({ hash: deploy })).contractAddress!;
  await transfer(url, addr, '0x00000000000000000000000000000000000a0a0a', 11n);
  return addr;
}

function suite(kind: 'ferry' | 'anvil'): void {
  describe(`a fork of ${kind}: reset, nodeInfo, filters`, () => {
    let originUrl: string;
    const stops: (() => Promise<unknown>)[] = [];
    let forkUrl: string;
    let fork: FerryNode;
    let anvilForkUrl: string;
    let tokenAddr: Address;
    let forkBlock: number;
    let forkTransfer: Hex;

    before(async () => {
      if (kind === 'ferry') {
        const n = await startFerry({ args: ['--dev'] });
        originUrl = n.url;
        stops.push(() => n.stop());
      } else {
        const a = await startAnvil();
        originUrl = a.url;
        stops.push(() => a.stop());
      }
      tokenAddr = await deployToken(originUrl);
      forkBlock = Number(await call(originUrl, 'eth_blockNumber'));
      fork = await startFerry({ args: ['--dev', '--fork-url', originUrl, '--fork-block-number', String(forkBlock)] });
      forkUrl = fork.url;
      stops.push(() => fork.stop());
      const anvilFork = await startAnvil('cancun', ['--fork-url', originUrl, '--fork-block-number', String(forkBlock)]);
      anvilForkUrl = anvilFork.url;
      stops.push(() => anvilFork.stop());
      // the fork's own transfer, after the fork block
      forkTransfer = await transfer(forkUrl, tokenAddr, '0x00000000000000000000000000000000000b0b0b', 3n);
    });

    after(async () => {
      for (const stop of stops.reverse()) await stop();
    });

    it("anvil_nodeInfo's forkConfig and hardhat_metadata's forkedNetwork are Anvil's for the same fork", async () => {
      const originBlock = (await call(originUrl, 'eth_getBlockByNumber', [hex(forkBlock), false])) as { hash: string };
      const mine = (await call(forkUrl, 'anvil_nodeInfo')) as { forkConfig: Record<string, unknown> };
      const theirs = (await call(anvilForkUrl, 'anvil_nodeInfo')) as { forkConfig: Record<string, unknown> };
      assert.equal(mine.forkConfig.forkUrl, originUrl);
      assert.equal(mine.forkConfig.forkUrl, theirs.forkConfig.forkUrl);
      assert.equal(mine.forkConfig.forkBlockNumber, forkBlock);
      assert.equal(mine.forkConfig.forkBlockNumber, theirs.forkConfig.forkBlockNumber);
      // Ferry's first retry waits 100 ms (docs/fork-mode.md "Flags"), Anvil's 1000 ms: both in ms
      assert.equal(typeof theirs.forkConfig.forkRetryBackoff, 'number');
      assert.equal(mine.forkConfig.forkRetryBackoff, 100);
      for (const name of ['hardhat_metadata', 'anvil_metadata']) {
        const m = (await call(forkUrl, name)) as { forkedNetwork: unknown };
        const a = (await call(anvilForkUrl, name)) as { forkedNetwork: unknown };
        assert.deepEqual(m.forkedNetwork, { chainId: Number(await call(originUrl, 'eth_chainId')), forkBlockNumber: forkBlock, forkBlockHash: originBlock.hash });
        assert.deepEqual(m.forkedNetwork, a.forkedNetwork, name);
      }
    });

    it('a log filter from below the fork block: eth_getFilterLogs is the origin\'s logs, then the fork\'s', async () => {
      const criteria = { address: tokenAddr, fromBlock: '0x0' };
      const id = (await call(forkUrl, 'eth_newFilter', [criteria])) as string;
      const originLogs = (await call(originUrl, 'eth_getLogs', [{ ...criteria, toBlock: hex(forkBlock) }])) as { transactionHash: string }[];
      assert.equal(originLogs.length, 2, 'the mint and the transfer at the origin');
      const logs = (await call(forkUrl, 'eth_getFilterLogs', [id])) as { transactionHash: string }[];
      assert.deepEqual(logs.slice(0, 2), originLogs);
      assert.deepEqual(logs.slice(2).map((l) => l.transactionHash), [forkTransfer]);
      assert.deepEqual(logs, await call(forkUrl, 'eth_getLogs', [criteria]), 'as eth_getLogs merges');
      // a filter ending at or below the fork block: the origin's alone
      const old = (await call(forkUrl, 'eth_newFilter', [{ ...criteria, toBlock: hex(forkBlock) }])) as string;
      assert.deepEqual(await call(forkUrl, 'eth_getFilterLogs', [old]), originLogs);
      // eth_getFilterChanges: the logs of blocks committed since the last poll, none yet
      assert.deepEqual(await call(forkUrl, 'eth_getFilterChanges', [id]), []);
      assert.equal(await call(forkUrl, 'eth_uninstallFilter', [id]), true);
      assert.equal(await call(forkUrl, 'eth_uninstallFilter', [old]), true);
      const gone = await rpc(forkUrl, 'eth_getFilterLogs', [id]);
      assert.match(gone.error?.message ?? '', /filter .* not found/);
    });

    it("trace_filter from below the fork block: the origin's traces, then the fork's, paged as one list", async () => {
      const f = { fromBlock: '0x1', toAddress: [tokenAddr] };
      const theirs = (await call(originUrl, 'trace_filter', [{ ...f, toBlock: hex(forkBlock) }])) as { transactionHash: string }[];
      assert.ok(theirs.length >= 1, 'the transfer at the origin');
      const all = (await call(forkUrl, 'trace_filter', [{ ...f, toBlock: 'latest' }])) as { transactionHash: string }[];
      assert.deepEqual(all.slice(0, theirs.length), theirs);
      assert.deepEqual(all.slice(theirs.length).map((t) => t.transactionHash), [forkTransfer]);
      assert.deepEqual(await call(forkUrl, 'trace_filter', [{ ...f, toBlock: 'latest', after: theirs.length, count: 1 }]), all.slice(theirs.length));
    });

    it("anvil_reset naming the fork's own origin and block goes back to the fork block; another is refused, nothing changes", async () => {
      const head = async () => Number(await call(forkUrl, 'eth_blockNumber'));
      assert.ok((await head()) > forkBlock);
      assert.equal(await call(forkUrl, 'anvil_reset', [{ forking: { jsonRpcUrl: originUrl, blockNumber: forkBlock } }]), null);
      assert.equal(await head(), forkBlock);
      await call(forkUrl, 'anvil_mine', ['0x2']);
      assert.equal(await call(forkUrl, 'hardhat_reset', [{ forking: { blockNumber: hex(forkBlock) } }]), null);
      assert.equal(await head(), forkBlock);
      // a URL without a block: the origin's latest, which is still the fork block
      await call(forkUrl, 'anvil_mine', ['0x1']);
      assert.equal(await call(forkUrl, 'anvil_reset', [{ forking: { jsonRpcUrl: originUrl } }]), null);
      assert.equal(await head(), forkBlock);

      await call(forkUrl, 'anvil_mine', ['0x3']);
      const before = await head();
      const refused = async (params: unknown[], code: number, message: RegExp) => {
        const r = await rpc(forkUrl, 'anvil_reset', params);
        assert.equal(r.error?.code, code, JSON.stringify(params));
        assert.match(r.error!.message, message);
        assert.equal(await head(), before, 'nothing changed');
        assert.equal(Number((await call(forkUrl, 'anvil_nodeInfo')).forkConfig.forkBlockNumber), forkBlock);
      };
      // an origin that does not answer: refused naming it, the fork keeps serving
      await refused([{ forking: { jsonRpcUrl: 'http://127.0.0.1:9/' } }], -32000, /cannot re-fork to http:\/\/127\.0\.0\.1:9.*the fork of http:\/\/127\.0\.0\.1:\d+ at block \d+ is unchanged/);
      await refused([{ forking: { jsonRpcUrl: originUrl, blockNumber: forkBlock + 1000 } }], -32602, new RegExp(`${forkBlock + 1000} is above the origin's latest block`));
      await refused([{ forking: { jsonRpcUrl: 'ftp://127.0.0.1/' } }], -32602, /jsonRpcUrl: want an http\(s\) URL/);
      await refused([{ forking: { blockNumber: 'ten' } }], -32602, /invalid argument 0/);
    });

    if (kind === 'ferry') {
      it('anvil_reset with a fork URL on a node that is not a fork is refused', async () => {
        const refused = await rpc(originUrl, 'anvil_reset', [{ forking: { jsonRpcUrl: forkUrl } }]);
        assert.equal(refused.error?.code, -32602);
        assert.match(refused.error!.message, /this node is not a fork/);
        assert.deepEqual((await call(originUrl, 'anvil_nodeInfo')).forkConfig, { forkUrl: null, forkBlockNumber: null, forkRetryBackoff: null });
        assert.equal((await call(originUrl, 'hardhat_metadata')).forkedNetwork, null);
      });
    }

    if (kind === 'ferry') {
      it('anvil_reset re-forks in place: an older block of the origin, then another origin (Anvil, another chain id); a restart continues the newest fork', async () => {
        const test = createTestClient({ chain: VIEM_CHAIN, mode: 'anvil', transport: http(forkUrl) });
        const pub = createPublicClient({ chain: VIEM_CHAIN, transport: http(forkUrl), cacheTime: 0 });
        const sender = privateKeyToAccount(devKeys()[SENDER_KEY] as Hex).address;
        const balanceOf = (url: string, who: Address, block: string) =>
          call(url, 'eth_call', [{ to: tokenAddr, data: encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [who] }) }, block]);
        // the block before the origin's transfer to 0x…0a0a0a (the token exists, the transfer does not)
        const older = forkBlock - 1;
        await test.reset({ jsonRpcUrl: originUrl, blockNumber: BigInt(older) });
        assert.equal(await pub.getBlockNumber(), BigInt(older), 'answered by the new fork right after the reply');
        assert.equal((await call(forkUrl, 'anvil_nodeInfo')).forkConfig.forkBlockNumber, older);
        // state as the origin's at the older block (the dev accounts' ether is the fork genesis's own, as Anvil's)
        assert.equal(await balanceOf(forkUrl, sender, 'latest'), await balanceOf(originUrl, sender, hex(older)));
        assert.notEqual(await balanceOf(forkUrl, sender, 'latest'), await balanceOf(originUrl, sender, 'latest'));
        assert.equal(await call(forkUrl, 'eth_getCode', [tokenAddr, 'latest']), await call(originUrl, 'eth_getCode', [tokenAddr, hex(older)]));
        const who = '0x00000000000000000000000000000000000a0a0a';
        assert.equal(BigInt((await balanceOf(forkUrl, who, 'latest')) as string), 0n, 'as at the older block: no transfer yet');
        assert.equal(BigInt((await balanceOf(originUrl, who, 'latest')) as string), 11n);
        // the new fork's first block continues the origin's numbers from the older block
        await call(forkUrl, 'anvil_mine', ['0x1']);
        const first = (await call(forkUrl, 'eth_getBlockByNumber', [hex(older + 1), false])) as { parentHash: string };
        const parent = (await call(originUrl, 'eth_getBlockByNumber', [hex(older), false])) as { hash: string };
        assert.equal(first.parentHash, parent.hash);

        // origin B: Anvil with another chain id and other balances
        const port = await freePort();
        const b = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', String(port), '--chain-id', '31337', '--mnemonic', DEV_MNEMONIC, '--balance', '777', '--silent'], { stdio: 'ignore' });
        stops.push(async () => b.kill());
        const bUrl = `http://127.0.0.1:${port}`;
        for (let i = 0; ; i++) {
          const up = await rpc(bUrl, 'eth_chainId').then(() => true, () => false);
          if (up) break;
          assert.ok(i < 600, 'anvil B did not start');
          await new Promise((r) => setTimeout(r, 100));
        }
        const paid = '0x00000000000000000000000000000000000c0c0c';
        const dev0 = (await call(bUrl, 'eth_accounts'))[0];
        await call(bUrl, 'eth_sendTransaction', [{ from: dev0, to: paid, value: '0x5' }]);
        await call(bUrl, 'evm_mine');
        assert.equal(await call(forkUrl, 'anvil_reset', [{ forking: { jsonRpcUrl: bUrl } }]), null);
        assert.equal(await call(forkUrl, 'eth_chainId'), '0x7a69');
        assert.equal(await call(forkUrl, 'eth_blockNumber'), '0x2');
        assert.equal(await call(forkUrl, 'eth_getBalance', [paid, 'latest']), '0x5');
        assert.equal(await call(forkUrl, 'eth_getCode', [tokenAddr, 'latest']), '0x', 'A\'s token is not on B');
        const bHead = ((await call(bUrl, 'eth_getBlockByNumber', ['0x2', false])) as { hash: string }).hash;
        // B down: refused, the fork of B still answers
        b.kill();
        const down = await rpc(forkUrl, 'anvil_reset', [{ forking: { jsonRpcUrl: bUrl, blockNumber: 1 } }]);
        assert.match(down.error?.message ?? '', /cannot re-fork to .* is unchanged/);
        assert.equal(await call(forkUrl, 'eth_chainId'), '0x7a69');
        assert.equal(await call(forkUrl, 'eth_blockNumber'), '0x2');

        // a restart of the home (no --fork-url) continues the newest fork
        const home = fork.home;
        await fork.stop();
        const again = await startFerry({ home, args: ['--dev'] });
        stops.push(() => again.stop());
        assert.equal(await call(again.url, 'eth_chainId'), '0x7a69');
        assert.equal((await call(again.url, 'anvil_nodeInfo')).forkConfig.forkUrl, bUrl);
        // the restarted engine commits its first block on B's block 2, as at a fork's first start
        const next = (await call(again.url, 'eth_getBlockByNumber', ['0x3', false])) as { parentHash: string } | null;
        assert.equal(next?.parentHash, bHead);
        assert.equal(await call(again.url, 'eth_getBalance', [paid, 'latest']), '0x5');
      });
    }
  });
}

suite('ferry');
suite('anvil');
