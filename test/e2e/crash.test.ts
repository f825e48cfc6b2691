/**
 * Crash safety: while senders push transfers, `kill -9` the node at random moments, restart it on
 * the same home, and check that every receipt a client was ever given still exists with the same
 * blockHash, and that the height never goes back below a reported receipt (or a reported height).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, sleep, toHex, waitFor } from '../helpers/rpc.js';

const ARGS = ['--consensus.timeout_commit', '200ms'];
const ROUNDS = 4;
const MIN_RUN_MS = 300;
const MAX_RUN_MS = 2_500;
const SENDERS = [1, 2, 3];
const SINK = 9;
const RECEIPT_TIMEOUT_MS = 10_000;
/** each round kills only after the load produced a receipt on the restarted node */
const ROUND_START_TIMEOUT_MS = 30_000;
const GWEI = 10n ** 9n;
const MIN_RECEIPTS = 20;

interface Seen {
  blockHash: string;
  blockNumber: number;
}

describe('crash (kill -9) under load', () => {
  it(`keeps every reported receipt across ${ROUNDS} kill -9 + restart rounds`, async (t) => {
    let node: FerryNode = await startFerry({ args: ARGS });
    const home = node.home;
    /** where the senders talk to; null while the node is down */
    let target: string | null = node.url;
    /** bumped at each restart: a sender stops waiting for a receipt that the crash may have lost */
    let epoch = 0;
    const seen = new Map<string, Seen>();
    let maxReceiptHeight = 0;
    let maxSeenHeight = 0;
    let stopping = false;

    /** a call to whatever node is up; null on any transport error or while down */
    const tryCall = async (method: string, params: unknown[]): Promise<any> => {
      const url = target;
      if (url === null) return null;
      try {
        return await call(url, method, params);
      } catch (e: any) {
        if (e.rpc) throw e;
        return null;
      }
    };

    const sender = async (i: number) => {
      const w = devWallet(i);
      while (!stopping) {
        try {
          const n = await tryCall('eth_getTransactionCount', [w.address, 'pending']);
          if (n === null) {
            await sleep(50);
            continue;
          }
          const raw = await w.signTransaction({
            type: 2,
            chainId: EVM_CHAIN_ID,
            nonce: Number(BigInt(n)),
            to: devAddress(SINK),
            value: 1n,
            gasLimit: 21_000n,
            maxFeePerGas: 100n * GWEI,
            maxPriorityFeePerGas: GWEI,
          });
          const sentIn = epoch;
          const hash = await tryCall('eth_sendRawTransaction', [raw]);
          if (hash === null) continue;
          const receipt = async () => {
            const r = await tryCall('eth_getTransactionReceipt', [hash]);
            if (r === null && epoch !== sentIn) throw new Error('restarted; the tx may be lost with the mempool');
            return r;
          };
          const r = await waitFor(`receipt ${hash}`, receipt, RECEIPT_TIMEOUT_MS, 50);
          const blockNumber = Number(BigInt(r.blockNumber));
          seen.set(hash, { blockHash: r.blockHash, blockNumber });
          maxReceiptHeight = Math.max(maxReceiptHeight, blockNumber);
        } catch {
          // rejected (e.g. nonce raced a restart) or no receipt in time (tx lost with the mempool): go again
          await sleep(50);
        }
      }
    };

    const watcher = async () => {
      while (!stopping) {
        const h = await tryCall('eth_blockNumber', []).catch(() => null);
        if (h !== null) maxSeenHeight = Math.max(maxSeenHeight, Number(BigInt(h)));
        await sleep(50);
      }
    };

    const verify = async (url: string, label: string) => {
      const height = Number(BigInt(await call(url, 'eth_blockNumber')));
      assert.ok(height >= maxReceiptHeight, `${label}: height ${height} went below a reported receipt's block ${maxReceiptHeight}`);
      assert.ok(height >= maxSeenHeight, `${label}: height ${height} went below a reported height ${maxSeenHeight}`);
      for (const [hash, s] of seen) {
        const r = await call(url, 'eth_getTransactionReceipt', [hash]);
        assert.ok(r, `${label}: receipt of ${hash} (block ${s.blockNumber}) is gone`);
        assert.equal(r.blockHash, s.blockHash, `${label}: receipt of ${hash} moved`);
        assert.equal(Number(BigInt(r.blockNumber)), s.blockNumber);
      }
      const blocks = new Map([...seen.values()].map((s) => [s.blockNumber, s.blockHash]));
      for (const [n, hash] of blocks) {
        const b = await call(url, 'eth_getBlockByNumber', [toHex(n), false]);
        assert.equal(b?.hash, hash, `${label}: block ${n} changed`);
      }
    };

    const loops = [...SENDERS.map(sender), watcher()];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const atStart = seen.size;
        await waitFor(`a receipt in round ${round}`, async () => (seen.size > atStart ? true : null), ROUND_START_TIMEOUT_MS);
        const runMs = MIN_RUN_MS + Math.floor(Math.random() * (MAX_RUN_MS - MIN_RUN_MS));
        await sleep(runMs);
        const before = seen.size;
        target = null;
        await node.kill9();
        t.diagnostic(`round ${round}: killed ${runMs} ms after its first receipt; ${before} receipts so far, max receipt block ${maxReceiptHeight}, max height seen ${maxSeenHeight}`);
        node = await startFerry({ home, args: ARGS });
        await verify(node.url, `after kill ${round}`);
        target = node.url;
        epoch++;
      }
      await sleep(MIN_RUN_MS);
    } finally {
      stopping = true;
      await Promise.all(loops);
    }

    assert.ok(seen.size >= MIN_RECEIPTS, `only ${seen.size} receipts were reported; the load did not run`);
    await verify(node.url, 'final');
    assert.equal(await node.stop(), 0, 'SIGTERM after the crashes exits 0');
    const last = await startFerry({ home, args: ARGS });
    try {
      await verify(last.url, 'after a clean restart');
    } finally {
      assert.equal(await last.stop(), 0);
    }
  });
});
