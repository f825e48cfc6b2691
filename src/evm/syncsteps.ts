/**
 * Fast paths in ethereumjs' interpreter for the EVMs marked with `useSyncSteps`: the call workers'
 * (eth_call / eth_estimateGas) and the chain thread's block executor.
 *
 * Synchronous opcode steps. ethereumjs' interpreter
 * awaits an async `runStep` for every opcode (a promise and a microtask turn per opcode, even for ADD
 * or PUSH1). Most opcodes have neither a dynamic gas handler nor an async handler, so for an EVM marked
 * with `useSyncSteps` the interpreter loop runs a step synchronously and awaits only when something in
 * it is a promise (a dynamic gas handler — all of ethereumjs' are async functions —, an async opcode,
 * or a JUMP parked by the call scheduler). The work and its order are the library's own: jump analysis
 * at the first JUMP/JUMPI, base gas, invalid-opcode check, useGas, program counter, the pending
 * EIP-7928 post-target OOG, the handler, the access witness commit; a thrown EVMError ends the frame
 * (STOP without an error), anything else propagates.
 *
 * Anything the fast loop does not do runs the library's `run` for the whole frame: step listeners
 * (tracers), DEBUG, the profiler, EOF (EIP-3540) and the EIP-6800/7864 code-chunk charges, a resumed
 * program counter. The chain thread's block executor is marked too (chain/app.ts); tracing and
 * CheckTx's runner are not, so a traced replay of a block runs the library's loop and must agree.
 *
 * A frame's result without the merged run state. `EVM.runInterpreter` answers each frame with its
 * result plus `runState`, a fresh object merging the interpreter's run state, its result and its
 * environment (some 40 properties) — for a short call the costliest single thing in the frame (about
 * a third of a balanceOf), and read by nothing in ethereumjs or ferry. For a marked EVM the frame is
 * set up and answered as the library does, with `runState` the interpreter's own run state.
 *
 * MLOAD and MSTORE run ferry's handlers (evm/memwords.ts: the same effects, without the library's hex
 * conversions of the word).
 *
 * The Interpreter class is not exported by @ethereumjs/evm; its module is loaded by file URL next to
 * the package entry point (pinned version: 10.1.3), as evm/jumpdests.ts does.
 */

import { EVM } from '@ethereumjs/evm';
import { Account, createZeroAddress, type Address } from '@ethereumjs/util';
import { mload, mstore, type WordRunState } from './memwords.js';

interface OpInfo {
  code: number;
  feeBigInt: bigint;
  dynamicGas: boolean;
  isAsync: boolean;
  isInvalid: boolean;
}

interface OpEntry {
  opcodeInfo: OpInfo;
  opHandler: (runState: RunState, common: unknown) => unknown;
  gasHandler: (runState: RunState, gas: bigint, common: unknown) => bigint | Promise<bigint>;
}

interface RunState extends WordRunState {
  opCode: number;
  programCounter: number;
  code: Uint8Array;
  gasLeft: bigint;
  validJumps: Uint8Array;
  cachedPushes: unknown;
  shouldDoJumpAnalysis: boolean;
  eip7928PostTargetCallOog?: unknown;
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean;
  env: { accessWitness?: { commit(): void; revert(): void } };
}

interface Evm {
  DEBUG: boolean;
  events: { listenerCount(event: string): number };
  __ferrySyncSteps?: boolean;
}

interface Common {
  isActivatedEIP(eip: number): boolean;
}

interface Interp {
  _evm: Evm;
  _runState: RunState;
  common: Common;
  profilerOpts?: { enabled?: boolean };
  lookupOpInfo(op: number): OpEntry;
  useGas(amount: bigint, context: OpInfo): void;
  _getValidJumpDestinations(code: Uint8Array): { jumps: Uint8Array; pushes: unknown; opcodesCached: OpEntry[] };
}

interface RunResult {
  runState: RunState;
  exceptionError: object | undefined;
}

interface InterpreterProto {
  run(this: Interp, code: Uint8Array, opts?: { pc?: number }): Promise<RunResult>;
  __ferrySyncSteps?: true;
}

/** what EVM.runInterpreter reads of a message */
interface Message {
  to?: Address;
  caller?: Address;
  data?: Uint8Array;
  value?: bigint;
  code: Uint8Array;
  isStatic?: boolean;
  isCreate?: boolean;
  depth?: number;
  codeAddress?: Address;
  gasRefund: bigint;
  chargeCodeAccesses?: boolean;
  blobVersionedHashes?: Uint8Array[];
  accessWitness?: { commit(): void };
  createdAddresses?: Set<string>;
  selfdestruct?: Map<string, Uint8Array>;
  gasLimit: bigint;
}

