/**
 * geth's error texts that more than one check site writes, so each is spelled once. Sources:
 * go-ethereum core/vm/errors.go (ErrExecutionReverted), core/types/transaction.go
 * (ErrTxTypeNotSupported), core/txpool (ErrTxPoolOverflow as Evmos words it), internal/ethapi
 * transaction_args.go (the fee-field check) and internal/ethapi/api.go (header lookups).
 * Texts that only one file writes stay in that file.
 */
export const GethText = {
  executionReverted: 'execution reverted',
  txTypeNotSupported: 'transaction type not supported',
  /** EIP-7825 (Osaka): go-ethereum core/txpool/validation.go and core/state_transition.go, ErrGasLimitTooHigh */
  gasLimitTooHigh: (cap: bigint, gas: bigint) => `transaction gas limit too high (cap: ${cap}, tx: ${gas})`,
  mixedFeeFields: 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified',
  headerNotFound: 'header not found',
  txpoolFull: 'txpool is full',
  oversizedData: 'oversized data',
  /** eth/tracers/api.go */
  genesisNotTraceable: 'genesis is not traceable',
  /** eth/filters/api.go errInvalidBlockRange */
  invalidBlockRange: 'invalid block range params',
} as const;
