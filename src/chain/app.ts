/**
 * The application state machine: admits transactions (CheckTx) into the EVM pool, executes blocks
 * with the EVM (FinalizeBlock), persists them (Commit, inside the engine's block transaction) and
 * emits the Evmos-compatible per-tx and per-block events.
 */
import { attachConsoleLog } from '../evm/consolelog.js';
import { createBlockHeader } from '@ethereumjs/block';
import { Address } from '@ethereumjs/util';
import type { Common } from '@ethereumjs/common';
import type {
  Application,
  AbciEvent,
  CheckTxResult,
  ExecTxResult,
  FinalizeBlockRequest,
  FinalizeBlockResponse,
  InfoResponse,
  InitChainRequest,
  ProposalRequest,
} from '../consensus/abci.js';
import { checksumAddress } from '../config/devaccounts.js';
import { renderGenesis, type Genesis } from '../config/genesis.js';
import type { MempoolOptions } from '../config/options.js';
import { makeCommon, keccak256 } from '../evm/common.js';
import { ethBlockSize } from '../evm/ethrlp.js';
import { useSyncSteps } from '../evm/syncsteps.js';
import type { ExecutedBlock } from '../evm/blockexec.js';
import { EMPTY_TRIE_ROOT } from '../evm/orderedtrie.js';
import { EvmRunner } from '../evm/runner.js';
import type { FlatStateManager } from '../evm/flatstate.js';
import { decodeTx, feeCap, effectiveGasPrice, isImpersonated, type DecodedTx } from '../evm/tx.js';
import { limitExceeded, txRejected } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import { FlatState, type FlatChange } from '../store/flatstate.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import type { EvmBlock, EvmHeader, EvmLog, EvmReceipt, EvmTx } from '../types/chain.js';
import { checkTxResult, isTxRejected } from './checkcodes.js';
import { nativeHash, unwrapEthereumTx, wrapEthereumTx } from './nativetx.js';
import { DecodedTxCache } from './txdecode.js';
import { appliedCheats, CheatOverlay, MAX_PENDING_CHEATS, type PendingCheat } from './cheats.js';
import { CheatTable } from '../store/cheats.js';
import type { Cheat } from '../types/cheats.js';
import { TxPool, hexKey, type PoolChange } from './txpool.js';

export const APP_VERSION = 1n;
/** store meta key of the fee recipient set by miner_setEtherbase (absent: the genesis coinbase) */
export const COINBASE_META_KEY = 'coinbase';

/** The fee recipient of new blocks: the one miner_setEtherbase stored, else `fallback` (genesis). */
export function loadCoinbase(store: Store, fallback: Uint8Array): Uint8Array {
  const v = store.getMeta(COINBASE_META_KEY);
  return v === undefined || v.length !== 20 ? fallback : new Uint8Array(v);
}
export const EIP1559_ELASTICITY = 2n;
export const EIP1559_DENOMINATOR = 8n;

export function nextBaseFee(parent: { baseFeePerGas: bigint; gasUsed: bigint; gasLimit: bigint }): bigint {
  const target = parent.gasLimit / EIP1559_ELASTICITY;
  const base = parent.baseFeePerGas;
  if (parent.gasUsed === target) return base;
  if (parent.gasUsed > target) {
    const delta = (base * (parent.gasUsed - target)) / target / EIP1559_DENOMINATOR;
    return base + (delta > 1n ? delta : 1n);
  }
  const delta = (base * (target - parent.gasUsed)) / target / EIP1559_DENOMINATOR;
  return base - delta;
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
}

/** Raised when a driver hands the application something inconsistent with its state (never a user error). */
export class AppStateError extends Error {}

/** JSON text with object keys sorted (two JSON documents compare equal whatever their key order). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

interface PendingBlock {
  block: EvmBlock;
  receipts: EvmReceipt[];
  nativeHashes: Uint8Array[];
  newNonces: Map<string, bigint>;
  excluded: EvmTx[];
  flatChange: FlatChange;
  /** the dev cheats the block applied at its start: those up to this sequence number (chain/cheats.ts) */
  cheats?: { upTo: number; cheats: Cheat[] };
}

