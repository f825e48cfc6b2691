/**
 * Automine (block_on_tx, the dev preset): after a block, the next one starts at once only when a
 * block made now would include a tx. A tx behind a nonce gap waits in the pool without blocks being
 * made for it back to back (they would all be empty); once the gap is filled, both go into the next
 * block. Arrivals from idle open one burst window that later arrivals do not extend. The engine's pending
 * timer is read through a cast: "no block is due" has no event to await.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
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
const GWEI = 10n ** 9n;
const dir = mkdtempSync(join(tmpdir(), 'ferry-automine-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function transfer(nonce: number): Promise<Uint8Array> {
  const wallet = new Wallet(devKeys()[0]!);
  const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce, to: '0x' + '12'.repeat(20), value: 1n, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI });
  return wrapEthereumTx(Buffer.from(raw.slice(2), 'hex'), Buffer.from(wallet.address.slice(2), 'hex'), 21_000n, 100n * GWEI);
}

test('automine: a gapped tx makes no run of empty blocks; filling the gap mines both', async () => {
  const store = new Store(join(dir, 'ferry.db'));
  const key = generateValidatorKey();
  const genesis = devGenesis({ validatorPubKey: key.pubKey, genesisTime: '2026-01-01T00:00:00Z' });
  const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } }, silent, {
    onPoolChange(c) {
      if (c.added.length > 0) engine.txAvailable();
    },
  });
  const heights: bigint[] = [];
  let onHeight: ((h: bigint) => void) | undefined;
  const engine: Engine = new Engine(store, app, { ...genesisEngineOptions(genesis, key, 1n), timeoutCommitMs: 1000, createEmptyBlocks: true, blockOnTx: true, noTimer: true }, silent, {
    onCommitted: (h) => {
      heights.push(h);
      onHeight?.(h);
    },
  });
  /** resolves once `height` is committed and the engine has scheduled (or not) its next block */
  const committed = async (height: bigint): Promise<void> => {
    if (!heights.includes(height)) await new Promise<void>((resolve) => (onHeight = (h) => h === height && resolve()));
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const idle = () => {
    const e = engine as unknown as { timer: unknown; inFlight: unknown };
    return e.timer === undefined && e.inFlight === undefined;
  };
  try {
    await engine.start();
    await committed(1n);
    assert.ok(idle(), 'nothing due after the first height');

    // nonce 1 while the account's nonce is 0: queued behind a gap
    assert.equal((await app.checkTx(await transfer(1))).code, 0);
    assert.equal(app.pendingCount(), 1);
    assert.equal(app.hasExecutable(), false);
    // its arrival makes one block (the engine does not look at nonces when a tx arrives), and then no more
    await committed(2n);
    assert.ok(idle(), 'no next block is due for a tx that cannot be included');
    assert.equal(engine.height, 2n);
    assert.equal(app.pendingCount(), 1);

    // nonce 0 fills the gap: the next block holds both
    assert.equal((await app.checkTx(await transfer(0))).code, 0);
    assert.equal(app.hasExecutable(), true);
    await committed(3n);
    assert.equal(store.evmBlock(3n)!.transactions.length, 2);
    assert.equal(app.pendingCount(), 0);
    assert.ok(idle(), 'nothing due once the pool is empty');
    assert.equal(engine.height, 3n);

    // arrivals in a stream from idle: the first opens the burst window, later ones do not push the block
    // back (a steady stream faster than BLOCK_ON_TX_DELAY_MS would otherwise never get a block)
    const timer = () => (engine as unknown as { timer: unknown }).timer;
    engine.txAvailable();
    const pending = timer();
    assert.notEqual(pending, undefined);
    engine.txAvailable();
    engine.txAvailable();
    assert.equal(timer(), pending, 'a later arrival must not postpone the pending block');
    await committed(4n);
    assert.equal(engine.height, 4n);
  } finally {
    await engine.stop();
    store.close();
  }
});
