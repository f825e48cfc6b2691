/**
 * Surface B's one error map: every DomainError kind → CometBFT's wire shape, and the codes and texts
 * of CometBFT's JSON-RPC envelope (rpc/jsonrpc/types/types.go).
 *
 * CometBFT's handlers return plain Go errors, and its server answers every one the same way:
 * `RPCInternalError` — -32603 "Internal error" with `data` = the error's text (rpc/jsonrpc/server
 * http_json_handler.go, http_uri_handler.go, ws_handler.go). So every kind a route can throw maps to
 * that shape, with the DomainError's message as `data`; the kind still says what happened (for logs
 * and for code that reads it), but CometBFT clients only ever see the text. A param that does not
 * decode is the one exception, and it depends on the transport, not the kind (paramErrorAnswer).
 *
 * A thrown value that is not a DomainError is a bug: -32603 with `data` "internal error" (no
 * library text reaches the client) and the stack is logged.
 */
import { DomainError, mapDomainError, type ErrorMap } from '../lib/errors.js';
import { INTERNAL_ERROR_MESSAGE } from '../jsonrpc/errors.js';

/** The JSON-RPC codes CometBFT's envelope uses (rpc/jsonrpc/types/types.go). */
export const CometCode = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** RPCServerError: a subscription's cancellation */
  server: -32000,
} as const;

/** The `message` CometBFT writes with each code. */
export const ErrorText = {
  parse: 'Parse error. Invalid JSON',
  invalidRequest: 'Invalid Request',
  methodNotFound: 'Method not found',
  invalidParams: 'Invalid params',
  internal: 'Internal error',
  server: 'Server error',
} as const;

/** One JSON-RPC error as CometBFT writes it; `data` '' is omitted on the wire. */
export interface CometWireError {
  code: number;
  message: string;
  data: string;
}

/** RPCInternalError(id, err): what a route's failure looks like, whatever its kind */
const internal = (e: DomainError): CometWireError => ({ code: CometCode.internal, message: ErrorText.internal, data: e.message });

/** Every kind → CometBFT's answer. A new kind in lib/errors.ts without an entry here does not compile. */
export const COMET_ERRORS: ErrorMap<CometWireError> = {
  invalidArgument: internal,
  invalidRequest: internal,
  methodNotFound: () => ({ code: CometCode.methodNotFound, message: ErrorText.methodNotFound, data: '' }),
  unauthorized: internal,
  notFound: internal,
  limitExceeded: internal,
  resultTooLarge: internal,
  reverted: internal,
  executionFailed: internal,
  txRejected: internal,
  timeout: internal,
  notIncluded: internal,
  cancelled: internal,
  unavailable: internal,
  unsupported: internal,
  pruned: internal,
  corrupt: internal,
  badConfig: internal,
  simulateRejected: internal,
};

/** What a bug (a thrown value that is not a DomainError) is answered with: no library text. */
export const BUG_ERROR: CometWireError = Object.freeze({ code: CometCode.internal, message: ErrorText.internal, data: INTERNAL_ERROR_MESSAGE });

/** The answer to a thrown value: a DomainError through the map, anything else a bug (`onBug` logs it). */
export function cometError(err: unknown, onBug: (err: unknown) => void): CometWireError {
  if (err instanceof DomainError) return mapDomainError(COMET_ERRORS, err);
  onBug(err);
  return BUG_ERROR;
}

/** No such route (or a WebSocket-only one over HTTP). */
export const methodNotFoundError = (method: string): CometWireError =>
  mapDomainError(COMET_ERRORS, new DomainError('methodNotFound', `${method}: ${ErrorText.methodNotFound}`, { method }));

/**
 * A param that does not decode (an `invalidArgument` thrown by a codec of params.ts): -32602
 * "Invalid params" over HTTP (URI and JSON-RPC), -32603 "Internal error" over WebSocket (its handler
 * wraps the conversion error in RPCInternalError), with the transport's prefix before Go's text.
 */
export function paramErrorAnswer(transport: 'json' | 'ws' | 'uri', e: DomainError<'invalidArgument'>): CometWireError {
  const prefix = transport === 'uri' ? 'error converting http params to arguments: ' : 'error converting json params to arguments: ';
  return transport === 'ws'
    ? { code: CometCode.internal, message: ErrorText.internal, data: prefix + e.message }
    : { code: CometCode.invalidParams, message: ErrorText.invalidParams, data: prefix + e.message };
}
