/**
 * The store's typed repository of CometBFT records (src/store/repository.ts): a record written at a
 * height reads back as the same typed value, from the table and from the decoded cache; the latest
 * height follows the writes; a dev revert's deleteAbove removes the records above a height from the
 * table and, with forgetCache, from what the connection keeps.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Store } from '../../src/store/store.js';
import type { CometBlockRecord } from '../../src/types/cometbft.js';

function record(h: bigint): CometBlockRecord {
  const z = (n: number, fill = 0) => new Uint8Array(n).fill(fill);
  const id = { hash: z(32, Number(h)), partSetHeader: { total: 1, hash: z(32, 7) } };
  return {
    block: {
      header: {
        version: { block: 11n, app: 1n }, chainId: 'ferry-test', height: h, time: { seconds: 1_700_000_000n + h, nanos: 5 },
        lastBlockId: id, lastCommitHash: z(32), dataHash: z(32), validatorsHash: z(32, 1), nextValidatorsHash: z(32, 1),
        consensusHash: z(32, 2), appHash: z(32, 3), lastResultsHash: z(32), evidenceHash: z(32), proposerAddress: z(20, 4),
      },
      data: { txs: [Uint8Array.from([Number(h), 1])] },
      evidence: [],
      lastCommit: { height: h - 1n, round: 0, blockId: id, signatures: [] },
    },
    blockId: id,
    commit: { height: h, round: 0, blockId: id, signatures: [{ blockIdFlag: 2, validatorAddress: z(20, 4), timestamp: { seconds: 1n, nanos: 0 }, signature: z(64, 9) }] },
    results: { events: [], txResults: [{ code: 0, data: z(0), log: '', info: '', gasWanted: 21_000n, gasUsed: 21_000n, events: [], codespace: '' }], appHash: z(32, 3) },
    size: 123,
    validators: [{ address: z(20, 4), pubKey: z(32, 5), votingPower: 10n }],
  };
}

test('Store.comet: typed records by height; latest height; deleteAbove with forgetCache removes them from table and cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-repo-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'db.sqlite');
  const writer = new Store(path);
  assert.equal(writer.comet.latestHeight(), undefined);
  writer.transaction(() => {
    for (const h of [1n, 2n, 3n]) writer.comet.put(h, record(h));
  });
  assert.equal(writer.comet.latestHeight(), 3n);

  const reader = new Store(path, { reader: true });
  for (const h of [1n, 2n, 3n]) {
    const got = reader.comet.get(h);
    assert.deepEqual(got, record(h), `height ${h} reads back as written`);
    assert.equal(reader.comet.get(h), got, 'the second read is the cached record');
  }
  assert.equal(reader.comet.get(4n), undefined);

  writer.transaction(() => writer.comet.deleteAbove(1n));
  assert.equal(writer.comet.latestHeight(), 1n);
  assert.notEqual(reader.comet.get(2n), undefined, 'a connection keeps what it decoded until told to forget it');
  reader.forgetCaches();
  assert.equal(reader.comet.get(2n), undefined);
  assert.equal(reader.comet.get(3n), undefined);
  assert.deepEqual(reader.comet.get(1n), record(1n));
  reader.close();
  writer.close();
});
