/**
 * Watches an ethereumjs EVM run on behalf of one tracer, translating what the interpreter does
 * into geth's tracing hooks (OnTxStart, OnEnter/OnExit, OnOpcode, OnLog, OnTxEnd).
 *
 * ethereumjs' public `step` event copies the stack and memory for every opcode and goes through an
 * async emitter: too slow for a 1M-gas struct log. The host instead replaces the interpreter's
 * internal step hook (`Interpreter.prototype._runStepHook`, pinned @ethereumjs/evm 10.1.3) with one
 * that hands the tracer a reused view of the live interpreter state; an EVM without an active
 * trace keeps the original behaviour. Call types, SELFDESTRUCT frames and logs come from wrappers
 * around those opcodes' handlers in this EVM's own opcode map; frame results from the
 * `beforeMessage` / `afterMessage` events.
 */
import type { EVM } from '@ethereumjs/evm';
import { Address, generateAddress, generateAddress2, bigIntToBytes, setLengthLeft } from '@ethereumjs/util';
import { vmErrorText } from '../vmerrors.js';
import { TraceTimeout, type FrameStart, type Step, type Tracer } from './types.js';

/** check the deadline every this many steps (a power of two) */
const DEADLINE_CHECK_STEPS = 1024;

export const OP = {
  STOP: 0x00,
  JUMP: 0x56,
  JUMPI: 0x57,
  SLOAD: 0x54,
  SSTORE: 0x55,
  LOG0: 0xa0,
  LOG4: 0xa4,
  CREATE: 0xf0,
  CALL: 0xf1,
  CALLCODE: 0xf2,
  RETURN: 0xf3,
  DELEGATECALL: 0xf4,
  CREATE2: 0xf5,
  STATICCALL: 0xfa,
  REVERT: 0xfd,
  SELFDESTRUCT: 0xff,
} as const;

const CALL_NAMES: Readonly<Record<number, string>> = {
  [OP.CREATE]: 'CREATE',
  [OP.CALL]: 'CALL',
  [OP.CALLCODE]: 'CALLCODE',
  [OP.DELEGATECALL]: 'DELEGATECALL',
  [OP.CREATE2]: 'CREATE2',
  [OP.STATICCALL]: 'STATICCALL',
};

/** errors geth reports on the step itself (raised before the opcode runs); others are faults */
const PRE_EXECUTION_ERRORS = new Set(['out of gas', 'stack underflow', 'stack overflow']);

// ---- the interpreter's step hook ------------------------------------------------------------

interface RunState {
  programCounter: number;
  opCode: number;
  stack: { _store: bigint[]; _len: number };
  memory: { _store: Uint8Array; read(offset: number, size: number): Uint8Array };
  gasRefund: bigint;
  returnBytes: Uint8Array;
  messageGasLimit?: bigint;
  stateManager: Step['state'];
  interpreter: InterpreterLike;
}
interface InterpreterLike {
  _runState: RunState;
  _env: { address: Address; caller: Address; callValue: bigint; callData: Uint8Array; depth: number; contract: { balance: bigint; nonce: bigint } };
  _evm: EVM;
  _result: { logs: [Uint8Array, Uint8Array[], Uint8Array][] };
}
type StepHook = (this: InterpreterLike, fee: bigint, gasLeft: bigint, memoryWords: bigint) => unknown;

const HOSTS = new WeakMap<object, TraceHost>();

const evmEntry = import.meta.resolve('@ethereumjs/evm');
const { Interpreter } = (await import(new URL('./interpreter.js', evmEntry).href)) as {
  Interpreter: { prototype: { _runStepHook: StepHook } };
};
const originalStepHook = Interpreter.prototype._runStepHook;
if (typeof originalStepHook !== 'function') throw new Error('@ethereumjs/evm: Interpreter._runStepHook not found');
Interpreter.prototype._runStepHook = function (fee, gasLeft, memoryWords) {
  const host = HOSTS.get(this._evm);
  if (host !== undefined && host.active) return host.onStep(this, fee, gasLeft, memoryWords);
  return originalStepHook.call(this, fee, gasLeft, memoryWords);
};

// ---- one active run ---------------------------------------------------------------------------

interface Message {
  caller: Address;
  to?: Address;
  value: bigint;
  data: Uint8Array;
  gasLimit: bigint;
  depth: number;
  salt?: Uint8Array;
}
interface MessageResult {
  createdAddress?: Address;
  execResult: { returnValue: Uint8Array; executionGasUsed: bigint; exceptionError?: { error: string } };
}

