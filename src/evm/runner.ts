/**
 * A VM over its own state: the ethereumjs VM and state manager, the gate a run is held to (deadline and
 * scheduler, checked at every JUMP/JUMPI), the block objects of the heights it runs at, and how its
 * state moves between committed states (`RunnerState`: here the flat layer, docs/architecture.md "The
 * flat state layer"; the Merkle runner only tests use lives in test/helpers). What it runs is elsewhere:
 * blocks in evm/blockexec.ts, eth_call/estimates/traced calls in evm/simulate.ts; the methods of the
 * same names here only hand the runner to them.
 */
import { createBlock, type Block } from '@ethereumjs/block';
import type { Common, StateManagerInterface } from '@ethereumjs/common';
import { Address, setLengthLeft, type Account } from '@ethereumjs/util';
import { createVM, type RunTxResult, type VM } from '@ethereumjs/vm';
import { Lru } from '../lib/lru.js';
import type { FlatChange, FlatState } from '../store/flatstate.js';
import type { TrieDB } from '../store/triedb.js';
import type { BlockOverrides, StateOverrides } from '../types/query.js';
import { executeBlock, type ExecutedBlock } from './blockexec.js';
import { FlatStateManager, genesisState, type GenesisAccount } from './flatstate.js';
import './jumpdests.js';
import { ForkSchedule } from './forks.js';
import { simulate, simulateCall, type AfterRun, type BeforeRun, type CallOutcome, type SimCall } from './simulate.js';
import type { DecodedTx } from './tx.js';
import { EvmTimeoutError } from './vmerrors.js';

export interface BlockContext {
  number: bigint;
  timestamp: bigint;
  coinbase: Uint8Array;
  gasLimit: bigint;
  baseFee: bigint;
  mixHash: Uint8Array;
  /** BLOBBASEFEE's answer when a block override sets it (otherwise the header's excess blob gas decides) */
  blobBaseFee?: bigint;
  /** made by withBlockOverrides: a one-off context, not kept in the runner's block cache */
  overridden?: true;
}

/**
 * A block's context under a call's block overrides, field by field as geth's BlockOverrides.Apply
 * (go-ethereum internal/ethapi/override/override.go); `difficulty` has no effect after the merge.
 */
export function withBlockOverrides(ctx: BlockContext, o: BlockOverrides | undefined): BlockContext {
  if (o === undefined) return ctx;
  return {
    number: o.number ?? ctx.number,
    timestamp: o.time ?? ctx.timestamp,
    coinbase: o.feeRecipient ?? ctx.coinbase,
    gasLimit: o.gasLimit ?? ctx.gasLimit,
    baseFee: o.baseFeePerGas ?? ctx.baseFee,
    mixHash: o.prevRandao ?? ctx.mixHash,
    overridden: true,
    ...(o.blobBaseFee !== undefined ? { blobBaseFee: o.blobBaseFee } : ctx.blobBaseFee !== undefined ? { blobBaseFee: ctx.blobBaseFee } : {}),
  };
}

/** A committed state: its height (flat runners) and root (Merkle runners). */
export interface StateRef {
  height: bigint;
  root: Uint8Array;
}

/** Where a runner reads: a root (Merkle runners only) or a committed state. */
export type At = Uint8Array | StateRef;

export type BlockHashLookup = (n: bigint) => Uint8Array | undefined;

/** A block's `prelude`: changes the state before its first tx (the dev cheats: chain/cheats.ts). */
export type BlockPrelude = (sm: StateManagerInterface) => Promise<void>;

/** Block objects kept per runner (calls at recent heights). */
export const BLOCK_CONTEXT_CACHE_SIZE = 16;

const JUMP = 0x56;
const JUMPI = 0x57;

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

/** A state root and, for a flat runner, the change set the store writes with it (FlatState.write). */
export interface CommittedState {
  root: Uint8Array;
  change: FlatChange | undefined;
}

