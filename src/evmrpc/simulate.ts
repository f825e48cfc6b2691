/**
 * eth_simulateV1 (execution-apis src/eth/execute.yaml; go-ethereum internal/ethapi/api.go SimulateV1
 * and simulate.go): the input decoded as geth's simOpts (case-insensitive fields, unknown ones
 * ignored), checked against the bounds (evm/simchain.ts: blocks, calls per block, calls in all), run
 * on the call workers like eth_call and under its timeout, and answered as geth's simBlockResult:
 * the block object with its `calls`. docs/compatibility.md "eth_simulateV1" says where ferry differs.
 */
import { invalidRequest } from '../lib/errors.js';
import { jsonKind, typeMismatch, toData, toQuantity } from '../lib/hex.js';
import { method, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import { checkSimulateLimits } from '../evm/simchain.js';
import { EMPTY_TRIE_ROOT } from '../evm/orderedtrie.js';
import type { CallOrigin } from '../types/chain.js';
import type { SimBlockInput, SimBlockResult, SimCallResult, SimulateRequest } from '../types/simulate.js';
import type { EvmBackend } from './backend.js';
import { blockNumberOrTagOrHash, blockOrDefault, callArgs, field, isObject, structField } from './codecs.js';
import { decodeStateOverrides } from './overrides.js';
import { SIMULATE_CALL_CODES } from './errors.js';
import { formatBlock, formatLog } from './format.js';
import { stateBlockNumber, withDeadline } from './methods.js';
import { decodeBlockOverrides } from './overrides.js';

/** Where eth_simulateV1 runs (node/: the call workers, over the pending dev cheats). */
export interface SimulateRunner {
  simulateV1(req: SimulateRequest, n: bigint, origin?: CallOrigin): Promise<SimBlockResult[]>;
}

export interface SimulateModules {
  reader: Pick<EvmBackend, 'chainId' | 'resolveBlock'>;
  runs: SimulateRunner;
}

export interface SimulateInfo {
  /** answer deadline, ms (0 = none): evm-timeout, as eth_call */
  evmTimeoutMs: number;
}

/** geth's simOpts, with `returnFullTransactions` kept for the answer */
interface SimOpts {
  req: SimulateRequest;
  fullTx: boolean;
}

const OPTS = 'ethapi.simOpts';
const BLOCK = 'ethapi.simBlock';

function bool(v: unknown, index: number, struct: string, name: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') return structField(index, struct, name, 'bool', () => { throw typeMismatch(index, jsonKind(v), 'bool'); });
  return v;
}

function decodeBlock(v: unknown, index: number): SimBlockInput {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), BLOCK);
  const out: SimBlockInput = { calls: [] };
  const block = field(v, 'blockOverrides');
  if (block !== undefined && block !== null) out.block = decodeBlockOverrides(block, index, true);
  const state = field(v, 'stateOverrides');
  if (state !== undefined && state !== null) out.state = decodeStateOverrides(state, index, true);
  const calls = field(v, 'calls');
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw typeMismatch(index, jsonKind(calls), '[]ethapi.TransactionArgs');
    out.calls = calls.map((c) => callArgs.decode(c, index));
  }
  return out;
}

function decodeOpts(v: unknown, index: number): SimOpts {
  if (!isObject(v)) throw typeMismatch(index, jsonKind(v), OPTS);
  const raw = field(v, 'blockStateCalls');
  let blocks: SimBlockInput[] = [];
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw typeMismatch(index, jsonKind(raw), '[]ethapi.simBlock');
    blocks = raw.map((b) => decodeBlock(b, index));
  }
  return {
    req: {
      blocks,
      traceTransfers: bool(field(v, 'traceTransfers'), index, OPTS, 'traceTransfers'),
      validation: bool(field(v, 'validation'), index, OPTS, 'validation'),
    },
    fullTx: bool(field(v, 'returnFullTransactions'), index, OPTS, 'returnFullTransactions'),
  };
}

const simOpts: ParamCodec<SimOpts> = { name: 'simulation options', decode: decodeOpts };

const ZERO_HASH = toData(new Uint8Array(32));

function formatCall(c: SimCallResult): Record<string, unknown> {
  const out: Record<string, unknown> = {
    returnData: toData(c.returnData),
    logs: c.logs.map((l) => ({ ...formatLog(l), blockTimestamp: toQuantity(l.blockTimestamp) })),
    gasUsed: toQuantity(c.gasUsed),
    maxUsedGas: toQuantity(c.maxUsedGas),
    status: toQuantity(c.status),
  };
  if (c.error?.kind === 'reverted') out.error = { message: c.error.message, code: SIMULATE_CALL_CODES.reverted, data: toData(c.error.data) };
  else if (c.error) out.error = { message: c.error.message, code: SIMULATE_CALL_CODES.vm };
  return out;
}

/** geth RPCMarshalBlock of a simulated block plus its `calls` (simBlockResult.MarshalJSON) */
export function formatSimBlock(r: SimBlockResult, fullTx: boolean): Record<string, unknown> {
  const { totalDifficulty: _td, ...block } = formatBlock(r.block, fullTx);
  return {
    ...block,
    blobGasUsed: '0x0',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: ZERO_HASH,
    ...(r.requestsHash ? { requestsHash: toData(r.requestsHash) } : {}),
    withdrawals: [],
    withdrawalsRoot: toData(EMPTY_TRIE_ROOT),
    calls: r.calls.map(formatCall),
  };
}

export function createSimulateMethods({ reader, runs }: SimulateModules, info: SimulateInfo): MethodTable {
  return {
    eth_simulateV1: method([simOpts, blockOrDefault(blockNumberOrTagOrHash)], async ([opts, sel], ctx) => {
      checkSimulateLimits(opts.req.blocks);
      for (const b of opts.req.blocks) {
        for (const c of b.calls) {
          const chainId = (c as { chainId?: bigint }).chainId;
          if (chainId !== undefined && chainId !== reader.chainId) {
            throw invalidRequest(`chainId does not match node's (have=${chainId}, want=${reader.chainId})`);
          }
          delete (c as { chainId?: bigint }).chainId;
        }
      }
      const n = stateBlockNumber(reader, sel);
      const blocks = await withDeadline(runs.simulateV1(opts.req, n, ctx), info.evmTimeoutMs);
      return blocks.map((b) => formatSimBlock(b, opts.fullTx));
    }),
  };
}
