/**
 * The chain thread: store (writer), application, mempool and consensus engine. Block execution runs
 * here so the RPC thread never waits behind it (docs/architecture.md "Threads").
 */
import { parentPort } from 'node:worker_threads';
import { AbciDriver } from '../abci/driver.js';
import { rpcUrl } from '../abci/cometclient.js';
import { TxForwarder } from '../abci/forwarder.js';
import { startAbciGrpcServer } from '../abci/grpc.js';
import { startAbciServer, type AbciServerHandle } from '../abci/server.js';
import { APP_VERSION, EvmApp } from '../chain/app.js';
import { StateSync } from '../chain/statesync.js';
import { testSnapshotChunkBytes } from '../abci/testfault.js';
import { dirname, join } from 'node:path';
import { nativeHash, wrapEthereumTx } from '../chain/nativetx.js';
import { parseAbciAddress } from '../config/address.js';
import { pruningPlan } from '../config/options.js';
import { feeCap } from '../evm/tx.js';
import type { AbciQueryResponse, CometBlockRecord } from '../types/cometbft.js';
import { Engine, genesisEngineOptions } from '../consensus/engine.js';
import { readValidatorKey, timestampToMillis } from '../consensus/cometbft/index.js';
import { decodeTx, type DecodedTx } from '../evm/tx.js';
import { DomainError, domainErrorData, txRejected, unavailable, unsupported } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';
import { hexKey } from '../chain/txpool.js';
import { CheckCode } from '../chain/checkcodes.js';
import { createLogger } from '../lib/log.js';
import { Store } from '../store/store.js';
import type { BlockStats } from '../metrics/comet.js';
import type { StartChain, ChainWorkerData, CheckTxReply, FromChain, ToChain } from './protocol.js';
import { createDevOps } from './devops.js';
import { TurnBatch } from '../lib/turnbatch.js';
import { MinedAnswers } from './minedanswers.js';
import type { EvmTx } from '../types/chain.js';

const port = parentPort!;
// spawned before the config was read (node/chainspawn.ts): the modules above load meanwhile, then the start data comes
const data = await new Promise<ChainWorkerData>((resolve) => port.once('message', (m: StartChain) => resolve(m.data)));
/**
 * The outbox of messages to the RPC thread that may wait a little (mempool changes, round steps):
 * they go out together, as one `batch` message, at the next turn of the event loop or before the
 * next other message (a CheckTx answer, a commit), whichever comes first, so the RPC thread sees
 * every message in the order it was made, with a few postMessage calls per block instead of one per
 * event (each costs tens of microseconds on both threads).
 */
const outbox = new TurnBatch<FromChain>((messages) =>
  port.postMessage(messages.length === 1 ? messages[0] : ({ type: 'batch', messages } satisfies FromChain)),
);
const send = (m: FromChain) => {
  outbox.push(m);
  outbox.flush();
};
const sendSoon = (m: FromChain) => outbox.push(m);
const flushOutbox = () => outbox.flush();
/**
 * Queues `m` and posts the outbox once the promise reactions already due have run: the automine answers a
 * block releases (node/minedanswers.ts) all resolve in one go, so they leave together with the block's
 * `committed` message in one postMessage instead of one each.
 */
const sendAfterReactions = (m: FromChain) => {
  outbox.push(m);
  queueMicrotask(flushOutbox);
};

/** One request of the RPC thread (a `batch` message holds several, in the order they were made). */
type Request = Exclude<ToChain, { type: 'batch' }>;
/** CheckTx requests whose answers are not made yet */
let checking = 0;

/**
 * Hands each request of a message to `handle`, in order. The CheckTx answers wait in the outbox until
 * every CheckTx in progress has answered (those of one batch answer together, in one message, without
 * waiting for the next turn of the event loop, which a running block may hold for a slice) or until
 * the turn ends, whichever comes first.
 */
function onRequests(handle: (m: Request) => void): void {
  port.on('message', (m: ToChain) => {
    if (m.type !== 'batch') return handle(m);
    for (const inner of m.messages) if (inner.type !== 'batch') handle(inner);
  });
}
const log = createLogger({ level: data.opts.logLevel }).child({ module: 'chain' });

/**
 * eth_sendRawTransaction's bytes decoded; throws txRejected saying why they are refused before any
 * check (geth's texts). `sender`: the signer the RPC thread recovered from these bytes (not recovered
 * again here).
 */
function decodeSubmitted(raw: Uint8Array, rpc: boolean, app: EvmApp, sender: Uint8Array | undefined, hash: Uint8Array | undefined): DecodedTx {
  const d = decodeTx(raw, app.common, sender, hash);
  if (rpc && !data.opts.jsonRpc.allowUnprotectedTxs && d.evm.chainId === undefined) {
    throw txRejected('invalid', 'only replay-protected (EIP-155) transactions allowed over RPC');
  }
  return d;
}

