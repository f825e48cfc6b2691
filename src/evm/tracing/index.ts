/**
 * Tracing entry points: pick a tracer by name (geth's directory: native tracers, the bundled JS
 * tracers, else the string is JS code), and run transactions with it on an EvmRunner of the
 * caller's own (tracing replays state; it never shares the runner that makes blocks).
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, generateAddress, bigIntToBytes } from '@ethereumjs/util';
import { runTx, type RunTxResult } from '@ethereumjs/vm';
import type { FlatStateManager } from '../flatstate.js';
import type { StateManagerInterface } from '@ethereumjs/common';
import { checksumAddress } from '../../lib/address.js';
import { recordParentHash } from '../blockexec.js';
import type { At, BlockContext, EvmRunner } from '../runner.js';
import type { SimCall } from '../simulate.js';
import type { StateOverrides } from '../../types/query.js';
import type { DecodedTx } from '../tx.js';
import { authoritiesOfTx, effectiveTip } from '../tx.js';
import { CallTracer, parseCallTracerConfig } from './calltracer.js';
import { FlatCallTracer, parseFlatCallTracerConfig } from './flatcall.js';
import { FourByteTracer, NoopTracer } from './fourbyte.js';
import { TraceHost } from './hook.js';
import { JsTracer } from './js/host.js';
import { LEGACY_TRACERS } from './js/legacy.js';
import { MuxTracer, parseMuxConfig } from './mux.js';
import { PrestateTracer, parsePrestateConfig } from './prestate.js';
import { StructLogger } from './structlog.js';
import { SyncState } from './syncstate.js';
import { TraceError, TraceTimeout, type Tracer, type TraceOptions, type TxEnv, type TxPosition } from './types.js';

export * from './types.js';
export { LEGACY_TRACERS } from './js/legacy.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Builds the tracer `opts` names. Throws TraceError for unknown names and bad tracerConfig. */
async function createTracer(opts: TraceOptions, state: SyncState, deadline: number): Promise<Tracer> {
  const name = opts.tracer;
  if (name === undefined || name === '') return new StructLogger(opts);
  switch (name) {
    case 'callTracer':
      return new CallTracer(parseCallTracerConfig(opts.tracerConfig));
    case 'prestateTracer':
      return new PrestateTracer(parsePrestateConfig(opts.tracerConfig));
    case '4byteTracer':
      return new FourByteTracer();
    case 'noopTracer':
      return new NoopTracer();
    case 'flatCallTracer':
      return new FlatCallTracer(parseFlatCallTracerConfig(opts.tracerConfig), opts.parity === true);
    case 'muxTracer':
      return createMux(opts, state, deadline);
  }
  const legacy = LEGACY_TRACERS[name];
  if (legacy !== undefined) return JsTracer.create(legacy, opts.tracerConfig, state, deadline, opts.maxResultSize);
  if (IDENTIFIER.test(name)) throw new TraceError(`tracer not found: ${name}`);
  return JsTracer.create(name, opts.tracerConfig, state, deadline, opts.maxResultSize);
}

/** geth mux.go: one child per tracerConfig entry, each built like a top-level tracer */
async function createMux(opts: TraceOptions, state: SyncState, deadline: number): Promise<Tracer> {
  const names: string[] = [];
  const children: Tracer[] = [];
  try {
    for (const [name, tracerConfig] of parseMuxConfig(opts.tracerConfig)) {
      // geth's directory has no struct logger: an empty name is JS code that does not compile
      if (name === '') throw new TraceError('muxTracer: a tracer name is required');
      children.push(await createTracer({ ...opts, tracer: name, tracerConfig }, state, deadline));
      names.push(name);
    }
  } catch (e) {
    for (const c of children) c.dispose?.();
    throw e;
  }
  return new MuxTracer(names, children);
}

/** One tx's outcome in a block trace (geth's txTraceResult without the hash). */
export type TxTraceOutcome = { result: unknown } | { error: string };

/**
 * geth's text for a tx that fails the checks before execution (core/state_transition.go preCheck,
 * buyGas), from ethereumjs' message; other failures keep ethereumjs' first sentence.
 */