interface FrameResult {
  logs: unknown[];
  returnValue?: Uint8Array;
  selfdestruct: Map<string, Uint8Array>;
  createdAddresses?: Set<string>;
}

interface EvmProto {
  runInterpreter(this: EvmThis, message: Message, opts?: { pc?: number; initialLogs?: unknown[] }): Promise<object>;
  _executeCall(this: EvmThis, message: CallMessage): Promise<{ execResult: object }>;
  __ferryFrames?: true;
}

/** what EVM._executeCall reads and changes of a message */
interface CallMessage extends Message {
  to: Address;
  caller: Address;
  value: bigint;
  data: Uint8Array;
  depth: number;
  delegatecall?: boolean;
  isCompiled?: boolean;
}

interface EvmThis extends Evm {
  common: Common;
  stateManager: { getAccount(a: Address): Promise<Account | undefined> };
  _reduceSenderBalance(account: Account, message: CallMessage): Promise<void>;
  _addToBalance(account: Account, message: CallMessage): Promise<void>;
  _loadCode(message: CallMessage): Promise<void>;
  runPrecompile(code: unknown, data: Uint8Array, gasLimit: bigint): Promise<{ executionGasUsed: bigint; gasRefund?: bigint }>;
  postMessageCleanup(): void;
  runInterpreter(message: Message, opts?: { pc?: number; initialLogs?: unknown[] }): Promise<object>;
  blockchain: unknown;
  journal: unknown;
  performanceLogger: unknown;
  _optsCached: { profiler?: { enabled?: boolean } };
  _tx: { gasPrice: bigint; origin?: Address };
  _block?: unknown;
}

type InterpreterClass = new (
  evm: object, sm: unknown, blockchain: unknown, env: object, gasLeft: bigint, journal: unknown, perf: unknown, profiler: unknown,
) => { _result: FrameResult; _env: object; run(code: Uint8Array, opts: object): Promise<RunResult> };

interface EvmErrorClass {
  new (error: string): { error: string };
  errorMessages: { INVALID_OPCODE: string; OUT_OF_GAS: string; STOP: string; REVERT: string; INVALID_EOF_FORMAT: string };
}

const MLOAD = 0x51;
const MSTORE = 0x52;
const JUMP = 0x56;
const JUMPI = 0x57;
const JUMPSUB = 0x5e;

/** Marks an EVM (a call worker's, the block executor's) to run its frames through the synchronous fast loop. */
export function useSyncSteps(evm: object): void {
  (evm as Evm).__ferrySyncSteps = true;
}