/** A CheckTx answer: the checks' result, or the code and log of the refusal they threw. */
async function checked(run: () => Promise<CheckTxResult>): Promise<CheckTxResult> {
  try {
    return await run();
  } catch (e) {
    if (isTxRejected(e)) return checkTxResult(e);
    throw e;
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const attr = (key: string, value: string, index = true) => ({ key, value, index });

export class EvmApp implements Application {
  readonly common: Common;
  readonly pool: TxPool;
  private latest!: EvmHeader;
  private pending: PendingBlock | undefined;
  /** the last proposal's entries: FinalizeBlock reuses their decoded txs (no second decode) */
  private proposed = new Map<Uint8Array, DecodedTx>();
  /** every tx decoded from native bytes, by native hash: CheckTx, the proposal calls, FinalizeBlock and RECHECK decode each once */
  private readonly decodedTxs = new DecodedTxCache();
  private cacheFullLogged = false;
  /** fee recipient of new blocks (miner_setEtherbase) */
  private coinbase: Uint8Array;
  /** dev controls (docs/dev-mode.md): the gas limit of new blocks, and the base fee of the next one only */
  private blockGasLimit: bigint;
  private baseFeeOverride: bigint | undefined;
  /** anvil_impersonateAccount: addresses (hex keys) whose placeholder-signed txs CheckTx admits (not persisted) */
  private readonly impersonated = new Set<string>();
  /** anvil_autoImpersonateAccount: every address is impersonated */
  private autoImpersonate = false;
  /** pending dev cheats (anvil_setBalance …): seen by CheckTx, applied at the next block's start */
  readonly cheats: CheatOverlay;

  private constructor(
    private readonly store: Store,
    private readonly genesis: Genesis,
    private readonly trieDb: TrieDB,
    private readonly flat: FlatState,
    private readonly runner: EvmRunner<FlatStateManager>,
    private readonly checkRunner: EvmRunner<FlatStateManager>,
    private readonly opts: AppOptions,
    private readonly log: Logger,
    private readonly events: AppEvents,
  ) {
    this.common = runner.vm.common;
    this.coinbase = loadCoinbase(store, genesis.evm.coinbase);
    this.blockGasLimit = genesis.maxGas;
    this.cheats = new CheatOverlay(new CheatTable(store));
    this.pool = new TxPool({
      size: opts.mempool.size,
      priceBumpPercent: opts.mempool.priceBumpPercent,
      accountQueue: opts.mempool.accountQueue,
    });
  }

  static async create(store: Store, genesis: Genesis, opts: AppOptions, log: Logger, events: AppEvents): Promise<EvmApp> {
    const common = makeCommon(genesis.evmChainId, genesis.evm.hardfork);
    const trieDb = new TrieDB(store);
    const flat = new FlatState(store);
    const hashOf = (n: bigint) => store.evmBlock(n)?.header.hash;
    const runner = await EvmRunner.createFlat(common, flat, trieDb, hashOf);
    const checkRunner = await EvmRunner.createFlat(common, flat, trieDb.view(), hashOf);
    // block execution runs the interpreter's synchronous fast loop too (evm/syncsteps.ts): state-replay
    // checks it against recorded roots, and the traces replay blocks on the library's own loop
    useSyncSteps(runner.vm.evm);
    const consoleLog = log.child({ module: 'console' });
    attachConsoleLog(runner.vm.evm as never, (line) => consoleLog.info({ source: 'block' }, `console.log: ${line}`));
    const app = new EvmApp(store, genesis, trieDb, flat, runner, checkRunner, opts, log, events);
    const h = store.latestHeight();
    if (h !== undefined) app.latest = store.evmBlock(h)!.header;
    // healthy homes write flat rows with every block; none (an older home) or fewer (a migration cut short): build
    if (h !== undefined && flat.top() !== Number(h)) await app.rebuildFlat(h);
    return app;
  }

  /**
   * Migration of a home written before the flat state layer: replays every stored block (genesis
   * first) on the flat runner, checks each block's state root against the stored header, and writes
   * each height's change set — so the flat layer answers for every height, like the archive trie.
   */
  private async rebuildFlat(top: bigint): Promise<void> {
    const started = Date.now();
    this.log.info({ blocks: Number(top) + 1 }, 'building the flat state layer from the stored blocks (one-time migration)');
    const store = this.store;
    const fail = (h: bigint, why: string): never => {
      throw new Error(`cannot build the flat state layer: block ${h} ${why}; the home was not changed`);
    };
    this.flat.clearAll();
    const root0 = await this.runner.applyGenesis(this.genesis.evm.alloc);
    const g = store.evmBlock(0n)!.header;
    if (Buffer.compare(root0, g.stateRoot) !== 0) fail(0n, 'gives another state root from config/genesis.json');
    let change = this.runner.genesisChange!;
    store.transaction(() => this.flat.write(0, change));
    this.trieDb.discard();
    this.flat.applied(0, change);
    this.runner.genesisChange = undefined; // a large genesis's change set is not kept alive
    let parent = g;
    for (let h = 1n; h <= top; h++) {
      const block = store.evmBlock(h)!;
      const hd = block.header;
      // the senders stored with the block were recovered when it was made
      const txs = block.transactions.map((t) => decodeTx(t.raw, this.common, t.from, t.hash));
      const ctx = { number: h, timestamp: hd.timestamp, coinbase: hd.miner, gasLimit: hd.gasLimit, baseFee: hd.baseFeePerGas, mixHash: hd.mixHash };
      const prelude = CheatOverlay.prelude(appliedCheats(store, Number(h)));
      const exec = await this.runner.executeBlock({ height: parent.number, root: parent.stateRoot }, ctx, txs, prelude);
      if (exec.excluded.length > 0) fail(h, `no longer executes tx ${hex(exec.excluded[0]!.tx.hash)} (${exec.excluded[0]!.reason})`);
      if (Buffer.compare(exec.stateRoot, hd.stateRoot) !== 0) fail(h, `replays to state root 0x${hex(exec.stateRoot)}, stored 0x${hex(hd.stateRoot)}`);
      change = exec.flatChange!;
      store.transaction(() => this.flat.write(Number(h), change));
      this.trieDb.discard();
      this.flat.applied(Number(h), change);
      if (h % 1000n === 0n) this.log.info({ height: Number(h), of: Number(top) }, 'building the flat state layer');
      parent = hd;
    }
    await this.runner.reset(this.latestRef());
    this.log.info({ blocks: Number(top) + 1, ms: Date.now() - started }, 'flat state layer built');
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

  /** evm_setBlockGasLimit: the gas limit of the blocks made from now on (not persisted). */
  setBlockGasLimit(gas: bigint): void {
    this.blockGasLimit = gas;
  }

  blockGasLimitOf(): bigint {
    return this.blockGasLimit;
  }

  /** anvil_setNextBlockBaseFeePerGas: the base fee of the next block only. */
  setNextBaseFee(fee: bigint): void {
    this.baseFeeOverride = fee;
  }

  /** anvil_impersonateAccount / stopImpersonatingAccount; resolves to whether it was impersonated before. */
  setImpersonated(address: Uint8Array, on: boolean): boolean {
    const key = hexKey(address);
    const was = this.impersonated.has(key);
    if (on) this.impersonated.add(key);
    else this.impersonated.delete(key);
    return was;
  }

  /** anvil_autoImpersonateAccount */
  setAutoImpersonate(on: boolean): void {
    this.autoImpersonate = on;
  }

  private mayImpersonate(address: Uint8Array): boolean {
    return this.opts.impersonation === true && (this.autoImpersonate || this.impersonated.has(hexKey(address)));
  }

  /** anvil_dropTransaction / anvil_dropAllTransactions: removes pool txs (all when `hashes` is undefined); returns the hashes removed. */
  dropTxs(hashes: Uint8Array[] | undefined): Uint8Array[] {
    const { pending, queued } = this.pool.content();
    const all = [...pending, ...queued].map((e) => e.decoded.evm);
    const want = hashes === undefined ? undefined : new Set(hashes.map((h) => hexKey(h)));
    const victims = want === undefined ? all : all.filter((t) => want.has(hexKey(t.hash)));
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
  private async latestAccount(addr: Uint8Array) {
    return this.cheats.account(addr, await this.checkRunner.account(this.latestRef(), addr));
  }

  latestHeader(): EvmHeader {
    return this.latest;
  }

  /** The dev block fields (evm_setBlockGasLimit, anvil_setNextBlockBaseFeePerGas) now: a snapshot keeps them. */
  saveDevFields(): { blockGasLimit: bigint; baseFeeOverride: bigint | undefined } {
    return { blockGasLimit: this.blockGasLimit, baseFeeOverride: this.baseFeeOverride };
  }

  restoreDevFields(saved: { blockGasLimit: bigint; baseFeeOverride: bigint | undefined }): void {
    this.blockGasLimit = saved.blockGasLimit;
    this.baseFeeOverride = saved.baseFeeOverride;
  }

  /** anvil_reset: the dev block fields of a fresh node. */
  resetDevFields(): void {
    this.restoreDevFields({ blockGasLimit: this.genesis.maxGas, baseFeeOverride: undefined });
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
    this.store.forgetCaches();
    this.flat.forget(Number(height));
    this.latest = this.store.evmBlock(height)!.header;
    this.pending = undefined;
    this.proposed = new Map();
    this.trieDb.discard();
    await this.runner.reset(this.latestRef());
    await this.checkRunner.reset(this.latestRef());
    // pool txs stay (as in Anvil); each sender's run starts again at its nonce as of `height`
    const nonces = new Map<string, bigint>();
    for (const sender of this.pool.senders()) {
      nonces.set(hexKey(sender), (await this.checkRunner.account(this.latestRef(), sender))?.nonce ?? 0n);
    }
    const dropped = this.pool.resetNonces(nonces);
    if (dropped.length > 0) this.events.onPoolChange({ added: [], removed: dropped.map((t) => t.hash) });
  }

  /**
   * The logs of the blocks above `height`, oldest block first (what a revert to `height` removes),
   * at most `limit`; `truncated` when there were more.
   */
  logsAbove(height: bigint, limit: number): { logs: EvmLog[]; truncated: boolean } {
    const rows = this.store.logRows({ fromBlock: height + 1n, toBlock: BigInt(Number.MAX_SAFE_INTEGER), addresses: [], topics: [] }, limit + 1);
    const logs = rows.slice(0, limit).map((r) => ({
      address: new Uint8Array(r.address),
      topics: r.topics.map((t) => new Uint8Array(t)),
      data: new Uint8Array(r.data),
      blockNumber: BigInt(r.height),
      blockHash: this.store.blockHash(r.height)!,
      transactionHash: new Uint8Array(r.txHash),
      transactionIndex: r.txIndex,
      logIndex: r.logIndex,
    }));
    return { logs, truncated: rows.length > limit };
  }

  info(): InfoResponse {
    const h = this.store.latestHeight();
    return {
      data: 'ferry',
      version: '0.1.0',
      appVersion: APP_VERSION,
      lastBlockHeight: h ?? 0n,
      lastBlockAppHash: h === undefined ? new Uint8Array() : this.latest.stateRoot,
    };
  }

  async initChain(req?: InitChainRequest): Promise<Uint8Array> {
    if (req) this.checkInitChain(req);
    const existing = this.store.evmBlock(0n);
    if (existing) {
      this.latest ??= existing.header;
      return existing.header.stateRoot;
    }
    const stateRoot = await this.runner.applyGenesis(this.genesis.evm.alloc);
    const timestamp = BigInt(Math.floor(Date.parse(this.genesis.genesisTime) / 1000));
    const ethHeader = createBlockHeader(
      {
        number: 0n,
        stateRoot,
        gasLimit: this.genesis.maxGas,
        timestamp,
        baseFeePerGas: this.genesis.evm.baseFeePerGas,
        difficulty: 0n,
        excessBlobGas: 0n,
        blobGasUsed: 0n,
        parentBeaconBlockRoot: new Uint8Array(32),
      },
      { common: this.common, skipConsensusFormatValidation: true },
    );
    const header: EvmHeader = {
      number: 0n,
      hash: ethHeader.hash(),
      // size is set below from the full block encoding
      parentHash: new Uint8Array(32),
      stateRoot,
      transactionsRoot: EMPTY_TRIE_ROOT,
      receiptsRoot: EMPTY_TRIE_ROOT,
      logsBloom: new Uint8Array(256),
      miner: new Uint8Array(20),
      gasLimit: this.genesis.maxGas,
      gasUsed: 0n,
      timestamp,
      extraData: new Uint8Array(),
      baseFeePerGas: this.genesis.evm.baseFeePerGas,
      mixHash: new Uint8Array(32),
      size: 0n,
    };
    header.size = ethBlockSize(this.common, header, []);
    const genesisChange = this.runner.genesisChange!;
    this.store.transaction(() => {
      this.trieDb.flushInto(this.store);
      this.flat.write(0, genesisChange);
      this.store.putBlock({ height: 0n, hash: header.hash, evm: { header, transactions: [] }, receipts: [], nativeHashes: [] });
    });
    this.trieDb.afterCommit();
    this.flat.applied(0, genesisChange);
    this.runner.genesisChange = undefined; // a large genesis's change set is not kept alive
    this.latest = header;
    return stateRoot;
  }

  private latestRef() {
    return { height: this.latest.number, root: this.latest.stateRoot };
  }

  /** CometBFT's genesis must be the one this application was started with (same chain id, app_state). */
  private checkInitChain(req: InitChainRequest): void {
    if (req.chainId !== this.genesis.chainId) {
      throw new AppStateError(`InitChain: chain id ${JSON.stringify(req.chainId)} differs from ferry's genesis (${JSON.stringify(this.genesis.chainId)})`);
    }
    if (req.initialHeight !== this.genesis.initialHeight) {
      throw new AppStateError(`InitChain: initial height ${req.initialHeight} differs from ferry's genesis (${this.genesis.initialHeight})`);
    }
    let theirs: unknown;
    try {
      theirs = JSON.parse(Buffer.from(req.appStateBytes).toString('utf8'));
    } catch {
      throw new AppStateError('InitChain: app_state_bytes is not JSON');
    }
    const ours = (JSON.parse(renderGenesis(this.genesis)) as { app_state: unknown }).app_state;
    if (canonicalJson(theirs) !== canonicalJson(ours)) {
      throw new AppStateError("InitChain: CometBFT's genesis app_state differs from ferry's genesis.json (use the same file for both)");
    }
  }

  nextBaseFee(): bigint {
    if (this.baseFeeOverride !== undefined) return this.baseFeeOverride;
    return this.latest.number === 0n ? this.latest.baseFeePerGas : nextBaseFee(this.latest);
  }

  /**
   * Decodes native bytes (or takes an already-decoded EVM tx) and runs the stateful checks.
   * `dryRun` (Surface B's check_tx): the same checks, but the tx never enters the mempool.
   */
  async checkTx(native: Uint8Array, dryRun = false, sender?: Uint8Array): Promise<CheckTxResult> {
    const hash = nativeHash(native);
    return checked(async () => {
      const d = this.decodeNative(native, hash, sender);
      const { from } = unwrapEthereumTx(native);
      if (from.length > 0 && Buffer.compare(from, d.evm.from) !== 0) {
        throw txRejected('decode', 'invalid from address: MsgEthereumTx.from does not match the transaction signer');
      }
      return this.admit(d, native, dryRun, hash);
    });
  }

  /**
   * The decoded tx of native bytes: from the cache, else unwrapped, decoded (its sender recovered
   * unless the RPC thread already did: `sender`) and remembered. Throws txRejected('decode') when the
   * bytes do not decode (never cached).
   */
  private decodeNative(native: Uint8Array, hash: Uint8Array = nativeHash(native), sender?: Uint8Array): DecodedTx {
    const hit = this.decodedTxs.get(hash);
    if (hit) return hit;
    const d = decodeTx(unwrapEthereumTx(native).raw, this.common, sender);
    this.rememberDecoded(native, d, hash);
    return d;
  }

  /** Remembers the decoding of native bytes made elsewhere (eth_sendRawTransaction under CometBFT: its CheckTx then finds it). */
  rememberDecoded(native: Uint8Array, d: DecodedTx, hash: Uint8Array = nativeHash(native)): void {
    if (this.decodedTxs.put(hash, native, d) && !this.cacheFullLogged) {
      this.cacheFullLogged = true;
      this.log.info({ ...this.decodedTxs.stats() }, 'decoded-tx cache is full: the least recently seen txs are dropped and decoded again if they come back');
    }
  }

  /** the decoded-tx cache's size, hits, misses and evictions since start */
  decodedTxCacheStats() {
    return this.decodedTxs.stats();
  }

  /** eth_sendRawTransaction's path: wraps into the native form and admits; throws txRejected when refused. */
  async checkEvmTx(d: DecodedTx): Promise<CheckTxResult> {
    return this.admit(d, wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm)));
  }

  /** The stateful checks, then the pool; throws txRejected (geth's texts) when the tx is refused. */
  private async admit(d: DecodedTx, native: Uint8Array, dryRun = false, hash?: Uint8Array): Promise<CheckTxResult> {
    const tx = d.evm;
    if (native.length > this.opts.mempool.maxTxBytes) throw txRejected('decode', 'oversized data');
    if (this.pool.has(tx.hash)) throw txRejected('known', 'already known');
    if (isImpersonated(tx) && !this.mayImpersonate(tx.from)) {
      throw txRejected('decode', `invalid transaction v, r, s values: impersonation signature for ${checksumAddress(tx.from)}, which is not impersonated`);
    }
    if (tx.gasLimit > this.blockGasLimit) throw txRejected('gas', 'exceeds block gas limit');
    const intrinsic = d.tx.getIntrinsicGas();
    if (tx.gasLimit < intrinsic) throw txRejected('gas', 'intrinsic gas too low');
    if (feeCap(tx) < this.opts.minGasPrice) throw txRejected('underpriced', 'transaction underpriced');
    if (tx.type === 2 && tx.maxPriorityFeePerGas! > tx.maxFeePerGas!) {
      throw txRejected('underpriced', 'max priority fee per gas higher than max fee per gas');
    }
    const baseFee = this.nextBaseFee();
    if (feeCap(tx) < baseFee) {
      throw txRejected(
        'underpriced',
        `max fee per gas less than block base fee: address ${checksumAddress(tx.from)}, maxFeePerGas: ${feeCap(tx)}, baseFee: ${baseFee}`,
      );
    }
    const acct = await this.latestAccount(tx.from);
    const stateNonce = acct?.nonce ?? 0n;
    const balance = acct?.balance ?? 0n;
    if (tx.nonce < stateNonce) throw txRejected('nonceTooLow', 'nonce too low');
    if (balance < tx.gasLimit * feeCap(tx) + tx.value) {
      throw txRejected('insufficientFunds', 'insufficient funds for gas * price + value');
    }
    if (dryRun) return { ...checkTxResult(), gasWanted: tx.gasLimit, data: tx.hash };
    const removed = this.pool.add({ decoded: d, native, nativeHash: hash ?? nativeHash(native) }, stateNonce, baseFee);
    this.events.onPoolChange({ added: [tx], removed: removed.map((r) => r.hash), natives: [native] });
    return { ...checkTxResult(), gasWanted: tx.gasLimit, data: tx.hash };
  }

  pendingCount(): number {
    return this.pool.size;
  }

  hasExecutable(): boolean {
    return this.pool.hasExecutable(this.nextBaseFee());
  }

  /**
   * CheckTx RECHECK: a tx still in the pool is checked against the new state (nonce, funds) and
   * evicted when it no longer passes; a tx the pool no longer holds (replaced, included) is admitted
   * anew, which fails with geth's reason when it became invalid.
   */
  async recheckTx(native: Uint8Array): Promise<CheckTxResult> {
    return checked(async () => {
      const hash = nativeHash(native);
      const d = this.decodeNative(native, hash);
      const tx = d.evm;
      if (!this.pool.has(tx.hash)) return this.admit(d, native, false, hash);
      const acct = await this.latestAccount(tx.from);
      let failure;
      if (tx.nonce < (acct?.nonce ?? 0n)) failure = txRejected('nonceTooLow', 'nonce too low');
      else if ((acct?.balance ?? 0n) < tx.gasLimit * feeCap(tx) + tx.value) {
        failure = txRejected('insufficientFunds', 'insufficient funds for gas * price + value');
      }
      if (failure) {
        this.pool.drop([tx]);
        this.events.onPoolChange({ added: [], removed: [tx.hash] });
        throw failure;
      }
      return { ...checkTxResult(), gasWanted: tx.gasLimit, data: tx.hash };
    });
  }

  /** Decoded txs of a proposal and their senders' committed nonces; undefined when a tx does not decode. */
  private async proposalTxs(txs: Uint8Array[]): Promise<{ decoded: (DecodedTx | undefined)[]; nonces: Map<string, bigint> }> {
    const nonces = new Map<string, bigint>();
    const decoded: (DecodedTx | undefined)[] = [];
    for (const native of txs) {
      let d: DecodedTx | undefined;
      try {
        d = this.decodeNative(native);
      } catch (e) {
        if (!isTxRejected(e)) throw e;
      }
      decoded.push(d);
      if (d && !nonces.has(hexKey(d.evm.from))) {
        nonces.set(hexKey(d.evm.from), (await this.latestAccount(d.evm.from))?.nonce ?? 0n);
      }
    }
    return { decoded, nonces };
  }

  /**
   * PrepareProposal under CometBFT: from the mempool's txs, the executable ones in block order — per
   * sender in nonce order from its committed nonce, across senders the highest effective tip first —
   * within the block gas limit and `maxTxBytes`; undecodable, gapped, stale or underpriced txs are left out.
   */
  async orderProposal(req: ProposalRequest): Promise<Uint8Array[]> {
    const { decoded, nonces } = await this.proposalTxs(req.txs);
    const baseFee = this.nextBaseFee();
    const scratch = new TxPool({ size: req.txs.length + 1, priceBumpPercent: this.opts.mempool.priceBumpPercent, accountQueue: req.txs.length + 1 });
    decoded.forEach((d, i) => {
      if (!d) return;
      try {
        scratch.add({ decoded: d, native: req.txs[i]!, nativeHash: new Uint8Array() }, nonces.get(hexKey(d.evm.from))!, baseFee);
      } catch (e) {
        if (!isTxRejected(e)) throw e;
      }
    });
    const maxBytes = req.maxTxBytes ?? Number.MAX_SAFE_INTEGER;
    return scratch.select(baseFee, this.genesis.maxGas, maxBytes).map((e) => e.native);
  }

  /**
   * ProcessProposal: every tx decodes, pays at least the base fee, each sender's nonces follow its
   * committed nonce without gap or repeat, and the gas limits fit the block. Anything else rejects.
   */
  async processProposal(req: ProposalRequest): Promise<boolean> {
    const { decoded, nonces } = await this.proposalTxs(req.txs);
    const baseFee = this.nextBaseFee();
    let gas = 0n;
    for (const d of decoded) {
      if (!d) return false;
      if (this.opts.impersonation !== true && isImpersonated(d.evm)) return false;
      const from = hexKey(d.evm.from);
      if (d.evm.nonce !== nonces.get(from)) return false;
      nonces.set(from, d.evm.nonce + 1n);
      if (feeCap(d.evm) < baseFee) return false;
      gas += d.evm.gasLimit;
      if (gas > this.genesis.maxGas) return false;
    }
    return true;
  }

  prepareProposal(req: { height: bigint; timeMs: number; maxTxBytes: number }): Uint8Array[] {
    const entries = this.pool.select(this.nextBaseFee(), this.blockGasLimit, req.maxTxBytes);
    this.proposed = new Map(entries.map((e) => [e.native, e.decoded]));
    return entries.map((e) => e.native);
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    // a block finalized but never committed (the driver went away before Commit) is dropped: it comes again
    if (this.pending) await this.abortBlock();
    const parent = this.latest;
    if (req.height <= parent.number) throw new AppStateError(`FinalizeBlock: height ${req.height} is already applied (last ${parent.number})`);
    const baseFee = this.nextBaseFee();
    const decoded: DecodedTx[] = [];
    const natives: Uint8Array[] = [];
    const undecodable: number[] = [];
    req.txs.forEach((native, i) => {
      const known = this.proposed.get(native);
      if (known) {
        decoded.push(known);
        natives.push(native);
        return;
      }
      try {
        decoded.push(this.decodeNative(native));
        natives.push(native);
      } catch {
        undecodable.push(i);
      }
    });
    this.proposed = new Map();
    const ctx = {
      number: req.height,
      timestamp: BigInt(Math.floor(req.timeMs / 1000)),
      coinbase: this.opts.coinbaseFromProposer ? req.proposerAddress : this.coinbase,
      gasLimit: this.blockGasLimit,
      baseFee,
      mixHash: parent.hash,
    };
    // the pending dev cheats go into this block's state before its first tx
    const cheats = this.cheats.size > 0 ? this.cheats.forBlock() : undefined;
    const prelude = cheats ? CheatOverlay.prelude(cheats.cheats) : undefined;
    const exec: ExecutedBlock = await this.runner.executeBlock({ height: parent.number, root: parent.stateRoot }, ctx, decoded, prelude);
    const includedSet = new Set(exec.txs.map((t) => hexKey(t.tx.hash)));
    const header: EvmHeader = {
      number: req.height,
      hash: req.hash,
      parentHash: parent.hash,
      stateRoot: exec.stateRoot,
      transactionsRoot: exec.transactionsRoot,
      receiptsRoot: exec.receiptsRoot,
      logsBloom: exec.logsBloom,
      miner: ctx.coinbase,
      gasLimit: ctx.gasLimit,
      gasUsed: exec.gasUsed,
      timestamp: ctx.timestamp,
      extraData: new Uint8Array(),
      baseFeePerGas: baseFee,
      mixHash: ctx.mixHash,
      size: 0n,
    };
    header.size = ethBlockSize(this.common, header, exec.txs.map((t) => t.tx.raw));
    let logIndex = 0;
    const receipts: EvmReceipt[] = exec.txs.map((t, i) => {
      const logs: EvmLog[] = t.logs.map((l) => ({
        address: l.address,
        topics: l.topics,
        data: l.data,
        blockNumber: req.height,
        blockHash: req.hash,
        transactionHash: t.tx.hash,
        transactionIndex: i,
        logIndex: logIndex++,
      }));
      return {
        transactionHash: t.tx.hash,
        transactionIndex: i,
        blockHash: req.hash,
        blockNumber: req.height,
        from: t.tx.from,
        to: t.tx.to,
        type: t.tx.type,
        status: t.status,
        cumulativeGasUsed: t.cumulativeGasUsed,
        gasUsed: t.gasUsed,
        effectiveGasPrice: effectiveGasPrice(t.tx, baseFee),
        contractAddress: t.tx.to === undefined ? t.createdAddress : undefined,
        logs,
        logsBloom: t.logsBloom,
        vmError: t.vmError,
        revertData: t.status === 0 && t.vmError === 'execution reverted' ? t.returnValue : undefined,
      };
    });
    // ABCI results: one per native tx of the block, in block order
    const byHash = new Map(exec.txs.map((t, i) => [hexKey(t.tx.hash), i]));
    const nativeHashes: Uint8Array[] = [];
    const txResults: ExecTxResult[] = req.txs.map((native, i) => {
      if (undecodable.includes(i)) return this.failedResult(2, 'tx parse error');
      const d = decoded[i - undecodable.filter((u) => u < i).length]!;
      const idx = byHash.get(hexKey(d.evm.hash));
      if (idx === undefined) {
        const why = exec.excluded.find((x) => Buffer.compare(x.tx.hash, d.evm.hash) === 0)?.reason ?? 'not executed';
        return this.failedResult(1, why, d.evm.gasLimit);
      }
      nativeHashes[idx] = nativeHash(native);
      return this.txResult(exec.txs[idx]!.tx, receipts[idx]!, nativeHashes[idx]!);
    });
    const newNonces = new Map<string, bigint>();
    for (const t of exec.txs) newNonces.set(hexKey(t.tx.from), t.tx.nonce + 1n);
    this.pending = {
      block: { header, transactions: exec.txs.map((t) => t.tx) },
      receipts,
      nativeHashes,
      newNonces,
      excluded: exec.excluded.map((x) => x.tx).filter((t) => !includedSet.has(hexKey(t.hash))),
      flatChange: exec.flatChange!,
      cheats,
    };
    const events: AbciEvent[] = [
      { type: 'evm_fee_market', attributes: [attr('base_fee', baseFee.toString()), attr('mode', 'BeginBlock')] },
      { type: 'block_bloom', attributes: [attr('bloom', hex(exec.logsBloom)), attr('mode', 'EndBlock')] },
    ];
    // validator set changes scheduled in genesis (app_state.validator_schedule) for this height
    const validatorUpdates = (this.genesis.validatorSchedule ?? [])
      .filter((u) => u.height === req.height)
      .map((u) => ({ pubKey: u.pubKey, power: u.power }));
    return { events, txResults, appHash: exec.stateRoot, ...(validatorUpdates.length > 0 ? { validatorUpdates } : {}) };
  }

  private failedResult(code: number, log: string, gasWanted = 0n): ExecTxResult {
    return { code, data: new Uint8Array(), log, info: '', gasWanted, gasUsed: 0n, events: [], codespace: 'evm' };
  }

  private txResult(tx: EvmTx, r: EvmReceipt, native: Uint8Array): ExecTxResult {
    const ethTx: { key: string; value: string; index: boolean }[] = [
      attr('amount', tx.value.toString()),
      attr('ethereumTxHash', '0x' + hex(tx.hash)),
      attr('txIndex', String(r.transactionIndex)),
      attr('txGasUsed', r.gasUsed.toString()),
      attr('txHash', hex(native).toUpperCase()),
    ];
    if (tx.to) ethTx.push(attr('recipient', '0x' + hex(tx.to)));
    ethTx.push(attr('sender', '0x' + hex(tx.from)));
    if (r.status === 0) ethTx.push(attr('ethereumTxFailed', r.vmError ?? 'failed'));
    // txLog values are whole log JSON documents: published to subscribers, not put in the kv index
    const txLog = r.logs.map((l) =>
      attr(
        'txLog',
        JSON.stringify({
          address: '0x' + hex(l.address),
          topics: l.topics.map((t) => '0x' + hex(t)),
          data: Buffer.from(l.data).toString('base64'),
          blockNumber: Number(l.blockNumber),
          transactionHash: '0x' + hex(l.transactionHash),
          transactionIndex: l.transactionIndex,
          blockHash: '0x' + hex(l.blockHash),
          logIndex: l.logIndex,
        }),
        false,
      ),
    );
    // Receipt status is the inverse of the consensus code: code 0 <-> status 0x1 (SPEC.md)
    return {
      code: r.status === 1 ? 0 : 1,
      data: tx.hash,
      log: r.status === 1 ? '' : (r.vmError ?? 'failed'),
      info: '',
      gasWanted: tx.gasLimit,
      gasUsed: r.gasUsed,
      codespace: r.status === 1 ? '' : 'evm',
      events: [
        { type: 'ethereum_tx', attributes: ethTx },
        { type: 'tx_log', attributes: txLog },
        {
          type: 'message',
          attributes: [attr('module', 'evm'), attr('sender', '0x' + hex(tx.from)), attr('txType', String(tx.type))],
        },
      ],
    };
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
    await this.runner.reset(this.latestRef());
    this.baseFeeOverride = undefined;
    const dropped = this.pool.onCommit(p.newNonces);
    this.pool.drop(p.excluded);
    const removed = [...dropped, ...p.excluded].map((t) => t.hash);
    if (removed.length > 0) this.events.onPoolChange({ added: [], removed, evicted: p.excluded.length });
  }

  async abortBlock(): Promise<void> {
    this.pending = undefined;
    this.trieDb.discard();
    await this.runner.reset(this.latestRef());
  }
}

export { keccak256 };
