/**
 * Transactions are decoded and their senders recovered on the RPC thread, which hands the chain thread
 * the sender (src/chain/txdecode.ts). Through the real node, over both surfaces: what does not decode or
 * carries a bad signature is refused with the same code and words as when the chain thread decoded
 * everything, a MsgEthereumTx.from that is not the signer is refused, and good txs — ethers over
 * eth_sendRawTransaction, native bytes over broadcast_tx_sync — are mined from their real signer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTx } from '@ethereumjs/tx';
import { JsonRpcProvider, Transaction, Wallet } from 'ethers';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { makeCommon } from '../../src/evm/common.js';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitForReceipt } from '../helpers/rpc.js';

const GWEI = 10n ** 9n;
const DEAD = '0x000000000000000000000000000000000000dEaD';
const common = makeCommon(BigInt(EVM_CHAIN_ID));
const keys = devKeys();
const hexOf = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');
const bytesOf = (h: string) => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));

/** a signed-looking type-2 tx whose signature recovers no key (r = 0) */
function badSignature(nonce = 0n): Uint8Array {
  return createTx({ type: 2, nonce, to: DEAD, value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: BigInt(EVM_CHAIN_ID), v: 0n, r: 0n, s: 1n }, { common }).serialize();
}

async function cometGet(url: string, route: string): Promise<{ code: number; log: string; hash?: string; data?: string }> {
  const res = (await (await fetch(`${url}/${route}`)).json()) as { result?: { code: number; log: string; hash?: string; data?: string }; error?: unknown };
  assert.ok(res.result, `no result: ${JSON.stringify(res.error)}`);
  return res.result;
}

describe('CheckTx with senders recovered on the RPC thread', () => {
  let node: FerryNode;
  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
  });
  after(async () => {
    await node?.stop();
  });

  it('eth_sendRawTransaction: bad signature and undecodable bytes are refused with geth\'s words; a good tx is mined from its signer', async () => {
    const bad = await rpc(node.url, 'eth_sendRawTransaction', [hexOf(badSignature())]);
    assert.equal(bad.error?.code, -32000);
    assert.equal(bad.error?.message, 'invalid transaction v, r, s values');
    const garbage = await rpc(node.url, 'eth_sendRawTransaction', ['0x02c0']);
    assert.equal(garbage.error?.code, -32000);
    assert.match(garbage.error!.message, /^rlp: /);

    const provider = new JsonRpcProvider(node.url, EVM_CHAIN_ID, { staticNetwork: true });
    const wallet = new Wallet(keys[7]!, provider);
    const sent = await wallet.sendTransaction({ to: DEAD, value: 5n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 21_000n });
    const receipt = await waitForReceipt(node.url, sent.hash);
    assert.equal(receipt.status, '0x1');
    assert.equal(receipt.from, wallet.address.toLowerCase());
    provider.destroy();
  });

  it('broadcast_tx_sync / check_tx: bad signature, undecodable bytes and a false MsgEthereumTx.from are refused; good native bytes are mined', async () => {
    const badNative = wrapEthereumTx(badSignature(), new Uint8Array(20), 21_000n, 100n * GWEI);
    for (const route of ['check_tx', 'broadcast_tx_sync']) {
      const r = await cometGet(node.cometUrl, `${route}?tx=${hexOf(badNative)}`);
      assert.equal(r.code, 2, `${route}: ${r.log}`);
      assert.equal(r.log, 'invalid transaction v, r, s values');
      const junk = await cometGet(node.cometUrl, `${route}?tx=0x0a02ffff`);
      assert.equal(junk.code, 2);
      assert.match(junk.log, /^tx parse error|^for eth tx/);
    }

    const signer = new Wallet(keys[8]!);
    const other = new Wallet(keys[9]!);
    const nonce = Number(BigInt(await call(node.url, 'eth_getTransactionCount', [signer.address, 'pending'])));
    const signed = await signer.signTransaction({ to: DEAD, value: 7n, nonce, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 });
    const raw = bytesOf(signed);
    const liar = wrapEthereumTx(raw, bytesOf(other.address), 21_000n, 100n * GWEI);
    const refused = await cometGet(node.cometUrl, `broadcast_tx_sync?tx=${hexOf(liar)}`);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.log, 'invalid from address: MsgEthereumTx.from does not match the transaction signer');
    assert.equal(await call(node.url, 'eth_getTransactionByHash', [Transaction.from(signed).hash]), null, 'the refused tx is not in the pool');

    const good = wrapEthereumTx(raw, bytesOf(signer.address), 21_000n, 100n * GWEI);
    const ok = await cometGet(node.cometUrl, `broadcast_tx_sync?tx=${hexOf(good)}`);
    assert.equal(ok.code, 0, ok.log);
    const receipt = await waitForReceipt(node.url, Transaction.from(signed).hash!);
    assert.equal(receipt.status, '0x1');
    assert.equal(receipt.from, signer.address.toLowerCase());
  });
});
