/**
 * Runs EVM work with ethereumjs: genesis allocation, block execution (one executor owned by the chain
 * thread) and calls/estimates at any committed state (readers). A flat runner (createFlat) reads state
 * by key from the flat layer at a height and touches the trie only to compute each block's root; a
 * Merkle runner (create) reads through the trie at a root (debug tracing replays on one).
 */
import { createBlock, type Block } from '@ethereumjs/block';
import type { EVM } from '@ethereumjs/evm';
import type { Common } from '@ethereumjs/common';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import type { StateManagerInterface } from '@ethereumjs/common';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, ValueEncoding, bigIntToBytes, bytesToUnprefixedHex, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import { Bloom, createVM, encodeReceipt, runTx, type RunTxResult, type VM } from '@ethereumjs/vm';
import { executionFailed, reverted, type DomainError } from '../lib/errors.js';
import { Lru } from '../lib/lru.js';
import { yieldToEventLoop } from '../lib/slices.js';
import type { FlatChange, FlatState } from '../store/flatstate.js';
import type { TrieDB } from '../store/triedb.js';
import type { EvmTx } from '../types/chain.js';
import type { StateOverrides } from '../types/query.js';
import { keccak256 } from './common.js';
import { FlatStateManager, genesisState, type GenesisAccount } from './flatstate.js';
import './jumpdests.js';
import { orderedTrieRoot } from './orderedtrie.js';
import { callFees, checkFeesAndFunds, checkGasAndCode, type CallFees } from './precheck.js';
import type { DecodedTx } from './tx.js';

export const EMPTY_TRIE_ROOT = Uint8Array.from(
  Buffer.from('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421', 'hex'),
);

export interface BlockContext {
  number: bigint;
  timestamp: bigint;
  coinbase: Uint8Array;
  gasLimit: bigint;
  baseFee: bigint;
  mixHash: Uint8Array;
}

export interface ExecutedTx {
  tx: EvmTx;
  status: 0 | 1;
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
  logsBloom: Uint8Array;
  createdAddress: Uint8Array | undefined;
  vmError: string | undefined;
  returnValue: Uint8Array;
}

export interface ExecutedBlock {
  txs: ExecutedTx[];
  /** txs that could not be applied (stale nonce, funds): left out of the block */
  excluded: { tx: EvmTx; reason: string }[];
  gasUsed: bigint;
  stateRoot: Uint8Array;
  logsBloom: Uint8Array;
  transactionsRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  /** a flat runner's change set: the store writes it with the block (FlatState.write) */
  flatChange?: FlatChange;
}

/** A committed state: its height (flat runners) and root (Merkle runners). */
export interface StateRef {
  height: bigint;
  root: Uint8Array;
}

/** Where a runner reads: a root (Merkle runners only) or a committed state. */
export type At = Uint8Array | StateRef;

export type { GenesisAccount } from './flatstate.js';

export type BlockHashLookup = (n: bigint) => Uint8Array | undefined;

function makeTrie(db: TrieDB, common: Common, root?: Uint8Array): MerklePatriciaTrie {
  return new MerklePatriciaTrie({
    db,
    valueEncoding: ValueEncoding.Bytes,
    useKeyHashing: true,
    useKeyHashingFunction: keccak256,
    common,
    root,
  });
}

/** Thrown out of the interpreter when a simulation runs past its deadline. */
export class EvmTimeoutError extends Error {
  constructor() {
    super('execution timeout');
  }
}

/**
 * executeBlock yields to the event loop once a slice of txs has run this long (milliseconds), so
 * CheckTx (eth_sendRawTransaction's answer) waits at most about this long behind a block's execution.
 */
export const EXECUTE_SLICE_MS = 2;

/** Block objects kept per runner (calls at recent heights). */
export const BLOCK_CONTEXT_CACHE_SIZE = 16;

const JUMP = 0x56;
const JUMPI = 0x57;

/** A state manager over the trie at `root`, for proofs (eth_getProof) and nothing else. */
export function proofStateManager(common: Common, db: TrieDB, root: Uint8Array): MerkleStateManager {
  return new MerkleStateManager({ trie: makeTrie(db, common, root), common });
}

