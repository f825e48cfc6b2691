/**
 * Domain errors: what went wrong, in the domain's words, with no wire numbers.
 *
 * Code below the surfaces (evm/, chain/, consensus/, store/, config/, keystore/) throws a
 * `DomainError` of one kind from `ErrorDetails`, carrying the kind's typed detail. Each surface maps
 * every kind exactly once to its own wire shape:
 *   - Surface A (Ethereum JSON-RPC, geth's codes and texts): src/evmrpc/errors.ts
 *   - Surface B (CometBFT RPC): src/cometrpc/errors.ts
 *   - CheckTx (ABCI codes and logs): the `txRejected` reasons, mapped in src/chain/checkcodes.ts
 * Those maps are typed `{ [K in ErrorKind]: … }`, so adding a kind here without mapping it on every
 * surface fails to compile. Nothing compares message texts: the kind and its detail say what it is.
 *
 * The message is the human text a client sees (geth's or CometBFT's where one exists); a surface
 * may add to it but never parses it.
 *
 * Anything thrown that is not a DomainError is a bug: each surface answers its "internal error"
 * and logs the stack.
 */

/** Why a transaction was refused by the pool or its checks (each has its own ABCI CheckTx code). */
export type TxRejectReason =
  /** the bytes are not a transaction (or the envelope is malformed / oversized) */
  | 'decode'
  /** the same transaction is already in the pool */
  | 'known'
  /** the pool is full and the tx does not pay enough to evict another */
  | 'poolFull'
  /** price too low: under the minimum gas price, the base fee, or the replacement bump */
  | 'underpriced'
  /** the nonce is below the account's */
  | 'nonceTooLow'
  /** the nonce is too far ahead (the sender's queue is full) */
  | 'nonceTooHigh'
  /** the sender cannot pay value + gas × price */
  | 'insufficientFunds'
  /** gas limit under the intrinsic gas, or over the block gas limit */
  | 'gas'
  /** wrong chain id, unsupported type, or another rule the tx breaks */
  | 'invalid';

/**
 * Which positional argument did not decode and why, so a codec of a nested field can word it again
 * (geth: `invalid argument N: <reason>`, and `json: cannot unmarshal … into Go struct field …`).
 */
export interface ArgumentProblem {
  readonly index: number;
  /** the reason, without the `invalid argument N: ` prefix */
  readonly reason: string;
  /** a JSON value of the wrong kind: Go's encoding/json names the kind found and the type wanted */
  readonly mismatch?: { readonly found: string; readonly goType: string };
  /** a `common/hexutil` decode error, which geth's JSON decoder wraps with the field it was in */
  readonly hexDecode?: boolean;
}

/** Every kind and the typed detail it carries (`undefined`: the message says it all). */
export interface ErrorDetails {
  /** A request value does not decode (bad hex, wrong type, missing/extra argument). geth: -32602 */
  invalidArgument: ArgumentProblem | undefined;
  /** The request decodes but asks for something inconsistent or disallowed. geth: -32000 */
  invalidRequest: undefined;
  /** No such method on this surface (or its namespace is disabled). */
  methodNotFound: { method: string };
  /** A private method without a valid token. */
  unauthorized: undefined;
  /** A block, header, transaction, filter or account that does not exist. */
  notFound: undefined;
  /** A configured cap or fixed bound was hit (blocks range, logs, filters, queue, batch …). */
  limitExceeded: undefined;
  /** The answer would exceed the size the node will send. geth: -32003 */
  resultTooLarge: undefined;
  /** EVM execution reverted; `data` is the revert output (may be empty). geth: 3 */
  reverted: { data: Uint8Array };
  /** EVM execution failed (out of gas, invalid opcode, …) or could not be applied. */
  executionFailed: undefined;
  /** A transaction was refused by the pool or its checks. */
  txRejected: { reason: TxRejectReason };
  /** A job ran past its time limit. */
  timeout: undefined;
  /** A transaction entered the pool but was not in a block within the wait its sender allowed (EIP-7966); `txHash` names it. */
  notIncluded: { txHash: Uint8Array };
  /** A job was abandoned by its client or by shutdown. */
  cancelled: undefined;
  /** The node cannot serve this now (busy, shutting down, no worker). */
  unavailable: undefined;
  /** The node does not do this (a feature or option it does not offer). */
  unsupported: undefined;
  /**
   * State or block history this node has removed (pruning, or from before its state-sync snapshot;
   * docs/abci.md "Pruning"). geth: -32000 for state, 4444 for history.
   */
  pruned: { what: 'state' | 'history' };
  /** Stored data or local files are unusable (bad key file, corrupt state …). */
  corrupt: undefined;
  /** A configuration value (flag, config file, genesis, home) is wrong; `key` names it. */
  badConfig: { key: string };
  /** eth_simulateV1 refused its input or one of its calls (types/simulate.ts names each reason). */
  simulateRejected: { reason: SimulateRejectReason };
}

