/**
 * The JSON-RPC 2.0 envelope's own error codes, and the one function that turns a thrown value into
 * a JSON-RPC error object. What a domain error means on the wire is decided by the surface's
 * exhaustive map (Surface A: src/evmrpc/errors.ts), which the caller passes in; anything that is not
 * a DomainError is a bug: -32603 "internal error", reported through `onBug` so the stack gets
 * logged, and the server stays up.
 */
import { DomainError, mapDomainError, type ErrorMap } from '../lib/errors.js';

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A surface's map from every domain error kind to its JSON-RPC error object. */
export type JsonRpcErrorMap = ErrorMap<JsonRpcError>;

/** The codes JSON-RPC 2.0 itself defines (the envelope's errors, the same on both surfaces). */
export const JsonRpcCode = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** geth rpc/errors.go errcodeTimeout: the answer was due (http-timeout) before the handler had one */
  timeout: -32002,
} as const;

export const INTERNAL_ERROR_MESSAGE = 'internal error';
/** geth rpc/errors.go errMsgTimeout */
export const REQUEST_TIMED_OUT_MESSAGE = 'request timed out';
/** Answer of a private-namespace method called without a valid auth token. */
export const UNAUTHORIZED_MESSAGE = 'unauthorized: this method requires a valid auth token';

/**
 * Maps a thrown value with the surface's exhaustive `map`; `onBug` is called for values that are not
 * domain errors (bugs), which answer -32603 "internal error" with no library text.
 */
export function toJsonRpcError(err: unknown, onBug: ((err: unknown) => void) | undefined, map: JsonRpcErrorMap): JsonRpcError {
  if (err instanceof DomainError) return mapDomainError(map, err);
  onBug?.(err);
  return { code: JsonRpcCode.internal, message: INTERNAL_ERROR_MESSAGE };
}

/** geth rpc error texts */
export const methodNotFound = (method: string): DomainError<'methodNotFound'> =>
  new DomainError('methodNotFound', `the method ${method} does not exist/is not available`, { method });
export const unauthorized = (): DomainError<'unauthorized'> => new DomainError('unauthorized', UNAUTHORIZED_MESSAGE, undefined);
