/**
 * The application state machine, as the consensus drivers see it (the `Application` interface of
 * src/types/abci.ts): this facade owns the chain thread's state (the latest header, the runners, the
 * pool, the block FinalizeBlock made and Commit writes) and hands each job to its module:
 *   - admission (CheckTx, RECHECK, the decoded-tx cache): chain/admission.ts
 *   - fees (EIP-1559 base fee): chain/fees.ts
 *   - proposals (PrepareProposal, ProcessProposal): chain/proposal.ts; v0.39's ReapTxs: chain/reap.ts
 *   - block building for FinalizeBlock: chain/blockbuild.ts, its Evmos events: chain/abcievents.ts
 *   - dev state (gas limit and base fee overrides, impersonation, revert's logs): chain/devstate.ts,
 *     the pending dev cheats: chain/cheats.ts
 *   - the flat-state migration: chain/migration.ts; the address index's: chain/addrmigration.ts
 *   - the genesis block and InitChain's check: chain/genesisblock.ts
 */
import type { Account } from '@ethereumjs/util';
import type { Common } from '@ethereumjs/common';
import type {
  Application,
  CheckTxResult,
  FinalizeBlockRequest,
  FinalizeBlockResponse,
  InfoResponse,
  InitChainRequest,
  ProposalRequest,
} from '../types/abci.js';
import type { Genesis } from '../config/genesis.js';
import type { CallEngine, MempoolOptions } from '../config/options.js';
import { ForkSchedule } from '../evm/forks.js';
import { attachConsoleLog } from '../evm/consolelog.js';
import { useSyncSteps } from '../evm/syncsteps.js';
import { TouchCollector } from '../evm/touched.js';
import { EvmRunner } from '../evm/runner.js';
import { blockEngineText } from '../evm/revm.js';
import type { FlatStateManager } from '../evm/flatstate.js';
import { feeCap, type DecodedTx } from '../evm/tx.js';
import { limitExceeded } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import { FlatState } from '../store/flatstate.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import { Pruner, type PrunePlan } from '../store/prune.js';
import { TrieRefs } from '../store/triegc.js';
import { CheatTable } from '../store/cheats.js';
import { blockHashLookup } from '../store/hashwindow.js';
import { ADDRESS_INDEX_BUILD_KEY, parseBuild } from '../store/addrindex.js';
import type { EvmHeader, EvmLog, EvmTx } from '../types/chain.js';
import type { Cheat } from '../types/cheats.js';
import { Admission, type Checked } from './admission.js';
import { assembleBlock, decodeBlockTxs, type PendingBlock } from './blockbuild.js';
import { CheatOverlay, MAX_PENDING_CHEATS, type PendingCheat } from './cheats.js';
import { DevState, logsAbove, type DevFields } from './devstate.js';
import { baseFeeAfter } from './fees.js';
import { AppStateError, checkInitChain, genesisHeight, writeGenesisBlock } from './genesisblock.js';
import { rebuildFlatState } from './migration.js';
import { buildAddressIndex } from './addrmigration.js';
import { Proposals } from './proposal.js';
import { Reaper } from './reap.js';
import { TxPool, hexKey, type PoolChange } from './txpool.js';

export const APP_VERSION = 1n;
/** store meta key of the fee recipient set by miner_setEtherbase (absent: the genesis coinbase) */
export const COINBASE_META_KEY = 'coinbase';

/** The fee recipient of new blocks: the one miner_setEtherbase stored, else `fallback` (genesis). */
export function loadCoinbase(store: Store, fallback: Uint8Array): Uint8Array {
  const v = store.getMeta(COINBASE_META_KEY);
  return v === undefined || v.length !== 20 ? fallback : new Uint8Array(v);
}

export interface AppEvents {
  onPoolChange(change: PoolChange): void;
}