/** How a runner's state manager moves between committed states and commits what a block wrote. */
export interface RunnerState<S extends StateManagerInterface> {
  readonly sm: S;
  /** moves to a committed state for reads and runs (nothing to do when it is there and clean) */
  moveTo(at: At): Promise<void>;
  /** abandons whatever an unfinished block or run left and moves to `at` */
  reset(at: At): Promise<void>;
  /** moves to the parent state of a block about to execute */
  beginBlock(parent: At): Promise<void>;
  /** after the block's checkpoint is committed: the new state root (and change set) */
  endBlock(parent: At): Promise<CommittedState>;
  /** writes the genesis allocation into an empty state */
  applyGenesis(alloc: Map<string, GenesisAccount>): Promise<CommittedState>;
}

/** A committed state's height, for a runner that reads by height (the flat layer). */
function heightOf(at: At, what: string): number {
  if (at instanceof Uint8Array) throw new Error(what);
  return Number(at.height);
}

/** The flat layer's runner state: reads by key at a height; the trie is touched only for each block's root. */
class FlatRunnerState implements RunnerState<FlatStateManager> {
  constructor(
    readonly sm: FlatStateManager,
    /** receives the trie nodes and code of the blocks executed */
    private readonly db: TrieDB,
  ) {}

  async moveTo(at: At): Promise<void> {
    const height = heightOf(at, 'a flat runner reads at a height');
    if (this.sm.height !== height || this.sm.dirty > 0) this.sm.at(height);
  }

  async reset(at: At): Promise<void> {
    this.sm.at(heightOf(at, 'a flat runner reads at a height'));
  }

  async beginBlock(parent: At): Promise<void> {
    this.sm.at(heightOf(parent, 'a flat runner executes on a committed state'));
  }

  /** applies the journal to the trie at the parent's root; the trie nodes and code go to the TrieDB */
  async endBlock(parent: At): Promise<CommittedState> {
    const { root, change, codes } = this.sm.commitToTrie(this.db, (parent as StateRef).root);
    for (const [k, code] of codes) await this.db.put(Buffer.from(k).toString('hex'), code);
    return { root, change };
  }

  async applyGenesis(alloc: Map<string, GenesisAccount>): Promise<CommittedState> {
    this.sm.at(-1);
    const nodes: [Uint8Array, Uint8Array][] = [];
    const { root, change, codes } = genesisState(alloc, (h, enc) => nodes.push([h, enc]));
    for (const [k, v] of [...nodes, ...codes]) await this.db.put(Buffer.from(k).toString('hex'), v);
    return { root, change };
  }
}