/** What a CheckTx answer says besides its id (node/protocol.ts `checked`). */
type CheckOutcome = Omit<CheckTxReply, 'type' | 'id'>;

/**
 * Runs the CheckTx of a submission and sends its `checked` answer (with the others of its turn): what `run` resolves to; a domain
 * error it throws (a refusal) as that error, kind and detail kept; anything else (a bug) logged here
 * and answered `failed`. `metrics`: when the request came in and the tx size the mempool metrics count.
 */
function answerCheck(
  id: number,
  run: () => Promise<CheckOutcome>,
  metrics?: { started: number; txBytes: number | undefined },
  hold?: (o: CheckOutcome) => Promise<void> | undefined,
): void {
  checking++;
  const answer = (o: CheckOutcome) => {
    const reply: CheckTxReply = { type: 'checked', id, ...o, ...(metrics && { checkSeconds: (performance.now() - metrics.started) / 1000, txBytes: metrics.txBytes }) };
    // an admitted tx may be held until its block is committed (automine: node/minedanswers.ts); the check's time is taken before
    const held = o.refused === undefined && o.failed === undefined ? hold?.(o) : undefined;
    if (held === undefined) sendSoon(reply);
    else void held.then(() => sendAfterReactions(reply));
    if (--checking === 0) outbox.flush();
  };
  run().then(answer, (e: unknown) => {
    if (e instanceof DomainError) return answer({ refused: domainErrorData(e) });
    log.error({ err: e instanceof Error ? e.stack : String(e) }, 'checkTx failed');
    answer({ failed: e instanceof Error ? e.message : String(e) });
  });
}

/** Surface B's broadcast_tx_* / check_tx: the ABCI CheckTx response, and the typed refusal behind a non-zero code. */
async function checkNative(app: EvmApp, m: Extract<Request, { type: 'submitNative' }>): Promise<CheckOutcome> {
  const { result, refusal } = await app.checkNative(m.tx, m.dryRun === true, m.sender);
  return { hash: refusal === undefined ? result.data : undefined, refused: refusal && domainErrorData(refusal), check: result };
}

