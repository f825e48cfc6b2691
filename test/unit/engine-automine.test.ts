/**
 * Automine (block_on_tx, the dev preset): after a block, the next one starts at once only when a
 * block made now would include a tx. A tx behind a nonce gap waits in the pool without blocks being
 * made for it back to back (they would all be empty); once the gap is filled, both go into the next
 * block. Arrivals from idle open one burst window that later arrivals do not extend. The engine's pending
 * timer is read through a cast: "no block is due" has no event to await. After a block that answered
 * several held sends, the next block waits (a bounded moment) for as many txs before it starts.
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
import { AUTOMINE_REFILL_WAIT_MS } from '../../src/consensus/refill.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const dir = mkdtempSync(join(tmpdir(), 'ferry-automine-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function transfer(nonce: number, account = 0): Promise<Uint8Array> {
  const wallet = new Wallet(devKeys()[account]!);
  const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce, to: '0x' + '12'.repeat(20), value: 1n, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI });
  return wrapEthereumTx(Buffer.from(raw.slice(2), 'hex'), Buffer.from(wallet.address.slice(2), 'hex'), 21_000n, 100n * GWEI);
}

/** A dev store, app and automine engine (not started) in `file`; the engine hears of each tx the pool admits. */
async function automineNode(file: string) {
  const store = new Store(join(dir, file));
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
  return { store, app, engine, committed };
}

test('automine: a gapped tx makes no run of empty blocks; filling the gap mines both', async () => {
  const { store, app, engine, committed } = await automineNode('ferry.db');
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

test('automine refill: after a block answered n sends, the next block waits for n txs (or the bound), a lone sender not at all', async () => {
  const { store, app, engine, committed } = await automineNode('refill.db');
  const timer = () => (engine as unknown as { timer: { refill?: boolean } | undefined }).timer;
  try {
    assert.ok(AUTOMINE_REFILL_WAIT_MS > 0);
    await engine.start();
    await committed(1n);

    // three sends were answered: the first resend waits for the other two, the third starts the block
    // (a bound of a minute here, so a slow machine cannot end the wait between two arrivals)
    const resends = [await transfer(0, 1), await transfer(0, 2), await transfer(0, 3)];
    engine.expectTxs(3, 60_000);
    assert.equal((await app.checkTx(resends[0]!)).code, 0);
    assert.equal(timer()?.refill, true, 'the block waits for the refill');
    assert.equal((await app.checkTx(resends[1]!)).code, 0);
    assert.equal(timer()?.refill, true, 'two of three: still waiting');
    assert.equal((await app.checkTx(resends[2]!)).code, 0);
    assert.notEqual(timer(), undefined);
    assert.equal(timer()?.refill, false, 'the refill is complete: the block starts at once');
    await committed(2n);
    assert.equal(store.evmBlock(2n)!.transactions.length, 3);

    // the refill never comes: the block starts with what it has once the bound passes
    const lone = await transfer(1, 1);
    engine.expectTxs(3);
    assert.equal((await app.checkTx(lone)).code, 0);
    await committed(3n);
    assert.equal(store.evmBlock(3n)!.transactions.length, 1);

    // one send answered (a lone sender): its next tx gets its block without a wait
    const next = await transfer(1, 2);
    engine.expectTxs(1, 60_000);
    assert.equal((await app.checkTx(next)).code, 0);
    assert.equal(timer()?.refill, false);
    await committed(4n);
    assert.equal(store.evmBlock(4n)!.transactions.length, 1);
  } finally {
    await engine.stop();
    store.close();
  }
});
