/**
 * consensus/engine.ts over a temporary store with the real application (EvmApp): the first height is
 * made at start, later ones on demand (the dev mining mode without a timer); each height is a real
 * CometBFT block linked to the last (last block id, last commit hash, app hash of the previous
 * results), signed with a commit that verifies, stored in the same transaction as the application's
 * commit; block times follow BFT time or the dev time controls; and a restart goes on from the store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devGenesis, type Genesis } from '../../src/config/genesis.js';
import {
  BlockIDFlag,
  SignedMsgType,
  commitHash,
  ed25519Verify,
  generateValidatorKey,
  headerHash,
  timestampToMillis,
  voteSignBytes,
  type ValidatorKey,
} from '../../src/consensus/cometbft/index.js';
import { Engine, genesisEngineOptions, type CometBlockRecord } from '../../src/consensus/engine.js';
import { DomainError } from '../../src/lib/errors.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GENESIS_TIME = '2026-01-01T00:00:00Z';
const GWEI = 10n ** 9n;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const timeOf = (rec: CometBlockRecord) => timestampToMillis(rec.block.header.time);

/** One engine over the store at `dbPath`, with its committed records collected in order. */
class Node {
  readonly committed: CometBlockRecord[] = [];
  private waiters: { height: bigint; resolve: () => void }[] = [];
  private constructor(
    readonly store: Store,
    readonly app: EvmApp,
    readonly engine: Engine,
  ) {}

  static async open(dbPath: string, genesis: Genesis, key: ValidatorKey): Promise<Node> {
    const store = new Store(dbPath);
    const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } }, silent, {
      onPoolChange() {},
    });
    let node: Node | undefined;
    const engine = new Engine(
      store,
      app,
      {
        ...genesisEngineOptions(genesis, key, 1n),
        timeoutCommitMs: 1000,
        blockOnTx: false,
        noTimer: true,
        createEmptyBlocks: true,
      },
      silent,
      {
        onCommitted: (height, rec) => {
          node!.committed.push(rec);
          for (const w of node!.waiters.filter((x) => x.height <= height)) w.resolve();
          node!.waiters = node!.waiters.filter((x) => x.height > height);
        },
      },
    );
    node = new Node(store, app, engine);
    return node;
  }

  /** resolves once `height` is committed (at once when it already is) */
  committedAt(height: bigint): Promise<void> {
    if (this.engine.height >= height) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ height, resolve }));
  }

  async close(): Promise<void> {
    await this.engine.stop();
    this.store.close();
  }
}

/** The checks every stored height must pass against the one before it. */
function checkLinked(rec: CometBlockRecord, prev: CometBlockRecord, chainId: string, key: ValidatorKey): void {
  const h = rec.block.header;
  assert.equal(h.height, prev.block.header.height + 1n);
  assert.equal(h.chainId, chainId);
  assert.equal(hex(h.lastBlockId.hash), hex(prev.blockId.hash));
  assert.equal(hex(h.lastCommitHash), hex(commitHash(prev.commit)));
  assert.equal(hex(h.appHash), hex(prev.results.appHash));
  assert.equal(hex(rec.blockId.hash), hex(headerHash(h)));
  assert.equal(hex(rec.block.lastCommit.blockId.hash), hex(prev.blockId.hash));
  // the commit: this height, this block, one precommit by the validator that verifies
  assert.equal(rec.commit.height, h.height);
  assert.equal(hex(rec.commit.blockId.hash), hex(rec.blockId.hash));
  const sig = rec.commit.signatures.find((s) => s.blockIdFlag === BlockIDFlag.commit)!;
  assert.equal(hex(sig.validatorAddress), hex(key.address));
  const signBytes = voteSignBytes(chainId, { type: SignedMsgType.precommit, height: h.height, round: 0, blockId: rec.blockId, timestamp: sig.timestamp });
  assert.ok(ed25519Verify(key.pubKey, signBytes, sig.signature), `commit signature of height ${h.height}`);
  // time never goes backwards, and the vote comes after the block
  assert.ok(timeOf(rec) > timeOf(prev), `time of ${h.height}`);
  assert.ok(timestampToMillis(sig.timestamp) > timeOf(rec));
}

