/**
 * The chain thread: store (writer), application, mempool and consensus engine. Block execution runs
 * here so the RPC thread never waits behind it (DESIGN.md performance rules).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AbciDriver } from '../abci/driver.js';
import { broadcastTxSync, CometRpcError, rpcUrl } from '../abci/cometclient.js';
import { startAbciServer, type AbciServerHandle } from '../abci/server.js';
import { EvmApp } from '../chain/app.js';
import { wrapEthereumTx } from '../chain/nativetx.js';
import { parseAbciAddress } from '../config/address.js';
import { feeCap } from '../evm/tx.js';
import type { AbciQueryResponse } from '../types/cometbft.js';
import { Engine } from '../consensus/engine.js';
import { readValidatorKey, timestampToMillis, parseTime } from '../consensus/cometbft/index.js';
import { decodeTx, type DecodedTx } from '../evm/tx.js';
import { FerryError } from '../lib/errors.js';
import { createLogger } from '../lib/log.js';
import { Store } from '../store/store.js';
import type { ChainWorkerData, FromChain, ToChain } from './protocol.js';

const data = workerData as ChainWorkerData;
const port = parentPort!;
const send = (m: FromChain) => port.postMessage(m);
const log = createLogger({ level: data.opts.logLevel }).child({ module: 'chain' });

/** eth_sendRawTransaction's bytes decoded, or why they are refused before any check (geth's texts). */
function decodeSubmitted(raw: Uint8Array, rpc: boolean, app: EvmApp): DecodedTx | { rejected: string } {
  let d: DecodedTx;
  try {
    d = decodeTx(raw, app.common);
  } catch (e) {
    if (e instanceof FerryError) return { rejected: e.message };
    throw e;
  }
  if (rpc && !data.opts.jsonRpc.allowUnprotectedTxs && d.evm.chainId === undefined) {
    return { rejected: 'only replay-protected (EIP-155) transactions allowed over RPC' };
  }
  return d;
}

async function main(): Promise<void> {
  const { opts, genesis } = data;
  const store = new Store(data.dbPath);
  const key = readValidatorKey(data.validatorKeyJson);
  let engine: Engine | undefined;
  const external = !opts.abci.withCometbft;
  const app = await EvmApp.create(
    store,
    genesis,
    { minGasPrice: opts.minimumGasPrice, mempool: opts.mempool, coinbaseFromProposer: external },
    log,
    {
      onPoolChange: (c) => {
        send({ type: 'pool', added: c.added, removed: c.removed, natives: c.natives });
        if (c.added.length > 0) engine?.txAvailable();
      },
    },
  );
  if (external) return runUnderCometbft(store, app);
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
        send({ type: 'committed', height });
        const txs = rec.block.data.txs.length;
        const fields = { height: Number(height), txs, executeMs: Math.round(timing.executeMs), commitMs: Math.round(timing.commitMs) };
        if (txs > 0) log.info(fields, 'committed block');
        else log.debug(fields, 'committed block');
      },
      onRoundStep: (event) => send({ type: 'roundStep', event }),
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
    if (m.type === 'queryReply') return; // ABCI mode only
    const reply = (code: number, logText: string, hash?: Uint8Array) => send({ type: 'reply', id: m.id, code, log: logText, hash });
    if (m.type === 'setCoinbase') {
      app.setCoinbase(m.address);
      return reply(0, '');
    }
    const run = async () => {
      if (m.type === 'submit') {
        const d = decodeSubmitted(m.raw, m.rpc, app);
        if ('rejected' in d) return reply(2, d.rejected);
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

/**
 * ABCI mode (`--with-cometbft=false`): the application waits for CometBFT on `abci.address`; no engine.
 * eth_sendRawTransaction goes to the local CometBFT's `broadcast_tx_sync` (which calls CheckTx here).
 */
async function runUnderCometbft(store: Store, app: EvmApp): Promise<void> {
  const { opts } = data;
  // EVM block 0 from ferry's genesis before CometBFT connects (its InitChain is checked against it)
  await app.initChain();
  const queries = new Map<number, (r: AbciQueryResponse) => void>();
  let nextQuery = 1;
  const driver = new AbciDriver({
    app,
    transaction: (fn) => store.transaction(fn),
    query: (req) =>
      new Promise((resolve) => {
        const id = nextQuery++;
        queries.set(id, resolve);
        send({ type: 'query', id, req });
      }),
    onCommitted: (height, t) => {
      send({ type: 'committed', height });
      const fields = { height: Number(height), txs: t.txs, executeMs: Math.round(t.executeMs), commitMs: Math.round(t.commitMs) };
      if (t.txs > 0) log.info(fields, 'committed block');
      else log.debug(fields, 'committed block');
    },
    log,
  });
  const server: AbciServerHandle = await startAbciServer({ address: parseAbciAddress(opts.abci.address)!, handle: driver.handle, log: log.child({ module: 'abci' }) });
  log.info({ address: server.address, transport: opts.abci.transport }, 'ABCI server listening: waiting for CometBFT');
  const cometRpc = rpcUrl(opts.abci.cometbftRpc);
  send({ type: 'ready', height: store.latestHeight() ?? 0n });

  port.on('message', (m: ToChain) => {
    if (m.type === 'stop') {
      void server.close().then(() => {
        store.close();
        send({ type: 'stopped' });
      });
      return;
    }
    if (m.type === 'queryReply') {
      queries.get(m.id)?.(m.res);
      queries.delete(m.id);
      return;
    }
    const reply = (code: number, logText: string, hash?: Uint8Array) => send({ type: 'reply', id: m.id, code, log: logText, hash });
    if (m.type === 'setCoinbase') {
      return reply(1, 'miner_setEtherbase is unavailable under CometBFT: every block pays its proposer');
    }
    const run = async () => {
      if (m.type === 'submit') {
        const d = decodeSubmitted(m.raw, m.rpc, app);
        if ('rejected' in d) return reply(2, d.rejected);
        const native = wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm));
        try {
          const r = await broadcastTxSync(cometRpc, native);
          return reply(r.code, r.log, r.code === 0 ? d.evm.hash : undefined);
        } catch (e) {
          if (e instanceof CometRpcError) return reply(1, e.message);
          throw e;
        }
      }
      const r = await app.checkTx(m.tx, m.dryRun === true);
      return send({ type: 'reply', id: m.id, code: r.code, log: r.log, hash: r.code === 0 ? r.data : undefined, check: r });
    };
    run().catch((e) => {
      log.error({ err: e instanceof Error ? e.stack : String(e) }, 'submit failed');
      reply(1, 'internal error');
    });
  });
}

main().catch((e) => {
  log.error({ err: e instanceof Error ? e.stack : String(e) }, 'chain thread failed to start');
  send({ type: 'fatal', message: e instanceof Error ? e.message : String(e) });
});
