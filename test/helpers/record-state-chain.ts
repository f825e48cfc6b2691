/**
 * Records test/golden/state/chain.json: the roots, receipts roots and gas of a generated chain
 * (test/helpers/chaingen.ts), as produced by the code this is run with. Run once on the trie-read
 * code (before the flat state layer), then test/unit/state-replay.test.ts checks every later version
 * reproduces them byte-for-byte:  node dist/test/helpers/record-state-chain.js
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/store/store.js';
import { chainApp, generateBlocks, runBlock } from './chaingen.js';
import { GOLDEN_DIR } from './paths.js';

export const STATE_CHAIN_SEED = 1313;
export const STATE_CHAIN_BLOCKS = 60;

async function main(): Promise<void> {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-rec-')), 'db'));
  const app = await chainApp(store);
  const blocks = await generateBlocks(STATE_CHAIN_SEED, STATE_CHAIN_BLOCKS);
  const out = [{ height: 0, stateRoot: Buffer.from(app.latestHeader().stateRoot).toString('hex') }] as unknown[];
  for (let i = 0; i < blocks.length; i++) out.push(await runBlock(app, store, BigInt(i + 1), blocks[i]!));
  writeFileSync(join(GOLDEN_DIR, 'state', 'chain.json'), JSON.stringify({ seed: STATE_CHAIN_SEED, blocks: out }, null, 1) + '\n');
  store.close();
}

if (process.argv[1]?.endsWith('record-state-chain.js')) await main();