/**
 * What a run is held to, checked at every JUMP/JUMPI (every loop passes one): its deadline, and a
 * hook of its scheduler (lib/slices.ts) that may park the run — the opcode then waits for the promise
 * `pass` returns — or abort it by throwing.
 */
export interface RunGate {
  /** epoch ms after which the run aborts with EvmTimeoutError (Infinity = none) */
  readonly deadline: number;
  pass?(): Promise<void> | undefined;
}

/** A VM over its own state manager. Not re-entrant: callers serialize its use. */
export class EvmRunner<S extends StateManagerInterface = MerkleStateManager | FlatStateManager> {
  private current: RunGate | undefined;
  /** this runner's own copies of JUMP/JUMPI's opcode info: async only while a gate may park the run */
  private readonly jumpInfos: { isAsync: boolean }[] = [];

  /** the gate of the run in progress, if it has one */
  get gate(): RunGate | undefined {
    return this.current;
  }

  /**
   * The interpreter awaits an opcode's handler only when its info says isAsync, and an await per jump
   * is a cost block execution (no gate) must not pay: jumps are marked async only while a gate with a
   * scheduler hook is installed.
   */
  set gate(g: RunGate | undefined) {
    this.current = g;
    const parks = g?.pass !== undefined;
    for (const info of this.jumpInfos) info.isAsync = parks;
  }

  private constructor(
    readonly vm: VM,
    readonly sm: S,
    private readonly common: Common,
    private readonly db: TrieDB,
  ) {
    const map = (vm.evm as unknown as { _opcodeMap: Record<number, { opHandler: (...a: unknown[]) => unknown; opcodeInfo: object }> })._opcodeMap;
    for (const op of [JUMP, JUMPI]) {
      const entry = map[op]!;
      const inner = entry.opHandler;
      // the interpreter awaits the handler only when the opcode is marked async (a parked run waits)
      const info = { ...entry.opcodeInfo, isAsync: false };
      this.jumpInfos.push(info);
      entry.opcodeInfo = info;
      entry.opHandler = (...args: unknown[]) => {
        const gate = this.current;
        if (gate === undefined) return inner(...args);
        if (Date.now() > gate.deadline) throw new EvmTimeoutError();
        const parked = gate.pass?.();
        if (parked === undefined) return inner(...args);
        return parked.then(() => {
          if (Date.now() > gate.deadline) throw new EvmTimeoutError();
          return inner(...args);
        });
      };
    }
  }

  static async create(common: Common, db: TrieDB, hashOf: BlockHashLookup, root?: Uint8Array): Promise<EvmRunner<MerkleStateManager>> {
    const sm = new MerkleStateManager({ trie: makeTrie(db, common, root), common, caches: new Caches() });
    return EvmRunner.over(common, sm, db, hashOf);
  }

  /** A runner reading the flat layer; `db` receives the trie nodes of the blocks it executes. */
  static async createFlat(common: Common, flat: FlatState, db: TrieDB, hashOf: BlockHashLookup): Promise<EvmRunner<FlatStateManager>> {
    return EvmRunner.over(common, new FlatStateManager(flat), db, hashOf);
  }

  private static async over<T extends StateManagerInterface>(common: Common, sm: T, db: TrieDB, hashOf: BlockHashLookup): Promise<EvmRunner<T>> {
    const blockchain = {
      async getBlock(n: number) {
        const h = hashOf(BigInt(n));
        if (!h) throw new Error(`block ${n} not found`);
        return { hash: () => h };
      },
      async putBlock() {},
      shallowCopy() {
        return blockchain;
      },
    };
    const vm = await createVM({ common, stateManager: sm, blockchain: blockchain as never });
    return new EvmRunner<T>(vm, sm, common, db);
  }

  private get flat(): FlatStateManager | undefined {
    return this.sm instanceof FlatStateManager ? this.sm : undefined;
  }

  /** block contexts are immutable per height: calls at the same height share one Block object */
  private readonly blocks = new Lru<string, Block>(BLOCK_CONTEXT_CACHE_SIZE);

