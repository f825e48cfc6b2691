/**
 * What a failed EVM run means to a client: ethereumjs' VM error strings in geth's words (go-ethereum
 * core/vm/errors.go), the reason of an `Error(string)` revert, a failed simulation as a domain error
 * (`reverted` / `executionFailed`, docs/architecture.md "Errors"), and the error a run past its
 * deadline is thrown out of the interpreter with.
 */
import { executionFailed, reverted, type DomainError } from '../lib/errors.js';
import type { CallOutcome } from './simulate.js';
import { GethText } from '../lib/gethtexts.js';

/** Thrown out of the interpreter when a simulation runs past its deadline. */
export class EvmTimeoutError extends Error {
  constructor() {
    super('execution timeout');
  }
}

/** geth's wording for VM errors. */
export function vmErrorText(err: string): string {
  switch (err) {
    case 'revert':
      return GethText.executionReverted;
    case 'out of gas':
      return 'out of gas';
    case 'invalid opcode':
      return 'invalid opcode';
    case 'stack underflow':
      return 'stack underflow';
    case 'stack overflow':
      return 'stack limit reached 1024 (1023)';
    case 'invalid JUMP':
      return 'invalid jump destination';
    case 'static state change':
      return 'write protection';
    default:
      return err;
  }
}

/** Decodes the reason of `Error(string)` revert data, if it is one. */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 68 || Buffer.from(data.subarray(0, 4)).toString('hex') !== '08c379a0') return undefined;
  try {
    const len = Number(BigInt('0x' + Buffer.from(data.subarray(36, 68)).toString('hex')));
    if (68 + len > data.length) return undefined;
    return Buffer.from(data.subarray(68, 68 + len)).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * A failed simulation as a domain error: `reverted` with the revert output, else executionFailed
 * (geth's texts). Takes a whole-tx result (ethereumjs' RunTxResult) or an eth_call's outcome.
 */
export function simulationError(res: { execResult: CallOutcome }): DomainError<'reverted' | 'executionFailed'> | undefined {
  const err = res.execResult.exceptionError;
  if (!err) return undefined;
  if (err.error === 'revert') {
    const data = res.execResult.returnValue;
    const reason = revertReason(data);
    return reverted(reason !== undefined ? `${GethText.executionReverted}: ${reason}` : GethText.executionReverted, data);
  }
  return executionFailed(vmErrorText(err.error));
}
