/**
 * The read side of the chain, for the RPC thread: committed blocks, receipts and logs from the store,
 * state at any height from the archive trie, eth_call/estimateGas on a private EVM, pending txs from
 * the pool mirror. Implements evmrpc's EvmBackend port (structurally; node/ wires it).
 */
import type { Common } from '@ethereumjs/common';
import { Address } from '@ethereumjs/util';
import { getMerkleStateProof } from '@ethereumjs/statemanager';
import { makeCommon } from '../evm/common.js';
import { EvmRunner, EvmTimeoutError, simulationError, type BlockContext, type SimCall, type SimOverrides } from '../evm/executor.js';
import { effectiveTip } from '../evm/tx.js';
import { FerryError, ErrorCode } from '../lib/errors.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import type { Address as Addr, Bytes, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash } from '../types/chain.js';
import { nextBaseFee } from './app.js';
import { ChainEvents } from './events.js';
import { PoolView } from './poolview.js';

/** eth_maxPriorityFeePerGas suggestion (1 gwei, like geth/Anvil dev defaults). */
export const SUGGESTED_TIP = 1_000_000_000n;
/** eth_estimateGas stops when the bracket is within this ratio (geth: 1.5%). */
export const ESTIMATE_ERROR_RATIO = 0.015;

export interface ReaderOptions {
  chainId: bigint;
  hardfork: string;
  gasCap: bigint;
  logsCap: number;
  /** eth_call / eth_estimateGas wall-clock budget, ms (0 = none) */
  evmTimeoutMs: number;
  coinbase: Uint8Array;
  /** submits a raw EVM tx to the chain thread; resolves to its CheckTx outcome */
  submit(raw: Uint8Array): Promise<{ code: number; log: string; hash?: Uint8Array }>;
}

type BlockSelector =
  | { kind: 'number'; number: bigint }
  | { kind: 'hash'; hash: Hash; requireCanonical: boolean }
  | { kind: 'tag'; tag: 'latest' | 'pending' | 'earliest' | 'safe' | 'finalized' };

interface CallRequest {
  from?: Addr;
  to?: Addr;
  gas?: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  data?: Bytes;
  accessList?: { address: Addr; storageKeys: Hash[] }[];
}

