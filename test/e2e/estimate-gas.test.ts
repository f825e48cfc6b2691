/**
 * eth_estimateGas follows geth's estimator (eth/gasestimator): a plain value transfer to an account
 * without code answers exactly 21000 (wallets send that as the gas limit), a call to code is searched
 * and the answer is enough to run it, and never far above what it uses. Before, a plain transfer was
 * estimated at 21166.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ContractFactory, Interface, JsonRpcProvider, Wallet } from 'ethers';
import { devWallet } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

let node: FerryNode;
let provider: JsonRpcProvider;
let token: string;
const iface = new Interface(compileToken().abi);

before(async () => {
  node = await startFerry();
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, polling: true, pollingInterval: 100 });
  const c = compileToken();
  const deployed = await new ContractFactory(c.abi, c.bytecode, devWallet(0, provider)).deploy('Ferry Token', 'FRY', 10n ** 24n);
  await deployed.waitForDeployment();
  token = (await deployed.getAddress()).toLowerCase();
});

after(async () => {
  provider?.destroy();
  await node?.stop();
});

describe('eth_estimateGas', () => {
  it('answers exactly 21000 for a plain value transfer to an account without code', async () => {
    const to = Wallet.createRandom().address;
    const from = devWallet(1).address;
    assert.equal(await call(node.url, 'eth_estimateGas', [{ from, to, value: '0x1' }]), '0x5208');
    assert.equal(await call(node.url, 'eth_estimateGas', [{ from, to }]), '0x5208');
    // ethers asks the same way and gets the same figure
    assert.equal(await provider.estimateGas({ from, to, value: 1n }), 21_000n);
  });

  it('does not take the shortcut when the recipient has code, or the call carries data', async () => {
    const from = devWallet(1).address;
    // the token has no payable fallback: a plain call to it reverts, so no 21000 answer
    const r = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_estimateGas', params: [{ from, to: token }] }),
    }).then((x) => x.json() as Promise<{ result?: string; error?: { code: number } }>);
    assert.ok(r.error, `a call into code without a fallback must fail, got ${JSON.stringify(r)}`);
    // data to an account without code uses 21000 + 4 non-zero calldata bytes × 16 = 21064; with data geth
    // searches (no shortcut) and stops once (hi - lo) / hi < 1.5% with lo = used - 1
    const to = Wallet.createRandom().address;
    const est = BigInt(await call(node.url, 'eth_estimateGas', [{ from, to, data: '0x01020304' }]));
    assert.ok(est > 21_064n && est < (21_063n * 1000n) / 985n, `estimate ${est}`);
  });

  it('estimates a token transfer with enough gas to run it, within geth error ratio of what it uses', async () => {
    const from = devWallet(0).address;
    const data = iface.encodeFunctionData('transfer', [Wallet.createRandom().address, 5n]);
    const estimate = BigInt(await call(node.url, 'eth_estimateGas', [{ from, to: token, data }]));
    const w = devWallet(0, provider);
    const tx = await w.sendTransaction({ to: token, data, gasLimit: estimate });
    const receipt = await tx.wait();
    assert.equal(receipt!.status, 1, 'the estimate must be enough for the tx to succeed');
    assert.ok(estimate >= receipt!.gasUsed, `estimate ${estimate} < used ${receipt!.gasUsed}`);
    // geth stops within 1.5% above the lowest limit that succeeds, which is at most used + refund + stipend
    assert.ok(estimate <= ((receipt!.gasUsed + 2_300n + 20_000n) * 1015n) / 1000n, `estimate ${estimate} far above used ${receipt!.gasUsed}`);
  });
});
