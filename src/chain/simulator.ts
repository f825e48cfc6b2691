/**
 * eth_call and eth_estimateGas: message calls on a committed state with an impersonated sender, every
 * change reverted. The node runs Simulators in worker threads (node/callpool.ts), so a heavy call never
 * stalls the RPC thread and calls use the spare core; each worker time-slices its calls
 * (node/callworker.ts), so a long one never holds up the others.
 */
import { attachConsoleLog } from '../evm/consolelog.js';
import { getActivePrecompiles } from '@ethereumjs/evm';
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, generateAddress } from '@ethereumjs/util';
import { checksumAddress } from '../lib/address.js';
import { formatDuration } from '../config/duration.js';
import { keccak256 } from '../evm/common.js';
import { ForkSchedule } from '../evm/forks.js';
import type { ForkTimes } from '../config/genesis.js';
import type { FlatStateManager } from '../evm/flatstate.js';
import { simulateBlocks } from '../evm/simblocks.js';
import type { SimBlockResult, SimulateRequest } from '../types/simulate.js';
import { EvmRunner, withBlockOverrides, type BlockContext, type RunGate } from '../evm/runner.js';
import type { CallOutcome, SimCall } from '../evm/simulate.js';
import { EvmTimeoutError, simulationError, vmErrorText } from '../evm/vmerrors.js';
import { overrideOf, type BlockOverrides, type StateOverrides } from '../types/query.js';
import { callFees } from '../evm/precheck.js';
import { AccessListTracer } from '../evm/tracing/accesslist.js';
import { useSyncSteps } from '../evm/syncsteps.js';
import { TraceHost } from '../evm/tracing/hook.js';
import { DomainError, cancelled, executionFailed, notFound, timeout, txRejected } from '../lib/errors.js';
import { TaskCancelled } from '../lib/slices.js';
import { FlatState } from '../store/flatstate.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import { blockHashLookup } from '../store/hashwindow.js';
import type { AccessListResult, Bytes, CallOrigin, CallRequest } from '../types/chain.js';
import { GethText } from '../lib/gethtexts.js';
import type { CallEngine } from '../config/options.js';
import { RevmCalls } from './revmcalls.js';

/** eth_estimateGas stops when the bracket is within this ratio (geth: 1.5%). */
export const ESTIMATE_ERROR_RATIO = 0.015;
/** params.TxGas: the gas of a plain value transfer */
const TX_GAS = 21_000n;
/** params.CallStipend, part of geth's optimistic first guess */
const CALL_STIPEND = 2_300n;

export type { CallOrigin, CallRequest };

export interface SimulatorPort {
  /** `block`: geth's block overrides (the 4th param of eth_call and eth_estimateGas) */
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<Bytes>;
  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin, block?: BlockOverrides): Promise<bigint>;
  /** `req.gas` is always set (the handler applies geth's CallDefaults) */
  createAccessList(req: CallRequest & { gas: bigint }, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin): Promise<AccessListResult>;
}

export interface SimulatorOptions {
  chainId: bigint;
  hardfork: string;
  /** the chain's later forks by block time (evm/forks.ts) */
  forkTimes?: ForkTimes;
  gasCap: bigint;
  /** wall-clock budget per call, ms (0 = none) */
  evmTimeoutMs: number;
  /** the engine of plain eth_calls (chain/revmcalls.ts); default ethereumjs */
  callEngine?: CallEngine;
}

/** Idle EVMs a Simulator keeps for the next calls (more are made while more calls run at once). */
export const IDLE_RUNNERS_KEPT = 4;

/**
 * A simulation that could not run: the timeout, a cancelled task, or one of ours (geth's pre-check
 * texts come from evm/precheck.ts). Anything else is a bug and is thrown as it is: the RPC layer
 * answers -32603 "internal error" and logs it, so a library's message never reaches a client.
 */
function simulationFailure(e: unknown, timeoutMs: number): DomainError {
  if (e instanceof EvmTimeoutError) return timeout(`execution aborted (timeout = ${formatDuration(timeoutMs)})`);
  if (e instanceof TaskCancelled) return cancelled(e.message);
  if (e instanceof DomainError) return e;
  throw e;
}

/** eth_call's answer: the return data, or the call's failure as geth words it */
function callResult(res: CallOutcome): Bytes {
  const err = simulationError({ execResult: res });
  if (err) throw err;
  return res.returnValue;
}

/** geth's estimator raises the gas on these (execute: ErrIntrinsicGas, ErrFloorDataGas) */
const raisesGas = (e: unknown): boolean => e instanceof DomainError && e.is('txRejected') && e.detail.reason === 'gas';

