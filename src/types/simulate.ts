/**
 * eth_simulateV1's input and answer as domain values (execution-apis src/eth/execute.yaml; geth
 * internal/ethapi/simulate.go): decoded by evmrpc/simulate.ts, run by evm/simblocks.ts on the call
 * workers, formatted back by evmrpc/simulate.ts. See docs/compatibility.md "eth_simulateV1".
 */
import type { CallRequest, EvmBlock, EvmLog } from './chain.js';
import type { BlockOverrides, StateOverrides } from './query.js';

/** One block of the request: its header overrides, the state overrides applied before it, its calls. */
export interface SimBlockInput {
  block?: BlockOverrides;
  state?: StateOverrides;
  calls: CallRequest[];
}

export interface SimulateRequest {
  blocks: SimBlockInput[];
  /** ETH transfers as ERC-20 Transfer logs of 0xEeee…EEeE */
  traceTransfers: boolean;
  /** nonce and base-fee checks as for a real block */
  validation: boolean;
}

/** What a call shows: geth's simCallResult. `error` is set when status is 0. */
export interface SimCallResult {
  returnData: Uint8Array;
  logs: (EvmLog & { blockTimestamp: bigint })[];
  gasUsed: bigint;
  maxUsedGas: bigint;
  status: 0 | 1;
  /** a revert (`reverted`, with its data) or another VM error (`vm`) */
  error?: { kind: 'reverted'; message: string; data: Uint8Array } | { kind: 'vm'; message: string };
}

/** A simulated block: an EvmBlock whose transactions are the unsigned calls (v = r = s = 0), and its calls. */
export interface SimBlockResult {
  block: EvmBlock;
  calls: SimCallResult[];
  /** the header fields a Cancun/Prague header adds (EvmHeader does not carry them) */
  requestsHash: Uint8Array | undefined;
}
