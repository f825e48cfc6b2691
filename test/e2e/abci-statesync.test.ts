/**
 * State sync on a real CometBFT network, v0.38 and v0.39 (docs/abci.md "State sync"): four validators take a
 * snapshot every SNAPSHOT_INTERVAL blocks under transfer load; a fifth node, started later with
 * CometBFT's `[statesync]` (two validators' RPC, trust height and hash from a validator's /commit),
 * restores the newest snapshot instead of replaying the chain, then follows the network: from the
 * snapshot height on it serves Surface A and CometBFT's RPC and agrees with the validators on every
 * block (hash, state root, receipts) and balance; below it, it answers as a pruned node. Validator 0
 * serves every chunk corrupted (FERRY_TEST_FAULT=corrupt-snapshot-chunks): the joining node refuses
 * such a chunk and fetches it from another peer. BLOCKHASH of blocks below the snapshot height (a
 * contract returns and stores BLOCKHASH(n)) answers the real hashes on the joining node, in
 * eth_call and in a block it executes (store/hashwindow.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, getCreateAddress } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { CometNet, cometbftOrSkip, rpc, type CometLine, type NetNode } from '../helpers/cometnet.js';
import { EVM_CHAIN_ID } from '../helpers/node.js';

const GWEI = 10n ** 9n;
const SNAPSHOT_INTERVAL = 10;
/** small chunks, so the joining node fetches many and meets the corrupting validator */
const CHUNK_BYTES = '256';
const TRANSFERS = 30;
const RESTORE_TIMEOUT_MS = 120_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hexQ = (n: bigint) => '0x' + n.toString(16);
/** init code of a contract whose runtime (15 bytes) returns and stores (at slot NUMBER) BLOCKHASH(CALLDATALOAD(0)) */
const BLOCKHASH_INIT = '0x6e' + '6000354080435560005260206000f3' + '600052' + '600f6011f3';
const word = (k: bigint) => '0x' + k.toString(16).padStart(64, '0');

interface Block {
  hash: string;
  stateRoot: string;
  receiptsRoot: string;
}