  private block(ctx: BlockContext): Block {
    const key = `${ctx.number}:${ctx.timestamp}:${ctx.baseFee}:${ctx.gasLimit}`;
    let b = this.blocks.get(key);
    if (!b) {
      b = this.makeBlock(ctx);
      this.blocks.set(key, b);
    }
    return b;
  }

  /** the ethereumjs block of a context (tracing replays a block's txs in it) */
  ethBlock(ctx: BlockContext): Block {
    return this.block(ctx);
  }

  private makeBlock(ctx: BlockContext): Block {
    return createBlock(
      {
        header: {
          number: ctx.number,
          timestamp: ctx.timestamp,
          coinbase: new Address(ctx.coinbase),
          gasLimit: ctx.gasLimit,
          baseFeePerGas: ctx.baseFee,
          mixHash: ctx.mixHash,
          difficulty: 0n,
          excessBlobGas: 0n,
          blobGasUsed: 0n,
          parentBeaconBlockRoot: new Uint8Array(32),
        },
      },
      { common: this.common, skipConsensusFormatValidation: true, freeze: false },
    );
  }

  /** the root the state manager is on (tracked here: asking the state manager flushes its caches) */
  private root: Uint8Array | undefined;

  async setRoot(at: At): Promise<void> {
    const flat = this.flat;
    if (flat) {
      if (at instanceof Uint8Array) throw new Error('a flat runner reads at a height');
      if (flat.height !== Number(at.height) || flat.dirty > 0) flat.at(Number(at.height));
      return;
    }
    const root = at instanceof Uint8Array ? at : at.root;
    if (this.root !== undefined && Buffer.compare(this.root, root) === 0) return;
    await this.sm.setStateRoot(root, true);
    this.db.rootMoved();
    this.root = root;
  }

  /** the flat change set of the last applyGenesis (flat runners) */
  genesisChange: FlatChange | undefined;

  /** Flat runners: applies the journal to the trie at `parentRoot`; the trie nodes and code go to the TrieDB. */
  private async commitFlat(flat: FlatStateManager, parentRoot: Uint8Array): Promise<{ root: Uint8Array; change: FlatChange }> {
    const { root, change, codes } = flat.commitToTrie(this.db, parentRoot);
    for (const [k, code] of codes) await this.db.put(Buffer.from(k).toString('hex'), code);
    return { root, change };
  }

  /** Writes the genesis allocation into an empty state and returns the root. */
  async applyGenesis(alloc: Map<string, GenesisAccount>): Promise<Uint8Array> {
    const flat = this.flat;
    if (flat) {
      flat.at(-1);
      const nodes: [Uint8Array, Uint8Array][] = [];
      const { root, change, codes } = genesisState(alloc, (h, enc) => nodes.push([h, enc]));
      for (const [k, v] of [...nodes, ...codes]) await this.db.put(Buffer.from(k).toString('hex'), v);
      this.genesisChange = change;
      return root;
    }
    for (const [addrHex, acc] of alloc) {
      const addr = new Address(Uint8Array.from(Buffer.from(addrHex.slice(2), 'hex')));
      await this.sm.putAccount(addr, new Account(acc.nonce, acc.balance));
      if (acc.code && acc.code.length > 0) await this.sm.putCode(addr, acc.code);
      if (acc.storage) {
        for (const [slot, value] of acc.storage) {
          await this.sm.putStorage(addr, setLengthLeft(Buffer.from(slot.slice(2), 'hex'), 32), value);
        }
      }
    }
    await this.sm.checkpoint();
    await this.sm.commit();
    this.root = await this.sm.getStateRoot();
    return this.root;
  }