interface Pending {
  type: string;
  from: Uint8Array;
  to: Uint8Array | undefined;
  value: bigint | undefined;
}

interface Active {
  tracer: Tracer;
  deadline: number;
  steps: number;
  /** call-type facts of the CALL/CREATE opcode whose message is about to start */
  pending: Pending | undefined;
  /** per open frame: the log index at its start (restored when it reverts, like geth's journal) */
  frames: number[];
  logIndex: number;
  /** the first error raised inside a hook; aborts the run */
  failure: unknown;
  step: Step;
  lastStepDepth: number;
}

type OpEntry = { opHandler: (...a: any[]) => unknown; opcodeInfo: { isAsync: boolean } };

export class TraceHost {
  private run: Active | undefined;

  constructor(private readonly evm: EVM) {
    if (HOSTS.has(evm)) throw new Error('EVM already has a trace host');
    HOSTS.set(evm, this);
    const map = (evm as unknown as { _opcodeMap: Record<number, OpEntry> })._opcodeMap;
    for (const op of [OP.CREATE, OP.CALL, OP.CALLCODE, OP.DELEGATECALL, OP.CREATE2, OP.STATICCALL]) this.wrapCall(map[op]!, op);
    for (let op: number = OP.LOG0; op <= OP.LOG4; op++) this.wrapLog(map[op]!);
    for (const op of [OP.JUMP, OP.JUMPI]) this.wrapJump(map[op]!);
    this.wrapSelfdestruct(map[OP.SELFDESTRUCT]!);
  }

  get active(): boolean {
    return this.run !== undefined;
  }

  /**
   * Runs `exec` (one runTx on this host's EVM) with `tracer` attached. Throws TraceTimeout past
   * `deadline` (epoch ms), or the error a hook raised.
   */
  async trace<T>(tracer: Tracer, deadline: number, firstLogIndex: number, exec: () => Promise<T>): Promise<T> {
    if (this.run) throw new Error('trace host busy');
    const step = {} as Step;
    const run: Active = {
      tracer,
      deadline,
      steps: 0,
      pending: undefined,
      frames: [],
      logIndex: firstLogIndex,
      failure: undefined,
      step,
      lastStepDepth: 0,
    };
    const events = this.evm.events!;
    const guard = (fn: (x: any) => unknown) => (x: any, resolve?: (r?: unknown) => void) => {
      let p: unknown;
      try {
        p = run.failure === undefined ? fn(x) : undefined;
      } catch (e) {
        run.failure ??= e;
      }
      if (p instanceof Promise) p.then(() => resolve!(), (e) => ((run.failure ??= e), resolve!()));
      else resolve!();
    };
    const before = guard((m: Message) => this.onMessage(run, m));
    const after = guard((r: MessageResult) => this.onResult(run, r));
    const noop = () => {};
    events.on('beforeMessage', before);
    events.on('afterMessage', after);
    // ethereumjs only calls the step hook while a `step` listener exists (an await per opcode:
    // tracers without steps go without; their deadline is checked at every JUMP/JUMPI instead)
    if (tracer.wantsSteps) events.on('step', noop);
    this.run = run;
    try {
      const out = await exec();
      if (run.failure !== undefined) throw run.failure;
      return out;
    } catch (e) {
      throw run.failure ?? e;
    } finally {
      this.run = undefined;
      events.off('beforeMessage', before);
      events.off('afterMessage', after);
      events.off('step', noop);
    }
  }

  private checkDeadline(run: Active): void {
    if (run.failure !== undefined) throw run.failure;
    if (Date.now() > run.deadline) {
      run.failure = new TraceTimeout();
      throw run.failure;
    }
  }

