/**
 * The event index's rows of the last blocks wait in `recent_events`, one row per block, and enter
 * tx_events/block_events together every MAX_RECENT_EVENT_BLOCKS blocks (store/eventindex.ts;
 * docs/benchmarks.md "The fixed cost of a block, part 2"). Searches see every block's rows wherever
 * they are, from the writer's connection and from a reader's, and a dev revert removes a waiting
 * block's rows as it removes an indexed one's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventIndex, MAX_RECENT_EVENT_BLOCKS } from '../../src/store/eventindex.js';
import { Store } from '../../src/store/store.js';

const hash = (h: number, i: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, k) => (k === 0 ? h & 0xff : k === 1 ? h >> 8 : k === 2 ? i : 0));

describe('event index: the last blocks wait in recent_events', () => {
  it('every block is found before and after its rows enter the indexes; a revert removes a waiting block', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-recent-events-'));
    const store = new Store(join(dir, 'ferry.db'));
    const index = new EventIndex(store.db, { writer: true });
    const blocks = MAX_RECENT_EVENT_BLOCKS + 6;
    const indexBlock = (h: number) => {
      const txs = [Uint8Array.of(h & 0xff, h >> 8, 0), Uint8Array.of(h & 0xff, h >> 8, 1)];
      const tx = (i: number) => ({ code: 0, events: [{ type: 'transfer', attributes: [{ key: 'to', value: `a${(h + i) % 3}`, index: true }, { key: 'memo', value: 'x', index: false }] }] });
      const block = [{ type: 'fee', attributes: [{ key: 'base', value: String(h % 2), index: true }, { key: 'mode', value: 'BeginBlock', index: true }] }];
      store.transaction(() => index.indexBlock(BigInt(h), [hash(h, 0), hash(h, 1)], txs, [tx(0), tx(1)], block));
    };
    const reader = new Store(join(dir, 'ferry.db'), { reader: true });
    const readerIndex = new EventIndex(reader.db);
    const waiting = () => (store.db.prepare('SELECT count(*) AS n FROM recent_events').get() as { n: number }).n;
    const txPositions = (ix: EventIndex, value: string) =>
      ix
        .txEventRows('transfer.to', value, {})
        .map((r) => `${r.height}:${r.idx}`)
        .sort();
    const expected = (upTo: number, value: string) => {
      const out: string[] = [];
      for (let h = 1; h <= upTo; h++) for (const i of [0, 1]) if (`a${(h + i) % 3}` === value) out.push(`${h}:${i}`);
      return out.sort();
    };
    try {
      for (let h = 1; h <= blocks; h++) {
        indexBlock(h);
        if (h === MAX_RECENT_EVENT_BLOCKS - 1 || h === blocks) {
          for (const ix of [index, readerIndex]) {
            assert.deepEqual(txPositions(ix, 'a1'), expected(h, 'a1'), `tx rows up to ${h}`);
            assert.equal(ix.txEventRows('transfer', undefined, { min: h - 1, max: h }, true).length, 4, 'a type with every key (only indexed attributes)');
            assert.deepEqual(
              ix.blockEventRows('begin_block.fee.base', '1', { min: h - 3 }).map((r) => r.height).sort((a, b) => a - b),
              [h - 3, h - 2, h - 1, h].filter((x) => x % 2 === 1),
              'block rows, with the phase key form',
            );
          }
        }
      }
      assert.equal(waiting(), blocks - MAX_RECENT_EVENT_BLOCKS, 'the blocks after the last flush wait');
      // a dev revert of the top block, still waiting: its rows are gone from every search
      const top = blocks;
      store.transaction(() => {
        const txs = [Uint8Array.of(top & 0xff, top >> 8, 0), Uint8Array.of(top & 0xff, top >> 8, 1)];
        const res = [0, 1].map((i) => ({ code: 0, events: [{ type: 'transfer', attributes: [{ key: 'to', value: `a${(top + i) % 3}`, index: true }] }] }));
        index.unindexBlock(BigInt(top), txs, res, [{ type: 'fee', attributes: [{ key: 'base', value: String(top % 2), index: true }] }]);
      });
      assert.deepEqual(txPositions(readerIndex, 'a1'), expected(top - 1, 'a1'));
      assert.equal(readerIndex.blockEventRows('fee.base', String(top % 2), { min: top }).length, 0);
      // what waits survives a restart and enters the indexes with the next flush
      const again = new EventIndex(store.db, { writer: true });
      store.transaction(() => again.flushRecent());
      assert.equal(waiting(), 0);
      assert.deepEqual(txPositions(readerIndex, 'a1'), expected(top - 1, 'a1'));
      assert.equal((store.db.prepare('SELECT count(DISTINCT height) AS n FROM tx_events').get() as { n: number }).n, top - 1);
    } finally {
      reader.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
