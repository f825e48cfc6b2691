/**
 * The contract between the trace host (hook.ts), which watches an ethereumjs EVM run, and the
 * tracers (struct logger, callTracer, prestateTracer, 4byteTracer, noopTracer, JS tracers), which
 * turn what they see into geth's output formats.
 *
 * Tracers produce their result in geth's wire form (hex strings, JSON objects) — like geth's
 * `GetResult() json.RawMessage`, the tracer output IS the answer, so it is formatted where it is made.
 */
import type { StateManagerInterface } from '@ethereumjs/common';

/** What the trace config of the debug_trace* methods carries, decoded. */
export interface TraceOptions {
  /** tracer name or JS expression; undefined = struct logger */
  tracer?: string;
  /** tracer-specific config (tracerConfig), as given */
  tracerConfig?: unknown;
  /** wall-clock budget in ms for one transaction (geth: per tx, default 5s) */
  timeoutMs: number;
  disableStack: boolean;
  disableStorage: boolean;
  enableMemory: boolean;
  enableReturnData: boolean;
  /** max struct log entries (0 = no limit) */
  limit: number;
  /**
   * set by the node, not the client: max characters of a result's JSON (json-rpc.trace-result-max-size;
   * 0/absent = unlimited). A JS tracer's result text is checked before it is parsed.
   */
  maxResultSize?: number;
  /**
   * set by the node, not the client: run `flatCallTracer` in its Parity rendering for the
   * `trace_*` methods (flatcall.ts)
   */
  parity?: boolean;
}

/** geth's defaultTraceTimeout */
export const DEFAULT_TRACE_TIMEOUT_MS = 5_000;

/** Where the traced transaction sits (absent for debug_traceCall). */
export interface TxPosition {
  blockHash: Uint8Array;
  txHash: Uint8Array;
  txIndex: number;
}

/** Facts about the transaction being traced, given to tracers at start. */
export interface TxEnv {
  from: Uint8Array;
  /** recipient; for a creation, the address being created */
  to: Uint8Array;
  isCreate: boolean;
  gasLimit: bigint;
  value: bigint;
  input: Uint8Array;
  /** effective tip per gas (what geth's JS ctx.gasPrice holds) */
  gasPrice: bigint;
  coinbase: Uint8Array;
  blockNumber: bigint;
  position: TxPosition | undefined;
  /** block-wide index of the first log this tx emits */
  firstLogIndex: number;
  /** state as the tx runs (reads see the tx's own writes) */
  state: StateManagerInterface;
  /** the address (0x hex) is a precompile active in this block (geth vm.ActivePrecompiles) */
  isPrecompile(address: string): boolean;
  /** EIP-7702 is active: a call to a delegated account runs its delegation target's code */
  delegations: boolean;
  /** the signers of a set-code tx's authorizations that recover (in list order), none for other types */
  authorities: Uint8Array[];
}

/** A call frame starts (geth OnEnter). depth 0 is the transaction's own frame. */
export interface FrameStart {
  depth: number;
  /** CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE, CREATE2, SELFDESTRUCT */
  type: string;
  from: Uint8Array;
  to: Uint8Array;
  input: Uint8Array;
  gas: bigint;
  /** undefined for STATICCALL */
  value: bigint | undefined;
}

/** A call frame ends (geth OnExit). */
export interface FrameEnd {
  depth: number;
  output: Uint8Array;
  gasUsed: bigint;
  /** geth's error text, undefined on success */
  error: string | undefined;
  /** the frame's state changes were rolled back */
  reverted: boolean;
}

/** The transaction ended (geth OnTxEnd); gasUsed is the receipt's. */
export interface TxEnd {
  gasUsed: bigint;
}

export interface EmittedLog {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
  /** block-wide log index */
  index: number;
}

/**
 * One opcode about to run (geth OnOpcode). The object is reused for every step: read it during
 * the callback, copy what you keep. Stack and memory are the interpreter's live storage.
 */
export interface Step {
  pc: number;
  op: number;
  /** gas left before the opcode */
  gas: bigint;
  /** gas the opcode costs (CALLs: including the gas handed to the callee, like geth) */
  cost: bigint;
  /** 1 for the transaction's own frame (geth) */
  depth: number;
  refund: bigint;
  /** live stack storage, bottom first; only the first `stackLength` items are valid */
  stack: bigint[];
  stackLength: number;
  /** live memory storage; only the first `memorySize` bytes are valid */
  memory: Uint8Array;
  memorySize: number;
  /** the executing account (storage context) */
  address: Uint8Array;
  caller: Uint8Array;
  callValue: bigint;
  callData: Uint8Array;
  returnData: Uint8Array;
  state: StateManagerInterface;
}

/** A tracer attached to one transaction run. Any callback may be async (the host awaits it). */
export interface Tracer {
  /** the host only pays for per-opcode callbacks when this is true */
  readonly wantsSteps: boolean;
  onTxStart?(env: TxEnv): void | Promise<void>;
  onEnter?(f: FrameStart): void | Promise<void>;
  onExit?(f: FrameEnd): void | Promise<void>;
  onStep?(s: Step): void | Promise<void>;
  /** the last step failed before it ran (geth logs such steps with their error) */
  onStepError?(depth: number, error: string): void | Promise<void>;
  /** an opcode failed while running (geth OnFault) */
  onFault?(s: Step, error: string): void | Promise<void>;
  onLog?(log: EmittedLog): void;
  onTxEnd?(r: TxEnd): void | Promise<void>;
  /** JSON-ready result in geth's format */
  result(): unknown | Promise<unknown>;
  /** frees what the tracer holds (JS sandbox) */
  dispose?(): void;
}

/** A tracer failed (bad config, JS error, timeout). The message is what the client sees. */
export class TraceError extends Error {}

export const TIMEOUT_MESSAGE = 'execution timeout';

export const RESULT_TOO_LARGE = 'trace result too large';
/** A result over json-rpc.trace-result-max-size (`size`, `limit`: characters of JSON). */
export class TraceResultTooLarge extends TraceError {
  constructor(size: number, limit: number) {
    super(`${RESULT_TOO_LARGE}: ${size} bytes, over the limit of ${limit} (json-rpc.trace-result-max-size)`);
  }
}

/** The trace ran past its deadline. */
export class TraceTimeout extends TraceError {
  constructor() {
    super(TIMEOUT_MESSAGE);
  }
}