export interface AppOptions {
  minGasPrice: bigint;
  mempool: MempoolOptions;
  /**
   * true: a block's fee recipient is its proposer's 20-byte consensus address (every node of a network
   * computes the same state); false: the genesis coinbase or miner_setEtherbase's (one machine).
   */
  coinbaseFromProposer?: boolean;
  /**
   * true while the node serves the dev namespaces (`anvil`/`hardhat`): proposals may hold
   * transactions with the impersonation placeholder signature (evm/tx.ts). Off, such a proposal is
   * rejected; CheckTx admits one only for an address impersonated at that moment.
   */
  impersonation?: boolean;
  /** state and history pruning (store/prune.ts; absent: archive) */
  pruning?: PrunePlan;
  /** 'ethereumjs': every block tx on ethereumjs' runTx; else contract txs on revm where it can (evm/revmtx.ts) */
  blockEngine?: CallEngine;
}

export class EvmApp implements Application {
  /** the chain's hardforks by block time (evm/forks.ts) */
  readonly forks: ForkSchedule;
  readonly pool: TxPool;
  private latest!: EvmHeader;
  private pending: PendingBlock | undefined;
  /** fee recipient of new blocks (miner_setEtherbase) */
  private coinbase: Uint8Array;
  /** pending dev cheats (anvil_setBalance …): seen by CheckTx, applied at the next block's start */
  readonly cheats: CheatOverlay;
  /** the dev block fields and impersonation (evm_setBlockGasLimit, anvil_setNextBlock*, anvil_impersonateAccount…; node/devops.ts sets them, snapshots keep them) */
  readonly dev: DevState;
  /** removes old state versions and block history after each block (absent: archive) */
  private readonly pruner: Pruner | undefined;
  private readonly admission: Admission;
  private readonly reaper = new Reaper();
  /** block proposals; anvil_reorg forces a new block's txs through them (node/devops.ts) */
  readonly proposals: Proposals;
  /** a block's fee recipient is its proposer (AppOptions.coinbaseFromProposer) */
  private readonly coinbaseFromProposer: boolean;

  private constructor(
    private readonly store: Store,
    private readonly genesis: Genesis,
    private readonly trieDb: TrieDB,
    private readonly flat: FlatState,
    private readonly runner: EvmRunner<FlatStateManager>,
    private readonly checkRunner: EvmRunner<FlatStateManager>,
    opts: AppOptions,
    private readonly log: Logger,
    private readonly events: AppEvents,
  ) {
    this.forks = runner.forks;
    this.coinbaseFromProposer = opts.coinbaseFromProposer === true;
    this.coinbase = loadCoinbase(store, genesis.evm.coinbase);
    this.cheats = new CheatOverlay(new CheatTable(store));
    this.dev = new DevState(genesis.maxGas, opts.impersonation === true);
    const pruner = opts.pruning && new Pruner(store, opts.pruning);
    this.pruner = pruner?.active ? pruner : undefined;
    this.pool = new TxPool({
      size: opts.mempool.size,
      priceBumpPercent: opts.mempool.priceBumpPercent,
      accountQueue: opts.mempool.accountQueue,
    });
    const latestAccount = (addr: Uint8Array) => this.latestAccount(addr);
    const nextBaseFee = () => this.nextBaseFee();
    this.admission = new Admission({
      rules: () => this.common,
      pool: this.pool,
      mempool: opts.mempool,
      minGasPrice: opts.minGasPrice,
      dev: this.dev,
      log,
      onPoolChange: (c) => events.onPoolChange(c),
      latestAccount,
      nextBaseFee,
    });
    this.proposals = new Proposals({
      pool: this.pool,
      priceBumpPercent: opts.mempool.priceBumpPercent,
      maxGas: genesis.maxGas,
      impersonation: opts.impersonation === true,
      decodeNative: (native) => this.admission.decodeNative(native),
      latestAccount,
      nextBaseFee,
      blockGasLimit: () => this.dev.blockGasLimit,
      commonAt: (t) => this.forks.commonAt(t),
      rules: () => this.common,
      mayImpersonate: (a) => this.dev.mayImpersonate(a),
    });
  }