/** A VM over its own state manager. Not re-entrant: callers serialize its use. */
export class EvmRunner<S extends StateManagerInterface = FlatStateManager> {
  private current: RunGate | undefined;
  /** this runner's own copies of JUMP/JUMPI's opcode info: async only while a gate may park the run */
  private readonly jumpInfos: { isAsync: boolean }[] = [];
  readonly sm: S;
  /** the VM of the rules selected last (ethBlock selects them by the block's timestamp: evm/forks.ts) */
  vm: VM;
  /** the fixed Common of those rules */
  common: Common;

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
    /** one VM per fork of the schedule, over the same state manager, by its Common */
    private readonly vms: ReadonlyMap<Common, VM>,
    readonly state: RunnerState<S>,
    readonly forks: ForkSchedule,
    private readonly blockHash: BlockHashLookup,
  ) {
    this.sm = state.sm;
    this.common = forks.allCommons()[0]!;
    this.vm = vms.get(this.common)!;
    for (const vm of vms.values()) this.patchJumps(vm);
  }

  /** the hash of a committed block (BLOCKHASH's source; EIP-2935's parent hash: evm/blockexec.ts) */
  async hashOf(n: bigint): Promise<Uint8Array> {
    const h = await this.blockHash(n);
    if (!h) throw new Error(`block ${n} not found`);
    return h;
  }

  /** every fork's EVM (for the hooks installed on each: sync steps, console.log, tracer hosts) */
  evms(): VM['evm'][] {
    return [...this.vms.values()].map((vm) => vm.evm);
  }

  /** Selects the rules a block with this timestamp runs under. */
  useRulesAt(timestamp: bigint): void {
    const common = this.forks.commonAt(timestamp);
    if (common === this.common) return;
    this.common = common;
    this.vm = this.vms.get(common)!;
  }

  private patchJumps(vm: VM): void {
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

  /** A runner reading the flat layer; `db` receives the trie nodes of the blocks it executes. */
  static async createFlat(rules: Common | ForkSchedule, flat: FlatState, db: TrieDB, hashOf: BlockHashLookup): Promise<EvmRunner<FlatStateManager>> {
    return EvmRunner.over(rules, new FlatRunnerState(new FlatStateManager(flat), db), hashOf);
  }

  /**
   * A runner over any runner state; BLOCKHASH reads `hashOf`. `rules`: a chain's fork schedule, or one
   * Common (the rules of every block, the same as a schedule of its fork alone).
   */
  static async over<T extends StateManagerInterface>(rules: Common | ForkSchedule, state: RunnerState<T>, hashOf: BlockHashLookup): Promise<EvmRunner<T>> {
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
    const forks = rules instanceof ForkSchedule ? rules : ForkSchedule.single(rules);
    const vms = new Map<Common, VM>();
    for (const common of forks.allCommons()) vms.set(common, await createVM({ common, stateManager: state.sm, blockchain: blockchain as never }));
    return new EvmRunner<T>(vms, state, forks, hashOf);
  }

  /** block contexts are immutable per height: calls at the same height share one Block object */
  private readonly blocks = new Lru<string, Block>(BLOCK_CONTEXT_CACHE_SIZE);
  /** whether blocks run plain value transfers without the EVM (evm/fasttransfer.ts; off: every tx through runTx, for tests) */
  fastTransfers = true;
  /** whether blocks run their other txs on revm where the addon is built (evm/revmtx.ts; off: runTx — app.toml block-engine = "ethereumjs", and tests) */
  revmTxs = true;

  /** the ethereumjs block of a context (blocks, calls and traced replays run in it) */
  ethBlock(ctx: BlockContext): Block {
    this.useRulesAt(ctx.timestamp);
    // a block override may change any field at the same height: such a context is built for its call alone,
    // so the cache key of the chain's own contexts stays cheap on every eth_call
    if (ctx.overridden) return this.makeBlock(ctx);
    const key = `${ctx.number}:${ctx.timestamp}:${ctx.baseFee}:${ctx.gasLimit}`;
    let b = this.blocks.get(key);
    if (!b) {
      b = this.makeBlock(ctx);
      this.blocks.set(key, b);
    }
    return b;
  }

  private makeBlock(ctx: BlockContext): Block {
    const block = createBlock(
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
    const blobBaseFee = ctx.blobBaseFee;
    // BLOBBASEFEE reads the header's blob gas price (ethereumjs evm interpreter getBlobBaseFee)
    if (blobBaseFee !== undefined) block.header.getBlobGasPrice = () => blobBaseFee;
    return block;
  }

  setRoot(at: At): Promise<void> {
    return this.state.moveTo(at);
  }

  /** Abandons the state of an unfinished block. */
  reset(at: At): Promise<void> {
    return this.state.reset(at);
  }

  /** the flat change set of the last applyGenesis (flat runners) */
  genesisChange: FlatChange | undefined;

  /** Writes the genesis allocation into an empty state and returns the root. */
  async applyGenesis(alloc: Map<string, GenesisAccount>): Promise<Uint8Array> {
    const { root, change } = await this.state.applyGenesis(alloc);
    if (change !== undefined) this.genesisChange = change;
    return root;
  }

  /** Executes txs in order on `parent` (evm/blockexec.ts). */
  executeBlock(parent: At, ctx: BlockContext, txs: DecodedTx[], prelude?: BlockPrelude): Promise<ExecutedBlock> {
    return executeBlock(this, parent, ctx, txs, prelude);
  }

  /** Runs a call as a whole tx, every change reverted (evm/simulate.ts). */
  simulate(root: At, ctx: BlockContext, call: SimCall, overrides?: StateOverrides, gate?: RunGate, beforeRun?: BeforeRun, afterRun?: AfterRun): Promise<RunTxResult> {
    return simulate(this, { at: root, ctx, call, overrides, gate }, beforeRun, afterRun);
  }

  /** eth_call: the return data and the error of a call (evm/simulate.ts). */
  simulateCall(root: At, ctx: BlockContext, call: SimCall, overrides?: StateOverrides, gate?: RunGate): Promise<CallOutcome> {
    return simulateCall(this, { at: root, ctx, call, overrides, gate });
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
}
