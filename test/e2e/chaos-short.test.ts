/**
 * The short fault-injection run (test/helpers/chaos.ts; `npm run chaos` is the long one): each fault
 * once on a 4-validator CometBFT network under load — kill -9 of a ferry, of a CometBFT, of both, a
 * SIGSTOP pause, and (in network namespaces, when the machine allows) one validator cut off and a
 * two-against-two split. No height differs between nodes, no acknowledged transaction is lost, and the
 * chain is live again after every heal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAULT_KINDS, formatChaosReport, runChaos } from '../helpers/chaos.js';
import { cometbftOrSkip } from '../helpers/cometnet.js';

const comet = cometbftOrSkip();

describe('fault injection on a 4-validator network (short run)', () => {
  it('every fault once: no divergence, nothing acknowledged lost, live after each heal', { skip: comet.skip }, async () => {
    const report = await runChaos({
      cometBin: comet.bin!,
      durationMs: 0,
      seed: 7,
      namespaces: true,
      schedule: FAULT_KINDS,
      holdMs: [2_000, 3_000],
      log: (l) => process.stderr.write(l + '\n'),
    });
    process.stderr.write(formatChaosReport(report) + '\n');
    assert.deepEqual(report.divergences, []);
    assert.deepEqual(report.liveFailures, []);
    assert.equal(report.txs.lost, 0);
    assert.ok(report.txs.acknowledged > 0, 'the load got receipts');
    for (const k of FAULT_KINDS) {
      const want = report.network === 'namespaces' || !k.startsWith('partition') ? 1 : 0;
      assert.deepEqual(report.faults[k], { injected: want, survived: want }, k);
    }
  });
});