  /** the replaced interpreter step hook */
  onStep(it: InterpreterLike, fee: bigint, gasLeft: bigint, memoryWords: bigint): unknown {
    const run = this.run!;
    if ((++run.steps & (DEADLINE_CHECK_STEPS - 1)) === 0 || run.failure !== undefined) this.checkDeadline(run);
    const tracer = run.tracer;
    if (!tracer.wantsSteps) return undefined;
    const rs = it._runState;
    const env = it._env;
    const s = run.step;
    const op = rs.opCode;
    s.pc = rs.programCounter;
    s.op = op;
    s.gas = gasLeft;
    s.cost =
      (op === OP.CALL || op === OP.CALLCODE || op === OP.DELEGATECALL || op === OP.STATICCALL) && rs.messageGasLimit !== undefined
        ? fee + rs.messageGasLimit
        : fee;
    s.depth = env.depth + 1;
    s.refund = rs.gasRefund;
    s.stack = rs.stack._store;
    s.stackLength = rs.stack._len;
    s.memory = rs.memory._store;
    s.memorySize = Number(memoryWords) * 32;
    s.address = env.address.bytes;
    s.caller = env.caller.bytes;
    s.callValue = env.callValue;
    s.callData = env.callData;
    s.returnData = rs.returnBytes;
    s.state = rs.stateManager;
    run.lastStepDepth = s.depth;
    return tracer.onStep!(s);
  }

  private async onMessage(run: Active, m: Message): Promise<void> {
    this.checkDeadline(run);
    const pending = run.pending;
    run.pending = undefined;
    let type: string;
    let from: Uint8Array;
    let to: Uint8Array | undefined;
    let value: bigint | undefined;
    if (m.depth === 0 || pending === undefined) {
      type = m.to ? 'CALL' : 'CREATE';
      from = m.caller.bytes;
      to = m.to?.bytes;
      value = m.value;
    } else {
      ({ type, from, to, value } = pending);
    }
    if (to === undefined) to = await createdAddress(this.evm, m);
    run.frames.push(run.logIndex);
    const start: FrameStart = { depth: m.depth, type, from, to, input: m.data, gas: m.gasLimit, value };
    await run.tracer.onEnter?.(start);
  }

  private async onResult(run: Active, r: MessageResult): Promise<void> {
    const depth = run.frames.length - 1;
    const logStart = run.frames.pop();
    const err = r.execResult.exceptionError;
    const error = err ? vmErrorText(err.error) : undefined;
    if (err && logStart !== undefined) run.logIndex = logStart;
    if (err && PRE_EXECUTION_ERRORS.has(err.error) && run.lastStepDepth === depth + 1 && run.tracer.onStepError) {
      await run.tracer.onStepError(depth + 1, error!);
    } else if (err && err.error !== 'revert' && run.lastStepDepth === depth + 1 && run.tracer.onFault) {
      await run.tracer.onFault(run.step, error!);
    }
    run.lastStepDepth = depth;
    await run.tracer.onExit?.({
      depth,
      output: r.execResult.returnValue,
      gasUsed: r.execResult.executionGasUsed,
      error,
      reverted: err !== undefined,
    });
  }

  // ---- opcode handler wrappers (no-ops unless a run is active) ---------------------------------

  private wrapCall(entry: OpEntry, op: number): void {
    const inner = entry.opHandler;
    const type = CALL_NAMES[op]!;
    if (!entry.opcodeInfo.isAsync) throw new Error(`@ethereumjs/evm: ${type} handler expected to be async`);
    entry.opHandler = (rs: RunState, common: unknown) => {
      const run = this.run;
      if (!run) return inner(rs, common);
      const st = rs.stack;
      const top = (i: number) => st._store[st._len - 1 - i]!;
      const env = rs.interpreter._env;
      const isCreate = op === OP.CREATE || op === OP.CREATE2;
      const pending: Pending = {
        type,
        from: env.address.bytes,
        to: isCreate ? undefined : setLengthLeft(bigIntToBytes(top(1) & ((1n << 160n) - 1n)), 20),
        value: isCreate || op === OP.CALL || op === OP.CALLCODE ? top(isCreate ? 0 : 2) : op === OP.DELEGATECALL ? env.callValue : undefined,
      };
      run.pending = pending;
      // ethereumjs returns 0 without a message when the depth limit or the balance forbids the call;
      // geth's tracers still see that frame (enter, then exit with the error and no gas used)
      const error =
        env.depth >= MAX_CALL_DEPTH
          ? 'max call depth exceeded'
          : op !== OP.DELEGATECALL && op !== OP.STATICCALL && env.contract.balance < (pending.value ?? 0n)
            ? 'insufficient balance for transfer'
            : undefined;
      if (error === undefined || (!run.tracer.onEnter && !run.tracer.onExit)) return inner(rs, common);
      const start = failedFrameStart(rs, op, pending);
      return (async () => {
        const out = await inner(rs, common);
        if (run.pending === pending) {
          run.pending = undefined;
          await run.tracer.onEnter?.(start);
          await run.tracer.onExit?.({ depth: start.depth, output: new Uint8Array(), gasUsed: 0n, error, reverted: true });
        }
        return out;
      })();
    };
  }

