/**
 * EIP-7702 under a real CometBFT v0.38 (one validator, ferry over the ABCI socket, a Prague genesis):
 * a type-4 tx signed by viem goes through CometBFT's mempool (CheckTx), PrepareProposal,
 * ProcessProposal and FinalizeBlock; the authority is delegated; CometBFT's own RPC finds the tx by
 * ferry's events with `txType` 4; a set-code tx without authorizations is refused by CheckTx with geth's text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, defineChain, encodeFunctionData, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { CometNet, cometbftOrSkip, rpc } from '../helpers/cometnet.js';
import { EVM_CHAIN_ID } from '../helpers/node.js';
import { compileContract } from '../helpers/solc.js';

const comet = cometbftOrSkip();
const POLL_MS = 100;
const FEES = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const delegate = compileContract('Delegate.sol', 'Delegate');

describe('EIP-7702 under one CometBFT v0.38 + one ferry over ABCI (prague genesis)', { timeout: 180_000 }, () => {
  let net: CometNet;
  const sponsor = privateKeyToAccount(devKeys()[0] as Hex);
  const authority = privateKeyToAccount(devKeys()[4] as Hex);

  before(async () => {
    if (comet.skip) return;
    // the same Prague genesis for CometBFT and ferry (`ferry testnet --hardfork prague`)
    net = await CometNet.started({ cometBin: comet.bin!, validators: 1, timeoutCommit: '200ms', forkArgs: ['--hardfork', 'prague'] });
  });

  after(async () => {
    if (comet.skip) return;
    await net?.finish();
  });

  it('a viem type-4 tx is checked, proposed, executed and found by CometBFT with txType 4', { skip: comet.skip }, async () => {
    const url = net.nodes[0]!.ethUrl;
    const chain = defineChain({ id: EVM_CHAIN_ID, name: 'ferry', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
    const pub = createPublicClient({ chain, transport: http(url), pollingInterval: POLL_MS, cacheTime: 0 });
    const wallet = createWalletClient({ account: sponsor, chain, transport: http(url), pollingInterval: POLL_MS, cacheTime: 0 });
    const deployed = await pub.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi: delegate.abi, bytecode: delegate.bytecode, gas: 1_000_000n, ...FEES }) });
    const d = deployed.contractAddress!;
    const auth = await authority.signAuthorization({ address: d, chainId: EVM_CHAIN_ID, nonce: await pub.getTransactionCount({ address: authority.address }) });
    const data = encodeFunctionData({ abi: delegate.abi, functionName: 'ping', args: [3n] });
    const hash = await wallet.sendTransaction({ to: authority.address, data, authorizationList: [auth], gas: 200_000n, ...FEES });
    const r = await pub.waitForTransactionReceipt({ hash });
    assert.equal(r.status, 'success');
    assert.equal(r.type, 'eip7702');
    assert.equal(await pub.getCode({ address: authority.address }), '0xef0100' + d.slice(2).toLowerCase());
    assert.equal(await pub.getTransactionCount({ address: authority.address }), 1);
    const found = await rpc<{ total_count: string; txs: { tx_result: { events: { type: string; attributes: { key: string; value: string }[] }[] } }[] }>(
      net.nodes[0]!.cometUrl,
      'tx_search',
      { query: `ethereum_tx.ethereumTxHash='${hash}'` },
    );
    assert.equal(found.total_count, '1');
    const message = found.txs[0]!.tx_result.events.find((e) => e.type === 'message')!;
    assert.equal(message.attributes.find((a) => a.key === 'txType')?.value, '4');
  });

  it("CheckTx refuses a set-code tx without authorizations with geth's text", { skip: comet.skip }, async () => {
    const url = net.nodes[0]!.ethUrl;
    // viem signs what it is given: an empty authorization list is serialized as such
    const chain = defineChain({ id: EVM_CHAIN_ID, name: 'ferry', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
    const pub = createPublicClient({ chain, transport: http(url), cacheTime: 0 });
    const nonce = await pub.getTransactionCount({ address: sponsor.address, blockTag: 'pending' });
    const raw = await sponsor.signTransaction({ type: 'eip7702', chainId: EVM_CHAIN_ID, nonce, to: authority.address, gas: 100_000n, authorizationList: [], ...FEES });
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }) });
    const body = (await res.json()) as { error?: { message: string } };
    assert.equal(body.error?.message, 'set code tx must have at least one authorization tuple');
  });
});