async function install(): Promise<void> {
  const entry = import.meta.resolve('@ethereumjs/evm');
  const mod = (await import(new URL('./interpreter.js', entry).href)) as { Interpreter?: { prototype: InterpreterProto } };
  const errors = (await import(new URL('./errors.js', entry).href)) as { EVMError: EvmErrorClass; EVMErrorTypeString: string };
  const eip7928 = (await import(new URL('./opcodes/EIP7928.js', entry).href)) as {
    consumeEip7928PostTargetCallOog(runState: RunState): void;
  };
  installFrames(mod.Interpreter as unknown as InterpreterClass | undefined, errors.EVMError);
  const proto = mod.Interpreter?.prototype;
  if (!proto || typeof proto.run !== 'function' || proto.__ferrySyncSteps) return;
  const { EVMError, EVMErrorTypeString } = errors;
  const consumeOog = eip7928.consumeEip7928PostTargetCallOog;
  const libraryRun = proto.run;
  // EOF and the code-chunk charges are left to the library (checked once per common)
  const unusual = new WeakMap<object, boolean>();
  const libraryOnly = (common: Common): boolean => {
    let v = unusual.get(common);
    if (v === undefined) {
      v = common.isActivatedEIP(3540) || common.isActivatedEIP(6800) || common.isActivatedEIP(7864);
      unusual.set(common, v);
    }
    return v;
  };

  /** the part of a step after its gas is known */
  const execute = (self: Interp, op: OpEntry, gas: bigint): Promise<void> | undefined => {
    const info = op.opcodeInfo;
    const rs = self._runState;
    if (info.isInvalid) throw new EVMError(EVMError.errorMessages.INVALID_OPCODE);
    self.useGas(gas, info);
    rs.programCounter++;
    if (rs.eip7928PostTargetCallOog !== undefined) consumeOog(rs);
    const out = info.code === MSTORE ? mstore(rs) : info.code === MLOAD ? mload(rs) : op.opHandler(rs, self.common);
    if (info.isAsync && out instanceof Promise) {
      return out.then(() => {
        rs.env.accessWitness?.commit();
      });
    }
    rs.env.accessWitness?.commit();
    return undefined;
  };

  /** one step: undefined when it ran to the end synchronously, else the promise of its end */
  const step = (self: Interp, op: OpEntry): Promise<void> | undefined => {
    const info = op.opcodeInfo;
    if (info.dynamicGas) {
      const gas = op.gasHandler(self._runState, info.feeBigInt, self.common);
      if (gas instanceof Promise) return gas.then((g) => execute(self, op, g));
      return execute(self, op, gas);
    }
    return execute(self, op, info.feeBigInt);
  };

  proto.run = async function (this: Interp, code: Uint8Array, opts: { pc?: number } = {}): Promise<RunResult> {
    const evm = this._evm;
    if (
      evm.__ferrySyncSteps !== true ||
      evm.DEBUG ||
      this.profilerOpts?.enabled === true ||
      evm.events.listenerCount('step') > 0 ||
      (opts.pc !== undefined && opts.pc !== 0) ||
      this._runState.programCounter !== 0 ||
      libraryOnly(this.common)
    ) {
      return libraryRun.call(this, code, opts);
    }
    const rs = this._runState;
    rs.code = code;
    let err: { error: string } | undefined;
    let table: OpEntry[] | undefined;
    while (rs.programCounter < rs.code.length) {
      const pc = rs.programCounter;
      let op: OpEntry;
      if (table === undefined) {
        const byte = rs.code[pc]!;
        // the jump analysis (cached per code: evm/jumpdests.ts) runs at the first JUMP/JUMPI, as the library's
        if (byte === JUMP || byte === JUMPI || byte === JUMPSUB) {
          const a = this._getValidJumpDestinations(rs.code);
          rs.validJumps = a.jumps;
          rs.cachedPushes = a.pushes;
          rs.shouldDoJumpAnalysis = false;
          table = a.opcodesCached;
        }
        rs.opCode = byte;
        op = this.lookupOpInfo(byte);
      } else {
        op = table[pc]!;
        rs.opCode = op.opcodeInfo.code;
      }
      try {
        const pending = step(this, op);
        if (pending !== undefined) await pending;
      } catch (e) {
        rs.env.accessWitness?.revert();
        if (!('errorType' in (e as object) && (e as { errorType: unknown }).errorType === EVMErrorTypeString)) throw e;
        if ((e as { error: string }).error !== EVMError.errorMessages.STOP) err = e as { error: string };
        break;
      }
    }
    if (err === undefined && rs.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && rs.gasLeft > 0n) {
      rs.gasLeft = 0n;
      err = new EVMError(EVMError.errorMessages.OUT_OF_GAS);
    }
    return { runState: rs, exceptionError: err };
  };
  proto.__ferrySyncSteps = true;
}

