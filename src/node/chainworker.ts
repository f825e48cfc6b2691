/**
 * The chain thread: store (writer), application, mempool and consensus engine. Block execution runs
 * here so the RPC thread never waits behind it (DESIGN.md performance rules).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EvmApp } from '../chain/app.js';
import { Engine } from '../consensus/engine.js';
import { readValidatorKey, timestampToMillis, parseTime } from '../consensus/cometbft/index.js';
import { decodeTx } from '../evm/tx.js';
import { FerryError } from '../lib/errors.js';
import { createLogger } from '../lib/log.js';
import { Store } from '../store/store.js';
import type { BlockStats } from '../metrics/comet.js';
import type { ChainWorkerData, FromChain, ToChain } from './protocol.js';

const data = workerData as ChainWorkerData;
const port = parentPort!;
const send = (m: FromChain) => port.postMessage(m);
const log = createLogger({ level: data.opts.logLevel }).child({ module: 'chain' });

async function main(): Promise<void> {
  const { opts, genesis } = data;
  const store = new Store(data.dbPath);
  const key = readValidatorKey(data.validatorKeyJson);
  let engine: Engine | undefined;
  const app = await EvmApp.create(
    store,
    genesis,
    { minGasPrice: opts.minimumGasPrice, mempool: opts.mempool },
    log,
    {
      onPoolChange: (c) => {
        send({ type: 'pool', added: c.added, removed: c.removed, natives: c.natives, evicted: c.evicted });
        if (c.added.length > 0) engine?.txAvailable();
      },
    },
  );
  // consensus step timing for the metrics (CometBFT MarkStep / MarkRound): the step being left and since when
  let stepName: string | undefined;
  let stepAt = 0;
  let roundAt = 0;
  let steps: Array<[string, number]> = [];
  let lastBlockTimeMs: number | undefined;
  const ownAddress = Buffer.from(key.address).toString('hex').toUpperCase();
  const onStep = (step: string, type: string) => {
    const now = performance.now();
    if (type === 'NewRound') roundAt = now;
    const name = step.replace(/^RoundStep/, '');
    if (name === stepName) return;
    if (stepName !== undefined) steps.push([stepName, (now - stepAt) / 1000]);
    stepName = name;
    stepAt = now;
  };
  engine = new Engine(
    store,
    app,
    {
      chainId: genesis.chainId,
      genesisTimeMs: timestampToMillis(parseTime(genesis.genesisTime)),
      initialHeight: genesis.initialHeight,
      validatorKey: key,
      validators: genesis.validators.map((v) => ({ address: v.address, pubKey: v.pubKey, votingPower: v.power })),
      maxBytes: genesis.maxBytes,
      maxGas: genesis.maxGas,
      appVersion: 1n,
      timeoutCommitMs: opts.consensus.timeoutCommitMs,
      blockOnTx: opts.consensus.blockOnTx,
      createEmptyBlocks: opts.consensus.createEmptyBlocks,
    },
    log,
    {
      onCommitted: (height, rec, timing) => {
        const timeMs = timestampToMillis(rec.block.header.time);
        const evm = app.latestHeader();
        const cache = app.trieCacheStats();
        const vals = rec.validators ?? [];
        const stats: BlockStats = {
          height,
          txs: rec.block.data.txs.length,
          sizeBytes: rec.size,
          intervalSeconds: lastBlockTimeMs === undefined ? undefined : (timeMs - lastBlockTimeMs) / 1000,
          validators: vals.length,
          validatorsPower: vals.reduce((sum, v) => sum + v.votingPower, 0n),
          validatorPowers: vals.map((v) => [Buffer.from(v.address).toString('hex').toUpperCase(), v.votingPower]),
          ownAddress,
          validatorUpdates: rec.results.validatorUpdates?.length ?? 0,
          consensusParamUpdates: 0,
          prepareSeconds: timing.prepareMs / 1000,
          finalizeSeconds: timing.executeMs / 1000,
          commitSeconds: timing.commitMs / 1000,
          roundSeconds: (performance.now() - roundAt) / 1000,
          steps,
          gasUsed: evm.gasUsed,
          gasLimit: evm.gasLimit,
          baseFee: evm.baseFeePerGas,
          trieCacheHits: cache.hits,
          trieCacheMisses: cache.misses,
        };
        steps = [];
        lastBlockTimeMs = timeMs;
        send({ type: 'committed', height, stats });
        const txs = rec.block.data.txs.length;
        const fields = { height: Number(height), txs, executeMs: Math.round(timing.executeMs), commitMs: Math.round(timing.commitMs) };
        if (txs > 0) log.info(fields, 'committed block');
        else log.debug(fields, 'committed block');
      },
      onRoundStep: (event) => {
        onStep(event.step, event.type);
        send({ type: 'roundStep', event });
      },
    },
  );
  await engine.start();
  send({ type: 'ready', height: engine.height });

  port.on('message', (m: ToChain) => {
    if (m.type === 'stop') {
      void engine!.stop().then(() => {
        store.close();
        send({ type: 'stopped' });
      });
      return;
    }
    const started = performance.now();
    const txBytes = m.type === 'submit' ? m.raw.length : m.type === 'submitNative' && m.dryRun !== true ? m.tx.length : undefined;
    const reply = (code: number, logText: string, hash?: Uint8Array) =>
      send({ type: 'reply', id: m.id, code, log: logText, hash, checkSeconds: (performance.now() - started) / 1000, txBytes });
    if (m.type === 'setCoinbase') {
      app.setCoinbase(m.address);
      return reply(0, '');
    }
    const run = async () => {
      if (m.type === 'submit') {
        let d;
        try {
          d = decodeTx(m.raw, app.common);
        } catch (e) {
          if (e instanceof FerryError) return reply(2, e.message);
          throw e;
        }
        if (m.rpc && !opts.jsonRpc.allowUnprotectedTxs && d.evm.chainId === undefined) {
          return reply(2, 'only replay-protected (EIP-155) transactions allowed over RPC');
        }
        const r = await app.checkEvmTx(d);
        return reply(r.code, r.log, r.code === 0 ? d.evm.hash : undefined);
      }
      const r = await app.checkTx(m.tx, m.dryRun === true);
      return send({ type: 'reply', id: m.id, code: r.code, log: r.log, hash: r.code === 0 ? r.data : undefined, check: r, checkSeconds: (performance.now() - started) / 1000, txBytes });
    };
    run().catch((e) => {
      log.error({ err: e instanceof Error ? e.stack : String(e) }, 'checkTx failed');
      reply(1, 'internal error');
    });
  });
}

main().catch((e) => {
  log.error({ err: e instanceof Error ? e.stack : String(e) }, 'chain thread failed to start');
  send({ type: 'fatal', message: e instanceof Error ? e.message : String(e) });
});
