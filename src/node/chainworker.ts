/**
 * The chain thread: store (writer), application, mempool and consensus engine. Block execution runs
 * here so the RPC thread never waits behind it (DESIGN.md performance rules).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EvmApp } from '../chain/app.js';
import { Engine, TimestampError } from '../consensus/engine.js';
import { readValidatorKey, timestampToMillis, parseTime } from '../consensus/cometbft/index.js';
import { decodeTx } from '../evm/tx.js';
import { FerryError } from '../lib/errors.js';
import { createLogger } from '../lib/log.js';
import { Store } from '../store/store.js';
import type { ChainWorkerData, DevOp, FromChain, ToChain } from './protocol.js';

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
        send({ type: 'pool', added: c.added, removed: c.removed, natives: c.natives });
        if (c.added.length > 0) engine?.txAvailable();
      },
    },
  );
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
      noTimer: opts.dev,
      createEmptyBlocks: opts.consensus.createEmptyBlocks,
    },
    log,
    {
      onCommitted: (height, rec, timing) => {
        send({ type: 'committed', height });
        const txs = rec.block.data.txs.length;
        const fields = { height: Number(height), txs, executeMs: Math.round(timing.executeMs), commitMs: Math.round(timing.commitMs) };
        if (txs > 0) log.info(fields, 'committed block');
        else log.debug(fields, 'committed block');
      },
      onRoundStep: (event) => send({ type: 'roundStep', event }),
    },
  );
  const eng = engine;
  /** The dev controls (docs/dev-mode.md): mining and time in the engine, pool and block fields in the app. */
  async function devControl(op: DevOp): Promise<unknown> {
    switch (op.op) {
      case 'mine':
        return eng.mine(op.blocks, op.interval, op.timestamp);
      case 'increaseTime':
        return eng.increaseTime(op.seconds);
      case 'setNextTimestamp':
        return eng.setNextTimestamp(op.seconds);
      case 'setAutomine': {
        const mode = eng.miningMode();
        // as Anvil: turning automine off leaves interval mining as it is; on, it replaces it
        if (op.enabled) eng.setMiningMode({ automine: true, intervalMs: null });
        else if (mode.automine) eng.setMiningMode({ automine: false, intervalMs: mode.intervalMs });
        return undefined;
      }
      case 'setInterval':
        return eng.setMiningMode({ automine: false, intervalMs: op.seconds === 0n ? null : Number(op.seconds) * 1000 });
      case 'setBlockGasLimit':
        return app.setBlockGasLimit(op.gas);
      case 'setNextBaseFee':
        return app.setNextBaseFee(op.fee);
      case 'dropTxs':
        return app.dropTxs(op.hashes);
      case 'status': {
        const mode = eng.miningMode();
        return { automine: mode.automine, intervalMs: mode.intervalMs ?? 0, blockGasLimit: app.blockGasLimitOf(), nextBaseFee: app.nextBaseFee() };
      }
    }
  }
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
    const reply = (code: number, logText: string, hash?: Uint8Array) => send({ type: 'reply', id: m.id, code, log: logText, hash });
    if (m.type === 'dev') {
      devControl(m.op).then(
        (result) => send({ type: 'devReply', id: m.id, result }),
        (e: unknown) => {
          if (e instanceof TimestampError) return send({ type: 'devReply', id: m.id, error: { kind: 'timestamp', message: e.message } });
          log.error({ err: e instanceof Error ? e.stack : String(e), op: m.op.op }, 'dev control failed');
          send({ type: 'devReply', id: m.id, error: { kind: 'internal', message: e instanceof Error ? e.message : String(e) } });
        },
      );
      return;
    }
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
      return send({ type: 'reply', id: m.id, code: r.code, log: r.log, hash: r.code === 0 ? r.data : undefined, check: r });
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
