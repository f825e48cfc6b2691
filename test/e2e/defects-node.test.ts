/**
 * Defects issue, items 5 and 11, against the real ferry process:
 * - net_listening agrees with Surface B's net_info (`false`: ferry has no p2p listener);
 * - miner_setGasPrice refuses a price no transaction could meet (2^256−1 before the fix was written into
 *   app.toml, and after a restart every tx was `transaction underpriced`), and a price it accepts leaves
 *   a node that restarts and takes a tx priced above it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JsonRpcProvider, Network } from 'ethers';
import { makeJwt, readJwtSecret } from '../../src/server/auth.js';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, waitForReceipt, type RpcResponse } from '../helpers/rpc.js';

const ARGS = ['--json-rpc.api', 'eth,net,web3,miner', '--consensus.timeout_commit', '200ms'];
const GWEI = 10n ** 9n;
const MAX_UINT256 = 2n ** 256n - 1n;

let node: FerryNode;

/** miner_* with a fresh bearer token (the secret is in the node's home) */
async function miner(method: string, params: unknown[]): Promise<RpcResponse> {
  const jwt = makeJwt(readJwtSecret(join(node.home, 'config', 'jwt.hex')));
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  return (await res.json()) as RpcResponse;
}

const appToml = (): string => readFileSync(join(node.home, 'config', 'app.toml'), 'utf8');

before(async () => {
  node = await startFerry({ args: ARGS });
});

after(async () => {
  assert.equal(await node.stop(), 0);
});

describe('net_listening', () => {
  it('is false, as net_info.listening on Surface B', async () => {
    const info = (await (await fetch(`${node.cometUrl}/net_info`)).json()) as { result: { listening: boolean } };
    assert.equal(info.result.listening, false);
    assert.equal(await call(node.url, 'net_listening'), info.result.listening);
  });
});

describe('miner_setGasPrice range', () => {
  it('refuses 2^256−1 (and the first price above the maximum) with -32602, leaving app.toml as it was', async () => {
    const before = appToml();
    const max = MAX_UINT256 / 21_000n;
    for (const bad of [MAX_UINT256, max + 1n]) {
      const r = await miner('miner_setGasPrice', ['0x' + bad.toString(16)]);
      assert.deepEqual(r.error, {
        code: -32602,
        message: `invalid argument 0: gas price ${bad}aferry is above the maximum ${max}aferry`,
      });
      assert.equal(appToml(), before, 'app.toml changed after a refused price');
    }
  });

  it('an accepted price survives a restart, and a tx priced above it is accepted', async () => {
    const r = await miner('miner_setGasPrice', ['0x' + (5n * GWEI).toString(16)]);
    assert.equal(r.result, true, JSON.stringify(r.error));
    assert.match(appToml(), /^minimum-gas-prices = "5000000000aferry"$/m);

    assert.equal(await node.stop(), 0);
    node = await startFerry({ home: node.home, args: ARGS });
    const provider = new JsonRpcProvider(node.url, Network.from(EVM_CHAIN_ID), { staticNetwork: true, pollingInterval: 100 });
    try {
      const wallet = devWallet(3, provider);
      const to = devWallet(4).address;
      await assert.rejects(
        wallet.sendTransaction({ to, value: 1n, maxFeePerGas: 4n * GWEI, maxPriorityFeePerGas: 1n }),
        /transaction underpriced/,
        'a tx below the new minimum was accepted: the price did not apply after the restart',
      );
      const sent = await wallet.sendTransaction({ to, value: 1n, maxFeePerGas: 6n * GWEI, maxPriorityFeePerGas: 1n });
      const receipt = await waitForReceipt(node.url, sent.hash);
      assert.equal(receipt.status, '0x1');
    } finally {
      provider.destroy();
    }
  });
});