export class ChainReader {
  readonly pool = new PoolView();
  readonly events = new ChainEvents();
  readonly chainId: bigint;
  readonly networkId: string;
  private latest: bigint;
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: Store,
    private readonly runner: EvmRunner,
    private readonly opts: ReaderOptions,
  ) {
    this.chainId = opts.chainId;
    this.networkId = opts.chainId.toString();
    this.latest = store.latestHeight() ?? 0n;
  }

  static async create(store: Store, opts: ReaderOptions): Promise<ChainReader> {
    const common: Common = makeCommon(opts.chainId, opts.hardfork);
    const runner = await EvmRunner.create(common, new TrieDB(store), (n) => store.evmBlock(n)?.header.hash);
    return new ChainReader(store, runner, opts);
  }

  /** the chain thread committed `height` */
  onCommitted(height: bigint): void {
    if (height <= this.latest) return;
    this.latest = height;
    this.events.blocks.emit(height);
  }

  /** the chain thread's mempool changed */
  onPoolChange(change: { added: EvmTx[]; removed: Uint8Array[] }): void {
    this.pool.apply(change);
    this.events.pool.emit(change);
  }

  /** serializes use of the (non re-entrant) EVM runner */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  latestNumber(): bigint {
    return this.latest;
  }

  resolveBlock(sel: BlockSelector): bigint | undefined {
    switch (sel.kind) {
      case 'number':
        return sel.number <= this.latest ? sel.number : undefined;
      case 'hash':
        return this.store.heightByHash(sel.hash);
      case 'tag':
        return sel.tag === 'earliest' ? 0n : this.latest;
    }
  }

  blockByNumber(n: bigint): EvmBlock | undefined {
    return n <= this.latest ? this.store.evmBlock(n) : undefined;
  }

  blockByHash(hash: Hash): EvmBlock | undefined {
    const n = this.store.heightByHash(hash);
    return n === undefined ? undefined : this.blockByNumber(n);
  }

  transactionByHash(hash: Hash) {
    const loc = this.store.txLocation(hash);
    if (loc && loc.height <= this.latest) {
      const block = this.store.evmBlock(loc.height)!;
      return {
        tx: block.transactions[loc.index]!,
        location: { blockNumber: loc.height, blockHash: block.header.hash, index: loc.index },
        baseFee: block.header.baseFeePerGas,
      };
    }
    const p = this.pool.get(hash);
    return p ? { tx: p, location: undefined, baseFee: undefined } : undefined;
  }

  receipt(hash: Hash): EvmReceipt | undefined {
    const loc = this.store.txLocation(hash);
    return loc && loc.height <= this.latest ? loc.receipt : undefined;
  }

  blockReceipts(n: bigint): EvmReceipt[] | undefined {
    const b = this.blockByNumber(n);
    if (!b) return undefined;
    return b.transactions.map((t) => this.store.txLocation(t.hash)!.receipt);
  }

  getLogs(q: { fromBlock: bigint; toBlock: bigint; addresses: Addr[]; topics: (Hash[] | null)[] }): EvmLog[] {
    const to = q.toBlock > this.latest ? this.latest : q.toBlock;
    if (q.fromBlock > to) return [];
    const rows = this.store.logRows(q.fromBlock, to, q.addresses, q.topics[0] ?? null, this.opts.logsCap + 1);
    const out: EvmLog[] = [];
    for (const r of rows) {
      const topics = [r.t0, r.t1, r.t2, r.t3].filter((t): t is Buffer => t !== null);
      let ok = true;
      for (let i = 1; i < q.topics.length && ok; i++) {
        const want = q.topics[i];
        if (!want || want.length === 0) continue;
        const have = topics[i];
        ok = have !== undefined && want.some((w) => Buffer.compare(w, have) === 0);
      }
      if (q.topics.length > topics.length && q.topics.slice(topics.length).some((t) => t && t.length > 0)) ok = false;
      if (!ok) continue;
      if (out.length >= this.opts.logsCap) throw new FerryError(ErrorCode.server, `query returned more than ${this.opts.logsCap} results`);
      const height = BigInt(r.height);
      out.push({
        address: new Uint8Array(r.address),
        topics: topics.map((t) => new Uint8Array(t)),
        data: new Uint8Array(r.data),
        blockNumber: height,
        blockHash: this.store.evmBlock(height)!.header.hash,
        transactionHash: new Uint8Array(r.tx_hash),
        transactionIndex: r.tx_index,
        logIndex: r.log_index,
      });
    }
    return out;
  }

  private root(n: bigint): Uint8Array {
    const b = this.blockByNumber(n);
    if (!b) throw new FerryError(ErrorCode.server, 'header not found');
    return b.header.stateRoot;
  }

  balance(addr: Addr, n: bigint): Promise<bigint> {
    return this.exclusive(async () => (await this.runner.account(this.root(n), addr))?.balance ?? 0n);
  }

  nonce(addr: Addr, n: bigint): Promise<bigint> {
    return this.exclusive(async () => (await this.runner.account(this.root(n), addr))?.nonce ?? 0n);
  }

  async pendingNonce(addr: Addr): Promise<bigint> {
    return this.pool.pendingNonce(addr, await this.nonce(addr, this.latest));
  }

  code(addr: Addr, n: bigint): Promise<Bytes> {
    return this.exclusive(() => this.runner.code(this.root(n), addr));
  }

  storageAt(addr: Addr, slot: Hash, n: bigint): Promise<Hash> {
    return this.exclusive(() => this.runner.storage(this.root(n), addr, slot));
  }

  proof(addr: Addr, slots: Hash[], n: bigint) {
    return this.exclusive(async () => {
      await this.runner.setRoot(this.root(n));
      const p = await getMerkleStateProof(this.runner.sm, new Address(addr), slots);
      const b = (h: string) => Uint8Array.from(Buffer.from(h.slice(2), 'hex'));
      return {
        address: addr,
        accountProof: p.accountProof.map(b),
        balance: BigInt(p.balance),
        codeHash: b(p.codeHash),
        nonce: BigInt(p.nonce),
        storageHash: b(p.storageHash),
        storageProof: p.storageProof.map((s, i) => ({ key: slots[i]!, value: BigInt(s.value), proof: s.proof.map(b) })),
      };
    });
  }

  async sendRawTransaction(raw: Bytes): Promise<Hash> {
    const r = await this.opts.submit(raw);
    if (r.code !== 0) throw new FerryError(ErrorCode.server, r.log);
    return r.hash!;
  }

  private blockContext(n: bigint): BlockContext {
    const h = this.blockByNumber(n)!.header;
    return { number: h.number, timestamp: h.timestamp, coinbase: h.miner, gasLimit: h.gasLimit, baseFee: h.baseFeePerGas, mixHash: h.mixHash };
  }

  private simCall(req: CallRequest, gas: bigint): SimCall {
    return {
      from: req.from,
      to: req.to,
      gas,
      gasPrice: req.gasPrice,
      maxFeePerGas: req.maxFeePerGas,
      maxPriorityFeePerGas: req.maxPriorityFeePerGas,
      value: req.value,
      data: req.data,
      accessList: req.accessList,
    };
  }

  private deadline(): number {
    return this.opts.evmTimeoutMs > 0 ? Date.now() + this.opts.evmTimeoutMs : Infinity;
  }

  private gasCapFor(n: bigint): bigint {
    const blockGas = this.blockByNumber(n)?.header.gasLimit ?? this.opts.gasCap;
    return this.opts.gasCap > 0n && this.opts.gasCap < blockGas ? this.opts.gasCap : blockGas;
  }

  call(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<Bytes> {
    return this.exclusive(async () => {
      const root = this.root(n);
      const cap = this.opts.gasCap > 0n ? this.opts.gasCap : 2n ** 63n - 1n;
      const gas = req.gas === undefined ? cap : req.gas < cap ? req.gas : cap;
      let res;
      try {
        res = await this.runner.simulate(root, this.blockContext(n), this.simCall(req, gas), overrides, this.deadline());
      } catch (e) {
        throw simulationFailure(e, this.opts.evmTimeoutMs);
      }
      const err = simulationError(res);
      if (err) throw err;
      return res.execResult.returnValue;
    });
  }

  estimateGas(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<bigint> {
    return this.exclusive(async () => {
      const root = this.root(n);
      const ctx = this.blockContext(n);
      let hi = req.gas !== undefined && req.gas >= 21000n ? req.gas : this.gasCapFor(n);
      const feeCap = req.maxFeePerGas ?? req.gasPrice;
      if (feeCap !== undefined && feeCap > 0n && req.from) {
        const bal = (await this.runner.account(root, req.from))?.balance ?? 0n;
        const avail = bal - (req.value ?? 0n);
        if (avail < 0n) throw new FerryError(ErrorCode.server, 'insufficient funds for transfer');
        const allowance = avail / feeCap;
        if (allowance < hi) hi = allowance;
      }
      const deadline = this.deadline();
      const run = (gas: bigint) => this.runner.simulate(root, ctx, this.simCall(req, gas), overrides, deadline);
      let first;
      try {
        first = await run(hi);
      } catch (e) {
        throw simulationFailure(e, this.opts.evmTimeoutMs);
      }
      const firstErr = simulationError(first);
      if (firstErr) {
        if (firstErr.code === ErrorCode.reverted) throw firstErr;
        throw new FerryError(ErrorCode.server, `gas required exceeds allowance (${hi})`);
      }
      let lo = first.totalGasSpent - 1n;
      const ok = async (gas: bigint) => {
        try {
          return !(await run(gas)).execResult.exceptionError;
        } catch (e) {
          if (e instanceof EvmTimeoutError) throw simulationFailure(e, this.opts.evmTimeoutMs);
          return false;
        }
      };
      // geth's shortcut: most txs succeed with used * 64/63
      const guess = ((first.totalGasSpent + (first.gasRefund ?? 0n)) * 64n) / 63n;
      if (guess < hi && (await ok(guess))) hi = guess;
      while (lo + 1n < hi) {
        if (Number(hi - lo) / Number(hi) < ESTIMATE_ERROR_RATIO) break;
        const mid = (lo + hi) / 2n;
        if (await ok(mid)) hi = mid;
        else lo = mid;
      }
      return hi;
    });
  }

  nextBaseFee(): bigint {
    const h = this.store.evmBlock(this.latest)!.header;
    return h.number === 0n ? h.baseFeePerGas : nextBaseFee(h);
  }

  maxPriorityFeePerGas(): bigint {
    return SUGGESTED_TIP;
  }

  gasPrice(): bigint {
    return this.nextBaseFee() + SUGGESTED_TIP;
  }

  coinbase(): Addr {
    return this.opts.coinbase;
  }

  pendingTransactions(): EvmTx[] {
    return this.pool.all();
  }

  feeHistory(count: number, newest: bigint, percentiles: number[] | undefined) {
    const last = newest > this.latest ? this.latest : newest;
    const n = BigInt(count) > last + 1n ? Number(last + 1n) : count;
    const oldest = last - BigInt(n) + 1n;
    const baseFeePerGas: bigint[] = [];
    const gasUsedRatio: number[] = [];
    const reward: bigint[][] = [];
    for (let h = oldest; h <= last; h++) {
      const b = this.store.evmBlock(h)!;
      baseFeePerGas.push(b.header.baseFeePerGas);
      gasUsedRatio.push(b.header.gasLimit === 0n ? 0 : Number(b.header.gasUsed) / Number(b.header.gasLimit));
      if (percentiles) {
        const tips = b.transactions
          .map((t) => ({ tip: effectiveTip(t, b.header.baseFeePerGas), gas: this.store.txLocation(t.hash)?.receipt.gasUsed ?? 0n }))
          .sort((x, y) => (x.tip < y.tip ? -1 : x.tip > y.tip ? 1 : 0));
        const total = tips.reduce((s, t) => s + t.gas, 0n);
        reward.push(
          percentiles.map((p) => {
            if (tips.length === 0) return 0n;
            const threshold = (Number(total) * p) / 100;
            let acc = 0;
            for (const t of tips) {
              acc += Number(t.gas);
              if (acc >= threshold) return t.tip;
            }
            return tips[tips.length - 1]!.tip;
          }),
        );
      }
    }
    const lastHeader = this.store.evmBlock(last)!.header;
    baseFeePerGas.push(lastHeader.number === 0n ? lastHeader.baseFeePerGas : nextBaseFee(lastHeader));
    return { oldestBlock: oldest, baseFeePerGas, gasUsedRatio, reward: percentiles ? reward : undefined };
  }
}

/** geth's texts for a simulation that could not run: timeout, or a pre-execution check. */
function simulationFailure(e: unknown, timeoutMs: number): FerryError {
  if (e instanceof EvmTimeoutError) return new FerryError(ErrorCode.server, `execution aborted (timeout = ${timeoutMs / 1000}s)`);
  const msg = e instanceof Error ? e.message.split(' (')[0]! : String(e);
  return new FerryError(ErrorCode.server, msg);
}