  static async create(store: Store, genesis: Genesis, opts: AppOptions, log: Logger, events: AppEvents): Promise<EvmApp> {
    const common = new ForkSchedule(genesis.evmChainId, genesis.evm);
    const trieDb = new TrieDB(store);
    // a pruning node counts trie-node references from its first node on (store/triegc.ts)
    if (!store.reader) store.trieRefs = TrieRefs.open(store.db, (opts.pruning?.interval ?? 0) > 0);
    if (!store.reader && !store.trieRefs && (opts.pruning?.interval ?? 0) > 0) {
      log.warn({}, 'state pruning is on but this home was an archive: its trie nodes are not collected until `ferry prune` runs with the node stopped (docs/abci.md "Pruning")');
    }
    const flat = new FlatState(store);
    // BLOCKHASH of blocks a state-synced or history-pruned home does not hold (store/hashwindow.ts)
    const hashOf = blockHashLookup(store);
    const runner = await EvmRunner.createFlat(common, flat, trieDb, hashOf);
    runner.revmTxs = opts.blockEngine !== 'ethereumjs';
    log.info({ engine: blockEngineText(runner.revmTxs ? 'revm' : 'ethereumjs') }, 'block engine');
    const checkRunner = await EvmRunner.createFlat(common, flat, trieDb.view(), hashOf);
    // block execution runs the interpreter's synchronous fast loop too (evm/syncsteps.ts): state-replay
    // checks it against recorded roots, and the traces replay blocks on the library's own loop
    const consoleLog = log.child({ module: 'console' });
    for (const evm of runner.evms()) {
      useSyncSteps(evm);
      TouchCollector.attach(evm);
      attachConsoleLog(evm as never, (line) => consoleLog.info({ source: 'block' }, `console.log: ${line}`));
    }
    const app = new EvmApp(store, genesis, trieDb, flat, runner, checkRunner, opts, log, events);
    const h = store.latestHeight();
    if (h !== undefined) app.latest = store.evmBlock(h)!.header;
    // healthy homes write flat rows with every block; none (an older home) or fewer (a migration cut short): build
    if (h !== undefined && flat.top() !== Number(h)) await app.rebuildFlat(h);
    // a home from before the address index: its blocks are indexed once (chain/addrmigration.ts)
    const build = parseBuild(store.getMeta(ADDRESS_INDEX_BUILD_KEY));
    if (build !== undefined) await buildAddressIndex({ store, flat, trieDb, runner, log }, build);
    return app;
  }

  /**
   * The rules of the next block (CheckTx and eth_sendRawTransaction decode under them): its time is the
   * CometBFT time of the last commit's votes, about now and never before the last block's.
   */
  get common(): Common {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const last = this.latest?.timestamp ?? 0n;
    return this.forks.commonAt(now > last ? now : last);
  }

  /** The flat-state migration (chain/migration.ts) of heights 0…`top`. */
  private rebuildFlat(top: bigint): Promise<void> {
    const { store, genesis, trieDb, flat, runner, log } = this;
    return rebuildFlatState({ store, genesis, common: this.common, trieDb, flat, runner, log }, top);
  }

  /** miner_setEtherbase: blocks finalized from now on pay fees to `address`; kept across restarts. */
  setCoinbase(address: Uint8Array): void {
    this.store.putMeta(COINBASE_META_KEY, address);
    this.coinbase = address;
  }

  /** the chain's trie node cache reads, hits and misses since start (metrics) */
  trieCacheStats(): { hits: number; misses: number } {
    return this.trieDb.cacheStats();
  }

