/**
 * The chain thread's side of the dev channel (src/types/dev.ts; docs/dev-mode.md): the one place a
 * `DevOp` is performed — mining and time in the engine, the pool, block fields, impersonation and
 * state cheats in the application, snapshots in `DevSnapshots` — and answered with its `devReply`.
 * One handler per operation, typed by `DevResults`, so an operation without its handler (or with a
 * handler answering another type) does not compile.
 */
import type { EvmApp } from '../chain/app.js';
import { DevSnapshots } from '../chain/devsnapshots.js';
import type { Engine } from '../consensus/engine.js';
import { DomainError, domainErrorData, invalidArgument } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { DevOp, DevOpName, DevOpOf, DevResults } from '../types/dev.js';
import type { FromChain } from './protocol.js';

type DevHandlers = { [K in DevOpName]: (op: DevOpOf<K>) => DevResults[K] | Promise<DevResults[K]> };

export interface DevOpsDeps {
  engine: Engine;
  app: EvmApp;
  /** a message to the RPC thread, sent at once (a rewind and a cheat change go before the op's devReply) */
  send(m: FromChain): void;
  log: Logger;
}

/** Performs a dev operation and answers its request `id` with a `devReply` (a domain error keeps its kind); settles once answered. */
export type DevOpsRunner = (id: number, op: DevOp) => Promise<void>;

/** The snapshots and what each keeps besides the chain (docs/dev-mode.md "Snapshots"). */
function devSnapshots({ engine: eng, app, send, log }: DevOpsDeps): DevSnapshots {
  const snapshots = new DevSnapshots(
    {
      head: () => ({ height: app.latestHeader().number, hash: app.latestHeader().hash }),
      base: () => app.genesisHeight(),
      idle: () => eng.idle(),
      logsAbove: (height, limit) => app.logsAbove(height, limit),
      rewind: (height, after) =>
        eng.rewind(height, {
          write: () => app.rewindStore(height),
          after: async () => {
            await app.afterRewind(height);
            after();
          },
        }),
    },
    (r) => {
      send({ type: 'rewound', height: r.height, removedLogs: r.removedLogs, truncated: r.truncated });
      log.info({ height: Number(r.height), removedLogs: r.removedLogs.length }, 'chain rewound (dev revert)');
    },
    (height, limit) => log.warn({ height: Number(height), limit }, 'dev revert: more removed logs than announced; subscribers get the first ones only'),
  );
  // the dev clock, the dev block fields; a reset also empties the pool (as Anvil)
  snapshots.register('clock', { save: () => eng.saveClock(), restore: (c) => eng.restoreClock(c), reset: () => eng.resetClock() });
  snapshots.register('block fields', { save: () => app.dev.save(), restore: (f) => app.dev.restore(f), reset: () => app.dev.reset() });
  snapshots.register('pool', { save: () => undefined, restore: () => {}, reset: () => void app.dropTxs(undefined) });
  // the pending state cheats (chain/cheats.ts): back to those pending at the snapshot; none after a reset
  snapshots.register('cheats', { save: () => app.cheats.save(), restore: (c) => app.cheats.restore(c), reset: () => app.cheats.restore(new Map()) });
  // a revert restoring a snapshot's pending cheats: the RPC thread's mirror takes the whole set
  app.cheats.onRestore = (pending) => send({ type: 'cheats', pending, replace: true });
  return snapshots;
}

export function createDevOps(d: DevOpsDeps): DevOpsRunner {
  const { engine: eng, app, send, log } = d;
  const snapshots = devSnapshots(d);
  const handlers: DevHandlers = {
    mine: (op) => eng.mine(op.blocks, op.interval, op.timestamp),
    increaseTime: (op) => eng.increaseTime(op.seconds),
    setTime: (op) => eng.setTime(op.seconds),
    setTimestampInterval: (op) => eng.setTimestampInterval(op.ms),
    rollback: (op) => snapshots.rollback(op.depth),
    reorg: async (op) => {
      // Anvil's checks and message (foundry crates/anvil/src/eth/api.rs anvil_reorg); every tx decoded before anything changes
      const head = app.latestHeader().number;
      if (op.depth > head) throw invalidArgument(`Reorg depth must not exceed current chain height: current height ${head}, depth ${op.depth}`);
      const blocks = op.blocks.map((raws) => app.proposals.decodeForced(raws));
      await snapshots.rollback(op.depth);
      for (const txs of blocks) {
        app.proposals.force(txs);
        await eng.mine(1n);
      }
    },
    setNextTimestamp: (op) => eng.setNextTimestamp(op.seconds),
    setAutomine: (op) => {
      const mode = eng.miningMode();
      // as Anvil: turning automine off leaves interval mining as it is; on, it replaces it
      if (op.enabled) eng.setMiningMode({ automine: true, intervalMs: null });
      else if (mode.automine) eng.setMiningMode({ automine: false, intervalMs: mode.intervalMs });
    },
    setInterval: (op) => eng.setMiningMode({ automine: false, intervalMs: op.seconds === 0n ? null : Number(op.seconds) * 1000 }),
    setBlockGasLimit: (op) => void (app.dev.blockGasLimit = op.gas),
    setNextBaseFee: (op) => void (app.dev.baseFeeOverride = op.fee),
    setNextPrevRandao: (op) => void (app.dev.prevRandaoOverride = op.value),
    dropTxs: (op) => app.dropTxs(op.hashes, op.from),
    impersonate: (op) => app.dev.setImpersonated(op.address, op.on),
    autoImpersonate: (op) => app.dev.setAutoImpersonate(op.enabled),
    // the mirror on the RPC thread learns them before the devReply
    setCheats: (op) => void send({ type: 'cheats', pending: app.setCheats(op.cheats) }),
    snapshot: () => snapshots.take(),
    revert: (op) => snapshots.revert(op.id),
    reset: () => snapshots.reset(),
    status: () => {
      const mode = eng.miningMode();
      return { automine: mode.automine, intervalMs: mode.intervalMs ?? 0, blockGasLimit: app.dev.blockGasLimit, nextBaseFee: app.nextBaseFee(), snapshots: snapshots.list() };
    },
  };
  // one handler per variant: the union's correlation is lost on the lookup, not on the handlers
  const perform = async (op: DevOp): Promise<unknown> => (handlers[op.op] as (op: DevOp) => unknown)(op);
  return (id, op) =>
    perform(op).then(
      (result) => send({ type: 'devReply', id, result }),
      (e: unknown) => {
        if (e instanceof DomainError) return send({ type: 'devReply', id, error: { kind: 'domain', error: domainErrorData(e) } });
        log.error({ err: e instanceof Error ? e.stack : String(e), op: op.op }, 'dev control failed');
        send({ type: 'devReply', id, error: { kind: 'internal', message: e instanceof Error ? e.message : String(e) } });
      },
    );
}
