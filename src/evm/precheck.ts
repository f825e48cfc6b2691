/**
 * geth's pre-execution checks of a message call (eth_call, eth_estimateGas, debug_traceCall), run by
 * ferry before ethereumjs sees the call, so a client gets geth's texts (core/state_transition.go
 * preCheck, buyGas, execute; internal/ethapi TransactionArgs.ToMessage) and never a library message.
 *
 * A call's fees follow ToMessage: `gasPrice` sets fee cap and tip; otherwise `maxFeePerGas` and
 * `maxPriorityFeePerGas` (each 0 when absent). When both are 0 the call runs without the base-fee check
 * (geth's NoBaseFee) and pays nothing for gas; the sender must still hold the call's value.
 */
import { checksumAddress } from '../lib/address.js';
import { txRejected } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';
import { delegationTarget } from './tx.js';

/** EIP-3860: the largest init code a creation may carry. */
export const MAX_INIT_CODE_SIZE = 49_152;
const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * A call that fails a pre-execution check throws txRejected with geth's text; eth_estimateGas raises
 * the gas on reason `gas` (intrinsic gas, calldata floor) and fails on the rest.
 */
const precheckFailed = txRejected;

export interface CallFeeFields {
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

/** The message's fee fields (geth ToMessage with a base fee). `free`: no fee given (NoBaseFee applies). */
export interface CallFees {
  feeCap: bigint;
  tip: bigint;
  /** the price gas is bought at */
  gasPrice: bigint;
  free: boolean;
}

export function callFees(call: CallFeeFields, baseFee: bigint): CallFees {
  if (call.gasPrice !== undefined && (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined)) {
    throw precheckFailed('invalid', GethText.mixedFeeFields);
  }
  if (call.gasPrice !== undefined) {
    return { feeCap: call.gasPrice, tip: call.gasPrice, gasPrice: call.gasPrice, free: call.gasPrice === 0n };
  }
  const feeCap = call.maxFeePerGas ?? 0n;
  const tip = call.maxPriorityFeePerGas ?? 0n;
  const free = feeCap === 0n && tip === 0n;
  const wanted = tip + baseFee;
  return { feeCap, tip, gasPrice: free ? 0n : wanted < feeCap ? wanted : feeCap, free };
}

/**
 * preCheck + buyGas: fee fields against the base fee, then the sender's balance against
 * gas × fee cap + value. `code`: the sender's code (a contract cannot send, unless EIP-7702-delegated).
 */
export function checkFeesAndFunds(
  m: {
    from: Uint8Array; gas: bigint; value: bigint; fees: CallFees; baseFee: bigint; balance: bigint; code: Uint8Array;
    /** a call with an EIP-7702 authorization list: how many tuples, and whether it would create a contract */
    setCode?: { authorizations: number; creation: boolean };
  },
): void {
  // geth prints addresses in EIP-55 form (common.Address.Hex); only a failing check needs it
  const from = (): string => checksumAddress(m.from);
  if (m.code.length > 0 && delegationTarget(m.code) === undefined) {
    throw precheckFailed('invalid', `sender not an eoa: address ${from()}, len(code): ${m.code.length}`);
  }
  if (!m.fees.free) {
    if (m.fees.feeCap < m.fees.tip) {
      throw precheckFailed(
        'underpriced',
        `max priority fee per gas higher than max fee per gas: address ${from()}, maxPriorityFeePerGas: ${m.fees.tip}, maxFeePerGas: ${m.fees.feeCap}`,
      );
    }
    if (m.fees.feeCap < m.baseFee) {
      throw precheckFailed(
        'underpriced',
        `max fee per gas less than block base fee: address ${from()}, maxFeePerGas: ${m.fees.feeCap}, baseFee: ${m.baseFee}`,
      );
    }
  }
  // go-ethereum core/state_transition.go preCheck: ErrSetCodeTxCreate, ErrEmptyAuthList
  if (m.setCode?.creation) throw precheckFailed('invalid', `EIP-7702 transaction cannot be used to create contract (sender ${from()})`);
  if (m.setCode?.authorizations === 0) throw precheckFailed('invalid', `EIP-7702 transaction with empty auth list (sender ${from()})`);
  const want = m.gas * m.fees.feeCap + m.value;
  if (want > MAX_UINT256) {
    throw precheckFailed('insufficientFunds', `insufficient funds for gas * price + value: address ${from()} required balance exceeds 256 bits`);
  }
  if (m.balance < want) {
    throw precheckFailed('insufficientFunds', `insufficient funds for gas * price + value: address ${from()} have ${m.balance} want ${want}`);
  }
}

/**
 * execute's checks before the first frame: intrinsic gas, the EIP-7623 calldata floor (0 when not
 * active), EIP-3860 init code size.
 */
export function checkGasAndCode(m: { gas: bigint; intrinsic: bigint; floor: bigint; creation: boolean; dataLength: number }): void {
  if (m.gas < m.intrinsic) throw precheckFailed('gas', `intrinsic gas too low: have ${m.gas}, want ${m.intrinsic}`);
  if (m.gas < m.floor) throw precheckFailed('gas', `insufficient gas for floor data gas cost: have ${m.gas}, want ${m.floor}`);
  if (m.creation && m.dataLength > MAX_INIT_CODE_SIZE) {
    throw precheckFailed('invalid', `max initcode size exceeded: code size ${m.dataLength} limit ${MAX_INIT_CODE_SIZE}`);
  }
}