  /**
   * Executes txs in order on `parentRoot`. Txs that cannot be applied are excluded, not fatal.
   * `prelude` changes the state before the first tx (the dev cheats: chain/cheats.ts).
   */
  async executeBlock(parent: At, ctx: BlockContext, txs: DecodedTx[], prelude?: (sm: StateManagerInterface) => Promise<void>): Promise<ExecutedBlock> {
    const flat = this.flat;
    if (flat) {
      if (parent instanceof Uint8Array) throw new Error('a flat runner executes on a committed state');
      flat.at(Number(parent.height));
    } else await this.setRoot(parent);
    const block = this.block(ctx);
    const out: ExecutedTx[] = [];
    const excluded: ExecutedBlock['excluded'] = [];
    const included: Uint8Array[] = [];
    const receiptsEnc: Uint8Array[] = [];
    const bloom = new Bloom(undefined, this.common);
    let cumulative = 0n;
    // One checkpoint around the whole block: the state manager then flushes its caches into the trie
    // once at the end instead of after every tx (which hashed and stored every intermediate state).
    // (runTx itself resets the per-tx "original storage" of EIP-2200 net gas metering at each tx.)
    await this.sm.checkpoint();
    try {
      if (prelude) await prelude(this.sm);
      let sliceStart = performance.now();
      for (const d of txs) {
        // let the chain thread answer CheckTx between slices of a long block
        if (performance.now() - sliceStart >= EXECUTE_SLICE_MS) {
          await yieldToEventLoop();
          sliceStart = performance.now();
        }
        if (cumulative + d.tx.gasLimit > ctx.gasLimit) {
          excluded.push({ tx: d.evm, reason: 'block gas limit reached' });
          continue;
        }
        let res: RunTxResult;
        try {
          res = await runTx(this.vm, { tx: d.tx, block, blockGasUsed: cumulative, skipHardForkValidation: true });
        } catch (e) {
          excluded.push({ tx: d.evm, reason: e instanceof Error ? e.message.split(' (')[0]! : String(e) });
          continue;
        }
        cumulative += res.totalGasSpent;
        const logs = res.receipt.logs.map(([address, topics, data]) => ({ address, topics, data }));
        const err = res.execResult.exceptionError;
        receiptsEnc.push(encodeReceipt(res.receipt, d.tx.type));
        bloom.or(res.bloom);
        included.push(d.evm.raw);
        out.push({
          tx: d.evm,
          status: err ? 0 : 1,
          gasUsed: res.totalGasSpent,
          cumulativeGasUsed: cumulative,
          logs,
          logsBloom: res.bloom.bitvector,
          createdAddress: res.createdAddress?.bytes,
          vmError: err ? vmErrorText(err.error) : undefined,
          returnValue: res.execResult.returnValue,
        });
      }
    } catch (e) {
      await this.sm.revert();
      throw e;
    }
    // the CheckTx requests of the last slice are answered before the state root is computed
    await yieldToEventLoop();
    await this.sm.commit();
    let stateRoot: Uint8Array;
    let flatChange: FlatChange | undefined;
    if (flat) {
      ({ root: stateRoot, change: flatChange } = await this.commitFlat(flat, (parent as StateRef).root));
    } else {
      stateRoot = await this.sm.getStateRoot();
      this.root = stateRoot;
    }
    return {
      flatChange,
      txs: out,
      excluded,
      gasUsed: cumulative,
      stateRoot,
      logsBloom: bloom.bitvector,
      transactionsRoot: orderedTrieRoot(included),
      receiptsRoot: orderedTrieRoot(receiptsEnc),
    };
  }

  /** Abandons the state of an unfinished block. */
  async reset(at: At): Promise<void> {
    const flat = this.flat;
    if (flat) {
      if (at instanceof Uint8Array) throw new Error('a flat runner reads at a height');
      flat.at(Number(at.height));
      return;
    }
    const root = at instanceof Uint8Array ? at : at.root;
    this.sm.clearCaches();
    await this.sm.setStateRoot(root, true);
    this.db.rootMoved();
    this.root = root;
  }

  // ---- reads ----
  async account(at: At, addr: Uint8Array): Promise<Account | undefined> {
    await this.setRoot(at);
    return this.sm.getAccount(new Address(addr));
  }
  async code(at: At, addr: Uint8Array): Promise<Uint8Array> {
    await this.setRoot(at);
    return this.sm.getCode(new Address(addr));
  }
  async storage(at: At, addr: Uint8Array, slot: Uint8Array): Promise<Uint8Array> {
    await this.setRoot(at);
    return setLengthLeft(await this.sm.getStorage(new Address(addr), slot), 32);
  }