  /**
   * anvil_dropTransaction / anvil_dropAllTransactions / anvil_removePoolTransactions: removes pool txs
   * (all when `hashes` is undefined; only `from`'s when given); returns the hashes removed.
   */
  dropTxs(hashes: Uint8Array[] | undefined, from?: Uint8Array): Uint8Array[] {
    const { pending, queued } = this.pool.content();
    const all = [...pending, ...queued].map((e) => e.decoded.evm);
    const want = hashes === undefined ? undefined : new Set(hashes.map((h) => hexKey(h)));
    const sender = from === undefined ? undefined : hexKey(from);
    const victims = all.filter((t) => (want === undefined || want.has(hexKey(t.hash))) && (sender === undefined || hexKey(t.from) === sender));
    this.pool.drop(victims);
    const removed = victims.map((t) => t.hash);
    if (removed.length > 0) this.events.onPoolChange({ added: [], removed });
    return removed;
  }

  /**
   * anvil_setBalance / setCode / setStorageAt / setNonce / loadState: pending until the next block
   * applies them; returns them numbered, for the RPC thread's mirror. Refused whole past MAX_PENDING_CHEATS.
   */
  setCheats(cheats: readonly Cheat[]): PendingCheat[] {
    if (this.cheats.wouldOverflow(cheats)) {
      throw limitExceeded(`more than ${MAX_PENDING_CHEATS} pending state changes (MAX_PENDING_CHEATS): mine a block to apply them first`);
    }
    return this.cheats.set(cheats);
  }

  /** The latest committed account with the pending cheats (CheckTx and the proposal checks read this). */
  private async latestAccount(addr: Uint8Array): Promise<Account | undefined> {
    return this.cheats.account(addr, await this.checkRunner.account(this.latestRef(), addr));
  }

  latestHeader(): EvmHeader {
    return this.latest;
  }

  /**
   * Dev revert, inside the rewinding store transaction: deletes the EVM blocks above `height`, their
   * tx lookups, receipts and logs, and the flat state rows they wrote (the trie keeps its nodes:
   * content-addressed, the root at `height` is still whole).
   */
  rewindStore(height: bigint): void {
    this.store.rewindBlocks(height);
    this.flat.rewindTo(Number(height));
  }

  /** Dev revert, after the transaction: the head, caches and EVMs follow; pool senders get their nonces back. */
  async afterRewind(height: bigint): Promise<void> {
    await this.afterRestore(height);
    // pool txs stay (as in Anvil); each sender's run starts again at its nonce as of `height`
    const nonces = new Map<string, bigint>();
    for (const sender of this.pool.senders()) {
      nonces.set(hexKey(sender), (await this.checkRunner.account(this.latestRef(), sender))?.nonce ?? 0n);
    }
    const dropped = this.pool.resetNonces(nonces);
    if (dropped.length > 0) this.events.onPoolChange({ added: [], removed: dropped.map((t) => t.hash) });
  }

  /** The store moved to `height` (a dev revert; a state-sync restore, chain/statesync.ts): the head, caches and EVMs follow. */
  async afterRestore(height: bigint): Promise<void> {
    this.store.forgetCaches();
    this.flat.forget(Number(height));
    this.latest = this.store.evmBlock(height)!.header;
    this.pending = undefined;
    this.proposals.forget();
    this.trieDb.discard();
    await this.runner.reset(this.latestRef());
    await this.checkRunner.reset(this.latestRef());
  }

  /** The logs a revert to `height` removes, oldest first, at most `limit` (chain/devstate.ts). */
  logsAbove(height: bigint, limit: number): { logs: EvmLog[]; truncated: boolean } {
    return logsAbove(this.store, height, limit);
  }

  info(): InfoResponse {
    const h = this.store.latestHeight();
    return {
      data: 'ferry',
      version: '0.1.0',
      appVersion: APP_VERSION,
      // the genesis block alone is height 0 to CometBFT (a fork's stands at the fork block: genesisblock.ts)
      lastBlockHeight: h === undefined || h === genesisHeight(this.genesis) ? 0n : h,
      lastBlockAppHash: h === undefined ? new Uint8Array() : this.latest.stateRoot,
    };
  }