function setAppToml(node: NetNode, interval: number): void {
  const file = join(node.ferryHome, 'config', 'app.toml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^snapshot-interval = \d+$/m, `snapshot-interval = ${interval}`));
}

for (const line of ['0.38', '0.39'] as CometLine[]) {
  const cometbft = cometbftOrSkip(line);
  describe(`state sync: a fifth node joins from a validator snapshot (CometBFT v${line})`, { skip: cometbft.skip }, () => {
    let net: CometNet;
    let validators: NetNode[];
    let joiner: NetNode;
    let snapHeight: bigint;
    const recipients = Array.from({ length: 5 }, (_, i) => '0x' + (0xa0 + i).toString(16).repeat(20));

    before(async () => {
      net = await CometNet.create({ cometBin: cometbft.bin!, validators: 4, fullNodes: 1, timeoutCommit: '300ms' });
      validators = net.nodes.slice(0, 4);
      joiner = net.nodes[4]!;
      for (const v of validators) setAppToml(v, SNAPSHOT_INTERVAL);
      const env = { FERRY_TEST_HOOKS: '1', FERRY_TEST_SNAPSHOT_CHUNK_BYTES: CHUNK_BYTES };
      await Promise.all(validators.map((v, i) => v.start({ ferryEnv: i === 0 ? { ...env, FERRY_TEST_FAULT: 'corrupt-snapshot-chunks' } : env })));
      // CometBFT v0.39 refuses broadcasts while it is catching up at start
      await net.waitHeight(2n, validators);
      // load: transfers from two dev accounts, sent to validator 1
      const senders = devKeys().slice(0, 2).map((k) => new Wallet(k));
      for (let i = 0; i < TRANSFERS; i++) {
        const w = senders[i % 2]!;
        const raw = await w.signTransaction({
          to: recipients[i % recipients.length], value: 1000n + BigInt(i), nonce: Math.floor(i / 2), gasLimit: 21_000,
          maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2,
        });
        await rpc(validators[1]!.ethUrl, 'eth_sendRawTransaction', [raw]);
      }
      // the BLOCKHASH contract, deployed before the snapshots
      const deployer = new Wallet(devKeys()[2]!);
      await rpc(validators[1]!.ethUrl, 'eth_sendRawTransaction', [
        await deployer.signTransaction({ data: BLOCKHASH_INIT, nonce: 0, gasLimit: 200_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 }),
      ]);
      // two snapshots taken (and the light client needs headers up to the snapshot height + 2)
      await net.waitHeight(BigInt(2 * SNAPSHOT_INTERVAL + 3), validators);
      snapHeight = BigInt(2 * SNAPSHOT_INTERVAL);
      // the joining node's CometBFT: state sync from validators 1 and 2, trusting a header a validator's /commit gives
      const trustHeight = 5;
      const commit = await rpc<{ signed_header: { commit: { block_id: { hash: string } } } }>(validators[1]!.cometUrl, 'commit', { height: String(trustHeight) });
      const cfg = join(joiner.cometHome, 'config', 'config.toml');
      const servers = [validators[1]!, validators[2]!].map((v) => v.cometUrl).join(',');
      writeFileSync(cfg, readFileSync(cfg, 'utf8') + [
        '', '[statesync]', 'enable = true', `rpc_servers = "${servers}"`, `trust_height = ${trustHeight}`,
        `trust_hash = "${commit.signed_header.commit.block_id.hash}"`, 'trust_period = "168h0m0s"', 'discovery_time = "5s"', 'chunk_request_timeout = "5s"', '',
      ].join('\n'));
      await joiner.start();
    });
    after(async () => {
      await net?.finish();
    });

    it('restores the newest snapshot, refusing the corrupted chunks, instead of replaying from height 1', async () => {
      const deadline = Date.now() + RESTORE_TIMEOUT_MS;
      for (;;) {
        const h = await joiner.height().catch(() => 0n);
        if (h >= snapHeight + 3n) break;
        if (Date.now() > deadline) throw new Error(`the joining node did not sync\n${joiner.logs()}`);
        await sleep(200);
      }
      const log = readFileSync(joiner.ferry.logFile, 'utf8');
      assert.match(log, /snapshot restored: state verified against the app hash/);
      assert.match(log, /snapshot chunk does not match its hash/, 'the corrupted chunks of validator 0 were refused');
      // it never executed a block at or below the snapshot height
      const restored = /"height":(\d+)[^\n]*snapshot restored/.exec(log);
      assert.ok(restored, 'restored height logged');
      snapHeight = BigInt(restored[1]!);
      assert.ok(snapHeight % BigInt(SNAPSHOT_INTERVAL) === 0n && snapHeight >= BigInt(2 * SNAPSHOT_INTERVAL), `snapshot height ${snapHeight}`);
    });

    it('agrees with the validators on every block from the snapshot height on, and on balances', async () => {
      const top = (await joiner.height()) - 1n;
      await net.waitHeight(top, validators);
      for (let h = snapHeight; h <= top; h++) {
        const want = await rpc<Block>(validators[2]!.ethUrl, 'eth_getBlockByNumber', [hexQ(h), false]);
        const got = await rpc<Block>(joiner.ethUrl, 'eth_getBlockByNumber', [hexQ(h), false]);
        assert.equal(got.hash, want.hash, `block ${h} hash`);
        assert.equal(got.stateRoot, want.stateRoot, `block ${h} state root`);
        assert.equal(got.receiptsRoot, want.receiptsRoot, `block ${h} receipts root`);
        // CometBFT's RPC of the joining node: header h+1 carries EVM block h's state root (a block it fetched after the restore)
        if (h > snapHeight) {
          const cb = await rpc<{ block_id: { hash: string }; block: { header: { app_hash: string } } }>(joiner.cometUrl, 'block', { height: String(h) });
          assert.equal('0x' + cb.block_id.hash.toLowerCase(), got.hash, `CometBFT block ${h} id`);
        }
      }
      for (const a of [...recipients, new Wallet(devKeys()[0]!).address]) {
        for (const at of [hexQ(snapHeight), hexQ(top)]) {
          assert.equal(await rpc(joiner.ethUrl, 'eth_getBalance', [a, at]), await rpc(validators[3]!.ethUrl, 'eth_getBalance', [a, at]), `balance of ${a} at ${at}`);
        }
      }
    });

    it('answers BLOCKHASH below the snapshot height as the validators do, in eth_call and in a block it executes', async () => {
      const deployer = new Wallet(devKeys()[2]!);
      const contract = getCreateAddress({ from: deployer.address, nonce: 0 });
      const hashAt = async (h: bigint) => (await rpc<Block>(validators[2]!.ethUrl, 'eth_getBlockByNumber', [hexQ(h), false])).hash;
      const at = snapHeight + 2n;
      for (const n of [1n, snapHeight - 3n, snapHeight + 1n]) {
        const call = { to: contract, data: word(n) };
        const got = await rpc<string>(joiner.ethUrl, 'eth_call', [call, hexQ(at)]);
        assert.equal(got, await rpc<string>(validators[3]!.ethUrl, 'eth_call', [call, hexQ(at)]), `eth_call BLOCKHASH(${n}) at ${at}`);
        assert.equal(got, await hashAt(n), `BLOCKHASH(${n}) is block ${n}'s hash`);
      }
      // a transaction asking for a block below the snapshot, executed by the joining node too
      const target = snapHeight - 3n;
      const raw = await deployer.signTransaction({ to: contract, data: word(target), nonce: 1, gasLimit: 100_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 });
      const txHash = await rpc<string>(validators[1]!.ethUrl, 'eth_sendRawTransaction', [raw]);
      let receipt: { blockNumber: string; status: string } | null = null;
      for (const deadline = Date.now() + RESTORE_TIMEOUT_MS; !receipt; await sleep(200)) {
        receipt = await rpc<{ blockNumber: string; status: string } | null>(joiner.ethUrl, 'eth_getTransactionReceipt', [txHash]);
        if (!receipt && Date.now() > deadline) throw new Error(`the BLOCKHASH transaction did not reach the joining node\n${joiner.logs()}`);
      }
      const b = BigInt(receipt.blockNumber);
      assert.equal(receipt.status, '0x1');
      assert.ok(b - target <= 256n, `block ${b} is within BLOCKHASH's window of block ${target}`);
      const stored = await rpc<string>(joiner.ethUrl, 'eth_getStorageAt', [contract, word(b), hexQ(b)]);
      assert.equal(stored, await hashAt(target), `stored BLOCKHASH(${target})`);
      await net.waitHeight(b + 1n, validators);
      const want = await rpc<Block>(validators[2]!.ethUrl, 'eth_getBlockByNumber', [hexQ(b), false]);
      const got = await rpc<Block>(joiner.ethUrl, 'eth_getBlockByNumber', [hexQ(b), false]);
      assert.equal(got.stateRoot, want.stateRoot, `block ${b} state root`);
    });

    it('answers history below the snapshot height as a pruned node does', async () => {
      const below = hexQ(snapHeight - 1n);
      await assert.rejects(rpc(joiner.ethUrl, 'eth_getBlockByNumber', [below, false]), /pruned history unavailable/);
      await assert.rejects(rpc(joiner.ethUrl, 'eth_getBalance', [recipients[0], below]), /pruned history unavailable/);
      await assert.rejects(rpc(joiner.ethUrl, 'eth_getBalance', [recipients[0], '0x0']), /historical state [0-9a-f]{64} is not available/);
      const genesis = await rpc<Block>(joiner.ethUrl, 'eth_getBlockByNumber', ['0x0', false]);
      assert.equal(genesis.hash, (await rpc<Block>(validators[0]!.ethUrl, 'eth_getBlockByNumber', ['0x0', false])).hash);
      const status = await rpc<{ sync_info: { earliest_block_height: string; catching_up: boolean } }>(joiner.cometUrl, 'status');
      assert.ok(BigInt(status.sync_info.earliest_block_height) > snapHeight, `CometBFT earliest_block_height ${status.sync_info.earliest_block_height}`);
    });
  });
}
