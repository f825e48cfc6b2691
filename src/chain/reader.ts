/**
 * The read side of the chain, for the RPC thread: committed blocks, receipts and logs from the store,
 * state at any height from the flat state layer (proofs from the archive trie), eth_call/estimateGas on
 * the simulator, pending txs from
 * the pool mirror. Implements evmrpc's EvmBackend port (structurally; node/ wires it).
 */
import type { Common } from '@ethereumjs/common';
import { Address, createAccountFromRLP, setLengthLeft, type Account } from '@ethereumjs/util';
import { getMerkleStateProof } from '@ethereumjs/statemanager';
import { ForkSchedule } from '../evm/forks.js';
import type { ForkTimes } from '../config/genesis.js';
import { proofStateManager } from '../evm/statetrie.js';
import { effectiveTip } from '../evm/tx.js';
import { limitExceeded, notFound, pruned, unsupported } from '../lib/errors.js';
import { bytesToHex } from '../lib/hex.js';
import { FlatState } from '../store/flatstate.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import type { Address as Addr, Bytes, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash } from '../types/chain.js';
import type { AccountProof, BlockOverrides, BlockSelector, FeeHistory, HexLog, LogQuery, StateOverrides, TxPosition } from '../types/query.js';
import { baseFeeAfter } from './fees.js';
import { ChainEvents, type RewindEvent } from './events.js';
import { PoolView } from './poolview.js';
import type { CallOrigin, CallRequest, SimulatorPort } from './simulator.js';
import { senderOfNative, signedRaw, type Signed } from './txdecode.js';
import { CheatOverlay } from './cheats.js';
import type { StateAccount } from '../types/cheats.js';
import { GethText } from '../lib/gethtexts.js';

/** eth_maxPriorityFeePerGas suggestion (1 gwei, like geth/Anvil dev defaults). */
export const SUGGESTED_TIP = 1_000_000_000n;

export interface ReaderOptions {
  chainId: bigint;
  hardfork: string;
  /** the chain's later forks by block time (evm/forks.ts) */
  forkTimes?: ForkTimes;
  gasCap: bigint;
  logsCap: number;
  coinbase: Uint8Array;
  /** runs eth_call / eth_estimateGas (chain/simulator.ts, in worker threads) */
  simulator: SimulatorPort;
  /**
   * submits a raw EVM tx to the chain thread with its signer and hash as found on this thread
   * (undefined: the bytes did not decode, the chain thread says why); resolves to the tx hash, or
   * rejects with the chain thread's refusal as a domain error (txRejected with its reason)
   */
  submit(raw: Uint8Array, signed: Signed | undefined): Promise<Uint8Array>;
}

