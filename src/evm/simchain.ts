/**
 * The shape of an eth_simulateV1 chain before and after it runs (go-ethereum internal/ethapi/simulate.go
 * sanitizeChain, makeHeaders; internal/ethapi/transaction_args.go ToTransaction): block numbers and
 * timestamps put in order with geth's defaults and gaps filled with empty blocks; the unsigned
 * transaction each call becomes; and the header of a simulated block with its hash and size.
 *
 * Ferry's committed block hashes are CometBFT header hashes (docs/compatibility.md), so a simulated
 * block cannot have one: its hash is keccak256 of its Ethereum header RLP (evm/ethrlp.ts), whose
 * parentHash is the base block's ferry hash for the first simulated block and the previous simulated
 * block's hash after it. Its stateRoot is the base block's (ferry does not hash simulated state).
 */
import type { Common } from '@ethereumjs/common';
import { RLP, type Input } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { simulateRejected } from '../lib/errors.js';
import type { CallRequest, EvmHeader, EvmTx } from '../types/chain.js';
import type { BlockOverrides } from '../types/query.js';
import type { SimBlockInput } from '../types/simulate.js';
import { keccak256 } from './common.js';
import { encodeHeader, ethBlockSize } from './ethrlp.js';

/** geth maxSimulateBlocks: blocks one request may span (from the base block, gaps included) */
export const MAX_SIMULATE_BLOCKS = 256;
/** geth maxSimulateCallsPerBlock */
export const MAX_SIMULATE_CALLS_PER_BLOCK = 5000;
/** geth maxSimulateTotalCalls */
export const MAX_SIMULATE_TOTAL_CALLS = 10_000;
/** geth timestampIncrement: seconds between blocks whose time is not given */
export const SIMULATE_TIME_INCREMENT = 12n;

/** A block of the request with its number and time fixed (gaps are blocks without calls). */
export interface PlannedBlock {
  number: bigint;
  time: bigint;
  input: SimBlockInput;
}

/** The request's bounds, checked before anything runs (geth SimulateV1). */
export function checkSimulateLimits(blocks: readonly SimBlockInput[]): void {
  if (blocks.length === 0) throw simulateRejected('invalidParams', 'empty input');
  if (blocks.length > MAX_SIMULATE_BLOCKS) throw simulateRejected('clientLimit', 'too many blocks');
  let total = 0;
  for (const b of blocks) {
    if (b.calls.length > MAX_SIMULATE_CALLS_PER_BLOCK) {
      throw simulateRejected('clientLimit', `too many calls in block: ${b.calls.length} > ${MAX_SIMULATE_CALLS_PER_BLOCK}`);
    }
    total += b.calls.length;
    if (total > MAX_SIMULATE_TOTAL_CALLS) throw simulateRejected('clientLimit', `too many calls: ${total} > ${MAX_SIMULATE_TOTAL_CALLS}`);
  }
}

/** geth sanitizeChain: numbers strictly increasing (gaps filled), times strictly increasing (+12 s when absent). */
export function planBlocks(baseNumber: bigint, baseTime: bigint, blocks: readonly SimBlockInput[]): PlannedBlock[] {
  const out: PlannedBlock[] = [];
  let prevNumber = baseNumber;
  let prevTime = baseTime;
  for (const input of blocks) {
    const number = input.block?.number ?? prevNumber + 1n;
    if (number <= prevNumber) throw simulateRejected('blockNumberOrder', `block numbers must be in order: ${number} <= ${prevNumber}`);
    if (number - baseNumber > BigInt(MAX_SIMULATE_BLOCKS)) throw simulateRejected('clientLimit', 'too many blocks');
    for (let n = prevNumber + 1n; n < number; n++) {
      prevTime += SIMULATE_TIME_INCREMENT;
      out.push({ number: n, time: prevTime, input: { calls: [] } });
    }
    prevNumber = number;
    let time: bigint;
    if (input.block?.time === undefined) time = prevTime + SIMULATE_TIME_INCREMENT;
    else {
      time = input.block.time;
      if (time <= prevTime) throw simulateRejected('blockTimestampOrder', `block timestamps must be in order: ${time} <= ${prevTime}`);
    }
    prevTime = time;
    out.push({ number, time, input });
  }
  return out;
}

