/**
 * ethers 6 and issue 22's methods, against `ferry dev`. ethers 6.17 (node_modules) calls none of them
 * itself — no synchronous send, no eth_simulateV1, no eth_fillTransaction, no dev actions — so an
 * ethers user reaches them through `provider.send`; what is checked here is that ethers' own parsers
 * and reads take the answers: a Wallet-signed tx sent with eth_sendRawTransactionSync (the receipt
 * is the one ethers' getTransactionReceipt reads), eth_fillTransaction's `raw` parsed by
 * `Transaction.from`, eth_call with block overrides, eth_simulateV1, evm_mine_detailed's blocks as
 * ethers' getBlock reads them, and anvil_reorg seen by ethers' getBlock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JsonRpcProvider, Network, Transaction, Wallet } from 'ethers';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';

describe('ethers 6 provider.send: issue 22 methods on ferry dev', () => {
  let node: FerryNode;
  let provider: JsonRpcProvider;

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    provider = new JsonRpcProvider(node.url, Network.from(EVM_CHAIN_ID), { staticNetwork: true, cacheTimeout: -1 });
  });
  after(async () => {
    provider?.destroy();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('eth_sendRawTransactionSync: a Wallet-signed tx answers its receipt, the one getTransactionReceipt reads', async () => {
    const wallet = new Wallet(devKeys()[1]!, provider);
    const signed = await wallet.signTransaction(await wallet.populateTransaction({ to: devAddress(2), value: 5n }));
    const receipt = await provider.send('eth_sendRawTransactionSync', [signed]);
    assert.equal(receipt.status, '0x1');
    const read = await provider.getTransactionReceipt(Transaction.from(signed).hash!);
    assert.equal(read?.blockHash, receipt.blockHash);
    assert.equal(BigInt(read!.blockNumber), BigInt(receipt.blockNumber));
  });

  it('eth_fillTransaction: the raw unsigned tx parses with Transaction.from and carries the filled fields', async () => {
    const filled = await provider.send('eth_fillTransaction', [{ from: devAddress(3), to: devAddress(4), value: '0x7' }]);
    const tx = Transaction.from(filled.raw);
    assert.equal(tx.to, devAddress(4));
    assert.equal(tx.value, 7n);
    assert.equal(tx.chainId, BigInt(EVM_CHAIN_ID));
    assert.equal(BigInt(tx.nonce), BigInt(filled.tx.nonce));
    assert.equal(tx.gasLimit, BigInt(filled.tx.gas));
  });

  it('eth_call with block overrides and eth_simulateV1 through provider.send', async () => {
    // TIMESTAMP; return it: 42 60 00 52 60 20 60 00 f3
    const code = '0x4260005260206000f3';
    const out = await provider.send('eth_call', [{ to: devAddress(9) }, 'latest', { [devAddress(9)]: { code } }, { time: '0x1234' }]);
    assert.equal(BigInt(out), 0x1234n);
    const sim = await provider.send('eth_simulateV1', [{ blockStateCalls: [{ blockOverrides: { time: '0x99999999' }, stateOverrides: { [devAddress(9)]: { code } }, calls: [{ to: devAddress(9) }] }] }, 'latest']);
    assert.equal(BigInt(sim[0].calls[0].returnData), 0x99999999n);
  });

  it('evm_mine_detailed and anvil_reorg: the answers and the chain as ethers getBlock reads them', async () => {
    const mined = await provider.send('evm_mine_detailed', []);
    const block = await provider.getBlock(Number(mined[0].number));
    assert.equal(block?.hash, mined[0].hash);
    await provider.send('anvil_reorg', [1, [[{ from: devAddress(5), to: devAddress(6), value: '0x1' }, 0]]]);
    const replaced = await provider.getBlock(Number(mined[0].number), true);
    assert.notEqual(replaced?.hash, mined[0].hash);
    assert.equal(replaced?.prefetchedTransactions.length, 1);
    assert.equal(replaced?.prefetchedTransactions[0]!.from, devAddress(5));
  });
});
