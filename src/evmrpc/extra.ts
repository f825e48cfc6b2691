/**
 * Surface A's `eth` methods beyond the execution-apis core table (methods.ts): geth's
 * eth_getHeaderByNumber / eth_getHeaderByHash and eth_createAccessList, and the lower-case
 * spelling (docs/compatibility.md) eth_getTransactionbyBlockNumberAndIndex (the same handler as the canonical name).
 *
 * eth_createAccessList follows geth's AccessList (internal/ethapi/api.go): the state of the
 * block, state overrides first; fee defaults as geth's setFeeDefaults after London (tip = the
 * suggested tip, fee cap = tip + 2 × the block's base fee), so the sender must afford
 * gas × fee cap + value; then CallDefaults (gas = the gas cap, or 2^63 - 1 without one); then
 * runs until the list is stable (chain/simulator.ts, on the call workers).
 */
import { invalidRequest } from '../lib/errors.js';
import { hash } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable } from '../jsonrpc/types.js';
import type { AccessListResult, CallOrigin, CallRequest } from '../types/chain.js';
import type { StateOverrides } from '../types/query.js';
import type { EvmBackend } from './backend.js';
import { blockNumberOrTag, blockNumberOrTagOrHash, blockOrDefault, callArgs } from './codecs.js';
import { stateOverrides } from './overrides.js';
import { formatAccessListResult, formatHeader, hexQuantity, type RpcAccessListResult, type RpcHeader } from './format.js';
import { callDefaults, stateBlockNumber, withDeadline } from './methods.js';
import { GethText } from '../lib/gethtexts.js';

/** Where eth_createAccessList runs (node/: the call workers, at `n` over the pending dev cheats). */
export interface AccessListRunner {
  /** `req.gas` is always set */
  createAccessList(req: CallRequest & { gas: bigint }, n: bigint, overrides: StateOverrides | undefined, origin?: CallOrigin): Promise<AccessListResult>;
}

/** The part of Surface A's modules (evmrpc/api.ts) these methods use. */
export interface ExtraModules {
  reader: Pick<EvmBackend, 'chainId' | 'resolveBlock' | 'blockByNumber' | 'blockByHash' | 'maxPriorityFeePerGas'>;
  runs: AccessListRunner;
}

export interface ExtraMethodsInfo {
  /** eth_call gas cap (0 = none) */
  gasCap: bigint;
  /** answer deadline of a simulation, ms (0 = none) */
  evmTimeoutMs: number;
}

/** geth's gas when neither the call nor the cap sets one: math.MaxUint64 / 2 */
const UNCAPPED_GAS = (1n << 63n) - 1n;

/** the lower-case `b` spelling of eth_getTransactionByBlockNumberAndIndex (docs/compatibility.md) */
export const LOWER_CASE_ALIAS = { alias: 'eth_getTransactionbyBlockNumberAndIndex', of: 'eth_getTransactionByBlockNumberAndIndex' } as const;

/** geth's setFeeDefaults (London and later) on a call, given the block's base fee and the suggested tip. */
function feeDefaults(req: CallRequest, baseFee: bigint, suggestedTip: () => bigint): CallRequest {
  const hex = hexQuantity;
  if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
    throw invalidRequest(GethText.mixedFeeFields);
  }
  if (req.gasPrice !== undefined) {
    if (req.gasPrice === 0n) throw invalidRequest('gasPrice must be non-zero after london fork');
    return req;
  }
  if (req.maxFeePerGas !== undefined && req.maxPriorityFeePerGas !== undefined) {
    if (req.maxFeePerGas === 0n) throw invalidRequest('maxFeePerGas must be non-zero');
  }
  const tip = req.maxPriorityFeePerGas ?? suggestedTip();
  const feeCap = req.maxFeePerGas ?? tip + 2n * baseFee;
  if (feeCap < tip) throw invalidRequest(`maxFeePerGas (${hex(feeCap)}) < maxPriorityFeePerGas (${hex(tip)})`);
  return { ...req, maxFeePerGas: feeCap, maxPriorityFeePerGas: tip };
}

export function createExtraEthMethods({ reader, runs }: ExtraModules, info: ExtraMethodsInfo, core: MethodTable): MethodTable {
  const canonical = core[LOWER_CASE_ALIAS.of];
  if (canonical === undefined) throw new Error(`${LOWER_CASE_ALIAS.of} is not in the core table`);

  const table: Record<string, MethodSpec> = {
    eth_getHeaderByNumber: method([blockNumberOrTag], ([sel]): RpcHeader | null => {
      const n = reader.resolveBlock(sel);
      const block = n === undefined ? undefined : reader.blockByNumber(n);
      return block === undefined ? null : formatHeader(block.header);
    }),
    eth_getHeaderByHash: method([hash], ([h]): RpcHeader | null => {
      const block = reader.blockByHash(h);
      return block === undefined ? null : formatHeader(block.header);
    }),
    eth_createAccessList: method(
      [callArgs, blockOrDefault(blockNumberOrTagOrHash), stateOverrides],
      async ([args, sel, overrides], ctx): Promise<RpcAccessListResult> => {
        const n = stateBlockNumber(reader, sel);
        const baseFee = reader.blockByNumber(n)?.header.baseFeePerGas ?? 0n;
        const { chainId, ...rest } = args;
        const priced = feeDefaults(rest, baseFee, () => reader.maxPriorityFeePerGas());
        const req = callDefaults({ ...priced, chainId }, reader.chainId, info.gasCap, true);
        const result = await withDeadline(runs.createAccessList({ ...req, gas: req.gas ?? UNCAPPED_GAS }, n, overrides, ctx), info.evmTimeoutMs);
        return formatAccessListResult(result);
      },
    ),
    [LOWER_CASE_ALIAS.alias]: canonical,
  };
  return Object.freeze(table);
}
