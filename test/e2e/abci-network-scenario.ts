/**
 * A network of four validators and one non-validator full node, each a real CometBFT process
 * plus a real ferry process: txs sent to node 0 are mined; every node returns the same block hash,
 * state root and receipts per height; the chain goes on without a killed validator, which catches up
 * after restart; a ferry killed with -9 mid-load (its CometBFT then stops too, asserted) is replayed by the
 * handshake without divergence and keeps every receipt it had given. The full node serves Surface A, and
 * txs sent to it are mined: its first pooled tx, and (app mempool) one it received while it had no peer.
 * Every EVM block hash is the CometBFT block id, every state root the next header's app_hash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { CometNet, assertEvmMatchesComet, cometbftOrSkip, rpc, type CometLine, type NetNode } from '../helpers/cometnet.js';
import { EVM_CHAIN_ID } from '../helpers/node.js';

const GWEI = 10n ** 9n;
const POLL_MS = 100;
/** how long a CometBFT may take to notice its application died and stop */
const COMET_EXIT_MS = 15_000;

interface Block {
  hash: string;
  stateRoot: string;
  receiptsRoot: string;
  transactionsRoot: string;
  transactions: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** a few of CometBFT's reaps (reap_interval 500 ms) while the full node has no peer */
const REAPS_WITHOUT_PEERS_MS = 3_000;
/** the validators' restart and block sync, then up to MAX_REAP_REOFFER_GAP reaps (32 s) before a re-offer */
const REOFFER_RECEIPT_MS = 150_000;

/** Waits until `node`'s CometBFT counts `n` peers (net_info). */
async function waitPeers(node: NetNode, n: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await rpc<{ n_peers: string }>(node.cometUrl, 'net_info').catch(() => undefined);
    if (info && Number(info.n_peers) === n) return;
    if (Date.now() > deadline) throw new Error(`${node.name} did not reach ${n} peers (has ${info?.n_peers})\n${node.logs()}`);
    await sleep(POLL_MS);
  }
}

/** Signs transfers with explicit nonces (no node round trip), per sender in order. */
class Sender {
  private nonce = 0;
  readonly wallet: Wallet;
  constructor(key: string) {
    this.wallet = new Wallet(key);
  }
  async next(to: string): Promise<string> {
    return this.wallet.signTransaction({
      to,
      value: 1000n + BigInt(this.nonce),
      nonce: this.nonce++,
      gasLimit: 21_000,
      maxFeePerGas: 100n * GWEI,
      maxPriorityFeePerGas: 1n * GWEI,
      chainId: EVM_CHAIN_ID,
      type: 2,
    });
  }
}

