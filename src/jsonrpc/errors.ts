/**
 * THE one map from thrown values to JSON-RPC error objects (both surfaces).
 * A FerryError carries its own code/message/data; anything else is a bug: -32603 "internal error",
 * reported through the caller's onInternalError so the stack gets logged, and the server stays up.
 */
import { ErrorCode, FerryError } from '../lib/errors.js';

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export const INTERNAL_ERROR_MESSAGE = 'internal error';
/** Answer of a private-namespace method called without a valid auth token. */
export const UNAUTHORIZED_MESSAGE = 'unauthorized: this method requires a valid auth token';

/** Maps a thrown value; `onBug` is called for values that are not FerryErrors. */
export function toJsonRpcError(err: unknown, onBug?: (err: unknown) => void): JsonRpcError {
  if (err instanceof FerryError) {
    return err.data === undefined
      ? { code: err.code, message: err.message }
      : { code: err.code, message: err.message, data: err.data };
  }
  onBug?.(err);
  return { code: ErrorCode.internal, message: INTERNAL_ERROR_MESSAGE };
}

/** geth rpc error texts */
export const methodNotFound = (method: string): FerryError =>
  new FerryError(ErrorCode.methodNotFound, `the method ${method} does not exist/is not available`);
export const unauthorized = (): FerryError => new FerryError(ErrorCode.unauthorized, UNAUTHORIZED_MESSAGE);
