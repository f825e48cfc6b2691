/**
 * Foundry and viem's test client against Ferry (docs/fork-mode.md "With Foundry"; issue 24): an ERC-20
 * (test/contracts/Token.sol) is deployed with `cast send --create` on a Ferry dev node (the origin), and
 * a second Ferry forks it (`ferry start --dev --fork-url`). The Foundry project in
 * test/fixtures/forge-project, compiled offline with the npm solc through scripts/solcjs-as-solc.mjs,
 * runs `forge test --fork-url` against the origin and against the fork, at the latest block and with
 * `--fork-block-number`, its expectations taken from what the origin says at that block; `cast call`,
 * `balance`, `block` and `receipt` on the fork equal the origin's for origin state, and `cast send
 * --private-key` runs a transfer on the fork only; viem's test client (anvil mode) drives setBalance,
 * impersonateAccount, mine, snapshot/revert and reset on the fork.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createTestClient, createWalletClient, encodeFunctionData, http, type Address } from 'viem';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { call } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const run = promisify(execFile);
const foundryBin = (name: string): string =>
  join(dirname(createRequire(import.meta.url).resolve(`@foundry-rs/${name}-linux-amd64/package.json`)), 'bin', name);
const FORGE = foundryBin('forge');
const CAST = foundryBin('cast');
const PROJECT = join(REPO_ROOT, 'test', 'fixtures', 'forge-project');
const SOLC_WRAPPER = join(REPO_ROOT, 'scripts', 'solcjs-as-solc.mjs');
/** the tests of test/fixtures/forge-project/test/OriginFork.t.sol, each of which must pass */
const FORGE_TESTS = ['testEtherBalance()', 'testForkBlock()', 'testTokenState()', 'testTransferOnFork()'];
const FORGE_TIMEOUT_MS = 240_000;

const DEPLOYER_KEY = 6;
const SUPPLY = 10n ** 24n;
/** holds tokens but no ether at the origin */
const STRANGER = '0x00000000000000000000000000000000005a0b0b';
/** holds ether only at the origin (a dev account's balance would be the fork's own) */
const RICH = '0x00000000000000000000000000000000005a0e2a';
const TO_STRANGER = 777n;
const TO_RICH = 123456789n;
/** receives the `cast send` transfer on the fork (gone after the reset) */
const CAST_RECEIVER = '0x00000000000000000000000000000000005a0c0c';

