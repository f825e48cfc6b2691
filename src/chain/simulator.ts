/**
 * eth_call and eth_estimateGas: message calls on a committed state with an impersonated sender, every
 * change reverted. The node runs Simulators in worker threads (node/callpool.ts), so a heavy call never
 * stalls the RPC thread and calls use the spare core.
 */
import { formatDuration } from '../config/duration.js';
import { makeCommon } from '../evm/common.js';
import { EvmRunner, EvmTimeoutError, simulationError, type BlockContext, type SimCall, type SimOverrides } from '../evm/executor.js';
import { FerryError, ErrorCode } from '../lib/errors.js';
import type { Store } from '../store/store.js';
import { TrieDB } from '../store/triedb.js';
import type { Bytes, CallRequest } from '../types/chain.js';

/** eth_estimateGas stops when the bracket is within this ratio (geth: 1.5%). */
export const ESTIMATE_ERROR_RATIO = 0.015;

export type { CallRequest };

export interface SimulatorPort {
  call(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<Bytes>;
  estimateGas(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<bigint>;
}

export interface SimulatorOptions {
  chainId: bigint;
  hardfork: string;
  gasCap: bigint;
  /** wall-clock budget per call, ms (0 = none) */
  evmTimeoutMs: number;
}

/** geth's texts for a simulation that could not run: timeout, or a pre-execution check. */
function simulationFailure(e: unknown, timeoutMs: number): FerryError {
  if (e instanceof EvmTimeoutError) return new FerryError(ErrorCode.server, `execution aborted (timeout = ${formatDuration(timeoutMs)})`);
  if (e instanceof FerryError) return e;
  const msg = e instanceof Error ? e.message.split(' (')[0]! : String(e);
  return new FerryError(ErrorCode.server, msg);
}

export class Simulator implements SimulatorPort {
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: Store,
    private readonly runner: EvmRunner,
    private readonly opts: SimulatorOptions,
  ) {}

  static async create(store: Store, opts: SimulatorOptions): Promise<Simulator> {
    const common = makeCommon(opts.chainId, opts.hardfork);
    const runner = await EvmRunner.create(common, new TrieDB(store), (n) => store.evmBlock(n)?.header.hash);
    return new Simulator(store, runner, opts);
  }

  /** the runner is not re-entrant: one simulation at a time */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private header(n: bigint) {
    const b = this.store.evmBlock(n);
    if (!b) throw new FerryError(ErrorCode.server, 'header not found');
    return b.header;
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
    };
  }

  private deadline(): number {
    return this.opts.evmTimeoutMs > 0 ? Date.now() + this.opts.evmTimeoutMs : Infinity;
  }

  private gasCapFor(n: bigint): bigint {
    const blockGas = this.header(n).gasLimit;
    return this.opts.gasCap > 0n && this.opts.gasCap < blockGas ? this.opts.gasCap : blockGas;
  }

  call(req: CallRequest, n: bigint, overrides: SimOverrides | undefined): Promise<Bytes> {
    return this.exclusive(async () => {
      const root = this.header(n).stateRoot;
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
      const root = this.header(n).stateRoot;
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
}
