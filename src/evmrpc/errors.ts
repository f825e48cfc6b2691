/**
 * Surface A's error map: every domain error kind (src/lib/errors.ts) → geth's JSON-RPC error
 * (rpc/errors.go, internal/ethapi/errors.go). The message is the domain error's, which already is
 * geth's text; only the code, and the revert data, are chosen here.
 *
 * - invalid argument: -32602 (geth's invalidParamsError)
 * - method not found / namespace disabled: -32601
 * - private method without a valid token: -32001 (the auth layer's own code, geth has none)
 * - execution reverted: 3, data = the revert output as 0x-hex (geth's revertError)
 * - answer too large: -32003 (geth's "response too large")
 * - a synchronous send whose receipt did not come in time: 4, data = the tx hash (EIP-7966; geth's
 *   txSyncTimeoutError, internal/ethapi/errors.go)
 * - eth_simulateV1's refusals: geth's -380xx codes per reason (SIMULATE_CODES)
 * - everything else: -32000, geth's catch-all for errors without an ErrorCode()
 */
import { type DomainError, type SimulateRejectReason } from '../lib/errors.js';
import { toData } from '../lib/hex.js';
import type { JsonRpcError, JsonRpcErrorMap } from '../jsonrpc/errors.js';

/** geth's codes for Surface A */
const Code = {
  invalidParams: -32602,
  methodNotFound: -32601,
  unauthorized: -32001,
  resultTooLarge: -32003,
  reverted: 3,
  txSyncTimeout: 4,
  server: -32000,
  /** go-ethereum internal/ethapi/errors.go: pruned history unavailable */
  prunedHistory: 4444,
} as const;

/** eth_simulateV1's codes per reason (go-ethereum internal/ethapi/errors.go, errCode*) */
const SIMULATE_CODES: { [R in SimulateRejectReason]: number } = {
  nonceTooLow: -38010,
  nonceTooHigh: -38011,
  baseFeeTooLow: -38012,
  intrinsicGas: -38013,
  insufficientFunds: -38014,
  blockGasLimit: -38015,
  blockNumberOrder: -38020,
  blockTimestampOrder: -38021,
  initCodeSize: -38025,
  clientLimit: -38026,
  invalidParams: Code.invalidParams,
  internal: -32603,
};

/** eth_simulateV1's per-call `error` (a field of its answer, not a thrown error): a revert, another VM error (geth errCodeVMError) */
export const SIMULATE_CALL_CODES = { reverted: Code.reverted, vm: -32015 } as const;

const as =
  (code: number) =>
  (e: DomainError): JsonRpcError => ({ code, message: e.message });

export const evmErrors: JsonRpcErrorMap = {
  invalidArgument: as(Code.invalidParams),
  invalidRequest: as(Code.server),
  methodNotFound: as(Code.methodNotFound),
  unauthorized: as(Code.unauthorized),
  notFound: as(Code.server),
  limitExceeded: as(Code.server),
  resultTooLarge: as(Code.resultTooLarge),
  reverted: (e) => ({ code: Code.reverted, message: e.message, data: toData(e.detail.data) }),
  executionFailed: as(Code.server),
  txRejected: as(Code.server),
  timeout: as(Code.server),
  notIncluded: (e) => ({ code: Code.txSyncTimeout, message: e.message, data: toData(e.detail.txHash) }),
  cancelled: as(Code.server),
  unavailable: as(Code.server),
  unsupported: as(Code.server),
  pruned: (e) => ({ code: e.detail.what === 'history' ? Code.prunedHistory : Code.server, message: e.message }),
  corrupt: as(Code.server),
  badConfig: as(Code.server),
  simulateRejected: (e) => ({ code: SIMULATE_CODES[e.detail.reason], message: e.message }),
};