  async initChain(req?: InitChainRequest): Promise<Uint8Array> {
    if (req) checkInitChain(this.genesis, req);
    const existing = this.store.evmBlock(genesisHeight(this.genesis));
    if (existing) {
      this.latest ??= existing.header;
      return existing.header.stateRoot;
    }
    const { store, genesis, trieDb, flat, runner } = this;
    const common = this.forks.commonAt(BigInt(Math.floor(Date.parse(genesis.genesisTime) / 1000)));
    this.latest = await writeGenesisBlock({ store, genesis, common, trieDb, flat, runner });
    return this.latest.stateRoot;
  }

  /** the genesis block's height (0; a fork's: the fork block) */
  genesisHeight(): bigint {
    return genesisHeight(this.genesis);
  }

  private latestRef() {
    return { height: this.latest.number, root: this.latest.stateRoot };
  }

  nextBaseFee(): bigint {
    return this.dev.baseFeeOverride ?? baseFeeAfter(this.latest);
  }

  /** CheckTx (the ABCI answer): decodes native bytes and runs the stateful checks (chain/admission.ts). */
  async checkTx(native: Uint8Array, dryRun = false, sender?: Uint8Array): Promise<CheckTxResult> {
    return (await this.admission.checkNative(native, dryRun, sender)).result;
  }

  /** CheckTx with its typed refusal beside the ABCI answer (Surface B's broadcast_tx_* and check_tx). */
  checkNative(native: Uint8Array, dryRun = false, sender?: Uint8Array): Promise<Checked> {
    return this.admission.checkNative(native, dryRun, sender);
  }

  /**
   * eth_sendRawTransaction under CometBFT: admits the tx here and remembers it, so CometBFT's CheckTx of
   * the forwarded native bytes answers OK (chain/admission.ts admitLocal); throws txRejected when refused.
   */
  admitLocal(d: DecodedTx, native: Uint8Array, hash: Uint8Array): Promise<CheckTxResult> {
    return this.admission.admitLocal(d, native, hash);
  }

  /** The forward of a locally admitted tx ended (abci/forwarder.ts). */
  forgetLocal(hash: Uint8Array): void {
    this.admission.forgetLocal(hash);
  }

  /** the decoded-tx cache's size, hits, misses and evictions since start */
  decodedTxCacheStats() {
    return this.admission.decodedTxCacheStats();
  }

  /** eth_sendRawTransaction's path: wraps into the native form and admits; throws txRejected when refused. */
  checkEvmTx(d: DecodedTx): Promise<CheckTxResult> {
    return this.admission.checkEvmTx(d);
  }

  pendingCount(): number {
    return this.pool.size;
  }

  hasExecutable(): boolean {
    return this.pool.hasExecutable(this.nextBaseFee());
  }

  /** whether the next block would take this pooled tx: it is in its sender's executable run and pays the base fee */
  willMineNext(tx: EvmTx): boolean {
    const next = this.pool.pendingNonce(tx.from);
    return next !== undefined && tx.nonce < next && feeCap(tx) >= this.nextBaseFee();
  }

  recheckTx(native: Uint8Array): Promise<CheckTxResult> {
    return this.admission.recheck(native);
  }

  orderProposal(req: ProposalRequest): Promise<Uint8Array[]> {
    return this.proposals.order(req);
  }

  processProposal(req: ProposalRequest): Promise<boolean> {
    return this.proposals.process(req);
  }

  prepareProposal(req: { height: bigint; timeMs: number; maxTxBytes: number }): Uint8Array[] {
    return this.proposals.prepare(req);
  }