  /**
   * Runs a message call as a whole tx (eth_estimateGas, eth_createAccessList, debug_traceCall, creations;
   * eth_call to an address goes through `simulateCall`) on `root` with an impersonated sender; every
   * state change is reverted afterwards. Returns the raw run result.
   */
  async simulate(
    root: At,
    ctx: BlockContext,
    call: SimCall,
    overrides?: StateOverrides,
    gate?: RunGate,
    /** runs after the overrides are applied, right before the tx (tracing takes its pre-state here) */
    beforeRun?: (tx: TypedTransaction, block: Block) => Promise<void>,
  ): Promise<RunTxResult> {
    return this.simulation(root, ctx, call, overrides, gate, async (tx, block, fees) => {
      if (beforeRun) await beforeRun(tx, block);
      return this.runWhole(tx, block, fees);
    });
  }

  /**
   * eth_call: as simulate, for the return data and the error only (no gas figures, no receipt). A
   * message call to an address runs as the message alone (leanCall), anything else as a whole tx.
   */
  async simulateCall(root: At, ctx: BlockContext, call: SimCall, overrides?: StateOverrides, gate?: RunGate): Promise<CallOutcome> {
    return this.simulation(root, ctx, call, overrides, gate, async (tx, block, fees, from, intrinsic) => {
      if (call.to !== undefined && this.leanCalls()) return this.leanCall(tx, block, from, intrinsic);
      return (await this.runWhole(tx, block, fees)).execResult;
    });
  }

  /** ethereumjs' runTx, with what geth's eth_call skips (nonce; balance when no fee is given) */
  private runWhole(tx: TypedTransaction, block: Block, fees: CallFees): Promise<RunTxResult> {
    return runTx(this.vm, {
      tx,
      block,
      skipNonce: true,
      skipBalance: fees.free,
      skipBlockGasLimitValidation: true,
      skipHardForkValidation: true,
    });
  }

  /**
   * The shared part of a simulation: moves to `root`, applies the overrides, runs geth's pre-checks,
   * builds the tx and hands it to `run`; every change is reverted afterwards.
   */
  private async simulation<T>(
    root: At,
    ctx: BlockContext,
    call: SimCall,
    overrides: StateOverrides | undefined,
    gate: RunGate | undefined,
    run: (tx: TypedTransaction, block: Block, fees: CallFees, from: Address, intrinsic: bigint) => Promise<T>,
  ): Promise<T> {
    await this.setRoot(root);
    await this.sm.checkpoint();
    const outer = this.gate;
    if (gate !== undefined) this.gate = gate;
    try {
      if (overrides) await applyOverrides(this.sm, overrides);
      const fromBytes = call.from ?? new Uint8Array(20);
      const from = new Address(fromBytes);
      const acct = await this.sm.getAccount(from);
      // geth's checks first, with geth's texts (evm/precheck.ts); ethereumjs' own then always pass
      const fees = callFees(call, ctx.baseFee);
      const value = call.value ?? 0n;
      checkFeesAndFunds({
        from: fromBytes, gas: call.gas, value, fees, baseFee: ctx.baseFee, balance: acct?.balance ?? 0n,
        code: acct && !equalsBytes(acct.codeHash, KECCAK256_NULL) ? await this.sm.getCode(from) : new Uint8Array(),
      });
      const txData: Record<string, unknown> = {
        nonce: acct?.nonce ?? 0n,
        gasLimit: call.gas,
        to: call.to ? new Address(call.to) : undefined,
        value,
        data: call.data ?? new Uint8Array(),
        accessList: call.accessList?.map((a) => [a.address, a.storageKeys]),
      };
      if (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined) {
        txData.type = 2;
        txData.maxFeePerGas = fees.feeCap;
        txData.maxPriorityFeePerGas = fees.tip;
      } else {
        txData.type = call.accessList ? 1 : 0;
        txData.gasPrice = fees.gasPrice;
      }
      // the init code limit is checked below, in geth's order and words
      const tx = createTx(txData as never, { common: this.common, freeze: false, allowUnlimitedInitCodeSize: true }) as TypedTransaction;
      const intrinsic = tx.getIntrinsicGas();
      checkGasAndCode({
        gas: call.gas, intrinsic, floor: this.common.isActivatedEIP(7623) ? tx.getMinimumGasLimit() : 0n,
        creation: call.to === undefined, dataLength: call.data?.length ?? 0,
      });
      (tx as { getSenderAddress: () => Address }).getSenderAddress = () => from;
      // geth's eth_call skips the base-fee check when no fee is given (NoBaseFee)
      const block = this.block(fees.free ? { ...ctx, baseFee: 0n } : ctx);
      return await run(tx, block, fees, from, intrinsic);
    } catch (e) {
      // a run thrown out of the interpreter (the deadline, a cancelled task) skipped the library's
      // end-of-tx clearing of the transient storage (EIP-1153): the next call on this EVM must not see it
      (this.vm.evm as EVM).transientStorage.clear();
      throw e;
    } finally {
      this.gate = outer;
      await this.sm.revert();
    }
  }