/**
 * Why eth_simulateV1 stopped (geth internal/ethapi/errors.go gives each its own code): a call's
 * pre-check (nonce, base fee, intrinsic gas, funds, block gas, init code), the blocks' order, a
 * client limit, a malformed input, or anything else a call could not be applied for.
 */
export type SimulateRejectReason =
  | 'nonceTooLow'
  | 'nonceTooHigh'
  | 'baseFeeTooLow'
  | 'intrinsicGas'
  | 'insufficientFunds'
  | 'blockGasLimit'
  | 'blockNumberOrder'
  | 'blockTimestampOrder'
  | 'initCodeSize'
  | 'clientLimit'
  | 'invalidParams'
  | 'internal';

export type ErrorKind = keyof ErrorDetails;

export class DomainError<K extends ErrorKind = ErrorKind> extends Error {
  constructor(
    readonly kind: K,
    message: string,
    readonly detail: ErrorDetails[K],
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** narrows to one kind */
  is<T extends ErrorKind>(kind: T): this is DomainError<T> {
    return (this.kind as ErrorKind) === kind;
  }
}

/** Kinds whose detail is `undefined`. */
type PlainKind = { [K in ErrorKind]: ErrorDetails[K] extends undefined ? K : never }[ErrorKind];

/** A DomainError of a kind that carries no detail. */
export const domainError = <K extends PlainKind>(kind: K, message: string): DomainError<K> =>
  new DomainError(kind, message, undefined as ErrorDetails[K]);

export const invalidArgument = (message: string, problem?: ArgumentProblem): DomainError<'invalidArgument'> =>
  new DomainError('invalidArgument', message, problem);
export const invalidRequest = (message: string): DomainError<'invalidRequest'> => domainError('invalidRequest', message);
export const notFound = (message: string): DomainError<'notFound'> => domainError('notFound', message);
export const limitExceeded = (message: string): DomainError<'limitExceeded'> => domainError('limitExceeded', message);
export const unsupported = (message: string): DomainError<'unsupported'> => domainError('unsupported', message);
export const unavailable = (message: string): DomainError<'unavailable'> => domainError('unavailable', message);
export const txRejected = (reason: TxRejectReason, message: string): DomainError<'txRejected'> =>
  new DomainError('txRejected', message, { reason });
export const reverted = (message: string, data: Uint8Array): DomainError<'reverted'> => new DomainError('reverted', message, { data });
export const timeout = (message: string): DomainError<'timeout'> => domainError('timeout', message);
export const notIncluded = (message: string, txHash: Uint8Array): DomainError<'notIncluded'> => new DomainError('notIncluded', message, { txHash });
export const cancelled = (message: string): DomainError<'cancelled'> => domainError('cancelled', message);
export const executionFailed = (message: string): DomainError<'executionFailed'> => domainError('executionFailed', message);
export const resultTooLarge = (message: string): DomainError<'resultTooLarge'> => domainError('resultTooLarge', message);
export const pruned = (what: 'state' | 'history', message: string): DomainError<'pruned'> => new DomainError('pruned', message, { what });
export const corrupt = (message: string): DomainError<'corrupt'> => domainError('corrupt', message);
export const simulateRejected = (reason: SimulateRejectReason, message: string): DomainError<'simulateRejected'> =>
  new DomainError('simulateRejected', message, { reason });
export const badConfig = (key: string, message: string): DomainError<'badConfig'> => new DomainError('badConfig', message, { key });

/** A DomainError as plain data, for a worker thread's reply (structured clone keeps the detail). */
export interface DomainErrorData {
  readonly kind: ErrorKind;
  readonly message: string;
  readonly detail: unknown;
}

export const domainErrorData = (e: DomainError): DomainErrorData => ({ kind: e.kind, message: e.message, detail: e.detail });

/** The DomainError a worker thread's reply carried. */
export const fromDomainErrorData = (d: DomainErrorData): DomainError =>
  new DomainError(d.kind, d.message, d.detail as ErrorDetails[ErrorKind]);

/**
 * One surface's exhaustive map: a function per kind. Declaring a surface map with this type makes a
 * new kind without a mapping a compile error.
 */
export type ErrorMap<Out> = { [K in ErrorKind]: (e: DomainError<K>) => Out };

/** Applies an exhaustive map to a DomainError. */
export function mapDomainError<Out>(map: ErrorMap<Out>, e: DomainError): Out {
  return (map[e.kind] as (e: DomainError) => Out)(e);
}