  /** v0.39's ReapTxs: each pooled tx when it arrives, and again while it stays pooled (chain/reap.ts) */
  reapTxs(maxBytes: bigint, maxGas: bigint): Uint8Array[] {
    return this.reaper.reap(this.pool.inArrivalOrder(), maxBytes, maxGas).map((e) => e.native);
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    // a block finalized but never committed (the driver went away before Commit) is dropped: it comes again
    if (this.pending) await this.abortBlock();
    const parent = this.latest;
    if (req.height <= parent.number) throw new AppStateError(`FinalizeBlock: height ${req.height} is already applied (last ${parent.number})`);
    const txs = decodeBlockTxs(
      req.txs,
      (native) => this.proposals.proposedTx(native),
      (native) => this.admission.decodeNative(native),
    );
    this.proposals.forget();
    const ctx = {
      number: req.height,
      timestamp: BigInt(Math.floor(req.timeMs / 1000)),
      coinbase: this.coinbaseFromProposer ? req.proposerAddress : this.coinbase,
      gasLimit: this.dev.blockGasLimit,
      baseFee: this.nextBaseFee(),
      mixHash: this.dev.prevRandaoOverride ?? parent.hash,
    };
    // the pending dev cheats go into this block's state before its first tx
    const cheats = this.cheats.size > 0 ? this.cheats.forBlock() : undefined;
    const prelude = cheats ? CheatOverlay.prelude(cheats.cheats) : undefined;
    const exec = await this.runner.executeBlock({ height: parent.number, root: parent.stateRoot }, ctx, txs.decoded, prelude);
    const { response, pending } = assembleBlock({ req, parent, ctx, txs, exec, common: this.forks.commonAt(ctx.timestamp), genesis: this.genesis, cheats });
    this.pending = pending;
    return response;
  }

  commit(): void {
    const p = this.pending;
    if (!p) throw new Error('commit without finalizeBlock');
    this.trieDb.flushInto(this.store);
    this.flat.write(Number(p.block.header.number), p.flatChange);
    this.cheats.persistApplied(Number(p.block.header.number), p.cheats);
    this.store.putBlock({
      height: p.block.header.number,
      hash: p.block.header.hash,
      evm: p.block,
      receipts: p.receipts,
      nativeHashes: p.nativeHashes,
      touched: p.touched,
    });
  }

  async afterCommit(): Promise<void> {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.trieDb.afterCommit();
    this.flat.applied(Number(p.block.header.number), p.flatChange);
    if (p.cheats !== undefined) this.cheats.applied(p.cheats.upTo);
    this.latest = p.block.header;
    // after the block's own transaction, in a bounded one of its own (store/prune.ts)
    this.pruner?.afterCommit(Number(p.block.header.number));
    await this.runner.reset(this.latestRef());
    this.dev.baseFeeOverride = undefined;
    this.dev.prevRandaoOverride = undefined;
    const dropped = this.pool.onCommit(await this.authorityNonces(p.block.transactions, p.newNonces));
    this.pool.drop(p.excluded);
    const removed = [...dropped, ...p.excluded].map((t) => t.hash);
    if (removed.length > 0) this.events.onPoolChange({ added: [], removed, evicted: p.excluded.length });
  }

  /**
   * The senders' new nonces, plus those of the pooled accounts a set-code tx of the block named as an
   * authority (an applied authorization bumps the authority's nonce, which can make its pooled txs stale).
   */
  private async authorityNonces(txs: EvmTx[], senders: Map<string, bigint>): Promise<Map<string, bigint>> {
    const out = new Map(senders);
    for (const t of txs) {
      for (const a of t.authorizationList ?? []) {
        if (a.authority === undefined || out.has(hexKey(a.authority)) || this.pool.inFlight(a.authority).total === 0) continue;
        out.set(hexKey(a.authority), (await this.latestAccount(a.authority))?.nonce ?? 0n);
      }
    }
    return out;
  }

  /** Commit's retain_height after committing `height` (min-retain-blocks; 0: CometBFT keeps every block) */
  retainHeight(height: bigint): bigint {
    return this.pruner?.retainHeight(height) ?? 0n;
  }

  async abortBlock(): Promise<void> {
    this.pending = undefined;
    this.trieDb.discard();
    await this.runner.reset(this.latestRef());
  }
}
