/**
 * The application state machine: admits transactions (CheckTx) into the EVM pool, executes blocks
 * with the EVM (FinalizeBlock), persists them (Commit, inside the engine's block transaction) and
 * emits the Evmos-compatible per-tx and per-block events.
 */
import { attachConsoleLog } from '../evm/consolelog.js';
import { createBlockHeader } from '@ethereumjs/block';
import { Address } from '@ethereumjs/util';
import type { Common } from '@ethereumjs/common';
import type { Application, AbciEvent, CheckTxResult, ExecTxResult, FinalizeBlockRequest, FinalizeBlockResponse, InfoResponse } from '../consensus/abci.js';
import { checksumAddress } from '../config/devaccounts.js';
import type { Genesis } from '../config/genesis.js';
import type { MempoolOptions } from '../config/options.js';
import { makeCommon, keccak256 } from '../evm/common.js';
import { ethBlockSize } from '../evm/ethrlp.js';
import { EvmRunner, EMPTY_TRIE_ROOT, type ExecutedBlock } from '../evm/executor.js';
import { decodeTx, feeCap, effectiveGasPrice, type DecodedTx } from '../evm/tx.js';
import { FerryError } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import type { EvmBlock, EvmHeader, EvmLog, EvmReceipt, EvmTx } from '../types/chain.js';
import { nativeHash, NativeTxError, unwrapEthereumTx, wrapEthereumTx } from './nativetx.js';
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

/** CheckTx codes (Cosmos SDK's where one fits). */
export const CheckCode = {
  ok: 0,
  internal: 1,
  txDecode: 2,
  insufficientFunds: 5,
  outOfGas: 11,
  insufficientFee: 13,
  inMempoolCache: 19,
  mempoolFull: 20,
  wrongSequence: 32,
  invalidChainId: 33,
} as const;

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
}

interface PendingBlock {
  block: EvmBlock;
  receipts: EvmReceipt[];
  nativeHashes: Uint8Array[];
  newNonces: Map<string, bigint>;
  excluded: EvmTx[];
}