  private lean: boolean | undefined;

  /**
   * Whether a call may run as its message alone: not while anything watches whole txs (tracers,
   * the profiler, DEBUG), nor under EIPs whose tx-level rules leanCall does not carry (EIP-8037 state
   * gas, EIP-7928 block access lists, EIP-2780 top-frame charges, stateless witnesses).
   */
  private leanCalls(): boolean {
    const vm = this.vm as unknown as { DEBUG: boolean; _opts: { profilerOpts?: { reportAfterTx?: boolean } }; events: { listenerCount(e: string): number } };
    if (vm.DEBUG || vm._opts.profilerOpts?.reportAfterTx === true) return false;
    if (vm.events.listenerCount('beforeTx') > 0 || vm.events.listenerCount('afterTx') > 0) return false;
    this.lean ??= ![8037, 7928, 2780, 7864, 6800].some((eip) => this.common.isActivatedEIP(eip));
    return this.lean;
  }

  /**
   * The message of a call tx to an address, as ethereumjs' runTx sets it up, without what runTx does
   * after it (gas refund, fees to the coinbase, receipt, touched-account cleanup) — none of which an
   * eth_call answer shows, and all of which simulation reverts. The set-up is runTx's, in its order:
   * a clean journal, the access list and the always-warm addresses (precompiles, sender, recipient,
   * coinbase under EIP-3651), the intrinsic gas off the gas limit, the gas bought at the effective
   * price and the nonce bumped on the sender, then the call itself. The pre-checks that could fail in
   * runTx have run before (evm/precheck.ts), in geth's words.
   */
  private async leanCall(tx: TypedTransaction, block: Block, caller: Address, intrinsic: bigint): Promise<CallOutcome> {
    const evm = this.vm.evm;
    const journal = evm.journal;
    const common = this.common;
    await journal.cleanup();
    await journal.checkpoint();
    try {
      if (tx.type !== 0) {
        for (const [address, keys] of (tx as { accessList: [Uint8Array, Uint8Array[]][] }).accessList) {
          const a = bytesToUnprefixedHex(address);
          journal.addAlwaysWarmAddress(a, true);
          for (const key of keys) journal.addAlwaysWarmSlot(a, bytesToUnprefixedHex(key), true);
        }
      }
      if (common.isActivatedEIP(2929)) {
        for (const [address] of (evm as unknown as { precompiles: Map<string, unknown> }).precompiles) journal.addAlwaysWarmAddress(address);
        journal.addAlwaysWarmAddress(bytesToUnprefixedHex(caller.bytes));
        journal.addAlwaysWarmAddress(bytesToUnprefixedHex(tx.to!.bytes));
        if (common.isActivatedEIP(3651)) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(block.header.coinbase.bytes));
      }
      const baseFee = block.header.baseFeePerGas ?? 0n;
      const gasPrice =
        tx.type === 2 ? (tx as { getEffectivePriorityFee(b: bigint): bigint }).getEffectivePriorityFee(baseFee) + baseFee : (tx as { gasPrice: bigint }).gasPrice;
      const sender = (await this.sm.getAccount(caller)) ?? new Account();
      sender.balance -= tx.gasLimit * gasPrice;
      sender.nonce += 1n;
      await journal.putAccount(caller, sender);
      (evm as unknown as { eip7928CallPostTargetOog: boolean }).eip7928CallPostTargetOog = false;
      await journal.checkpoint();
      let res;
      try {
        res = await evm.runCall({
          block,
          gasPrice,
          caller,
          gasLimit: tx.gasLimit - intrinsic,
          to: tx.to,
          value: tx.value,
          data: tx.data,
          skipNonceIncrement: true,
        });
      } catch (e) {
        await journal.revert();
        throw e;
      }
      await journal.commit();
      await journal.commit();
      return res.execResult;
    } catch (e) {
      await journal.revert();
      throw e;
    } finally {
      if (common.isActivatedEIP(2929)) journal.cleanJournal();
      this.sm.originalStorageCache.clear();
    }
  }
}