async function main(): Promise<void> {
  const { opts, genesis } = data;
  const store = new Store(data.dbPath, {
    walCheckpointer: true,
    // a dev chain's COMMIT does not wait for the disk (docs/dev-mode.md "Durability")
    durable: !data.opts.dev,
    onCheckpointerFailure: (e) => log.warn({ err: e.message }, 'the WAL checkpoint worker stopped: the chain thread checkpoints by itself again'),
  });
  const key = readValidatorKey(data.validatorKeyJson);
  let engine: Engine | undefined;
  const external = !opts.abci.withCometbft;
  const app = await EvmApp.create(
    store,
    genesis,
    {
      minGasPrice: opts.minimumGasPrice,
      mempool: opts.mempool,
      blockEngine: opts.blockEngine,
      coinbaseFromProposer: external,
      pruning: { ...pruningPlan(opts.pruning), minRetainBlocks: opts.pruning.minRetainBlocks },
      // impersonated txs only while the node serves the namespaces that turn it on (docs/dev-mode.md)
      impersonation: opts.jsonRpc.enable && opts.jsonRpc.api.some((n) => n === 'anvil' || n === 'hardhat'),
    },
    log,
    {
      onPoolChange: (c) => {
        sendSoon({ type: 'pool', added: c.added, removed: c.removed, natives: c.natives, evicted: c.evicted });
        if (c.added.length > 0) engine?.txAvailable();
      },
    },
  );
  if (external) return runUnderCometbft(store, app);
  const minedAnswers = new MinedAnswers((hash) => app.pool.has(hash));
  // consensus step timing for the metrics (CometBFT MarkStep / MarkRound): the step being left and since when
  let stepName: string | undefined;
  let stepAt = 0;
  let roundAt = 0;
  let steps: Array<[string, number]> = [];
  /**
   * Whether some Surface B subscription could want the round steps (the RPC thread says: `roundSteps`);
   * else they are not posted (docs/benchmarks.md "The fixed cost of a block, part 2")
   */
  let roundStepsWanted = false;
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
  // the block's figures for the metrics (node/observe.ts), made only when a metrics endpoint serves them
  const blockStats = opts.instrumentation.prometheus || opts.jsonRpc.enableMetrics;
  const statsOf = (height: bigint, rec: CometBlockRecord, timing: { prepareMs: number; executeMs: number; commitMs: number }, timeMs: number): BlockStats => {
    const evm = app.latestHeader();
    const cache = app.trieCacheStats();
    const vals = rec.validators ?? [];
    return {
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
  };
  engine = new Engine(
    store,
    app,
    {
      ...genesisEngineOptions(genesis, key, APP_VERSION),
      timeoutCommitMs: opts.consensus.timeoutCommitMs,
      blockOnTx: opts.consensus.blockOnTx,
      noTimer: opts.dev,
      createEmptyBlocks: opts.consensus.createEmptyBlocks,
    },
    log,
    {
      onCommitted: (height, rec, timing) => {
        const timeMs = timestampToMillis(rec.block.header.time);
        const stats = blockStats ? statsOf(height, rec, timing, timeMs) : undefined;
        steps = [];
        lastBlockTimeMs = timeMs;
        // posted with the answers the block releases (sendAfterReactions), else at the end of this turn
        sendSoon({ type: 'committed', height, stats, cheatsApplied: app.cheats.appliedUpTo });
        // held automine submissions whose tx this block mined (their answers follow the committed message);
        // the next automine block waits a moment for as many resends (consensus/refill.ts AUTOMINE_REFILL_WAIT_MS)
        engine!.expectTxs(minedAnswers.afterBlock(!engine!.miningMode().automine || !app.hasExecutable()));
        const txs = rec.block.data.txs.length;
        const fields = { height: Number(height), txs, executeMs: Math.round(timing.executeMs), commitMs: Math.round(timing.commitMs) };
        if (txs > 0) log.info(fields, 'committed block');
        else log.debug(fields, 'committed block');
      },
      onRoundStep: (event) => {
        onStep(event.step, event.type);
        if (roundStepsWanted) sendSoon({ type: 'roundStep', event });
      },
      // the prevote is signed only to be published (a commit carries the precommits)
      roundStepsWanted: () => roundStepsWanted,
    },
  );
  const runDevOp = createDevOps({ engine, app, send, log });
  await engine.start();
  send({ type: 'ready', height: engine.height, cheats: app.cheats.all() });

  onRequests((m) => {
    if (m.type === 'stop') {
      minedAnswers.releaseAll();
      void engine!.stop().then(() => {
        store.close();
        send({ type: 'stopped' });
      });
      return;
    }
    if (m.type === 'queryReply') return; // ABCI mode only
    if (m.type === 'roundSteps') {
      roundStepsWanted = m.wanted;
      return;
    }
    if (m.type === 'dev') {
      // a dev op may turn automine off or drop pool txs without a block: held submissions are answered (node/minedanswers.ts)
      return void runDevOp(m.id, m.op).then(() => minedAnswers.afterDevOp(!engine!.miningMode().automine));
    }
    if (m.type === 'setCoinbase') {
      app.setCoinbase(m.address);
      return send({ type: 'reply', id: m.id, code: CheckCode.ok, log: '' });
    }
    const metrics = { started: performance.now(), txBytes: m.type === 'submit' ? m.raw.length : m.dryRun !== true ? m.tx.length : undefined };
    if (m.type === 'submitNative') return answerCheck(m.id, () => checkNative(app, m), metrics);
    let tx: EvmTx | undefined;
    answerCheck(
      m.id,
      async () => {
        const d = decodeSubmitted(m.raw, m.rpc, app, m.sender, m.hash);
        await app.checkEvmTx(d);
        tx = d.evm;
        return { hash: d.evm.hash };
      },
      metrics,
      // automine: answered once its block is committed, as Anvil and Hardhat (node/minedanswers.ts)
      () => (tx !== undefined && engine!.miningMode().automine && app.willMineNext(tx) ? minedAnswers.hold(tx.hash) : undefined),
    );
  });
}

/**
 * ABCI mode (`--with-cometbft=false`): the application waits for CometBFT on `abci.address`; no engine.
 * eth_sendRawTransaction admits its tx here (ferry's CheckTx, as the embedded engine does), answers,
 * and the forward queue hands the native bytes to the local CometBFT's `broadcast_tx_async` in order
 * (abci/forwarder.ts; docs/abci.md "Mempool and txpool_* under CometBFT").
 */
async function runUnderCometbft(store: Store, app: EvmApp): Promise<void> {
  const { opts } = data;
  // EVM block 0 from ferry's genesis before CometBFT connects (its InitChain is checked against it)
  await app.initChain();
  const queries = new Map<number, (r: AbciQueryResponse) => void>();
  let nextQuery = 1;
  // state-sync snapshots: taken every snapshot-interval blocks, restored into an empty home (docs/abci.md "State sync")
  const snapshots = new StateSync(
    store,
    app,
    {
      interval: opts.stateSync.snapshotInterval,
      keepRecent: opts.stateSync.snapshotKeepRecent,
      dbPath: data.dbPath,
      snapshotsDir: join(dirname(data.dbPath), 'snapshots'),
      chainId: data.genesis.chainId,
      chunkBytes: testSnapshotChunkBytes(process.env),
    },
    log.child({ module: 'statesync' }),
    (height) => send({ type: 'committed', height }),
  );
  const driver = new AbciDriver({
    app,
    snapshots,
    transaction: (fn) => store.transaction(fn),
    query: (req) =>
      new Promise((resolve) => {
        const id = nextQuery++;
        queries.set(id, resolve);
        send({ type: 'query', id, req });
      }),
    onCommitted: (height, t) => {
      send({ type: 'committed', height });
      snapshots.afterCommit(height);
      const fields = { height: Number(height), txs: t.txs, executeMs: Math.round(t.executeMs), commitMs: Math.round(t.commitMs) };
      if (t.txs > 0) log.info(fields, 'committed block');
      else log.debug(fields, 'committed block');
    },
    log,
  });
  const serve = opts.abci.transport === 'grpc' ? startAbciGrpcServer : startAbciServer;
  const server: AbciServerHandle = await serve({ address: parseAbciAddress(opts.abci.address)!, handle: driver.handle, log: log.child({ module: 'abci' }) });
  log.info({ address: server.address, transport: opts.abci.transport }, 'ABCI server listening: waiting for CometBFT');
  const cometRpc = rpcUrl(opts.abci.cometbftRpc);
  const forwarder = new TxForwarder<{ native: Uint8Array; hash: Uint8Array; evmHash: Uint8Array }>(cometRpc, {
    // taken: its CheckTx, queued in CometBFT, finds the hash (and forgets it); in CometBFT's cache: no CheckTx comes
    onForwarded: (item, known) => known && app.forgetLocal(item.hash),
    onDrop: (item, why) => {
      app.forgetLocal(item.hash);
      app.dropTxs([item.evmHash]);
      log.warn({ tx: '0x' + hexKey(item.evmHash), why }, 'CometBFT did not take a tx ferry admitted: dropped from the pool');
      sendSoon({ type: 'pool', added: [], removed: [], forwardDropped: 1 });
    },
  });
  send({ type: 'ready', height: store.latestHeight() ?? 0n });

  onRequests((m) => {
    if (m.type === 'stop') {
      // a snapshot being taken finishes first (its worker reads the database)
      void server.close().then(() => snapshots.idle()).then(() => {
        store.close();
        send({ type: 'stopped' });
      });
      return;
    }
    if (m.type === 'roundSteps') return; // CometBFT publishes its own
    if (m.type === 'queryReply') {
      queries.get(m.id)?.(m.res);
      queries.delete(m.id);
      return;
    }
    if (m.type === 'setCoinbase') {
      return send({ type: 'reply', id: m.id, code: CheckCode.internal, log: 'miner_setEtherbase is unavailable under CometBFT: every block pays its proposer' });
    }
    if (m.type === 'dev') {
      // blocks, time and the pool belong to CometBFT in this mode (docs/dev-mode.md)
      return send({ type: 'devReply', id: m.id, error: { kind: 'domain', error: domainErrorData(unsupported('dev controls are unavailable under CometBFT')) } });
    }
    if (m.type === 'submitNative') return answerCheck(m.id, () => checkNative(app, m));
    answerCheck(m.id, async () => {
      // CometBFT did not answer the last forward: nothing is admitted unless it answers again
      if (forwarder.unreachable !== undefined && !driver.usesAppMempool) {
        await forwarder.probe();
        if (forwarder.unreachable !== undefined) throw unavailable(forwarder.unreachable);
      }
      if (forwarder.full) throw txRejected('poolFull', GethText.txpoolFull);
      const d = decodeSubmitted(m.raw, m.rpc, app, m.sender, m.hash);
      const native = wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm));
      const hash = nativeHash(native);
      await app.admitLocal(d, native, hash);
      // v0.39's app mempool reaps ferry's pool itself (ReapTxs): nothing to forward
      if (driver.usesAppMempool) app.forgetLocal(hash);
      else forwarder.push({ native, hash, evmHash: d.evm.hash });
      return { hash: d.evm.hash };
    });
  });
}

main().catch((e) => {
  log.error({ err: e instanceof Error ? e.stack : String(e) }, 'chain thread failed to start');
  send({ type: 'fatal', message: e instanceof Error ? e.message : String(e) });
});