describe('forge test --fork-url, cast and viem test actions against Ferry and a Ferry fork', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'ferry-forge-'));
  let origin: FerryNode;
  let fork: FerryNode;
  let token: Address;
  let deployBlock: number;
  let forkBlock: number;
  let deployTx: string;

  /** `cast <command> --rpc-url url …`, stdout trimmed (the flags go before the arguments: `send --create` takes the rest) */
  const cast = async (url: string, command: string, ...args: string[]) =>
    (await run(CAST, [command, '--rpc-url', url, ...args])).stdout.trim();
  const castJson = async (url: string, command: string, ...args: string[]) => JSON.parse(await cast(url, command, '--json', ...args));
  const balanceOf = (url: string, who: string, block = 'latest') => cast(url, 'call', '--block', block, token, 'balanceOf(address)(uint256)', who);

  /** What the origin says at `block`: the values OriginFork.t.sol checks, as FERRY_* variables. */
  async function originFacts(block: number): Promise<Record<string, string>> {
    const at = String(block);
    const head = (s: string) => s.split(' ')[0]!; // cast prints `1000000000000000000000000 [1e24]`
    return {
      FERRY_TOKEN: token,
      FERRY_HOLDER: devAddress(DEPLOYER_KEY),
      FERRY_STRANGER: STRANGER,
      FERRY_RICH: RICH,
      FERRY_FORK_BLOCK: at,
      FERRY_CHAIN_ID: await cast(origin.url, 'chain-id'),
      FERRY_SUPPLY: head(await cast(origin.url, 'call', '--block', at, token, 'totalSupply()(uint256)')),
      FERRY_STRANGER_BALANCE: head(await balanceOf(origin.url, STRANGER, at)),
      FERRY_HOLDER_BALANCE: head(await balanceOf(origin.url, devAddress(DEPLOYER_KEY), at)),
      FERRY_RICH_BALANCE: await cast(origin.url, 'balance', '--block', at, RICH),
    };
  }

  /** `forge test --fork-url url` in the fixture project; every test must pass. */
  async function forgeTest(url: string, facts: Record<string, string>, extra: string[] = []): Promise<void> {
    const args = ['test', '--json', '--offline', '--use', SOLC_WRAPPER, '--fork-url', url, '--no-storage-caching'];
    args.push('--out', join(tmp, 'out'), '--cache-path', join(tmp, 'cache'), ...extra);
    // HOME: forge keeps its own files (~/.foundry) in the temporary directory, not the user's
    const env = { ...process.env, ...facts, HOME: tmp };
    let stdout: string;
    try {
      ({ stdout } = await run(FORGE, args, { cwd: PROJECT, env, timeout: FORGE_TIMEOUT_MS, maxBuffer: 16 << 20 }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      stdout = e.stdout ?? '';
      if (!stdout.trim().startsWith('{')) throw new Error(`forge ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`);
    }
    const suites = JSON.parse(stdout) as Record<string, { test_results: Record<string, { status: string; reason: string | null }> }>;
    const results = suites['test/OriginFork.t.sol:OriginForkTest']?.test_results ?? {};
    assert.deepEqual(Object.keys(results).sort(), FORGE_TESTS);
    for (const [name, r] of Object.entries(results)) {
      assert.equal(r.status, 'Success', `forge --fork-url ${url} ${extra.join(' ')}: ${name} ${r.reason ?? ''}`);
    }
  }

  before(async () => {
    origin = await startFerry({ args: ['--dev'] });
    const key = devKeys()[DEPLOYER_KEY]!;
    const t = compileToken();
    const deployed = await castJson(origin.url, 'send', '--private-key', key, '--create', t.bytecode, 'constructor(string,string,uint256)', 'Test', 'TST', String(SUPPLY));
    assert.equal(deployed.status, '0x1');
    token = deployed.contractAddress;
    deployBlock = Number(deployed.blockNumber);
    deployTx = deployed.transactionHash;
    assert.equal((await castJson(origin.url, 'send', '--private-key', key, token, 'transfer(address,uint256)', STRANGER, String(TO_STRANGER))).status, '0x1');
    const last = await castJson(origin.url, 'send', '--private-key', key, RICH, '--value', String(TO_RICH));
    forkBlock = Number(last.blockNumber);
    fork = await startFerry({ args: ['--dev', '--fork-url', origin.url, '--fork-retries', '3', '--fork-timeout', '10000'] });
  });

  after(async () => {
    if (fork) assert.equal(await fork.stop(), 0);
    if (origin) assert.equal(await origin.stop(), 0);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('forge test --fork-url a Ferry dev node, at its latest block and at --fork-block-number', async () => {
    const latest = await originFacts(forkBlock);
    assert.equal(latest.FERRY_STRANGER_BALANCE, String(TO_STRANGER));
    assert.equal(latest.FERRY_RICH_BALANCE, String(TO_RICH));
    assert.equal(latest.FERRY_CHAIN_ID, String(EVM_CHAIN_ID));
    await forgeTest(origin.url, latest);
    // the deploy block: the token exists, the stranger and the rich account hold nothing yet
    const early = await originFacts(deployBlock);
    assert.equal(early.FERRY_STRANGER_BALANCE, '0');
    assert.equal(early.FERRY_RICH_BALANCE, '0');
    await forgeTest(origin.url, early, ['--fork-block-number', String(deployBlock)]);
  });

  it('forge test --fork-url a Ferry fork: at its latest block, and below its fork block (the origin\'s history)', async () => {
    const head = Number(await call(fork.url, 'eth_blockNumber'));
    assert.ok(head > forkBlock, `the fork's head ${head} continues the origin's ${forkBlock}`);
    await forgeTest(fork.url, { ...(await originFacts(forkBlock)), FERRY_FORK_BLOCK: String(head) });
    await forgeTest(fork.url, await originFacts(deployBlock), ['--fork-block-number', String(deployBlock)]);
  });

  it("cast on the fork: call, balance, block and receipt equal the origin's; send --private-key runs on the fork only", async () => {
    const at = String(forkBlock);
    assert.equal(await balanceOf(fork.url, STRANGER), await balanceOf(origin.url, STRANGER, at));
    assert.equal(await cast(fork.url, 'balance', RICH), await cast(origin.url, 'balance', '--block', at, RICH));
    assert.equal(await cast(fork.url, 'code', token), await cast(origin.url, 'code', '--block', at, token));
    for (const n of [at, String(deployBlock)]) {
      assert.deepEqual(await castJson(fork.url, 'block', n, '--full'), await castJson(origin.url, 'block', n, '--full'));
    }
    assert.deepEqual(await castJson(fork.url, 'receipt', deployTx), await castJson(origin.url, 'receipt', deployTx));
    // the fork's first block has the origin's fork block as parent
    const first = await castJson(fork.url, 'block', String(forkBlock + 1));
    assert.equal(first.parentHash, (await castJson(origin.url, 'block', at)).hash);

    const sent = await castJson(fork.url, 'send', '--private-key', devKeys()[DEPLOYER_KEY]!, token, 'transfer(address,uint256)', CAST_RECEIVER, '5');
    assert.equal(sent.status, '0x1');
    assert.ok(Number(sent.blockNumber) > forkBlock);
    const receipt = await castJson(fork.url, 'receipt', sent.transactionHash);
    assert.equal(receipt.transactionHash, sent.transactionHash);
    assert.equal(receipt.logs.length, 1);
    assert.equal(await balanceOf(fork.url, CAST_RECEIVER), '5');
    assert.equal(await balanceOf(origin.url, CAST_RECEIVER), '0');
    assert.equal(await call(origin.url, 'eth_getTransactionReceipt', [sent.transactionHash]), null);
  });

  it("viem's test client on the fork: setBalance, impersonateAccount, mine, snapshot/revert, reset", async () => {
    const test = createTestClient({ chain: VIEM_CHAIN, mode: 'anvil', transport: http(fork.url) });
    const pub = createPublicClient({ chain: VIEM_CHAIN, transport: http(fork.url), cacheTime: 0 });
    const abi = compileToken().abi;
    const tokenBalance = async (who: string) => BigInt(await balanceOf(fork.url, who).then((s) => s.split(' ')[0]!));
    const transferData = (to: Address, amount: bigint) => encodeFunctionData({ abi, functionName: 'transfer', args: [to, amount] });
    const other = '0x00000000000000000000000000000000005a0d0d';

    // the stranger has tokens at the origin and no ether: fund it, then send as it without its key
    const snap = await test.snapshot();
    const headAtSnapshot = await pub.getBlockNumber();
    await test.setBalance({ address: STRANGER, value: 10n ** 18n });
    await test.impersonateAccount({ address: STRANGER });
    const asStranger = createWalletClient({ chain: VIEM_CHAIN, account: STRANGER, transport: http(fork.url) });
    const hash = await asStranger.sendTransaction({ to: token, data: transferData(other, 7n) });
    assert.equal((await pub.waitForTransactionReceipt({ hash })).status, 'success');
    assert.equal(await tokenBalance(STRANGER), TO_STRANGER - 7n);
    assert.equal(await tokenBalance(other), 7n);
    await test.stopImpersonatingAccount({ address: STRANGER });
    await assert.rejects(asStranger.sendTransaction({ to: token, data: transferData(other, 1n) }));

    const before = await pub.getBlockNumber();
    await test.mine({ blocks: 3 });
    assert.equal(await pub.getBlockNumber(), before + 3n);

    // revert: the stranger's transfer and the mined blocks are gone, the origin's state answers again
    assert.equal(await test.revert({ id: snap }), undefined);
    assert.equal(await pub.getBlockNumber(), headAtSnapshot);
    assert.equal(await tokenBalance(STRANGER), TO_STRANGER);
    assert.equal(await tokenBalance(other), 0n);
    assert.equal(await pub.getBalance({ address: STRANGER }), 0n);

    // reset (no forking params): back to the fork block, every local write gone
    await test.setBalance({ address: RICH, value: 1n });
    await test.mine({ blocks: 1 });
    await test.reset();
    assert.equal(Number(await pub.getBlockNumber()), forkBlock);
    assert.equal(await pub.getBalance({ address: RICH }), TO_RICH);
    assert.equal(await tokenBalance(CAST_RECEIVER), 0n);
    assert.equal(await tokenBalance(STRANGER), TO_STRANGER);
  });
});