function checkErr(code: number, log: string): CheckTxResult {
  return { code, log, codespace: code === 0 ? '' : 'evm', gasWanted: 0n, gasUsed: 0n, data: new Uint8Array(), events: [] };
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
  /** fee recipient of new blocks (miner_setEtherbase) */
  private coinbase: Uint8Array;
  /** dev controls (docs/dev-mode.md): the gas limit of new blocks, and the base fee of the next one only */
  private blockGasLimit: bigint;
  private baseFeeOverride: bigint | undefined;

  private constructor(
    private readonly store: Store,
    private readonly genesis: Genesis,
    private readonly trieDb: TrieDB,
    private readonly runner: EvmRunner,
    private readonly checkRunner: EvmRunner,
    private readonly opts: AppOptions,
    private readonly log: Logger,
    private readonly events: AppEvents,
  ) {
    this.common = runner.vm.common;
    this.coinbase = loadCoinbase(store, genesis.evm.coinbase);
    this.blockGasLimit = genesis.maxGas;
    this.pool = new TxPool({
      size: opts.mempool.size,
      priceBumpPercent: opts.mempool.priceBumpPercent,
      accountQueue: opts.mempool.accountQueue,
    });
  }

  static async create(store: Store, genesis: Genesis, opts: AppOptions, log: Logger, events: AppEvents): Promise<EvmApp> {
    const common = makeCommon(genesis.evmChainId, genesis.evm.hardfork);
    const trieDb = new TrieDB(store);
    const hashOf = (n: bigint) => store.evmBlock(n)?.header.hash;
    const runner = await EvmRunner.create(common, trieDb, hashOf);
    const checkRunner = await EvmRunner.create(common, trieDb.view(), hashOf);
    const consoleLog = log.child({ module: 'console' });
    attachConsoleLog(runner.vm.evm as never, (line) => consoleLog.info({ source: 'block' }, `console.log: ${line}`));
    const app = new EvmApp(store, genesis, trieDb, runner, checkRunner, opts, log, events);
    const h = store.latestHeight();
    if (h !== undefined) app.latest = store.evmBlock(h)!.header;
    return app;
  }

  /** miner_setEtherbase: blocks finalized from now on pay fees to `address`; kept across restarts. */
  setCoinbase(address: Uint8Array): void {
    this.store.putMeta(COINBASE_META_KEY, address);
    this.coinbase = address;
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

  latestHeader(): EvmHeader {
    return this.latest;
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

  async initChain(): Promise<Uint8Array> {
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
    this.store.transaction(() => {
      this.trieDb.flushInto(this.store);
      this.store.putBlock({ height: 0n, hash: header.hash, evm: { header, transactions: [] }, receipts: [], nativeHashes: [] });
    });
    this.trieDb.afterCommit();
    this.latest = header;
    return stateRoot;
  }

  nextBaseFee(): bigint {
    if (this.baseFeeOverride !== undefined) return this.baseFeeOverride;
    return this.latest.number === 0n ? this.latest.baseFeePerGas : nextBaseFee(this.latest);
  }

  /**
   * Decodes native bytes (or takes an already-decoded EVM tx) and runs the stateful checks.
   * `dryRun` (Surface B's check_tx): the same checks, but the tx never enters the mempool.
   */
  async checkTx(native: Uint8Array, dryRun = false): Promise<CheckTxResult> {
    let d: DecodedTx;
    try {
      const { raw, from } = unwrapEthereumTx(native);
      d = decodeTx(raw, this.common);
      if (from.length > 0 && Buffer.compare(from, d.evm.from) !== 0) {
        return checkErr(CheckCode.txDecode, 'invalid from address: MsgEthereumTx.from does not match the transaction signer');
      }
    } catch (e) {
      if (e instanceof NativeTxError) return checkErr(CheckCode.txDecode, e.message);
      if (e instanceof FerryError) return checkErr(CheckCode.txDecode, e.message);
      throw e;
    }
    return this.admit(d, native, dryRun);
  }

  /** eth_sendRawTransaction's path: wraps into the native form and admits. */
  async checkEvmTx(d: DecodedTx): Promise<CheckTxResult> {
    return this.admit(d, wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm)));
  }

  private async admit(d: DecodedTx, native: Uint8Array, dryRun = false): Promise<CheckTxResult> {
    const tx = d.evm;
    if (native.length > this.opts.mempool.maxTxBytes) return checkErr(CheckCode.txDecode, 'oversized data');
    if (this.pool.has(tx.hash)) return checkErr(CheckCode.inMempoolCache, 'already known');
    if (tx.gasLimit > this.blockGasLimit) return checkErr(CheckCode.outOfGas, 'exceeds block gas limit');
    const intrinsic = d.tx.getIntrinsicGas();
    if (tx.gasLimit < intrinsic) return checkErr(CheckCode.outOfGas, 'intrinsic gas too low');
    if (feeCap(tx) < this.opts.minGasPrice) return checkErr(CheckCode.insufficientFee, 'transaction underpriced');
    if (tx.type === 2 && tx.maxPriorityFeePerGas! > tx.maxFeePerGas!) {
      return checkErr(CheckCode.insufficientFee, 'max priority fee per gas higher than max fee per gas');
    }
    const baseFee = this.nextBaseFee();
    if (feeCap(tx) < baseFee) {
      return checkErr(
        CheckCode.insufficientFee,
        `max fee per gas less than block base fee: address ${checksumAddress(tx.from)}, maxFeePerGas: ${feeCap(tx)}, baseFee: ${baseFee}`,
      );
    }
    const acct = await this.checkRunner.account(this.latest.stateRoot, tx.from);
    const stateNonce = acct?.nonce ?? 0n;
    const balance = acct?.balance ?? 0n;
    if (tx.nonce < stateNonce) return checkErr(CheckCode.wrongSequence, 'nonce too low');
    if (balance < tx.gasLimit * feeCap(tx) + tx.value) {
      return checkErr(CheckCode.insufficientFunds, 'insufficient funds for gas * price + value');
    }
    if (dryRun) return { ...checkErr(0, ''), gasWanted: tx.gasLimit, data: tx.hash };
    let removed: EvmTx[];
    try {
      removed = this.pool.add({ decoded: d, native, nativeHash: nativeHash(native) }, stateNonce, baseFee);
    } catch (e) {
      if (e instanceof FerryError) {
        const code = e.message === 'already known' ? CheckCode.inMempoolCache : e.message === 'txpool is full' ? CheckCode.mempoolFull : CheckCode.insufficientFee;
        return checkErr(code, e.message);
      }
      throw e;
    }
    this.events.onPoolChange({ added: [tx], removed: removed.map((r) => r.hash), natives: [native] });
    return { ...checkErr(0, ''), gasWanted: tx.gasLimit, data: tx.hash };
  }

  pendingCount(): number {
    return this.pool.size;
  }

  prepareProposal(req: { height: bigint; timeMs: number; maxTxBytes: number }): Uint8Array[] {
    const entries = this.pool.select(this.nextBaseFee(), this.blockGasLimit, req.maxTxBytes);
    this.proposed = new Map(entries.map((e) => [e.native, e.decoded]));
    return entries.map((e) => e.native);
  }

  processProposal(): boolean {
    return true;
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    const parent = this.latest;
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
        const { raw } = unwrapEthereumTx(native);
        decoded.push(decodeTx(raw, this.common));
        natives.push(native);
      } catch {
        undecodable.push(i);
      }
    });
    this.proposed = new Map();
    const ctx = {
      number: req.height,
      timestamp: BigInt(Math.floor(req.timeMs / 1000)),
      coinbase: this.coinbase,
      gasLimit: this.blockGasLimit,
      baseFee,
      mixHash: parent.hash,
    };
    const exec: ExecutedBlock = await this.runner.executeBlock(parent.stateRoot, ctx, decoded);
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
    this.latest = p.block.header;
    this.baseFeeOverride = undefined;
    const dropped = this.pool.onCommit(p.newNonces);
    this.pool.drop(p.excluded);
    const removed = [...dropped, ...p.excluded].map((t) => t.hash);
    if (removed.length > 0) this.events.onPoolChange({ added: [], removed });
  }

  async abortBlock(): Promise<void> {
    this.pending = undefined;
    this.trieDb.discard();
    await this.runner.reset(this.latest.stateRoot);
  }
}

export { keccak256 };