export class ChainReader {
  readonly pool = new PoolView();
  readonly events = new ChainEvents();
  /** the chain thread's pending dev cheats, mirrored: `latest` reads see them (chain/cheats.ts) */
  readonly cheats = new CheatOverlay();
  readonly chainId: bigint;
  readonly networkId: string;
  private latest: bigint;
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: Store,
    private readonly forks: ForkSchedule,
    private readonly flat: FlatState,
    private readonly trieDb: TrieDB,
    private readonly opts: ReaderOptions,
  ) {
    this.chainId = opts.chainId;
    this.networkId = opts.chainId.toString();
    this.latest = store.latestHeight() ?? 0n;
  }

  static async create(store: Store, opts: ReaderOptions): Promise<ChainReader> {
    const forks = new ForkSchedule(opts.chainId, opts);
    return new ChainReader(store, forks, new FlatState(store), new TrieDB(store), opts);
  }

  /** the rules a tx sent now is checked under: the next block's, whose time is about now (evm/forks.ts) */
  private get common(): Common {
    return this.forks.commonAt(BigInt(Math.floor(Date.now() / 1000)));
  }

  /** the chain thread committed `height` */
  onCommitted(height: bigint): void {
    if (height <= this.latest) return;
    this.latest = height;
    this.events.blocks.emit(height);
  }

  /**
   * The chain thread rewound the chain (dev revert): the head goes back, the caches that hold
   * blocks or state by height are dropped, then the rewind is published (feed, filters, Surface B).
   */
  onRewound(e: RewindEvent): void {
    this.latest = e.height;
    this.store.forgetCaches();
    this.flat.forget(Number(e.height));
    this.events.rewound.emit(e);
  }

  /** `listener` runs after each rewind, with the new head (EvmBackend: caches of formatted answers) */
  onRewind(listener: (height: bigint) => void): () => void {
    return this.events.rewound.on((e) => listener(e.height));
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

  /** the lowest block this node made: its genesis block (0; a fork's stands at the fork block, chain/genesisblock.ts) */
  genesisNumber(): bigint {
    return this.store.fork?.record.blockNumber ?? 0n;
  }

  resolveBlock(sel: BlockSelector): bigint | undefined {
    switch (sel.kind) {
      case 'number':
        if (sel.number > this.latest) return undefined;
        this.checkHistory(sel.number);
        return sel.number;
      case 'hash':
        return this.store.heightByHash(sel.hash);
      case 'tag':
        return sel.tag === 'earliest' ? 0n : this.latest;
    }
  }

  /**
   * A block below the lowest one min-retain-blocks kept (store/prune.ts): go-ethereum's
   * "pruned history unavailable" (internal/ethapi/errors.go, code 4444 on Surface A).
   */
  private checkHistory(n: bigint): void {
    const low = this.store.lowestBlockHeight();
    if (low !== undefined && n > 0n && n < low) throw pruned('history', 'pruned history unavailable');
  }

  /**
   * State of block `n` is answered only from the flat layer's lowest height on (pruning, store/prune.ts):
   * below it, go-ethereum's "historical state <root> is not available" (core/state/database_history.go).
   */
  checkState(n: bigint): void {
    const low = this.flat.low();
    if (low === undefined || n >= BigInt(low)) return;
    this.checkHistory(n);
    const root = this.store.evmBlock(n)?.header.stateRoot;
    throw pruned('state', `historical state ${root ? Buffer.from(root).toString('hex') : String(n)} is not available`);
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

  /** the address index's positions (store/addrindex.ts), up to this thread's head */
  addressTxs(address: Addr, lo: bigint, hi: bigint, desc: boolean, count: number, cap: number): TxPosition[] {
    const top = hi > this.latest ? this.latest : hi;
    return this.store.addrs.positions(address, Number(lo), Number(top), desc, count, cap).map((r) => ({ height: BigInt(r.height), index: r.idx }));
  }

  addressBlocks(address: Addr, lo: bigint, hi: bigint, limit: number): bigint[] {
    const top = hi > this.latest ? this.latest : hi;
    return this.store.addrs.heights(address, Number(lo), Number(top), limit).map(BigInt);
  }

  /**
   * The logs of [fromBlock, toBlock] matching the address set and every topic position. The store
   * filters every position (from an index) and counts matches only: more than `logs-cap` matches is
   * an error (0 = no cap), never a silently short answer.
   */
  getLogs(q: LogQuery): EvmLog[] {
    return this.logsOf(q, (qq, limit) => this.store.logRows(qq, limit), (h) => this.store.blockHash(h)!, (r, blockHash) => ({
      address: r.address,
      topics: r.topics,
      data: r.data,
      blockNumber: BigInt(r.height),
      blockHash,
      transactionHash: r.txHash,
      transactionIndex: r.txIndex,
      logIndex: r.logIndex,
    }));
  }

  /** getLogs with every byte field as lowercase hex text (no `0x`): what eth_getLogs writes (evmrpc/logjson.ts) */
  getLogsHex(q: LogQuery): HexLog[] {
    return this.logsOf(q, (qq, limit) => this.store.logRowsHex(qq, limit), (h) => bytesToHex(this.store.blockHash(h)!), (r, blockHash) => ({
      address: r.address,
      topics: r.topics,
      data: r.data,
      blockNumber: r.height,
      blockHash,
      transactionHash: r.txHash,
      transactionIndex: r.txIndex,
      logIndex: r.logIndex,
    }));
  }

  /**
   * The logs of [fromBlock, toBlock] matching the address set and every topic position. The store
   * filters every position (from an index) and counts matches only: more than `logs-cap` matches is
   * an error (0 = no cap), never a silently short answer. Each block's hash is read once.
   */
  private logsOf<R extends { height: number }, H, L>(
    q: LogQuery,
    rows: (q: LogQuery, limit: number) => R[],
    hashOf: (height: number) => H,
    make: (r: R, blockHash: H) => L,
  ): L[] {
    const to = q.toBlock > this.latest ? this.latest : q.toBlock;
    if (q.fromBlock > to) return [];
    const cap = this.opts.logsCap;
    const found = rows({ ...q, toBlock: to }, cap > 0 ? cap + 1 : 0);
    if (cap > 0 && found.length > cap) throw limitExceeded(`query returned more than ${cap} results`);
    const out: L[] = new Array(found.length);
    let hashHeight = -1;
    let blockHash: H | undefined;
    for (let i = 0; i < found.length; i++) {
      const r = found[i]!;
      if (r.height !== hashHeight) {
        hashHeight = r.height;
        blockHash = hashOf(r.height);
      }
      out[i] = make(r, blockHash!);
    }
    return out;
  }

  private root(n: bigint): Uint8Array {
    const b = this.blockByNumber(n);
    if (!b) throw notFound(GethText.headerNotFound);
    return b.header.stateRoot;
  }

  /** Do reads at `n` see the pending dev cheats? Only at the latest height, unless `committed` is asked. */
  private cheating(n: bigint, committed: boolean): boolean {
    return !committed && n === this.latest && this.cheats.size > 0;
  }

  /** `committed`: the block's state only, without the pending dev cheats (abci_query, whose proofs are of it) */
  private account(addr: Addr, n: bigint, committed = false): Account | undefined {
    this.root(n);
    const rlp = this.flat.account(addr, Number(n));
    const acct = rlp === undefined ? undefined : createAccountFromRLP(rlp);
    return this.cheating(n, committed) ? this.cheats.account(addr, acct) : acct;
  }

  async balance(addr: Addr, n: bigint, committed = false): Promise<bigint> {
    return this.account(addr, n, committed)?.balance ?? 0n;
  }

  async nonce(addr: Addr, n: bigint, committed = false): Promise<bigint> {
    return this.account(addr, n, committed)?.nonce ?? 0n;
  }

  async pendingNonce(addr: Addr): Promise<bigint> {
    return this.pool.pendingNonce(addr, await this.nonce(addr, this.latest));
  }

  async code(addr: Addr, n: bigint, committed = false): Promise<Bytes> {
    const acct = this.account(addr, n, committed);
    if (!acct || !acct.isContract()) return new Uint8Array();
    const pending = this.cheating(n, committed) ? this.cheats.code(addr) : undefined;
    if (pending !== undefined) return pending;
    return this.flat.code(acct.codeHash) ?? new Uint8Array();
  }

  async storageAt(addr: Addr, slot: Hash, n: bigint, committed = false): Promise<Hash> {
    this.root(n);
    const pending = this.cheating(n, committed) ? this.cheats.slot(addr, slot) : undefined;
    if (pending !== undefined) return pending;
    if (this.flat.account(addr, Number(n)) === undefined) return new Uint8Array(32);
    return setLengthLeft(this.flat.storage(addr, slot, Number(n)), 32);
  }

  /**
   * anvil_dumpState: every account of the latest state with the pending dev cheats, its code and
   * non-zero slots (from the flat state layer), in address order.
   */
  *latestAccounts(): Generator<StateAccount> {
    const n = this.latest;
    const h = Number(n);
    const seen = new Set<string>();
    const all = [...this.flat.addresses(), ...(this.cheating(n, false) ? this.cheats.addresses() : [])];
    all.sort((a, b) => Buffer.compare(a, b));
    for (const addr of all) {
      const k = Buffer.from(addr).toString('hex');
      if (seen.has(k)) continue;
      seen.add(k);
      const acct = this.account(addr, n);
      if (acct === undefined) continue;
      const pendingCode = this.cheating(n, false) ? this.cheats.code(addr) : undefined;
      const code = !acct.isContract() ? new Uint8Array() : (pendingCode ?? this.flat.code(acct.codeHash) ?? new Uint8Array());
      const storage = new Map<string, [Uint8Array, Uint8Array]>();
      if (this.flat.account(addr, h) !== undefined) {
        for (const slot of this.flat.slotsOf(addr, h)) storage.set(Buffer.from(slot).toString('hex'), [slot, setLengthLeft(this.flat.storage(addr, slot, h), 32)]);
      }
      if (this.cheating(n, false)) for (const [slot, v] of this.cheats.slotsOf(addr)) storage.set(Buffer.from(slot).toString('hex'), [slot, v]);
      const slots = [...storage.values()].filter(([, v]) => v.some((x) => x !== 0)).sort((a, b) => Buffer.compare(a[0], b[0]));
      yield { address: addr, nonce: acct.nonce, balance: acct.balance, code, storage: slots };
    }
  }

  /** eth_getProof: Merkle proofs come from the archive trie at the block's root */
  proof(addr: Addr, slots: Hash[], n: bigint): Promise<AccountProof> {
    // a fork's trie holds only what the fork wrote: a proof of an origin account would be a wrong proof of absence
    if (this.store.fork !== undefined) {
      return Promise.reject(unsupported('eth_getProof is not served by a fork: its state trie holds only what the fork wrote (docs/fork-mode.md)'));
    }
    return this.exclusive(async () => {
      this.trieDb.rootMoved();
      const sm = proofStateManager(this.common, this.trieDb, this.root(n));
      const p = await getMerkleStateProof(sm, new Address(addr), slots);
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

  /** eth_sendRawTransaction: the chain thread's refusal comes back as the domain error it threw (node/protocol.ts) */
  sendRawTransaction(raw: Bytes): Promise<Hash> {
    return this.opts.submit(raw, signedRaw(raw, this.common));
  }

  /** The signer of native (TxRaw) tx bytes, recovered on this thread so the chain thread need not (undefined: they do not decode). */
  nativeSender(tx: Uint8Array): Uint8Array | undefined {
    return senderOfNative(tx, this.common);
  }

  /** eth_call: runs on the simulator (a pool of worker threads in the node) */
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<Bytes> {
    this.root(n);
    return this.opts.simulator.call(req, n, this.callOverrides(n, overrides), origin, block);
  }

  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<bigint> {
    this.root(n);
    return this.opts.simulator.estimateGas(req, n, this.callOverrides(n, overrides), origin, block);
  }

  /** A call's state overrides at `n`: at the latest height the pending dev cheats under the caller's own. */
  callOverrides(n: bigint, overrides: StateOverrides | undefined): StateOverrides | undefined {
    return this.cheating(n, false) ? this.cheats.overrides(overrides) : overrides;
  }

  nextBaseFee(): bigint {
    const h = this.store.evmBlock(this.latest)!.header;
    return baseFeeAfter(h);
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

  /** miner_setEtherbase took effect on the chain thread */
  setCoinbase(address: Addr): void {
    this.opts.coinbase = address;
  }

  pendingTransactions(): EvmTx[] {
    return this.pool.all();
  }

  /** txpool_*: the mempool mirror split into pending and queued by the latest nonces (evmrpc/txpool.ts) */
  poolContent(): Promise<{ pending: EvmTx[]; queued: EvmTx[] }> {
    return this.pool.content((a) => this.nonce(a, this.latest));
  }

  feeHistory(count: number, newest: bigint, percentiles: number[] | undefined): FeeHistory {
    const last = newest > this.latest ? this.latest : newest;
    // a fork's own blocks only: below its genesis block are the origin's (docs/fork-mode.md)
    const held = last - this.genesisNumber() + 1n;
    const n = BigInt(count) > held ? Number(held) : count;
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
    baseFeePerGas.push(baseFeeAfter(lastHeader));
    return { oldestBlock: oldest, baseFeePerGas, gasUsedRatio, reward: percentiles ? reward : undefined };
  }
}
