/**
 * Maps ABCI requests onto the application (the `Application` interface of src/types/abci.ts):
 * FinalizeBlock computes, Commit persists in ONE store transaction. Info reports only what was
 * committed, so CometBFT's handshake replays exactly the blocks the application lacks — a crash
 * between FinalizeBlock and Commit (or inside Commit's transaction) loses nothing and applies no
 * block twice.
 */
import type { Logger } from '../lib/log.js';
import type { AbciQueryRequest, AbciQueryResponse } from '../types/cometbft.js';
import type { Application, SnapshotApp } from '../types/abci.js';
import { corruptChunk, crashNow, testFaultFromEnv, type TestFault } from './testfault.js';
import { APPLY_SNAPSHOT_CHUNK_RESULT, OFFER_SNAPSHOT_RESULT, protoSizeOfTxs, type AbciRequest, type AbciResponse } from './wire.js';

export interface AbciDriverHost {
  app: Application;
  /** runs `fn` in one store write transaction (all or nothing) */
  transaction(fn: () => void): void;
  query(req: AbciQueryRequest): Promise<AbciQueryResponse>;
  /** after Commit: the height now committed and what it took */
  onCommitted(height: bigint, info: { txs: number; executeMs: number; commitMs: number }): void;
  log: Logger;
  /** state-sync snapshots (docs/abci.md "State sync"; absent: none listed, every offer rejected) */
  snapshots?: SnapshotApp;
  /** a fault injected by an end-to-end test (default: from FERRY_TEST_FAULT, src/abci/testfault.ts) */
  fault?: TestFault;
}

export class AbciDriver {
  /** the block FinalizeBlock computed, waiting for Commit */
  private finalized: { height: bigint; txs: number; executeMs: number } | undefined;

  private readonly fault: TestFault | undefined;

  /**
   * Whether CometBFT runs v0.39's application-side mempool (`[mempool] type = "app"`): known from its
   * first InsertTx or ReapTxs (it reaps every `reap_interval` from start-up). Its PrepareProposal then
   * carries no txs and the block comes from ferry's own pool, as the embedded engine's does (docs/abci.md).
   */
  private appMempool = false;

  /** whether CometBFT runs the application-side mempool (known from its first InsertTx or ReapTxs) */
  get usesAppMempool(): boolean {
    return this.appMempool;
  }

  private noteAppMempool(): void {
    if (this.appMempool) return;
    this.appMempool = true;
    this.host.log.info('CometBFT runs an application-side mempool (InsertTx/ReapTxs): proposals come from ferry\'s pool');
  }

  constructor(private readonly host: AbciDriverHost) {
    this.fault = 'fault' in host ? host.fault : testFaultFromEnv(process.env);
  }

  readonly handle = async (req: AbciRequest): Promise<AbciResponse> => {
    const { app } = this.host;
    switch (req.kind) {
      case 'echo':
        return { kind: 'echo', message: req.message };
      case 'flush':
        return { kind: 'flush' };
      case 'info': {
        const info = app.info();
        // height 0: no block yet; CometBFT then runs InitChain (again, after a crash: idempotent)
        const empty = info.lastBlockHeight === 0n;
        return { kind: 'info', ...info, lastBlockAppHash: empty ? new Uint8Array() : info.lastBlockAppHash };
      }
      case 'initChain': {
        const appHash = await app.initChain({
          chainId: req.chainId,
          timeMs: req.timeMs,
          validators: req.validators,
          appStateBytes: req.appStateBytes,
          initialHeight: req.initialHeight,
        });
        return { kind: 'initChain', appHash };
      }
      case 'query':
        return { kind: 'query', ...(await this.host.query(req)) };
      case 'checkTx': {
        const r = req.recheck ? await app.recheckTx(req.tx) : await app.checkTx(req.tx);
        return { kind: 'checkTx', ...r };
      }
      case 'insertTx': {
        // a tx from a peer's gossip: CheckTx's checks and pool (ResponseInsertTx carries only the code)
        this.noteAppMempool();
        return { kind: 'insertTx', code: (await app.checkTx(req.tx)).code };
      }
      case 'reapTxs':
        this.noteAppMempool();
        return { kind: 'reapTxs', txs: app.reapTxs(req.maxBytes, req.maxGas) };
      case 'prepareProposal': {
        const max = Number(req.maxTxBytes);
        const txs =
          this.appMempool && req.txs.length === 0
            ? app.prepareProposal({ height: req.height, timeMs: req.timeMs, maxTxBytes: max })
            : await app.orderProposal({ height: req.height, timeMs: req.timeMs, txs: req.txs, maxTxBytes: max });
        // CometBFT counts each tx's protobuf framing against max_tx_bytes: trim to fit
        while (txs.length > 0 && protoSizeOfTxs(txs) > max) txs.pop();
        return { kind: 'prepareProposal', txs };
      }
      case 'processProposal':
        return { kind: 'processProposal', accept: await app.processProposal({ height: req.height, timeMs: req.timeMs, txs: req.txs }) };
      case 'extendVote':
        return { kind: 'extendVote' };
      case 'verifyVoteExtension':
        return { kind: 'verifyVoteExtension', accept: true };
      case 'finalizeBlock': {
        const start = performance.now();
        this.finalized = undefined;
        const r = await app.finalizeBlock({
          height: req.height,
          timeMs: req.timeMs,
          hash: req.hash,
          proposerAddress: req.proposerAddress,
          txs: req.txs,
        });
        this.finalized = { height: req.height, txs: req.txs.length, executeMs: performance.now() - start };
        return { kind: 'finalizeBlock', events: r.events, txResults: r.txResults, validatorUpdates: r.validatorUpdates ?? [], appHash: r.appHash };
      }
      case 'commit': {
        const f = this.finalized;
        if (!f) throw new Error('Commit without FinalizeBlock');
        const start = performance.now();
        try {
          this.host.transaction(() => {
            app.commit();
            if (this.fault?.kind === 'crash-in-commit' && this.fault.height === f.height) crashNow(`crash in Commit of height ${f.height}`);
          });
        } catch (e) {
          await app.abortBlock();
          this.finalized = undefined;
          throw e;
        }
        this.finalized = undefined;
        await app.afterCommit();
        this.host.onCommitted(f.height, { txs: f.txs, executeMs: f.executeMs, commitMs: performance.now() - start });
        return { kind: 'commit', retainHeight: app.retainHeight(f.height) };
      }
      case 'listSnapshots':
        return { kind: 'listSnapshots', snapshots: this.host.snapshots?.listSnapshots() ?? [] };
      case 'offerSnapshot':
        return { kind: 'offerSnapshot', result: OFFER_SNAPSHOT_RESULT[this.host.snapshots?.offerSnapshot(req.snapshot, req.appHash) ?? 'reject'] };
      case 'loadSnapshotChunk': {
        const chunk = this.host.snapshots?.loadSnapshotChunk(req.height, req.format, req.chunk) ?? new Uint8Array();
        return { kind: 'loadSnapshotChunk', chunk: this.fault?.kind === 'corrupt-snapshot-chunks' ? corruptChunk(chunk) : chunk };
      }
      case 'applySnapshotChunk': {
        const r = (await this.host.snapshots?.applySnapshotChunk(req.index, req.chunk, req.sender)) ?? { result: 'abort' as const };
        return { kind: 'applySnapshotChunk', result: APPLY_SNAPSHOT_CHUNK_RESULT[r.result], refetchChunks: r.refetchChunks, rejectSenders: r.rejectSenders };
      }
    }
  };
}
