/**
 * The dev chain the in-process benches run (bench/blockcost.ts, bench/checkcost.ts): a store in a scratch
 * folder (with its WAL checkpoint worker, COMMIT not waiting for the disk, as `ferry dev` opens it), the
 * application and the dev-mode engine, built from the modules handed in, so that a bench can open one
 * chain per build (checkcost loads each build's modules from its own dist).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EvmApp } from '../src/chain/app.js';
import type { devGenesis } from '../src/config/genesis.js';
import type { generateValidatorKey } from '../src/consensus/cometbft/index.js';
import type { Engine, genesisEngineOptions } from '../src/consensus/engine.js';
import type { Logger } from '../src/lib/log.js';
import type { Store } from '../src/store/store.js';

/** the modules a dev chain is made of (one build's) */
export interface DevChainModules {
  EvmApp: typeof EvmApp;
  Engine: typeof Engine;
  Store: typeof Store;
  devGenesis: typeof devGenesis;
  generateValidatorKey: typeof generateValidatorKey;
  genesisEngineOptions: typeof genesisEngineOptions;
}

export const silentLog: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLog };

/** A fresh dev chain whose pool takes `txs` txs (and 100 more); `close` stops it and deletes its folder. */
export async function openDevChain(m: DevChainModules, txs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-chain-'));
  const key = m.generateValidatorKey();
  const genesis = m.devGenesis({ validatorPubKey: key.pubKey, genesisTime: '2026-01-01T00:00:00Z' });
  const store = new m.Store(join(dir, 'ferry.db'), { walCheckpointer: true, durable: false });
  const mempool = { size: txs + 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: txs + 100 };
  const app = await m.EvmApp.create(store, genesis, { minGasPrice: 0n, mempool }, silentLog, { onPoolChange() {} });
  const engine = new m.Engine(
    store,
    app,
    { ...m.genesisEngineOptions(genesis, key, 1n), timeoutCommitMs: 1000, blockOnTx: false, noTimer: true, createEmptyBlocks: true },
    silentLog,
    { onCommitted() {} },
  );
  await engine.start();
  const close = async () => {
    await engine.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { genesis, store, app, engine, close };
}