/**
 * Runs simulations, each on an EVM of its own (so runs may be interleaved by a scheduler: see
 * node/callworker.ts); the EVMs share the store's trie-node cache.
 */
export class Simulator {
  private readonly idle: EvmRunner<FlatStateManager>[] = [];
  /** watches a runner's EVM for eth_createAccessList (made at its first one) */
  private readonly hosts = new WeakMap<object, TraceHost>();
  /** BLOCKHASH: the stored blocks, then the window a state-synced or pruned home keeps (store/hashwindow.ts) */
  private readonly hashOf: (n: bigint) => Uint8Array | undefined;

  private constructor(
    private readonly store: Store,
    private readonly db: TrieDB,
    private readonly flat: FlatState,
    private readonly opts: SimulatorOptions,
    private readonly onConsoleLog?: (line: string) => void,
  ) {
    this.hashOf = blockHashLookup(store);
  }

  /** `onConsoleLog`: each Solidity console.log of the calls (evm/consolelog.ts) */
  static async create(store: Store, opts: SimulatorOptions, onConsoleLog?: (line: string) => void): Promise<Simulator> {
    const sim = new Simulator(store, new TrieDB(store), new FlatState(store), opts, onConsoleLog);
    sim.engine();
    sim.idle.push(await sim.newRunner());
    return sim;
  }

  /**
   * A dev revert rewound the chain to `height`: blocks and state cached by height are dropped, and
   * the idle EVMs (whose state managers remember reads by height) are replaced; runs in progress
   * finish on what they read.
   */
  rewound(height: bigint): void {
    this.store.forgetCaches();
    this.flat.forget(Number(height));
    this.idle.length = 0;
    this.generation++;
  }

  /** plain eth_calls go to revm when it is the engine and its addon loaded */
  private revm: RevmCalls | undefined;

  /** which engine answers plain eth_calls, and why (logged at start by the call pool) */
  engine(): string {
    if (this.opts.callEngine !== 'revm') return 'ethereumjs';
    if (this.revm !== undefined) return 'revm';
    const why = RevmCalls.create(this.flat, this.hashOf, this.opts, this.opts.chainId, this.onConsoleLog);
    if (typeof why !== 'string') {
      this.revm = why;
      return 'revm';
    }
    return `ethereumjs (revm asked for, but ${why})`;
  }

  /** bumped by each rewind: a runner busy across one is not kept */
  private generation = 0;

  private async newRunner(): Promise<EvmRunner<FlatStateManager>> {
    const forks = new ForkSchedule(this.opts.chainId, this.opts);
    const runner = await EvmRunner.createFlat(forks, this.flat, this.db.view(), this.hashOf);
    for (const evm of runner.evms()) {
      if (this.onConsoleLog) attachConsoleLog(evm as never, this.onConsoleLog);
      useSyncSteps(evm);
    }
    return runner;
  }

  /** fn on an EVM no other run is using */
  private async withRunner<T>(fn: (runner: EvmRunner<FlatStateManager>) => Promise<T>): Promise<T> {
    const runner = this.idle.pop() ?? (await this.newRunner());
    const generation = this.generation;
    try {
      return await fn(runner);
    } finally {
      if (this.idle.length < IDLE_RUNNERS_KEPT && generation === this.generation) this.idle.push(runner);
    }
  }

  /** the gate of a call without one of its own: its deadline from now */
  private defaultGate(): RunGate {
    return { deadline: this.opts.evmTimeoutMs > 0 ? Date.now() + this.opts.evmTimeoutMs : Infinity };
  }

  private header(n: bigint) {
    const b = this.store.evmBlock(n);
    if (!b) throw notFound(GethText.headerNotFound);
    return b.header;
  }

  private stateRef(n: bigint) {
    return { height: n, root: this.header(n).stateRoot };
  }

