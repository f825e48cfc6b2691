/**
 * The consensus steps' events are made only while someone could observe them (docs/benchmarks.md "The
 * fixed cost of a block, part 2"): Surface B's event bus says when a subscription could match a step
 * event (cometrpc/events.ts onStepsWanted), and the engine signs its prevote, which only the Vote event
 * carries, only then (consensus/engine.ts roundStepsWanted). Blocks are the same either way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EvmApp } from '../../src/chain/app.js';
import type { BlockStore } from '../../src/cometrpc/backend.js';
import { EventBus, type Subscription } from '../../src/cometrpc/events.js';
import { devGenesis } from '../../src/config/genesis.js';
import { generateValidatorKey } from '../../src/consensus/cometbft/index.js';
import { Engine, genesisEngineOptions, type RoundStepEvent } from '../../src/consensus/engine.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';

/** 2026-01-01T00:01:40Z, after the dev genesis time */
const START_SECONDS = 1_767_225_700n;
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

describe('round steps made only when wanted', () => {
  it('the event bus says whether a subscription could match a consensus step', () => {
    const blocks = { latestHeight: () => 3n } as unknown as BlockStore;
    const bus = new EventBus(blocks, { maxClients: 10, maxPerClient: 10 });
    const said: boolean[] = [];
    bus.onStepsWanted = (w) => said.push(w);
    const subscribe = (clientId: string, query: string): Subscription => {
      const p = bus.prepare(clientId, query);
      const sub: Subscription = { clientId, text: query, key: p.key, query: p.query, eventType: p.eventType, deliver() {} };
      bus.add(sub);
      return sub;
    };
    subscribe('a', "tm.event = 'NewBlock'");
    subscribe('a', "tm.event = 'Tx' AND tx.height > 1");
    assert.deepEqual(said, [], 'block events only: no step is wanted');
    subscribe('b', "tm.event = 'Vote'");
    assert.deepEqual(said, [true]);
    subscribe('c', "tm.event = 'NewRoundStep'");
    assert.deepEqual(said, [true], 'said once while it stays wanted');
    bus.unsubscribe('b', "tm.event = 'Vote'");
    assert.deepEqual(said, [true]);
    bus.unsubscribeAll('c');
    assert.deepEqual(said, [true, false]);
    subscribe('d', "tx.height > 0");
    assert.deepEqual(said, [true, false, true], 'a query that pins no event type could match a step');
    bus.close();
    assert.deepEqual(said, [true, false, true, false]);
  });

  it('the engine signs its prevote only while the steps are wanted; the blocks do not change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-roundsteps-'));
    const key = generateValidatorKey();
    const genesis = devGenesis({ validatorPubKey: key.pubKey, genesisTime: '2026-01-01T00:00:00Z' });
    const run = async (wanted: boolean) => {
      const store = new Store(join(dir, `${wanted}.db`));
      const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: { size: 10, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 10 } }, silent, {
        onPoolChange() {},
      });
      const steps: RoundStepEvent[] = [];
      const engine = new Engine(
        store,
        app,
        { ...genesisEngineOptions(genesis, key, 1n), timeoutCommitMs: 1000, blockOnTx: false, noTimer: true, createEmptyBlocks: true },
        silent,
        { onCommitted() {}, onRoundStep: (e) => steps.push(e), roundStepsWanted: () => wanted },
      );
      await engine.start();
      // fixed block times: the first block's hash (its last commit is empty) is the same in both runs
      await engine.mine(3n, 1n, START_SECONDS);
      const first = Buffer.from(store.comet.get(1n)!.blockId.hash).toString('hex');
      const hashes = [first, ...[1n, 2n, 3n].map((h) => Buffer.from(store.comet.get(h)!.block.header.appHash).toString('hex'))];
      await engine.stop();
      store.close();
      return { votes: steps.filter((e) => e.type === 'Vote').map((e) => e.step), hashes };
    };
    try {
      const on = await run(true);
      const off = await run(false);
      assert.deepEqual(on.votes, ['RoundStepPrevote', 'RoundStepPrecommit', 'RoundStepPrevote', 'RoundStepPrecommit', 'RoundStepPrevote', 'RoundStepPrecommit']);
      assert.deepEqual(off.votes, ['RoundStepPrecommit', 'RoundStepPrecommit', 'RoundStepPrecommit'], 'no prevote made');
      assert.deepEqual(off.hashes, on.hashes, 'the same first block and app hashes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