describe('consensus engine over a temporary store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-engine-'));
  const dbPath = join(dir, 'ferry.db');
  const key = generateValidatorKey();
  const genesis = devGenesis({ validatorPubKey: key.pubKey, genesisTime: GENESIS_TIME });
  let node: Node;

  before(async () => {
    node = await Node.open(dbPath, genesis, key);
  });
  after(async () => {
    await node?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('before start the height is initial_height - 1; start makes the first height at genesis time', async () => {
    assert.equal(node.engine.height, genesis.initialHeight - 1n);
    await node.engine.start();
    await node.committedAt(1n);
    const first = node.committed[0]!;
    assert.equal(first.block.header.height, 1n);
    assert.equal(timeOf(first), Date.parse(GENESIS_TIME));
    assert.equal(first.block.header.lastBlockId.hash.length, 0);
    assert.equal(hex(first.block.header.appHash), hex(node.store.evmBlock(0n)!.header.stateRoot));
    assert.equal(node.store.comet.latestHeight(), 1n);
  });

  it('mine(n) makes n linked, signed heights; each is stored with the application commit', async () => {
    await node.engine.mine(3n);
    assert.equal(node.engine.height, 4n);
    assert.deepEqual(node.committed.map((r) => r.block.header.height), [1n, 2n, 3n, 4n]);
    for (let i = 1; i < node.committed.length; i++) checkLinked(node.committed[i]!, node.committed[i - 1]!, genesis.chainId, key);
    assert.equal(node.store.comet.latestHeight(), 4n);
    assert.equal(node.app.info().lastBlockHeight, 4n);
    assert.notEqual(node.store.comet.get(4n), undefined);
    assert.equal(node.store.comet.get(5n), undefined);
    assert.equal(hex(node.engine.lastRecord()!.blockId.hash), hex(node.committed[3]!.blockId.hash));
  });

  it('BFT time: a block\'s time is the previous commit\'s vote time', () => {
    for (let i = 1; i < node.committed.length; i++) {
      const vote = node.committed[i - 1]!.commit.signatures.find((s) => s.blockIdFlag === BlockIDFlag.commit)!;
      assert.equal(timeOf(node.committed[i]!), timestampToMillis(vote.timestamp));
    }
  });

  it('a tx in the pool goes into the next height and leaves the pool', async () => {
    const wallet = new Wallet(devKeys()[0]!);
    const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: 0, to: '0x' + '12'.repeat(20), value: 1n, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI });
    const native = wrapEthereumTx(Buffer.from(raw.slice(2), 'hex'), Buffer.from(wallet.address.slice(2), 'hex'), 21_000n, 100n * GWEI);
    assert.equal((await node.app.checkTx(native)).code, 0);
    assert.equal(node.app.pendingCount(), 1);
    await node.engine.mine(1n);
    const rec = node.committed.at(-1)!;
    assert.deepEqual(rec.block.data.txs.map(hex), [hex(native)]);
    assert.equal(rec.results.txResults[0]!.code, 0);
    assert.equal(node.app.pendingCount(), 0);
    assert.equal(node.store.evmBlock(rec.block.header.height)!.transactions.length, 1);
  });

  it('evm_setNextBlockTimestamp: the next height has that time; an earlier one is refused, nothing made', async () => {
    const lastSec = BigInt(Math.floor(timeOf(node.committed.at(-1)!) / 1000));
    const h = node.engine.height;
    const backwards = (e: unknown) => e instanceof DomainError && e.kind === 'invalidArgument' && /lower than previous block/.test(e.message);
    assert.throws(() => node.engine.setNextTimestamp(lastSec - 1n), backwards);
    await assert.rejects(() => node.engine.mine(1n, undefined, lastSec - 1n), backwards);
    assert.equal(node.engine.height, h);
    await node.engine.mine(1n, undefined, lastSec + 100n);
    assert.equal(timeOf(node.committed.at(-1)!), Number(lastSec + 100n) * 1000);
  });

  it('mine with an interval spaces the blocks after the first by that many seconds', async () => {
    const start = BigInt(Math.floor(timeOf(node.committed.at(-1)!) / 1000)) + 10n;
    await node.engine.mine(3n, 7n, start);
    const times = node.committed.slice(-3).map(timeOf);
    assert.deepEqual(times, [Number(start) * 1000, Number(start + 7n) * 1000, Number(start + 14n) * 1000]);
  });

  it('evm_increaseTime: answers the total and moves the next block forward by at least that', async () => {
    const before = timeOf(node.committed.at(-1)!);
    assert.equal(node.engine.increaseTime(3600n), 3600n);
    assert.equal(node.engine.increaseTime(60n), 3660n);
    await node.engine.mine(1n);
    assert.ok(timeOf(node.committed.at(-1)!) >= before + 3_660_000);
  });

  it('a restart goes on from the store: same last block, the next height linked to it', async () => {
    const last = node.committed.at(-1)!;
    for (let i = 1; i < node.committed.length; i++) checkLinked(node.committed[i]!, node.committed[i - 1]!, genesis.chainId, key);
    await node.close();
    node = await Node.open(dbPath, genesis, key);
    await node.engine.start();
    assert.equal(node.engine.height, last.block.header.height);
    assert.equal(hex(node.engine.lastRecord()!.blockId.hash), hex(last.blockId.hash));
    // no timer in this mining mode: nothing is made until asked
    assert.equal(node.committed.length, 0);
    await node.engine.mine(1n);
    const next = node.committed[0]!;
    checkLinked(next, last, genesis.chainId, key);
    assert.equal(node.store.comet.latestHeight(), last.block.header.height + 1n);
  });
});
