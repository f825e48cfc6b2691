/**
 * A hardfork activated by block time on a real 4-validator CometBFT v0.38 network (docs/configuration.md
 * "Hardforks"): `ferry testnet --hardfork prague --osaka-time <t>`; a CLZ (EIP-7939) creation fails in a
 * block before t and succeeds in one after, and every node agrees on every block (hash, state root,
 * receipts; each EVM block the CometBFT block of its height).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { CometNet, assertEvmMatchesComet, cometbftOrSkip, rpc, type NetNode } from '../helpers/cometnet.js';
import { EVM_CHAIN_ID } from '../helpers/node.js';

const comet = cometbftOrSkip();
const GWEI = 10n ** 9n;
const POLL_MS = 200;
/** Osaka's activation after the genesis is written: time for the network to start and mine a Prague block */
const OSAKA_AFTER_S = 60;
/** init code: PUSH1 1, CLZ (0x1e), PUSH1 0, SSTORE, STOP */
const CLZ_INIT = '0x6001' + '1e' + '600055' + '00';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receipt(node: NetNode, hash: string): Promise<Record<string, string>> {
  for (;;) {
    const r = await rpc<Record<string, string> | null>(node.ethUrl, 'eth_getTransactionReceipt', [hash]).catch(() => null);
    if (r) return r;
    await sleep(POLL_MS);
  }
}

async function blockTime(node: NetNode, n: string): Promise<number> {
  return Number((await rpc<{ timestamp: string }>(node.ethUrl, 'eth_getBlockByNumber', [n, false])).timestamp);
}

describe('Prague → Osaka by block time on a 4-validator CometBFT network', () => {
  let net: CometNet;
  let nodes: NetNode[];
  let osakaTime: number;
  const wallet = new Wallet(devKeys()[1]!);
  let nonce = 0;
  const sendClz = async () =>
    rpc<string>(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [
      await wallet.signTransaction({ data: CLZ_INIT, nonce: nonce++, gasLimit: 100_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 }),
    ]);

  before(async () => {
    if (comet.skip) return;
    osakaTime = Math.floor(Date.now() / 1000) + OSAKA_AFTER_S;
    net = await CometNet.started({ cometBin: comet.bin!, validators: 4, timeoutCommit: '300ms', forkArgs: ['--hardfork', 'prague', '--osaka-time', String(osakaTime)] });
    nodes = net.nodes;
  });

  after(async () => {
    if (comet.skip) return;
    await net?.finish();
  });

  it('CLZ fails before osaka_time and runs after; every node agrees on every block', { skip: comet.skip }, async () => {
    const before = await receipt(nodes[0]!, await sendClz());
    assert.ok((await blockTime(nodes[0]!, before.blockNumber!)) < osakaTime, 'the first CLZ tx landed before the activation');
    assert.equal(before.status, '0x0');
    while ((await blockTime(nodes[0]!, 'latest')) < osakaTime) await sleep(POLL_MS * 5);
    const afterR = await receipt(nodes[0]!, await sendClz());
    assert.ok((await blockTime(nodes[0]!, afterR.blockNumber!)) >= osakaTime);
    assert.equal(afterR.status, '0x1');
    const top = BigInt(afterR.blockNumber!);
    // assertEvmMatchesComet reads CometBFT header top + 1 (its app_hash is block top's state root)
    await net.waitHeight(top + 1n);
    for (const n of nodes) await assertEvmMatchesComet(n, top);
    for (let h = 1n; h <= top; h++) {
      const tag = '0x' + h.toString(16);
      const want = await rpc<{ hash: string; stateRoot: string }>(nodes[0]!.ethUrl, 'eth_getBlockByNumber', [tag, false]);
      for (const n of nodes.slice(1)) {
        const got = await rpc<{ hash: string; stateRoot: string }>(n.ethUrl, 'eth_getBlockByNumber', [tag, false]);
        assert.equal(got.hash, want.hash, `${n.name} block ${h} hash`);
        assert.equal(got.stateRoot, want.stateRoot, `${n.name} block ${h} state root`);
      }
    }
    for (const n of nodes.slice(1)) assert.deepEqual(await receipt(n, afterR.transactionHash!), afterR);
  });
});
