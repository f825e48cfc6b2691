/**
 * Cold start (src/node/chainspawn.ts): the chain thread is spawned before the RPC side's modules
 * load, so its events can come before the client is attached. HeldWorker keeps them and ChainClient.start
 * gets every one, in order — including a ready, a pool change and a crash sent while nobody listened —
 * and a thread that sends more than MAX_HELD_CHAIN_EVENTS before the attach fails the start instead of
 * losing some.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { HeldWorker, MAX_HELD_CHAIN_EVENTS } from '../../src/node/chainspawn.js';
import { ChainClient, type ChainListener } from '../../src/node/chainclient.js';
import { silentLogger } from '../../src/lib/log.js';
import type { FromChain } from '../../src/node/protocol.js';

/** A stand-in chain thread that sends its events at once, then waits for `stop`. */
function standIn(events: unknown[]): Worker {
  const code = `
const { parentPort, workerData } = require('node:worker_threads');
for (const m of workerData) parentPort.postMessage(m);
parentPort.postMessage({ type: 'sent' });
parentPort.on('message', (m) => { if (m.type === 'stop') { parentPort.postMessage({ type: 'stopped' }); } });
`;
  return new Worker(code, { eval: true, workerData: events });
}

function listener(seen: FromChain[], pools: unknown[]): ChainListener {
  return {
    onMessage: (m) => seen.push(m),
    onCommitted: () => undefined,
    onCheats: () => undefined,
    onRewound: () => undefined,
    onPool: (m) => pools.push(m.added),
    onRoundStep: () => undefined,
    query: () => ChainClient.notReady(),
  };
}

/** Resolves once the stand-in has sent everything (seen through a listener of the test's own). */
async function allSent(worker: Worker): Promise<void> {
  for (;;) {
    const [m] = (await once(worker, 'message')) as [{ type: string }];
    if (m.type === 'sent') return;
  }
}

describe('cold start: the chain thread spawned before its client', () => {
  it('delivers the events sent before the client attached, in order', async () => {
    const worker = standIn([
      { type: 'pool', added: [1], removed: [], natives: [], evicted: [] },
      { type: 'ready', height: 5n, cheats: [] },
      { type: 'pool', added: [2], removed: [], natives: [], evicted: [] },
    ]);
    const held = new HeldWorker(worker);
    await allSent(worker);
    const seen: FromChain[] = [];
    const pools: unknown[] = [];
    const { chain, height } = await ChainClient.start(held, listener(seen, pools), silentLogger);
    assert.equal(height, 5n);
    assert.deepEqual(
      seen.map((m) => m.type),
      ['pool', 'ready', 'pool', 'sent'],
    );
    assert.deepEqual(pools, [[1], [2]]);
    await chain.close();
  });

  it('a start failure sent before the attach still fails the start', async () => {
    const worker = standIn([{ type: 'fatal', message: 'the store is corrupt' }]);
    const held = new HeldWorker(worker);
    await allSent(worker);
    await assert.rejects(ChainClient.start(held, listener([], []), silentLogger), /the store is corrupt/);
    // left running, not ended: the client takes a chain thread that exits for a crash and ends the process
    worker.unref();
  });

  it('more events than MAX_HELD_CHAIN_EVENTS before the attach fail the start', async () => {
    const events = Array.from({ length: MAX_HELD_CHAIN_EVENTS + 1 }, (_, i) => ({ type: 'roundStep', event: { i } }));
    const worker = standIn([...events, { type: 'ready', height: 1n }]);
    const held = new HeldWorker(worker);
    await allSent(worker);
    await assert.rejects(ChainClient.start(held, listener([], []), silentLogger), /MAX_HELD_CHAIN_EVENTS/);
    worker.unref();
  });
});
