/**
 * Fork mode (docs/fork-mode.md): `ferry start --dev --fork-url` against a second local ferry dev and
 * against the Anvil 1.7.1 binary, each with an ERC-20 (test/contracts/Token.sol) deployed, through a
 * counting, fault-injecting proxy (test/helpers/originproxy.ts): balances, code, storage and eth_call
 * match the origin at the fork block, a transfer runs on the fork and leaves the origin alone, each
 * account and slot is fetched once, a restart asks the origin nothing for cached state, 429s and
 * timeouts are retried, and an origin that stays down gives errors naming it while cached state answers.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createTestClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { OriginProxy } from '../helpers/originproxy.js';
import { readGauge, rpcMetricsEndpoint } from '../helpers/prometheus.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';
import { startAnvil } from './debug-fixtures.js';

const token = compileContract('Token.sol', 'Token');
const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');
const HOLDER_KEY = 3;
/** an address with ether only at the origin (a dev account would be shadowed by the fork's genesis) */
const RICH = '0x00000000000000000000000000000000000f0e2a';
const STRANGER = '0x00000000000000000000000000000000000b0b0b';
const FORK_ARGS = ['--fork-retries', '3', '--fork-timeout', '3000'];

function clients(url: string) {
  const account = privateKeyToAccount(devKeys()[HOLDER_KEY] as Hex);
  return {
    pub: createPublicClient({ chain: VIEM_CHAIN, transport: http(url), cacheTime: 0 }),
    wallet: createWalletClient({ chain: VIEM_CHAIN, account, transport: http(url) }),
  };
}

async function setUpOrigin(url: string): Promise<{ token: Address; block: number; deployTx: Hex; transferTx: Hex }> {
  const c = clients(url);
  const hash = await c.wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: ['Test', 'TST', 10n ** 24n] });
  const r = await c.pub.waitForTransactionReceipt({ hash });
  assert.equal(r.status, 'success');
  const addr = r.contractAddress!;
  const t = await c.wallet.sendTransaction({ to: addr, data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [STRANGER, 777n] }) });
  assert.equal((await c.pub.waitForTransactionReceipt({ hash: t })).status, 'success');
  const v = await c.wallet.sendTransaction({ to: RICH, value: 123456789n });
  const last = await c.pub.waitForTransactionReceipt({ hash: v });
  return { token: addr, block: Number(last.blockNumber), deployTx: hash, transferTx: t };
}

const balanceOfData = (who: string) => encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [who as Address] });

