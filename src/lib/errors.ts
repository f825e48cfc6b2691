/**
 * The one error base class. Anything thrown that is not a FerryError is a bug and is mapped to
 * -32603 by the JSON-RPC error map (src/jsonrpc/errors.ts).
 */
export class FerryError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'FerryError';
  }
}

/** JSON-RPC 2.0 and geth error codes used across the project. */
export const ErrorCode = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  server: -32000,
  /** geth: transaction/call reverted, with `data` = revert bytes */
  reverted: 3,
  /** geth: response too large */
  responseTooLarge: -32003,
  unauthorized: -32001,
} as const;

export const invalidParams = (message: string): FerryError => new FerryError(ErrorCode.invalidParams, message);
export const serverError = (message: string, data?: unknown): FerryError => new FerryError(ErrorCode.server, message, data);