/** EVM.runInterpreter for marked EVMs: the library's frame, its result without the eager merged run state */
function installFrames(Interpreter: InterpreterClass | undefined, EVMError: EvmErrorClass): void {
  const { REVERT, INVALID_EOF_FORMAT } = EVMError.errorMessages;
  const proto = (EVM as unknown as { prototype: EvmProto }).prototype;
  if (!Interpreter || typeof proto.runInterpreter !== 'function' || proto.__ferryFrames) return;
  const libraryFrame = proto.runInterpreter;
  proto.runInterpreter = async function (this: EvmThis, message: Message, opts: { pc?: number; initialLogs?: unknown[] } = {}): Promise<object> {
    if (this.__ferrySyncSteps !== true || this._block === undefined || this._optsCached.profiler?.enabled === true) {
      return libraryFrame.call(this, message, opts);
    }
    const contract = (await this.stateManager.getAccount(message.to ?? createZeroAddress())) ?? new Account();
    const env = {
      address: message.to ?? createZeroAddress(),
      caller: message.caller ?? createZeroAddress(),
      callData: message.data ?? Uint8Array.from([0]),
      callValue: message.value ?? 0n,
      code: message.code,
      isStatic: message.isStatic ?? false,
      isCreate: message.isCreate ?? false,
      depth: message.depth ?? 0,
      gasPrice: this._tx.gasPrice,
      origin: this._tx.origin ?? message.caller ?? createZeroAddress(),
      block: this._block,
      contract,
      codeAddress: message.codeAddress,
      gasRefund: message.gasRefund,
      chargeCodeAccesses: message.chargeCodeAccesses,
      blobVersionedHashes: message.blobVersionedHashes ?? [],
      accessWitness: message.accessWitness,
      createdAddresses: message.createdAddresses,
      initialLogs: opts.initialLogs,
    };
    const interpreter = new Interpreter(
      this, this.stateManager, this.blockchain, env, message.gasLimit, this.journal, this.performanceLogger, this._optsCached.profiler,
    );
    if (message.selfdestruct) interpreter._result.selfdestruct = message.selfdestruct;
    if (message.createdAddresses) interpreter._result.createdAddresses = message.createdAddresses;
    const ran = await interpreter.run(message.code, opts);
    let result = interpreter._result;
    const rs = ran.runState;
    let gasUsed = message.gasLimit - rs.gasLeft;
    const err = ran.exceptionError as { error: string } | undefined;
    if (err) {
      // all gas is gone, except on REVERT
      if (err.error !== REVERT && err.error !== INVALID_EOF_FORMAT) gasUsed = message.gasLimit;
      result = { ...result, logs: [], selfdestruct: new Map(), createdAddresses: new Set() };
    }
    message.accessWitness?.commit();
    return {
      ...result,
      // the interpreter's own run state: the library's merged copy (run state + result + environment)
      // is what costs, and nothing reads it
      runState: rs,
      exceptionError: ran.exceptionError,
      gas: rs.gasLeft,
      executionGasUsed: gasUsed,
      gasRefund: (rs as { gasRefund?: bigint }).gasRefund,
      stateGasSpilled: (rs as { stateGasSpilled?: bigint }).stateGasSpilled,
      returnValue: result.returnValue ?? new Uint8Array(0),
    };
  };

  // EIPs whose rules live in _executeCall's branches the fast frame leaves out (checked once per common)
  const plainCalls = new WeakMap<object, boolean>();
  const plain = (common: Common): boolean => {
    let v = plainCalls.get(common);
    if (v === undefined) {
      v = ![6800, 7864, 2780, 7928, 7708, 8037].some((eip) => common.isActivatedEIP(eip));
      plainCalls.set(common, v);
    }
    return v;
  };
  const libraryCall = proto._executeCall;
  /**
   * EVM._executeCall for marked EVMs without the EIPs above, DEBUG or the profiler: the library's steps
   * (sender debit and recipient credit of the value, code load, precompile or interpreter, the
   * depth-0 cleanup) in its order, but the frame's message is copied with Object.assign instead of
   * the object spread `{ ...{ codeAddress }, ...message, gasLimit }`, which V8 (Node 20) runs through
   * a slow path costing some 20 µs a frame. Same own properties, same order, same values.
   */
  proto._executeCall = async function (this: EvmThis, message: CallMessage): Promise<{ execResult: object }> {
    if (this.__ferrySyncSteps !== true || this.DEBUG || this._optsCached.profiler?.enabled === true || !plain(this.common)) {
      return libraryCall.call(this, message);
    }
    const gasLimit = message.gasLimit;
    const account = (await this.stateManager.getAccount(message.caller)) ?? new Account();
    let errorMessage: unknown;
    if (!message.delegatecall) {
      try {
        await this._reduceSenderBalance(account, message);
      } catch (e) {
        errorMessage = e;
      }
    }
    const toAccount = (await this.stateManager.getAccount(message.to)) ?? new Account();
    if (!message.delegatecall) {
      try {
        await this._addToBalance(toAccount, message);
      } catch (e) {
        errorMessage = e;
      }
    }
    await this._loadCode(message);
    const code = message.code as Uint8Array | ((...a: unknown[]) => unknown) | undefined;
    if (!code || (typeof code !== 'function' && code.length === 0) || errorMessage !== undefined) {
      return {
        execResult: { gasRefund: message.gasRefund, executionGasUsed: message.gasLimit - gasLimit, exceptionError: errorMessage, returnValue: new Uint8Array(0), logs: undefined },
      };
    }
    let result: { executionGasUsed: bigint; gasRefund?: bigint };
    if (message.isCompiled) {
      result = await this.runPrecompile(message.code, message.data, gasLimit);
      result.gasRefund = message.gasRefund;
    } else {
      const frame = Object.assign({ codeAddress: message.codeAddress }, message, { gasLimit }) as Message;
      result = (await this.runInterpreter(frame, { initialLogs: undefined })) as { executionGasUsed: bigint };
    }
    if (message.depth === 0) this.postMessageCleanup();
    result.executionGasUsed += message.gasLimit - gasLimit;
    return { execResult: result };
  };
  proto.__ferryFrames = true;
}

await install();