/** geth eip1559.CalcBaseFee (elasticity 2, change denominator 8): the base fee after `parent`. */
export function nextBaseFee(parent: { gasLimit: bigint; gasUsed: bigint; baseFee: bigint }): bigint {
  const target = parent.gasLimit / 2n;
  if (target === 0n || parent.gasUsed === target) return parent.baseFee;
  if (parent.gasUsed > target) {
    const delta = (parent.baseFee * (parent.gasUsed - target)) / target / 8n;
    return parent.baseFee + (delta > 1n ? delta : 1n);
  }
  const delta = (parent.baseFee * (target - parent.gasUsed)) / target / 8n;
  return parent.baseFee > delta ? parent.baseFee - delta : 0n;
}

/** The block fields a plan's overrides leave to the previous header (geth makeHeaders): coinbase and gas limit. */
export function carriedFields(o: BlockOverrides | undefined, prev: { coinbase: Uint8Array; gasLimit: bigint }): { coinbase: Uint8Array; gasLimit: bigint } {
  return { coinbase: o?.feeRecipient ?? prev.coinbase, gasLimit: o?.gasLimit ?? prev.gasLimit };
}

const u = bigIntToUnpaddedBytes;

/**
 * The unsigned transaction a call becomes (geth ToTransaction with DynamicFeeTxType as default):
 * legacy when `gasPrice` is given, else EIP-1559; v = r = s = 0. `hash` is keccak256 of its encoding.
 */
export function unsignedTx(call: CallRequest & { gas: bigint; nonce: bigint }, from: Uint8Array, chainId: bigint): EvmTx {
  const to = call.to ?? new Uint8Array();
  const value = call.value ?? 0n;
  const data = call.data ?? new Uint8Array();
  const accessList = call.accessList ?? [];
  let raw: Uint8Array;
  let tx: Omit<EvmTx, 'hash' | 'raw'>;
  if (call.gasPrice !== undefined) {
    raw = RLP.encode([u(call.nonce), u(call.gasPrice), u(call.gas), to, u(value), data, u(0n), u(0n), u(0n)]);
    tx = { type: 0, chainId: undefined, gasPrice: call.gasPrice, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined } as never;
  } else {
    const feeCap = call.maxFeePerGas ?? 0n;
    const tip = call.maxPriorityFeePerGas ?? 0n;
    const list = accessList.map((a) => [a.address, a.storageKeys]) as Input;
    const body = RLP.encode([u(chainId), u(call.nonce), u(tip), u(feeCap), u(call.gas), to, u(value), data, list, u(0n), u(0n), u(0n)]);
    raw = new Uint8Array(body.length + 1);
    raw[0] = 2;
    raw.set(body, 1);
    tx = { type: 2, chainId, gasPrice: undefined, maxFeePerGas: feeCap, maxPriorityFeePerGas: tip } as never;
  }
  return {
    ...tx,
    hash: keccak256(raw),
    nonce: call.nonce,
    gasLimit: call.gas,
    to: call.to,
    value,
    input: data,
    accessList,
    v: 0n,
    r: 0n,
    s: 0n,
    from,
    raw,
  };
}

/** The header of a simulated block, its hash and size computed from its Ethereum encoding. */
export function sealHeader(common: Common, h: Omit<EvmHeader, 'hash' | 'size'>, rawTxs: readonly Uint8Array[]): EvmHeader {
  const draft: EvmHeader = { ...h, hash: new Uint8Array(32), size: 0n };
  draft.hash = keccak256(encodeHeader(common, draft));
  draft.size = ethBlockSize(common, draft, rawTxs);
  return draft;
}