async function receipt(node: NetNode, hash: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await rpc<Record<string, unknown> | null>(node.ethUrl, 'eth_getTransactionReceipt', [hash]).catch(() => null);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} on ${node.name}\n${node.logs()}`);
    await sleep(POLL_MS);
  }
}

async function block(node: NetNode, h: bigint): Promise<Block> {
  return rpc<Block>(node.ethUrl, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
}

/** Every node's blocks 1..upTo equal node 0's: hash, state root, tx and receipt roots, receipts. */
async function assertSameChain(nodes: NetNode[], upTo: bigint): Promise<void> {
  for (let h = 1n; h <= upTo; h++) {
    const want = await block(nodes[0]!, h);
    const wantReceipts = await rpc(nodes[0]!.ethUrl, 'eth_getBlockReceipts', ['0x' + h.toString(16)]);
    for (const n of nodes.slice(1)) {
      const got = await block(n, h);
      assert.equal(got.hash, want.hash, `${n.name} block ${h} hash`);
      assert.equal(got.stateRoot, want.stateRoot, `${n.name} block ${h} state root`);
      assert.equal(got.receiptsRoot, want.receiptsRoot, `${n.name} block ${h} receipts root`);
      assert.equal(got.transactionsRoot, want.transactionsRoot, `${n.name} block ${h} transactions root`);
      assert.deepEqual(await rpc(n.ethUrl, 'eth_getBlockReceipts', ['0x' + h.toString(16)]), wantReceipts, `${n.name} receipts of block ${h}`);
    }
  }
}

/** The network scenario on one CometBFT line (a test file per line: abci-network*.test.ts). */
export function describeNetwork(line: CometLine, o: { transport?: 'socket' | 'grpc'; mempool?: 'flood' | 'app' } = {}): void {
  const comet = cometbftOrSkip(line);
  const mempool = o.mempool ?? 'flood';
  const transport = o.transport ?? 'socket';
  describe(`a 4-validator CometBFT v${line} network of ferry nodes (ABCI over ${transport}, ${mempool} mempool), plus a full node`, () => {
    let net: CometNet;
    let nodes: NetNode[];
    const keys = devKeys();
    const senders = keys.slice(1, 5).map((k) => new Sender(k));
    /** senders of the tests that send one tx to the full node */
    const loners = keys.slice(5, 7).map((k) => new Sender(k));

    before(async () => {
      if (comet.skip) return;
      net = await CometNet.started({ cometBin: comet.bin!, validators: 4, fullNodes: 1, timeoutCommit: '300ms', transport, mempool });
      nodes = net.nodes;
    });

    after(async () => {
      if (comet.skip) return;
      await net?.finish();
    });

    it(`every node runs CometBFT v${line}`, { skip: comet.skip }, async () => {
      for (const n of nodes) {
        const status = await rpc<{ node_info: { version: string } }>(n.cometUrl, 'status');
        assert.ok(status.node_info.version.startsWith(`${line}.`), `${n.name} runs CometBFT ${status.node_info.version}`);
      }
    });

    it('the first tx the full node ever pools (sent to it) is mined', { skip: comet.skip }, async () => {
      // with the app mempool it reaches the validators only through the full node's ReapTxs (docs/abci.md)
      const full = nodes[4]!;
      const hash = await rpc<string>(full.ethUrl, 'eth_sendRawTransaction', [await loners[0]!.next(Wallet.createRandom().address)]);
      assert.equal((await receipt(full, hash)).status, '0x1');
    });

    // only the app mempool can strand a tx reaped while no peer was connected: CometBFT's flood mempool sends
    // its whole list to every peer that connects (mempool/reactor.go broadcastTxRoutine), so the flood networks do not run it
    if (mempool === 'app') it('a tx sent to the full node while it has no peer is mined once the validators are back', { skip: comet.skip }, async () => {
      const full = nodes[4]!;
      const validators = nodes.filter((n) => n.validator);
      for (const v of validators) await v.comet.kill('SIGKILL');
      await waitPeers(full, 0);
      const hash = await rpc<string>(full.ethUrl, 'eth_sendRawTransaction', [await loners[1]!.next(Wallet.createRandom().address)]);
      // let the full node's CometBFT reap it (every reap_interval, 500 ms) and send it to nobody
      await sleep(REAPS_WITHOUT_PEERS_MS);
      await Promise.all(validators.map((v) => v.start()));
      // offered again within MAX_REAP_REOFFER_GAP reaps (src/chain/reap.ts) after the validators are back
      assert.equal((await receipt(full, hash, REOFFER_RECEIPT_MS)).status, '0x1');
    });

    it('txs sent to node 0 are mined; all nodes (validators and the full node) agree per height', { skip: comet.skip }, async () => {
      const to = Wallet.createRandom().address;
      const hashes: string[] = [];
      for (const s of senders) for (let i = 0; i < 3; i++) hashes.push(await rpc<string>(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [await s.next(to)]));
      const receipts = await Promise.all(hashes.map((h) => receipt(nodes[0]!, h)));
      for (const r of receipts) assert.equal(r.status, '0x1');
      const top = BigInt(Math.max(...receipts.map((r) => Number(r.blockNumber))));
      await net.waitHeight(top);
      await assertSameChain(nodes, top);
      // the full node is not a validator yet serves Surface A: the receipts and the balance
      const full = nodes[4]!;
      assert.equal(full.validator, false);
      for (const r of receipts) assert.deepEqual(await receipt(full, r.transactionHash as string), r);
      assert.equal(BigInt(await rpc<string>(full.ethUrl, 'eth_getBalance', [to, 'latest'])), BigInt(await rpc<string>(nodes[0]!.ethUrl, 'eth_getBalance', [to, 'latest'])));
    });

    it('a burst of 50 txs from ONE sender, sent at once to node 0, is mined with consecutive nonces; a stale nonce gets geth\'s text', { skip: comet.skip }, async () => {
      // eth_sendRawTransaction answers after ferry's own CheckTx; the forward queue keeps the order for CometBFT
      // key 7: keys 1-4 are the scenario's senders and 5-6 the reap subtests' (each starts at nonce 0)
      const burst = new Sender(keys[7]!);
      const to = Wallet.createRandom().address;
      const raws: string[] = [];
      for (let i = 0; i < 50; i++) raws.push(await burst.next(to));
      const hashes = await Promise.all(raws.map((raw) => rpc<string>(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [raw])));
      const receipts = await Promise.all(hashes.map((h) => receipt(nodes[0]!, h)));
      for (const r of receipts) assert.equal(r.status, '0x1');
      const txs = await Promise.all(hashes.map((h) => rpc<{ nonce: string }>(nodes[0]!.ethUrl, 'eth_getTransactionByHash', [h])));
      assert.deepEqual(txs.map((t) => Number(t.nonce)), [...Array(50).keys()]);
      assert.equal(await rpc<string>(nodes[0]!.ethUrl, 'eth_getTransactionCount', [burst.wallet.address, 'latest']), '0x32');
      // nonce 0 again (a new tx: another value): refused with geth's text, nothing admitted
      const stale = await burst.wallet.signTransaction({ to, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 1n * GWEI, chainId: EVM_CHAIN_ID, type: 2 });
      await assert.rejects(rpc(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [stale]), /^Error: eth_sendRawTransaction: nonce too low/);
      assert.equal(await rpc<string>(nodes[0]!.ethUrl, 'eth_getTransactionCount', [burst.wallet.address, 'pending']), '0x32');
    });

    it('txs sent to the full node (never a proposer) are mined: the mempool gossips them to the validators', { skip: comet.skip }, async () => {
      const full = nodes[4]!;
      const to = Wallet.createRandom().address;
      const hashes: string[] = [];
      for (const s of senders.slice(0, 2)) hashes.push(await rpc<string>(full.ethUrl, 'eth_sendRawTransaction', [await s.next(to)]));
      for (const h of hashes) assert.equal((await receipt(full, h)).status, '0x1');
      for (const h of hashes) assert.ok(await receipt(nodes[0]!, h), 'node 0 has the receipt');
    });

    it('kill -9 of one validator (both processes): blocks go on; after restart it catches up to the same app hash', { skip: comet.skip }, async () => {
      const victim = nodes[3]!;
      await victim.kill9();
      const h0 = await nodes[0]!.height();
      await net.waitHeight(h0 + 3n, [nodes[0]!, nodes[1]!]);
      const to = Wallet.createRandom().address;
      const hash = await rpc<string>(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [await senders[0]!.next(to)]);
      const r = await receipt(nodes[0]!, hash);
      assert.equal(r.status, '0x1');
      await victim.start();
      const top = await nodes[0]!.height();
      await net.waitHeight(top, [victim]);
      await assertSameChain([nodes[0]!, victim], top);
    });

    it('kill -9 of only the ferry of a validator mid-load: handshake replay, no divergence, its receipts kept', { skip: comet.skip }, async () => {
      const victim = nodes[2]!;
      const to = Wallet.createRandom().address;
      let loading = true;
      const sent: string[] = [];
      const load = (async () => {
        let i = 0;
        while (loading) {
          const s = senders[i++ % senders.length]!;
          sent.push(await rpc<string>(nodes[0]!.ethUrl, 'eth_sendRawTransaction', [await s.next(to)]));
          await sleep(20);
        }
      })();
      // receipts the victim has given before it dies
      const given: Record<string, unknown>[] = [];
      while (given.length < 5) {
        const h = sent[given.length];
        if (h === undefined) {
          await sleep(POLL_MS);
          continue;
        }
        given.push(await receipt(victim, h));
      }
      await victim.ferry.kill('SIGKILL');
      if (transport === 'socket') {
        // docs/abci.md: if ferry dies, CometBFT stops too (its ABCI connections fail)
        assert.ok(await victim.comet.exited(COMET_EXIT_MS), `${victim.name}'s CometBFT exits when its ferry dies\n${victim.comet.logTail()}`);
      } else {
        // over gRPC CometBFT waits for its application instead; docs/abci.md: restart both, ferry first
        await victim.comet.kill('SIGKILL');
      }
      const h0 = await nodes[0]!.height();
      await net.waitHeight(h0 + 2n, [nodes[0]!]);
      loading = false;
      await load;
      await victim.start();
      const receipts = await Promise.all(sent.map((h) => receipt(nodes[0]!, h)));
      for (const r of receipts) assert.equal(r.status, '0x1');
      const top = BigInt(Math.max(...receipts.map((r) => Number(r.blockNumber))));
      await net.waitHeight(top);
      for (const r of given) assert.deepEqual(await receipt(victim, r.transactionHash as string), r, 'a receipt given before the crash is unchanged');
      await assertSameChain(nodes, top);
      // the others equal node 0 per height; node 0 and the replayed victim equal CometBFT's chain
      await net.waitHeight(top + 1n);
      await assertEvmMatchesComet(nodes[0]!, top);
      await assertEvmMatchesComet(victim, top);
    });
  });
}