  private blockContext(n: bigint): BlockContext {
    const h = this.header(n);
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
      authorizationList: req.authorizationList,
    };
  }

  private gasCapFor(ctx: BlockContext): bigint {
    const blockGas = ctx.gasLimit;
    return this.opts.gasCap > 0n && this.opts.gasCap < blockGas ? this.opts.gasCap : blockGas;
  }

  /** eth_call; `gate` holds it to its deadline and its scheduler's turns (default: evm-timeout from now) */
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined, gate: RunGate = this.defaultGate(), block?: BlockOverrides): Promise<Bytes> {
    const cap = this.opts.gasCap > 0n ? this.opts.gasCap : 2n ** 63n - 1n;
    const gas = req.gas === undefined ? cap : req.gas < cap ? req.gas : cap;
    // a plain call (no overrides) may go to revm, without taking an ethereumjs EVM from the pool; what
    // revm does not take runs on ethereumjs
    if (this.revm !== undefined && overrides === undefined && block === undefined) {
      try {
        const res = this.revm.call(n, this.blockContext(n), this.simCall(req, gas), gate.deadline);
        if (res !== undefined) return Promise.resolve(callResult(res));
      } catch (e) {
        return Promise.reject(e instanceof EvmTimeoutError ? simulationFailure(e, this.opts.evmTimeoutMs) : e);
      }
    }
    return this.withRunner(async (runner) => {
      const root = this.stateRef(n);
      let res;
      try {
        res = await runner.simulateCall(root, withBlockOverrides(this.blockContext(n), block), this.simCall(req, gas), overrides, gate);
      } catch (e) {
        throw simulationFailure(e, this.opts.evmTimeoutMs);
      }
      return callResult(res);
    });
  }

  estimateGas(
    req: CallRequest,
    n: bigint,
    overrides: StateOverrides | undefined,
    gate: RunGate = this.defaultGate(),
    block?: BlockOverrides,
  ): Promise<bigint> {
    return this.withRunner(async (runner) => {
      const root = this.stateRef(n);
      // geth's estimator runs under the overridden header, its gas limit included
      const ctx = withBlockOverrides(this.blockContext(n), block);
      let hi = req.gas !== undefined && req.gas >= 21000n ? req.gas : this.gasCapFor(ctx);
      // geth's estimator: the fee cap of the message (ToMessage); a priced call is capped by what the
      // sender can pay after the value, and a value the sender cannot leave a wei beside fails here
      const feeCap = callFees(req, ctx.baseFee).feeCap;
      if (feeCap > 0n) {
        const from = req.from ?? new Uint8Array(20);
        // an overridden balance (a state override, or a pending dev cheat such as anvil_setBalance) is what the call sees
        const bal = overrideOf(overrides, from)?.balance ?? (await runner.account(root, from))?.balance ?? 0n;
        const value = req.value ?? 0n;
        if (value >= bal) throw txRejected('insufficientFunds', 'insufficient funds for transfer');
        const allowance = (bal - value) / feeCap;
        if (allowance < hi) hi = allowance;
      }
      if (this.opts.gasCap > 0n && hi > this.opts.gasCap) hi = this.opts.gasCap;
      // Osaka: no tx may ask for more than EIP-7825's cap (go-ethereum eth/gasestimator/gasestimator.go)
      runner.useRulesAt(ctx.timestamp);
      if (runner.common.isActivatedEIP(7825)) {
        const txCap = runner.common.param('maxTransactionGasLimit');
        if (hi > txCap) hi = txCap;
      }
      const run = (gas: bigint) => runner.simulate(root, ctx, this.simCall(req, gas), overrides, gate);
      const ok = async (gas: bigint) => {
        try {
          return !(await run(gas)).execResult.exceptionError;
        } catch (e) {
          if (raisesGas(e)) return false;
          throw simulationFailure(e, this.opts.evmTimeoutMs);
        }
      };
      // geth: a plain value transfer to an account without code is tried at 21000 first
      if ((req.data === undefined || req.data.length === 0) && req.to !== undefined) {
        const overridden = overrideOf(overrides, req.to)?.code;
        const code = overridden ?? (await runner.code(root, req.to));
        if (code.length === 0 && (await ok(TX_GAS))) return TX_GAS;
      }
      let first;
      try {
        first = await run(hi);
      } catch (e) {
        if (raisesGas(e)) throw executionFailed(`gas required exceeds allowance (${hi})`);
        throw simulationFailure(e, this.opts.evmTimeoutMs);
      }
      const firstErr = simulationError(first);
      if (firstErr) {
        if (firstErr.is('reverted')) throw firstErr;
        throw executionFailed(`gas required exceeds allowance (${hi})`);
      }
      let lo = first.totalGasSpent - 1n;
      // geth's optimistic limit: most txs succeed with (used + refund + call stipend) * 64/63
      const guess = ((first.totalGasSpent + (first.gasRefund ?? 0n) + CALL_STIPEND) * 64n) / 63n;
      if (guess < hi) {
        if (await ok(guess)) hi = guess;
        else lo = guess;
      }
      while (lo + 1n < hi) {
        if (Number(hi - lo) / Number(hi) < ESTIMATE_ERROR_RATIO) break;
        // geth bisects skewed to the low side: most txs need little more than they used
        let mid = (lo + hi) / 2n;
        if (mid > lo * 2n) mid = lo * 2n;
        if (await ok(mid)) hi = mid;
        else lo = mid;
      }
      return hi;
    });
  }

  /**
   * eth_simulateV1 on the state of block `n` (evm/simblocks.ts); `pre`: state put under the first
   * block's overrides (the pending dev cheats). All calls together get the RPC gas cap.
   */
  simulateV1(req: SimulateRequest, n: bigint, pre: StateOverrides | undefined, gate: RunGate = this.defaultGate()): Promise<SimBlockResult[]> {
    return this.withRunner(async (runner) => {
      const base = { at: this.stateRef(n), header: this.header(n) };
      try {
        return await simulateBlocks(runner, { base, req, chainId: this.opts.chainId, gasCap: this.opts.gasCap, preOverrides: pre, gate });
      } catch (e) {
        throw simulationFailure(e, this.opts.evmTimeoutMs);
      }
    });
  }

  /**
   * eth_createAccessList, as geth's AccessList: run the call with the access-list tracer, starting
   * from the given list, and again with what it collected, until a run adds nothing; answer that
   * list with the last run's gas and VM error. Sender, recipient (or the created address) and the
   * active precompiles are never added as accounts.
   */
  createAccessList(
    req: CallRequest & { gas: bigint },
    n: bigint,
    overrides: StateOverrides | undefined,
    gate: RunGate = this.defaultGate(),
  ): Promise<AccessListResult> {
    return this.withRunner(async (runner) => {
      const root = this.stateRef(n);
      const ctx = this.blockContext(n);
      const from = req.from ?? new Uint8Array(20);
      const override = overrideOf(overrides, from);
      const account = await runner.account(root, from);
      const nonce = req.nonce ?? override?.nonce ?? account?.nonce ?? 0n;
      const to = req.to ?? generateAddress(from, bigIntToUnpaddedBytes(nonce));
      const exclude = new Set<string>([hexOf(from), hexOf(to), ...getActivePrecompiles(runner.vm.common).keys()]);
      const feeCap = req.maxFeePerGas ?? req.gasPrice ?? 0n;
      // geth's buyGas check, with its text (the run below would fail it in ethereumjs' words)
      const balance = override?.balance ?? account?.balance ?? 0n;
      const want = req.gas * feeCap + (req.value ?? 0n);
      if (feeCap > 0n && balance < want) {
        throw this.applyFailure(req, nonce, `insufficient funds for gas * price + value: address ${checksumAddress(from)} have ${balance} want ${want}`);
      }
      runner.useRulesAt(ctx.timestamp);
      let host = this.hosts.get(runner.vm.evm);
      if (host === undefined) {
        host = new TraceHost(runner.vm.evm as never);
        this.hosts.set(runner.vm.evm, host);
      }
      let prev = new AccessListTracer(req.accessList ?? [], exclude);
      for (;;) {
        const accessList = prev.accessList();
        const tracer = new AccessListTracer(accessList, exclude);
        let res;
        try {
          res = await host.trace(tracer, Infinity, 0, () =>
            runner.simulate(root, ctx, { ...this.simCall(req, req.gas), accessList }, overrides, gate),
          );
        } catch (e) {
          if (e instanceof EvmTimeoutError) throw simulationFailure(e, this.opts.evmTimeoutMs);
          throw this.applyFailure(req, nonce, simulationFailure(e, this.opts.evmTimeoutMs).message);
        }
        if (tracer.equal(prev)) {
          const err = res.execResult.exceptionError;
          return { accessList, gasUsed: res.totalGasSpent, vmError: err ? vmErrorText(err.error) : undefined };
        }
        prev = tracer;
      }
    });
  }

  /** geth: `failed to apply transaction: <hash of the args as an unsigned legacy tx> err: <reason>` */
  private applyFailure(req: CallRequest & { gas: bigint }, nonce: bigint, reason: string): DomainError<'executionFailed'> {
    const unsigned = RLP.encode([
      bigIntToUnpaddedBytes(nonce),
      bigIntToUnpaddedBytes(req.gasPrice ?? 0n),
      bigIntToUnpaddedBytes(req.gas),
      req.to ?? new Uint8Array(),
      bigIntToUnpaddedBytes(req.value ?? 0n),
      req.data ?? new Uint8Array(),
      new Uint8Array(),
      new Uint8Array(),
      new Uint8Array(),
    ]);
    return executionFailed(`failed to apply transaction: 0x${hexOf(keccak256(unsigned))} err: ${reason}`);
  }
}

function hexOf(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}
