/** `ferry state verify [--height N] [--home H]`: the operator's check of the flat state layer. */
import { DomainError, badConfig } from '../lib/errors.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { verifyFlatState } from '../chain/stateverify.js';
import { Store } from '../store/store.js';
import { DB_FILE, homePaths } from './home.js';

export const EXIT_STATE_MISMATCH = 2;

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

/** Returns the process exit code: 0 when the roots match, EXIT_STATE_MISMATCH when not. */
export async function stateVerify(home: string, heightFlag: string | undefined): Promise<number> {
  let height: bigint | undefined;
  if (heightFlag !== undefined) {
    if (!/^[0-9]+$/.test(heightFlag)) throw badConfig('height', `--height must be a block number, got "${heightFlag}"`);
    height = BigInt(heightFlag);
  }
  const dbPath = join(homePaths(home).dataDir, DB_FILE);
  if (!existsSync(dbPath)) throw badConfig('home', `no chain database at ${dbPath}: the node has not run on this home`);
  const store = new Store(dbPath, { reader: true });
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  try {
    const r = await verifyFlatState(store, height, (done, total) => {
      if (tty) process.stderr.write(`\rverifying: ${done}/${total} accounts (${total === 0 ? 100 : Math.floor((done * 100) / total)}%)`);
    });
    if (tty) process.stderr.write('\n');
    const ok = Buffer.compare(r.expected, r.computed) === 0 && r.problems.length === 0;
    for (const p of r.problems) process.stdout.write(`problem: ${p}\n`);
    process.stdout.write(
      `height ${r.height}: ${r.accounts} accounts, ${r.slots} slots, ${Date.now() - started} ms\n` +
        `stored root: ${hex(r.expected)}\nflat root:   ${hex(r.computed)}\n${ok ? 'OK: the flat state matches the stored state root' : 'MISMATCH: the flat state does not give the stored state root'}\n`,
    );
    return ok ? 0 : EXIT_STATE_MISMATCH;
  } catch (e) {
    if (e instanceof Error && /no such table: state_/.test(e.message)) {
      throw badConfig('home', 'this chain database has no flat state layer yet: start the node once (it builds it)');
    }
    if (e instanceof Error && !(e instanceof DomainError && e.is('badConfig'))) throw badConfig('height', e.message);
    throw e;
  } finally {
    store.close();
  }
}