function forkSuite(kind: 'ferry' | 'anvil'): void {
  describe(`fork of ${kind}`, () => {
    let originUrl: string;
    let stopOrigin: () => Promise<unknown>;
    let proxy: OriginProxy;
    let fork: FerryNode;
    let tokenAddr: Address;
    let forkBlock: number;
    let originTxs: { deployTx: Hex; transferTx: Hex };
    let forkTransfer: Hex;
    let metrics: { args: string[]; url: string };

    before(async () => {
      if (kind === 'ferry') {
        const n = await startFerry({ args: ['--dev'] });
        originUrl = n.url;
        stopOrigin = () => n.stop();
      } else {
        const a = await startAnvil();
        originUrl = a.url;
        stopOrigin = () => a.stop();
      }
      let deployTx: Hex, transferTx: Hex;
      ({ token: tokenAddr, block: forkBlock, deployTx, transferTx } = await setUpOrigin(originUrl));
      originTxs = { deployTx, transferTx };
      proxy = await new OriginProxy(originUrl).start();
      metrics = await rpcMetricsEndpoint();
      fork = await startFerry({ args: ['--dev', '--fork-url', proxy.url, ...FORK_ARGS, ...metrics.args] });
    });

    after(async () => {
      await fork?.stop();
      await proxy?.close();
      await stopOrigin?.();
    });

    it("takes the origin's chain id and the latest block as the fork block", async () => {
      assert.equal(await call(fork.url, 'eth_chainId'), await call(originUrl, 'eth_chainId'));
    });

    it("continues the origin's numbering, its first block's parent is the origin's fork block; Surface B agrees", async () => {
      const first = '0x' + (forkBlock + 1).toString(16);
      const originBlock = (await call(originUrl, 'eth_getBlockByNumber', ['0x' + forkBlock.toString(16), false])) as { hash: string };
      const b = (await call(fork.url, 'eth_getBlockByNumber', [first, false])) as { number: string; hash: string; parentHash: string } | null;
      assert.ok(b !== null, `the fork has block ${forkBlock + 1}`);
      assert.equal(b.number, first);
      assert.equal(b.parentHash, originBlock.hash);
      assert.ok(BigInt(await call(fork.url, 'eth_blockNumber')) >= BigInt(forkBlock + 1));
      // Surface B: the same block at the same height, and the fork's own chain begins there
      const comet = async (path: string) => ((await (await fetch(fork.cometUrl + path)).json()) as { result: Record<string, any> }).result;
      const cb = await comet(`/block?height=${forkBlock + 1}`);
      assert.equal('0x' + String(cb.block_id.hash).toLowerCase(), b.hash);
      assert.equal(cb.block.header.height, String(forkBlock + 1));
      const status = await comet('/status');
      assert.equal(status.sync_info.earliest_block_height, String(forkBlock + 1));
      const chain = await comet(`/blockchain?minHeight=1&maxHeight=${forkBlock + 1}`);
      assert.deepEqual(chain.block_metas.map((m: { header: { height: string } }) => m.header.height), [String(forkBlock + 1)]);
    });

    it('code, balances, storage and eth_call match the origin at the fork block', async () => {
      const at = '0x' + forkBlock.toString(16);
      assert.equal(await call(fork.url, 'eth_getCode', [tokenAddr, 'latest']), await call(originUrl, 'eth_getCode', [tokenAddr, at]));
      assert.equal(await call(fork.url, 'eth_getBalance', [RICH, 'latest']), '0x75bcd15');
      for (const slot of ['0x0', '0x1', '0x2']) {
        assert.equal(await call(fork.url, 'eth_getStorageAt', [tokenAddr, slot, 'latest']), await call(originUrl, 'eth_getStorageAt', [tokenAddr, slot, at]));
      }
      for (const who of [STRANGER, devAddress(HOLDER_KEY)]) {
        const q = { to: tokenAddr, data: balanceOfData(who) };
        assert.equal(await call(fork.url, 'eth_call', [q, 'latest']), await call(originUrl, 'eth_call', [q, at]));
      }
      assert.equal(BigInt(await call(fork.url, 'eth_call', [{ to: tokenAddr, data: balanceOfData(STRANGER) }, 'latest'])), 777n);
    });

    it("cast and viem's test client work against the fork", async () => {
      const cast = (...a: string[]) => execFileSync(CAST, [...a, '--rpc-url', fork.url], { encoding: 'utf8' }).trim();
      assert.equal(cast('call', tokenAddr, 'balanceOf(address)(uint256)', STRANGER), '777');
      assert.equal(cast('balance', RICH), '123456789');
      assert.equal(cast('storage', tokenAddr, '2'), '0x' + (10n ** 24n).toString(16).padStart(64, '0'));
      // a local write shadows the origin's value
      const test = createTestClient({ chain: VIEM_CHAIN, mode: 'anvil', transport: http(fork.url) });
      const other = '0x00000000000000000000000000000000000e0e0e';
      await test.setBalance({ address: other, value: 42n });
      assert.equal(await clients(fork.url).pub.getBalance({ address: other }), 42n);
      assert.equal(BigInt(await call(originUrl, 'eth_getBalance', [other, 'latest'])), 0n);
    });

    it('eth_getProof is refused with the reason', async () => {
      const r = await rpc(fork.url, 'eth_getProof', [tokenAddr, ['0x0'], 'latest']);
      assert.equal(r.error?.code, -32000);
      assert.match(r.error!.message, /eth_getProof is not served by a fork/);
    });

    it('anvil_setRpcUrl / hardhat_setRpcUrl are refused on a fork: its origin is fixed at start', async () => {
      for (const name of ['anvil_setRpcUrl', 'hardhat_setRpcUrl']) {
        const r = await rpc(fork.url, name, ['http://127.0.0.1:1']);
        assert.equal(r.error?.code, -32602);
        assert.match(r.error!.message, /origin is fixed when it starts/);
      }
    });

    it('each account and slot is fetched from the origin once', async () => {
      for (let i = 0; i < 3; i++) {
        await call(fork.url, 'eth_call', [{ to: tokenAddr, data: balanceOfData(STRANGER) }, 'latest']);
        await call(fork.url, 'eth_getBalance', [RICH, 'latest']);
        await call(fork.url, 'eth_getStorageAt', [tokenAddr, '0x2', 'latest']);
      }
      assert.ok(proxy.count('eth_getCode') > 0);
      assert.equal(proxy.maxRepeats('eth_getBalance', 'eth_getTransactionCount', 'eth_getCode', 'eth_getStorageAt'), 1);
    });

    it('a transfer executes on the fork and leaves the origin alone', async () => {
      const c = clients(fork.url);
      const to = '0x00000000000000000000000000000000000c0c0c';
      const hash = await c.wallet.sendTransaction({ to: tokenAddr, data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, 5n] }) });
      const r = await c.pub.waitForTransactionReceipt({ hash });
      assert.equal(r.status, 'success');
      forkTransfer = hash;
      assert.equal(BigInt(await call(fork.url, 'eth_call', [{ to: tokenAddr, data: balanceOfData(to) }, 'latest'])), 5n);
      const holder = { to: tokenAddr, data: balanceOfData(devAddress(HOLDER_KEY)) };
      assert.equal(BigInt(await call(fork.url, 'eth_call', [holder, 'latest'])), 10n ** 24n - 777n - 5n);
      assert.equal(BigInt(await call(originUrl, 'eth_call', [holder, 'latest'])), 10n ** 24n - 777n);
      assert.equal(BigInt(await call(originUrl, 'eth_call', [{ to: tokenAddr, data: balanceOfData(to) }, 'latest'])), 0n);
    });

    it('history at or below the fork block is the origin\'s; eth_getLogs across the fork block merges both', async () => {
      const same = async (method: string, params: unknown[]) => {
        const theirs = await call(originUrl, method, params);
        assert.notEqual(theirs, null, `${method} ${JSON.stringify(params)} at the origin`);
        assert.deepEqual(await call(fork.url, method, params), theirs, `${method} ${JSON.stringify(params)}`);
        return theirs;
      };
      const at = '0x' + forkBlock.toString(16);
      const top = (await same('eth_getBlockByNumber', [at, true])) as { hash: string };
      await same('eth_getBlockByNumber', ['0x' + (forkBlock - 1).toString(16), false]);
      await same('eth_getBlockByNumber', ['earliest', false]);
      await same('eth_getBlockByHash', [top.hash, false]);
      for (const tx of [originTxs.deployTx, originTxs.transferTx]) {
        await same('eth_getTransactionByHash', [tx]);
        await same('eth_getTransactionReceipt', [tx]);
        await same('debug_traceTransaction', [tx, { tracer: 'callTracer' }]);
      }
      await same('eth_getBalance', [RICH, '0x' + (forkBlock - 1).toString(16)]);
      await same('eth_feeHistory', ['0x2', at, []]);
      // above the fork block: the fork's own blocks, its genesis block (the fork block) the oldest
      const fh = (await call(fork.url, 'eth_feeHistory', ['0x40', 'latest', []])) as { oldestBlock: string };
      assert.equal(fh.oldestBlock, at);
      // the fork's own transaction is the fork's, not the origin's
      assert.equal(await call(originUrl, 'eth_getTransactionByHash', [forkTransfer]), null);
      assert.equal(((await call(fork.url, 'eth_getTransactionReceipt', [forkTransfer])) as { transactionHash: string }).transactionHash, forkTransfer);
      // the origin's Transfer logs (mint, 777) up to the fork block, then the fork's transfer of 5
      const originLogs = (await call(originUrl, 'eth_getLogs', [{ address: tokenAddr, fromBlock: '0x0', toBlock: at }])) as { transactionHash: string }[];
      assert.equal(originLogs.length, 2);
      const all = (await call(fork.url, 'eth_getLogs', [{ address: tokenAddr, fromBlock: 'earliest', toBlock: 'latest' }])) as { transactionHash: string }[];
      assert.deepEqual(all.slice(0, 2), originLogs);
      assert.deepEqual(all.slice(2).map((l) => l.transactionHash), [forkTransfer]);
      assert.deepEqual(await call(fork.url, 'eth_getLogs', [{ address: tokenAddr, fromBlock: '0x0', toBlock: at }]), originLogs);
    });

    it('429s and timeouts of the origin are retried', async () => {
      proxy.failNext(2, 429);
      assert.equal(await call(fork.url, 'eth_getBalance', ['0x00000000000000000000000000000000000d0d01', 'latest']), '0x0');
      proxy.hangNext(1);
      assert.equal(await call(fork.url, 'eth_getBalance', ['0x00000000000000000000000000000000000d0d02', 'latest']), '0x0');
      assert.ok(proxy.faulted >= 3, `faulted ${proxy.faulted}`);
      // every thread's origin requests, retries included, and the cache on disk (docs/fork-mode.md "Metrics")
      // identifyFork's eth_chainId, eth_blockNumber, eth_getBlockByNumber at the home's making are not state.
      // Every request the proxy saw is counted; the fork may count more, but only attempts that failed before
      // reaching the proxy (a stale keep-alive connection, a timeout under load), and each of those is a retry
      // beyond the ones the proxy injected: not an exact equality, which failed once under load.
      const requests = await readGauge(metrics.url, 'ferry_fork_origin_requests');
      const retries = await readGauge(metrics.url, 'ferry_fork_origin_retries');
      const seen = proxy.requests - 3;
      assert.ok(retries >= proxy.faulted, `retries ${retries}, injected faults ${proxy.faulted}`);
      assert.ok(requests >= seen, `ferry_fork_origin_requests ${requests} below the ${seen} the origin saw`);
      assert.ok(requests - seen <= retries - proxy.faulted, `${requests - seen} requests the origin never saw, but only ${retries - proxy.faulted} retries beyond the injected faults`);
      assert.equal(await readGauge(metrics.url, 'ferry_fork_origin_errors'), 0);
      assert.ok((await readGauge(metrics.url, 'ferry_fork_cache_bytes')) > 0);
    });

    it('an origin that stays down: a clear error naming it, cached state still answers', async () => {
      proxy.down = true;
      try {
        const r = await rpc(fork.url, 'eth_getBalance', ['0x00000000000000000000000000000000000d0d03', 'latest']);
        assert.ok(r.error, `expected an error, got ${JSON.stringify(r.result)}`);
        assert.match(r.error.message, new RegExp(`fork origin ${proxy.url.replace(/[.]/g, '\\.')}`));
        assert.match(r.error.message, /HTTP 503/);
        const c = await rpc(fork.url, 'eth_call', [{ to: '0x00000000000000000000000000000000000d0d04', data: '0x' }, 'latest']);
        assert.ok(c.error, 'eth_call touching an unfetched account fails too');
        assert.equal(await call(fork.url, 'eth_getBalance', [RICH, 'latest']), '0x75bcd15');
        assert.equal(BigInt(await call(fork.url, 'eth_call', [{ to: tokenAddr, data: balanceOfData(STRANGER) }, 'latest'])), 777n);
        assert.ok((await readGauge(metrics.url, 'ferry_fork_origin_errors')) >= 2);
      } finally {
        proxy.down = false;
      }
    });

    it('after a restart, cached state asks the origin nothing', async () => {
      assert.equal(await fork.stop(), 0);
      proxy.reset();
      fork = await startFerry({ home: fork.home, args: ['--dev', '--fork-url', proxy.url, ...FORK_ARGS] });
      assert.equal(await call(fork.url, 'eth_getBalance', [RICH, 'latest']), '0x75bcd15');
      assert.equal(BigInt(await call(fork.url, 'eth_call', [{ to: tokenAddr, data: balanceOfData(STRANGER) }, 'latest'])), 777n);
      assert.equal(await call(fork.url, 'eth_getStorageAt', [tokenAddr, '0x2', 'latest']), '0x' + (10n ** 24n).toString(16).padStart(64, '0'));
      assert.equal(proxy.count(), 0, `origin calls after the restart: ${[...proxy.byCall.keys()].join(', ')}`);
    });
  });
}