  private wrapLog(entry: OpEntry): void {
    const inner = entry.opHandler;
    entry.opHandler = (rs: RunState, common: unknown) => {
      const out = inner(rs, common);
      const run = this.run;
      if (run && run.tracer.onLog) {
        const logs = rs.interpreter._result.logs;
        const [address, topics, data] = logs[logs.length - 1]!;
        run.tracer.onLog({ address, topics, data, index: run.logIndex });
      }
      if (run) run.logIndex++;
      return out;
    };
  }

  private wrapJump(entry: OpEntry): void {
    const inner = entry.opHandler;
    entry.opHandler = (rs: RunState, common: unknown) => {
      const run = this.run;
      if (run && !run.tracer.wantsSteps && (++run.steps & (DEADLINE_CHECK_STEPS - 1)) === 0) this.checkDeadline(run);
      return inner(rs, common);
    };
  }

  private wrapSelfdestruct(entry: OpEntry): void {
    const inner = entry.opHandler;
    if (!entry.opcodeInfo.isAsync) throw new Error('@ethereumjs/evm: SELFDESTRUCT handler expected to be async');
    entry.opHandler = async (rs: RunState, common: unknown) => {
      const run = this.run;
      if (!run || (!run.tracer.onEnter && !run.tracer.onExit)) return inner(rs, common);
      const env = rs.interpreter._env;
      const st = rs.stack;
      const beneficiary = setLengthLeft(bigIntToBytes(st._store[st._len - 1]! & ((1n << 160n) - 1n)), 20);
      const balance = (await rs.stateManager.getAccount(env.address))?.balance ?? 0n;
      const depth = env.depth + 1;
      await run.tracer.onEnter?.({ depth, type: 'SELFDESTRUCT', from: env.address.bytes, to: beneficiary, input: new Uint8Array(), gas: 0n, value: balance });
      try {
        return await inner(rs, common);
      } finally {
        // ethereumjs ends the frame by throwing STOP from the handler
        await run.tracer.onExit?.({ depth, output: new Uint8Array(), gasUsed: 0n, error: undefined, reverted: false });
      }
    };
  }
}

/** EVM call depth limit (ethereumjs' `stackLimit` param, geth's params.CallCreateDepth) */
const MAX_CALL_DEPTH = 1024;

/**
 * The frame of a call or create that fails before entering the callee, read before the handler pops
 * its arguments: the gas it would get (with the value stipend), its input, the address it targets.
 */
function failedFrameStart(rs: RunState, op: number, p: Pending): FrameStart {
  const st = rs.stack;
  const top = (i: number) => st._store[st._len - 1 - i]!;
  const env = rs.interpreter._env;
  const mem = (offset: bigint, size: bigint) => (size === 0n ? new Uint8Array() : rs.memory.read(Number(offset), Number(size)));
  let input: Uint8Array;
  let to = p.to;
  let gas = rs.messageGasLimit ?? 0n;
  if (op === OP.CREATE || op === OP.CREATE2) {
    input = mem(top(1), top(2));
    to = op === OP.CREATE
      ? generateAddress(env.address.bytes, bigIntToBytes(env.contract.nonce))
      : generateAddress2(env.address.bytes, setLengthLeft(bigIntToBytes(top(3)), 32), input);
  } else if (op === OP.CALL || op === OP.CALLCODE) {
    input = mem(top(3), top(4));
    if ((p.value ?? 0n) !== 0n) gas += CALL_STIPEND;
  } else {
    input = mem(top(2), top(3));
  }
  return { depth: env.depth + 1, type: p.type, from: p.from, to: to!, input, gas, value: p.value };
}

/** gas added to a value-carrying CALL/CALLCODE */
const CALL_STIPEND = 2300n;

/** The address a CREATE/CREATE2 message creates (its sender's nonce is already raised). */
async function createdAddress(evm: EVM, m: Message): Promise<Uint8Array> {
  if (m.salt !== undefined) return generateAddress2(m.caller.bytes, m.salt, m.data);
  const acct = await evm.stateManager.getAccount(m.caller);
  const nonce = (acct?.nonce ?? 1n) - 1n;
  return generateAddress(m.caller.bytes, bigIntToBytes(nonce));
}

