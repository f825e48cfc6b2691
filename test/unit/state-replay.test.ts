import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../src/store/store.js';
import { chainApp, generateBlocks, runBlock, type BlockOutcome } from '../helpers/chaingen.js';
import { GOLDEN_DIR } from '../helpers/paths.js';

// Recorded on the trie-read state code (before the flat state layer) by test/helpers/record-state-chain.ts.
const golden = JSON.parse(readFileSync(join(GOLDEN_DIR, 'state', 'chain.json'), 'utf8')) as {
  seed: number;
  blocks: (BlockOutcome | { height: 0; stateRoot: string })[];
};

test('a recorded random chain replays to the same state roots, receipts roots, gas and statuses byte-for-byte', async () => {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-replay-')), 'db'));
  const app = await chainApp(store);
  assert.equal(Buffer.from(app.latestHeader().stateRoot).toString('hex'), golden.blocks[0]!.stateRoot, 'genesis root');
  const blocks = await generateBlocks(golden.seed, golden.blocks.length - 1);
  for (let i = 0; i < blocks.length; i++) {
    const got = await runBlock(app, store, BigInt(i + 1), blocks[i]!);
    assert.deepEqual(got, golden.blocks[i + 1], `block ${i + 1}`);
  }
  store.close();
});