forkSuite('ferry');
forkSuite('anvil');

describe('fork flags refused before anything starts', () => {
  const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const tmp = mkdtempSync(join(tmpdir(), 'ferry-fork-flags-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const ferry = (...args: string[]) => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'ferry.js'), ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: tmp } });
    return { code: r.status, stderr: r.stderr };
  };
  const DOWN = 'http://127.0.0.1:9';

  it('--fork-url needs the dev preset, and the other --fork-* flags need --fork-url', () => {
    const a = ferry('start', '--home', join(tmp, 'a'), '--fork-url', DOWN);
    assert.notEqual(a.code, 0);
    assert.match(a.stderr, /--fork-url is a dev-mode flag/);
    const b = ferry('dev', '--home', join(tmp, 'b'), '--fork-block-number', '3');
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, /the --fork-\* flags need --fork-url/);
  });

  it('an unreachable origin names it and makes no home', () => {
    const r = ferry('dev', '--home', join(tmp, 'c'), '--fork-url', DOWN, '--fork-retries', '0');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /fork origin http:\/\/127\.0\.0\.1:9: unreachable/);
    assert.equal(existsSync(join(tmp, 'c', 'config', 'genesis.json')), false);
  });

  it('a home that is not a fork home is not turned into one', () => {
    assert.equal(ferry('init', '--home', join(tmp, 'd')).code, 0);
    const r = ferry('dev', '--home', join(tmp, 'd'), '--fork-url', DOWN);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /holds a chain that is not a fork; --fork-url needs a new --home/);
  });
});
