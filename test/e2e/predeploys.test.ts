/**
 * The canonical predeploys of a new dev chain (docs/configuration.md "Predeploys") and eth_sendTransaction's
 * estimated gas, used by real clients against `ferry dev` and, as the reference, the Anvil 1.7.1 binary:
 * - a salted deploy through the CREATE2 deployer with `cast send`, landing at the address `cast create2`
 *   and viem's getContractAddress({ opcode: 'CREATE2' }) compute;
 * - Multicall3's aggregate3 through viem's `multicall` (the chain's contracts.multicall3) and through ethers;
 * - eth_sendTransaction / eth_sendTransactionSync of a creation needing more than 90,000 gas, without `gas`:
 *   the tx's gas is eth_estimateGas of the request; a reverting one answers the estimate's error.
 * Anvil (on Prague: only from Prague on does it place the EIP-2935 contract) has the CREATE2 deployer and the
 * EIP-2935 contract in its genesis but not Multicall3, so the test deploys Multicall3 there with its published
 * pre-signed transaction (test/fixtures/predeploy-deployments.json): ferry's genesis code must be what that
 * transaction creates. What the tests compare (code, CREATE2 addresses, call results, creation gas) is the same
 * under Cancun and Prague.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Contract, JsonRpcProvider } from 'ethers';
import { createPublicClient, getContractAddress, http, parseAbi, type Hex } from 'viem';
import { devAddress } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { call, rpc, waitForReceipt } from '../helpers/rpc.js';
import { ferryChain } from '../helpers/viemchain.js';
import { startAnvil, type AnvilNode } from './debug-fixtures.js';

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');
const run = promisify(execFile);

const CREATE2_DEPLOYER = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
const HISTORY_STORAGE = '0x0000F90827F1C53a10cb7A02335B175320002935';
const deployments = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'predeploy-deployments.json'), 'utf8')) as Record<
  string,
  { signer: string; raw?: string }
>;

/** runtime: MSTORE(0, 42); RETURN(0, 32) — answers 42 to any call */
const ANSWER_RUNTIME = '602a60005260206000f3';
/** PUSH10 runtime; MSTORE(0); RETURN(22, 10) */
const ANSWER_INIT = ('0x69' + ANSWER_RUNTIME + '600052600a6016f3') as Hex;
const SALT = ('0x' + 'f0'.repeat(16) + '00'.repeat(15) + '2a') as Hex;
/** SSTORE(i, 1) for slots 0..5, then deploys the one-byte runtime 0x01: more than 90,000 gas */
const STORING_INIT = '0x' + [0, 1, 2, 3, 4, 5].map((i) => `600160${i.toString(16).padStart(2, '0')}55`).join('') + '60016000526001601ff3';
/** reverts with the 4 bytes 0xdeadbeef */
const REVERTING_INIT = '0x63deadbeef6000526004601cfd';
/** funded with this many wei on both nodes, read back through Multicall3 */
const PROBE = '0x' + '5a'.repeat(20);
const PROBE_WEI = 12_345n;

const MULTICALL3_ABI = parseAbi([
  'function getChainId() view returns (uint256 chainid)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
]);
const ANSWER_ABI = parseAbi(['function answer() view returns (uint256)']);
const HISTORY_ABI = parseAbi(['function get(uint256 n) view returns (bytes32)']);
const AGGREGATE3 = 'function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)';

let ferry: FerryNode;
let anvil: AnvilNode;

const cast = async (url: string, ...args: string[]) => (await run(CAST, [...args, '--rpc-url', url])).stdout.trim();
const castOffline = async (...args: string[]) => (await run(CAST, args)).stdout.trim();