/** What an eth_call shows of a run: its return data and its VM error. */
export interface CallOutcome {
  returnValue: Uint8Array;
  exceptionError?: { error: string };
}

export interface SimCall {
  from?: Uint8Array;
  to?: Uint8Array;
  gas: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  data?: Uint8Array;
  accessList?: { address: Uint8Array; storageKeys: Uint8Array[] }[];
}

async function applyOverrides(sm: StateManagerInterface, overrides: StateOverrides): Promise<void> {
  for (const o of overrides) {
    const addr = new Address(o.address);
    const acct = (await sm.getAccount(addr)) ?? new Account();
    if (o.balance !== undefined) acct.balance = o.balance;
    if (o.nonce !== undefined) acct.nonce = o.nonce;
    await sm.putAccount(addr, acct);
    if (o.code !== undefined) await sm.putCode(addr, o.code);
    if (o.state !== undefined) {
      await sm.clearStorage(addr);
      for (const { slot, value } of o.state) await sm.putStorage(addr, setLengthLeft(slot, 32), value);
    }
    if (o.stateDiff !== undefined) {
      for (const { slot, value } of o.stateDiff) await sm.putStorage(addr, setLengthLeft(slot, 32), value);
    }
  }
}

/** geth's wording for VM errors. */
export function vmErrorText(err: string): string {
  switch (err) {
    case 'revert':
      return 'execution reverted';
    case 'out of gas':
      return 'out of gas';
    case 'invalid opcode':
      return 'invalid opcode';
    case 'stack underflow':
      return 'stack underflow';
    case 'stack overflow':
      return 'stack limit reached 1024 (1023)';
    case 'invalid JUMP':
      return 'invalid jump destination';
    case 'static state change':
      return 'write protection';
    default:
      return err;
  }
}

/** Decodes the reason of `Error(string)` revert data, if it is one. */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 68 || Buffer.from(data.subarray(0, 4)).toString('hex') !== '08c379a0') return undefined;
  try {
    const len = Number(BigInt('0x' + Buffer.from(data.subarray(36, 68)).toString('hex')));
    if (68 + len > data.length) return undefined;
    return Buffer.from(data.subarray(68, 68 + len)).toString('utf8');
  } catch {
    return undefined;
  }
}

/** A failed simulation as a domain error: `reverted` with the revert output, else executionFailed (geth's texts). */
export function simulationError(res: RunTxResult | { execResult: CallOutcome }): DomainError<'reverted' | 'executionFailed'> | undefined {
  const err = res.execResult.exceptionError;
  if (!err) return undefined;
  if (err.error === 'revert') {
    const data = res.execResult.returnValue;
    const reason = revertReason(data);
    return reverted(reason !== undefined ? `execution reverted: ${reason}` : 'execution reverted', data);
  }
  return executionFailed(vmErrorText(err.error));
}

export { bigIntToBytes };
