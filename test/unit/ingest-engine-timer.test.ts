/**
 * The block timer of consensus/engine.ts counts `timeout_commit` as CometBFT v0.38 does: from the
 * moment the previous height entered its commit step, before its block executed (state.go:
 * `StartTime = CommitTime + timeout_commit`, CommitTime set in enterCommit). So the time a block
 * takes to execute is not added to the interval. The clock and setTimeout are node:test's mock
 * timers (no wall-clock waits): the application's FinalizeBlock moves the mocked clock forward as if
 * it had run that long.
 *
 * With create_empty_blocks = false a height waits for a tx as CometBFT's does (it waits for the mempool's
 * TxsAvailable): no timer wakes an idle node, and a tx that arrives once timeout_commit has passed since
 * the last height began starts the next at once, one that arrives sooner when timeout_commit is up.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devGenesis } from '../../src/config/genesis.js';
import { generateValidatorKey } from '../../src/consensus/cometbft/index.js';
import { Engine, genesisEngineOptions } from '../../src/consensus/engine.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const TIMEOUT_COMMIT_MS = 1000;
/** how long (mocked) the second block's execution takes */
const EXECUTION_MS = 800;

/** An engine over a fresh store on the mock clock, with the heights whose round began and those committed. */
class TimedNode {
  readonly dir = mkdtempSync(join(tmpdir(), 'ferry-engine-timer-'));
  store!: Store;
  app!: EvmApp;
  engine!: Engine;
  /** heights whose round began (NewRound is emitted synchronously when the timer fires) */
  readonly started: bigint[] = [];
  readonly committed: bigint[] = [];
  private waiting: { height: bigint; resolve: () => void } | undefined;

  /** `prepare`: changes to the application before the engine is made over it */
  async open(createEmptyBlocks: boolean, prepare: (app: EvmApp) => void = () => {}): Promise<void> {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-01-01T00:00:10Z') });
    this.store = new Store(join(this.dir, 'ferry.db'));
    const key = generateValidatorKey();
    const genesis = devGenesis({ validatorPubKey: key.pubKey, genesisTime: '2026-01-01T00:00:00Z' });
    this.app = await EvmApp.create(this.store, genesis, { minGasPrice: 0n, mempool: { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } }, silent, {
      onPoolChange() {},
    });
    prepare(this.app);
    this.engine = new Engine(
      this.store,
      this.app,
      { ...genesisEngineOptions(genesis, key, 1n), timeoutCommitMs: TIMEOUT_COMMIT_MS, blockOnTx: false, createEmptyBlocks },
      silent,
      {
        onRoundStep: (e) => {
          if (e.type === 'NewRound') this.started.push(e.height);
        },
        onCommitted: (height) => {
          this.committed.push(height);
          if (this.waiting && this.waiting.height === height) this.waiting.resolve();
        },
      },
    );
  }

  /** resolves once `height` is committed and the engine has set its next timer (the microtasks after the commit ran) */
  async committedAt(height: bigint): Promise<void> {
    if (!this.committed.includes(height)) await new Promise<void>((resolve) => (this.waiting = { height, resolve }));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  async close(): Promise<void> {
    mock.timers.reset();
    await this.engine?.stop();
    this.store?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('engine block timer: timeout_commit counts from the start of the previous height', () => {
  const node = new TimedNode();

  before(() =>
    node.open(true, (app) => {
      const finalize = app.finalizeBlock.bind(app);
      app.finalizeBlock = async (req) => {
        const res = await finalize(req);
        // the second height "executes" for EXECUTION_MS (no timer is due meanwhile: the engine set none)
        if (req.height === 2n) mock.timers.tick(EXECUTION_MS);
        return res;
      };
    }),
  );
  after(() => node.close());

  it('after a block that ran 800 ms, the next starts 200 ms after it ends (not 1,000 ms)', async () => {
    await node.engine.start();
    mock.timers.tick(0);
    await node.committedAt(1n);
    // height 2 after a full timeout_commit (height 1 took no mocked time)
    mock.timers.tick(TIMEOUT_COMMIT_MS - 1);
    assert.deepEqual(node.started, [1n]);
    mock.timers.tick(1);
    assert.deepEqual(node.started, [1n, 2n]);
    await node.committedAt(2n);
    // height 2 took EXECUTION_MS: height 3 is due TIMEOUT_COMMIT_MS - EXECUTION_MS after it ended
    mock.timers.tick(TIMEOUT_COMMIT_MS - EXECUTION_MS - 1);
    assert.deepEqual(node.started, [1n, 2n]);
    mock.timers.tick(1);
    assert.deepEqual(node.started, [1n, 2n, 3n]);
    await node.committedAt(3n);
  });
});

describe('engine block timer without empty blocks: the height waits for a tx, not for a timer', () => {
  const node = new TimedNode();
  /** how often the engine looked at the mempool (each timer wake-up does) */
  let looks = 0;
  /** a turn of the event loop: a timer of 0 ms is a setImmediate, which the mock does not hold */
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const wallet = new Wallet(devKeys()[0]!);
  let nonce = 0;
  /** one signed transfer into the mempool, and the engine told of it as chainworker.ts does */
  const sendTx = async (): Promise<void> => {
    const raw = await wallet.signTransaction({ type: 2, chainId: 9000n, nonce: nonce++, to: wallet.address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n });
    const native = wrapEthereumTx(Buffer.from(raw.slice(2), 'hex'), Buffer.from(wallet.address.slice(2), 'hex'), 21_000n, 100n * 10n ** 9n);
    assert.equal((await node.app.checkTx(native)).code, 0);
    node.engine.txAvailable();
  };

  before(() =>
    node.open(false, (app) => {
      const pendingCount = app.pendingCount.bind(app);
      app.pendingCount = () => {
        looks++;
        return pendingCount();
      };
    }),
  );
  after(() => node.close());

  it('an idle node sets no timer; a late tx starts the height at once, an early one when timeout_commit is up', async () => {
    await node.engine.start();
    mock.timers.tick(0);
    await node.committedAt(1n);
    // idle for ten intervals: no height, and no wake-up looked at the mempool
    const before = looks;
    for (let i = 0; i < 10; i++) {
      mock.timers.tick(TIMEOUT_COMMIT_MS);
      await turn();
    }
    assert.deepEqual(node.started, [1n]);
    assert.equal(looks - before, 0, 'timer wake-ups of an idle node');
    // a tx long after timeout_commit: height 2 starts in this turn, with no time passing
    await sendTx();
    await turn();
    assert.deepEqual(node.started, [1n, 2n]);
    await node.committedAt(2n);
    // a tx 300 ms after height 2 began: height 3 waits out the rest of timeout_commit
    mock.timers.tick(300);
    await sendTx();
    await turn();
    mock.timers.tick(TIMEOUT_COMMIT_MS - 300 - 1);
    await turn();
    assert.deepEqual(node.started, [1n, 2n]);
    mock.timers.tick(1);
    assert.deepEqual(node.started, [1n, 2n, 3n]);
    await node.committedAt(3n);
  });
});