function precheckText(e: unknown, from: Uint8Array): string {
  const msg = e instanceof Error ? e.message : String(e);
  const nonce = /account has nonce of: (\d+) tx has nonce of: (\d+)/.exec(msg);
  if (nonce) {
    const [state, tx] = [BigInt(nonce[1]!), BigInt(nonce[2]!)];
    return `nonce too ${tx > state ? 'high' : 'low'}: address ${checksumAddress(from)}, tx: ${tx} state: ${state}`;
  }
  const funds = /(?:upfront|max) cost is: (\d+) and the sender's account \(.*?\) only has: (\d+)/.exec(msg);
  if (funds) return `insufficient funds for gas * price + value: address ${checksumAddress(from)} have ${funds[2]} want ${funds[1]}`;
  return msg.replace(/ \((?:vm hf|tx type)=[\s\S]*$/, '');
}

/** Runs transactions with tracers on a dedicated EvmRunner. Not re-entrant: callers serialize. */
export class TraceEngine {
  /** one tracer host per fork's EVM (evm/forks.ts); the rules of the block traced pick it */
  private readonly hosts = new Map<object, TraceHost>();
  private readonly state: SyncState;
  /**
   * A run aborted mid-transaction (timeout, hook error) leaves the state manager's checkpoints and
   * the EVM journal half-open: such an engine is not used again (the owner makes a new one).
   */
  broken = false;

  constructor(
    private readonly runner: EvmRunner<FlatStateManager>,
  ) {

    this.state = new SyncState(runner.sm);
  }

  /** the tracer host of the EVM of the rules selected now */
  private host(): TraceHost {
    const evm = this.runner.vm.evm;
    let h = this.hosts.get(evm);
    if (h === undefined) {
      h = new TraceHost(evm as never);
      this.hosts.set(evm, h);
    }
    return h;
  }

  /**
   * Replays `txs` (a committed block's, in order) on the parent's state `parent` and traces those whose index is
   * `traced` (all when undefined), stopping after it. A tracer failure is that tx's outcome; the
   * timeout covers the whole call and aborts it (TraceTimeout).
   */
  async traceBlock(
    parent: At,
    ctx: BlockContext,
    blockHash: Uint8Array,
    txs: DecodedTx[],
    opts: TraceOptions,
    traced?: number,
    /** a tx failing the pre-execution checks gets an error entry and the block goes on (geth); else the call fails */
    tolerant = false,
    /** changes the state before the first tx, as the block did (the dev cheats it applied) */
    prelude?: (sm: StateManagerInterface) => Promise<void>,
  ): Promise<TxTraceOutcome[]> {
    await this.runner.reset(parent);
    if (prelude) await prelude(this.runner.sm);
    const block = this.runner.ethBlock(ctx);
    // the block's EIP-2935 system write before its first tx, as its execution did (evm/blockexec.ts)
    await recordParentHash(this.runner, ctx);
    const out: TxTraceOutcome[] = [];
    let gasUsed = 0n;
    let logs = 0;
    const last = traced ?? txs.length - 1;
    // the timeout bounds the whole call (execution-apis: a block trace fails as a whole)
    const deadline = Date.now() + opts.timeoutMs;
    this.broken = true;
    for (let i = 0; i <= last; i++) {
      const d = txs[i]!;
      const run = () => runTx(this.runner.vm, { tx: d.tx, block, blockGasUsed: gasUsed, skipHardForkValidation: true });
      let res: RunTxResult;
      if (traced !== undefined && i !== traced) {
        res = await run();
      } else {
        const position: TxPosition = { blockHash, txHash: d.evm.hash, txIndex: i };
        const env = await this.txEnv(d.tx, d.evm.from, ctx, effectiveTip(d.evm, ctx.baseFee), position, logs);
        let traced1;
        try {
          traced1 = await this.traceOne(opts, env, deadline, run);
        } catch (e) {
          // runTx rolls its journal back when a check fails, so the block can go on
          if (!tolerant || e instanceof TraceError) throw e;
          out.push({ error: `tracing failed: ${precheckText(e, d.evm.from)}` });
          continue;
        }
        res = traced1.res;
        out.push(traced1.outcome);
      }
      gasUsed += res.totalGasSpent;
      logs += res.receipt.logs.length;
    }
    await this.runner.reset(parent);
    this.broken = false;
    return out;
  }

  /** debug_traceCall: the call on `root` (with overrides), like eth_call, traced. */
  async traceCall(root: At, ctx: BlockContext, call: SimCall, overrides: StateOverrides | undefined, opts: TraceOptions): Promise<unknown> {
    this.runner.useRulesAt(ctx.timestamp);
    await this.runner.reset(root);
    let outcome: TxTraceOutcome | undefined;
    const deadline = Date.now() + opts.timeoutMs;
    let tracer: Tracer | undefined;
    this.broken = true;
    try {
      tracer = await createTracer(opts, this.state, deadline);
      const t = tracer;
      let started = false;
      const res = await this.host().trace(t, deadline, 0, () =>
        this.runner.simulate(root, ctx, call, overrides, undefined, async (tx: TypedTransaction, block) => {
          const from = call.from ?? new Uint8Array(20);
          const env = await this.txEnv(tx, from, { ...ctx, baseFee: block.header.baseFeePerGas ?? 0n }, 0n, undefined, 0);
          await t.onTxStart?.(env);
          started = true;
        }, async (r) => {
          // before the call's changes are reverted: the prestate tracer's diff reads the state it left
          await t.onTxEnd?.({ gasUsed: r.totalGasSpent });
        }),
      );
      if (!started) throw new TraceError('call did not start');
      outcome = { result: await t.result() };
      await this.runner.reset(root);
      this.broken = false;
    } finally {
      tracer?.dispose?.();
    }
    return outcome.result;
  }

  private async traceOne(
    opts: TraceOptions,
    env: TxEnv,
    deadline: number,
    run: () => Promise<RunTxResult>,
  ): Promise<{ res: RunTxResult; outcome: TxTraceOutcome }> {
    let tracer: Tracer;
    try {
      tracer = await createTracer(opts, this.state, deadline);
    } catch (e) {
      if (e instanceof TraceTimeout || !(e instanceof TraceError)) throw e;
      return { res: await run(), outcome: { error: e.message } };
    }
    try {
      await tracer.onTxStart?.(env);
      const res = await this.host().trace(tracer, deadline, env.firstLogIndex, run);
      await tracer.onTxEnd?.({ gasUsed: res.totalGasSpent });
      try {
        return { res, outcome: { result: await tracer.result() } };
      } catch (e) {
        if (e instanceof TraceTimeout || !(e instanceof TraceError)) throw e;
        return { res, outcome: { error: e.message } };
      }
    } finally {
      tracer.dispose?.();
    }
  }

  private async txEnv(
    tx: TypedTransaction,
    from: Uint8Array,
    ctx: BlockContext,
    tip: bigint,
    position: TxPosition | undefined,
    firstLogIndex: number,
  ): Promise<TxEnv> {
    const isCreate = tx.to === undefined;
    let to: Uint8Array;
    if (isCreate) {
      const nonce = (await this.runner.sm.getAccount(new Address(from)))?.nonce ?? 0n;
      to = generateAddress(from, bigIntToBytes(nonce));
    } else {
      to = tx.to!.bytes;
    }
    const precompiles = this.runner.vm.evm.precompiles;
    return {
      from,
      to,
      isCreate,
      gasLimit: tx.gasLimit,
      value: tx.value,
      input: tx.data,
      gasPrice: tip,
      coinbase: ctx.coinbase,
      blockNumber: ctx.number,
      position,
      firstLogIndex,
      state: this.runner.sm,
      isPrecompile: (address) => precompiles.has(address.replace(/^0x/, '').toLowerCase()),
      delegations: this.runner.common.isActivatedEIP(7702),
      authorities: authoritiesOfTx(tx),
    };
  }
}