/** Multicall3 on Anvil, deployed by its published pre-signed transaction (0.1 ETH of gas for its signer first). */
async function publishMulticall3(url: string): Promise<void> {
  const d = deployments[MULTICALL3]!;
  await waitForReceipt(url, await call<string>(url, 'eth_sendTransaction', [{ from: devAddress(9), to: d.signer, value: '0x16345785d8a0000' }]));
  const receipt = await waitForReceipt(url, await call<string>(url, 'eth_sendRawTransaction', [d.raw]));
  assert.equal(receipt.status, '0x1');
  assert.equal(receipt.contractAddress, MULTICALL3.toLowerCase());
}

describe('predeploys and estimated sends, ferry dev against Anvil 1.7.1', () => {
  before(async () => {
    [ferry, anvil] = await Promise.all([startFerry({ args: ['--dev'] }), startAnvil('prague')]);
    await publishMulticall3(anvil.url);
    for (const url of [ferry.url, anvil.url]) {
      const hash = await call<string>(url, 'eth_sendTransaction', [{ from: devAddress(9), to: PROBE, value: '0x' + PROBE_WEI.toString(16) }]);
      await waitForReceipt(url, hash);
    }
  });

  after(async () => {
    await Promise.all([ferry?.stop(), anvil?.stop()]);
  });

  it('the three contracts have the same code on ferry as on Anvil (Multicall3: as its published deployment creates)', async () => {
    for (const a of [CREATE2_DEPLOYER, MULTICALL3, HISTORY_STORAGE]) {
      const [f, r] = await Promise.all([call<string>(ferry.url, 'eth_getCode', [a, 'latest']), call<string>(anvil.url, 'eth_getCode', [a, 'latest'])]);
      assert.ok(f.length > 2, `${a} has code on ferry`);
      assert.equal(f, r, a);
    }
    // at genesis, not deployed later
    assert.equal(await call(ferry.url, 'eth_getCode', [MULTICALL3, '0x0']), await call(ferry.url, 'eth_getCode', [MULTICALL3, 'latest']));
  });

  it('cast send salt ‖ initcode to the CREATE2 deployer: the contract is at the address cast create2 and viem compute', async () => {
    const expected = await castOffline('create2', '--salt', SALT, '--init-code', ANSWER_INIT);
    assert.equal(getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: SALT, bytecode: ANSWER_INIT }), expected);
    const calldata = SALT + ANSWER_INIT.slice(2);
    for (const url of [ferry.url, anvil.url]) {
      // the proxy answers the address it creates
      assert.equal(await call(url, 'eth_call', [{ from: devAddress(3), to: CREATE2_DEPLOYER, data: calldata }, 'latest']), expected.toLowerCase());
      const out = JSON.parse(await cast(url, 'send', '--unlocked', '--from', devAddress(3), CREATE2_DEPLOYER, calldata, '--json')) as { status: string };
      assert.equal(out.status, '0x1', url);
      assert.equal(await call(url, 'eth_getCode', [expected, 'latest']), '0x' + ANSWER_RUNTIME, url);
      assert.equal(BigInt(await call<string>(url, 'eth_call', [{ to: expected, data: '0x' }, 'latest'])), 42n);
    }
  });

  it("viem's multicall runs aggregate3 on the chain's Multicall3, with the same results as on Anvil", async () => {
    const results = [];
    const answer = getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: SALT, bytecode: ANSWER_INIT });
    for (const url of [ferry.url, anvil.url]) {
      const chain = { ...ferryChain([url]), contracts: { multicall3: { address: MULTICALL3 as Hex } } };
      const client = createPublicClient({ chain, transport: http(url) });
      results.push(
        await client.multicall({
          allowFailure: true,
          contracts: [
            { address: MULTICALL3, abi: MULTICALL3_ABI, functionName: 'getChainId' },
            { address: MULTICALL3, abi: MULTICALL3_ABI, functionName: 'getEthBalance', args: [PROBE as Hex] },
            { address: answer, abi: ANSWER_ABI, functionName: 'answer' },
            // Multicall3 has no such function: it reverts
            { address: MULTICALL3, abi: HISTORY_ABI, functionName: 'get', args: [1n] },
          ],
        }),
      );
    }
    const [onFerry, onAnvil] = results;
    assert.deepEqual(onFerry!.slice(0, 3), [
      { status: 'success', result: BigInt(EVM_CHAIN_ID) },
      { status: 'success', result: PROBE_WEI },
      { status: 'success', result: 42n },
    ]);
    assert.equal(onFerry![3]!.status, 'failure');
    assert.deepEqual(onFerry!.map((r) => r.status), onAnvil!.map((r) => r.status));
    assert.deepEqual(onFerry!.slice(0, 3), onAnvil!.slice(0, 3));
  });

  it('ethers: aggregate3 through a Contract, the same answers as on Anvil', async () => {
    const answers = [];
    for (const url of [ferry.url, anvil.url]) {
      const provider = new JsonRpcProvider(url, EVM_CHAIN_ID, { staticNetwork: true });
      const mc = new Contract(MULTICALL3, [AGGREGATE3, 'function getEthBalance(address) view returns (uint256)'], provider);
      const calls = [
        { target: MULTICALL3, allowFailure: false, callData: mc.interface.encodeFunctionData('getEthBalance', [PROBE]) },
        // the history contract reverts on calldata that is not 32 bytes
        { target: HISTORY_STORAGE, allowFailure: true, callData: '0x01' },
      ];
      const out = (await mc.getFunction('aggregate3').staticCall(calls)) as [boolean, string][];
      answers.push(out.map(([success, data]) => ({ success, data })));
      provider.destroy();
    }
    assert.deepEqual(answers[0], [
      { success: true, data: '0x' + PROBE_WEI.toString(16).padStart(64, '0') },
      { success: false, data: '0x' },
    ]);
    assert.deepEqual(answers[0], answers[1]);
  });

  it('eth_sendTransaction of a creation needing > 90,000 gas, without gas: gas = eth_estimateGas, as on Anvil', async () => {
    const got = [];
    for (const url of [ferry.url, anvil.url]) {
      const req = { from: devAddress(5), data: STORING_INIT };
      const estimate = await call<string>(url, 'eth_estimateGas', [req]);
      const hash = await call<string>(url, 'eth_sendTransaction', [req]);
      const receipt = await waitForReceipt(url, hash);
      const tx = await call(url, 'eth_getTransactionByHash', [hash]);
      assert.equal(receipt.status, '0x1', url);
      assert.equal(tx.gas, estimate, url);
      got.push(receipt.gasUsed);
    }
    assert.ok(BigInt(got[0]!) > 90_000n);
    // the estimates themselves may differ (each node's search stops at its own precision); the gas used may not
    assert.equal(got[0], got[1]);
  });

  it('eth_sendTransactionSync without gas: mined with the estimated gas', async () => {
    const req = { from: devAddress(6), data: STORING_INIT };
    const estimate = await call<string>(ferry.url, 'eth_estimateGas', [req]);
    const receipt = await call(ferry.url, 'eth_sendTransactionSync', [req]);
    assert.equal(receipt.status, '0x1');
    assert.equal((await call(ferry.url, 'eth_getTransactionByHash', [receipt.transactionHash])).gas, estimate);
  });

  it("a send whose estimate reverts answers geth's revert error (eth_estimateGas's) and sends nothing", async () => {
    // geth's setDefaults returns the estimate's error; Anvil 1.7.1 instead sends the tx with the block gas limit
    const nonce = await call<string>(ferry.url, 'eth_getTransactionCount', [devAddress(7), 'pending']);
    const req = { from: devAddress(7), data: REVERTING_INIT };
    const sent = await rpc(ferry.url, 'eth_sendTransaction', [req]);
    assert.deepEqual(sent.error, { code: 3, message: 'execution reverted', data: '0xdeadbeef' });
    assert.deepEqual(sent.error, (await rpc(ferry.url, 'eth_estimateGas', [req])).error);
    assert.equal(await call(ferry.url, 'eth_getTransactionCount', [devAddress(7), 'pending']), nonce);
  });
});
