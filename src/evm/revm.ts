/**
 * The revm call engine (docs/benchmarks.md, "revm prototype"): a native addon built from
 * native/revm-call/ (`npm run build:native`) that executes one eth_call in revm, reading state through
 * synchronous callbacks. It is optional: without the addon (no Rust toolchain at build time) every call
 * runs on ethereumjs. This module loads the addon and turns its answer into the shape eth_call's
 * answers are made from (evm/vmerrors.ts simulationError), or says "not mine" so the caller runs the
 * call on ethereumjs (which has the exact texts for the rarer failures).
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallEngine } from '../config/options.js';
import { bigIntToBytes } from '../lib/bytes.js';

/** the addon's file, under dist/native/ (scripts/build-native.mjs puts it there) */
export const REVM_ADDON_FILE = 'ferry_revm_call.node';


/** The block a call or tx runs in, as the addon reads it. */
export interface RevmBlockInput {
  number: number;
  timestamp: number;
  coinbase: Uint8Array;
  baseFee: Uint8Array;
  gasLimit: number;
  prevrandao: Uint8Array;
}

/** A call's input; the addon reads the byte fields in place (any Uint8Array, not copied). */
export interface RevmCallInput extends RevmBlockInput {
  spec: string;
  chainId: number;
  from: Uint8Array;
  to?: Uint8Array;
  value: Uint8Array;
  data: Uint8Array;
  gas: number;
  gasPrice: Uint8Array;
  /** epoch ms at which the call stops with status "timeout"; Infinity: never */
  deadline: number;
  /** keep the input of each console.log call (RevmCallOutput.console) */
  console: boolean;
}

export interface RevmCallOutput {
  status: 'success' | 'revert' | 'halt' | 'invalid' | 'timeout';
  reason: string;
  output: Buffer;
  gasUsed: number;
  logs: { address: Buffer; topics: Buffer[]; data: Buffer }[];
  created?: Buffer;
  /** the input of each console.log call, in order (empty unless RevmCallInput.console) */
  console: Buffer[];
}

/** The state the addon reads (wire formats in native/revm-call/src/lib.rs). */
export interface RevmState {
  /** null or balance (32) ‖ nonce (8) ‖ code hash (32) */
  account(address: Buffer): Buffer | null;
  code(hash: Buffer): Buffer;
  /** 32 bytes */
  storage(address: Buffer, slot: Buffer): Buffer;
  /** 32 bytes */
  blockHash(n: number): Buffer;
}

/** A block tx's input (native/revm-call/src/transact.rs TxInput). */
export interface RevmTxInput extends RevmBlockInput {
  spec: string;
  chainId: number;
  txType: number;
  from: Uint8Array;
  to?: Uint8Array;
  nonce: number;
  value: Uint8Array;
  data: Uint8Array;
  gas: number;
  /** gasPrice, or maxFeePerGas for type 2 */
  gasPrice: Uint8Array;
  priorityFee?: Uint8Array;
  /** per entry: address ‖ key count (4 bytes) ‖ keys */
  accessList: Uint8Array;
  touched: boolean;
  console: boolean;
}

/** A 32-byte word of the addon's wire formats: `v` (at most 32 bytes) left-padded, or `v` itself as a Buffer view. */
export function stateWord(v: Uint8Array): Buffer {
  if (v.length === 32) return Buffer.from(v.buffer, v.byteOffset, 32);
  const b = Buffer.alloc(32);
  b.set(v, 32 - v.length);
  return b;
}

/** An account of the addon's wire format from its fields: balance (32) ‖ nonce (8) ‖ code hash (32). */
export function accountAnswer(nonce: bigint, balance: bigint, codeHash: Uint8Array): Buffer {
  const out = Buffer.alloc(72);
  out.set(bigIntToBytes(balance, 32), 0);
  out.writeBigUInt64BE(nonce, 32);
  out.set(codeHash, 40);
  return out;
}

interface Addon {
  /**
   * Keccak-256 of `data`'s first `len` bytes, written into `out`'s first 32 (native/revm-call/src/crypto.rs;
   * evm/common.ts uses it). Absent in an addon built before it had them, as is `ecrecover`.
   */
  keccak256?(data: Uint8Array, len: number, out: Uint8Array): void;
  /**
   * secp256k1 recovery of `hash32` signed with r ‖ s (`sig64`) and `recid` (0-3): the 64-byte public key
   * (x ‖ y) written into `out`; returns 0, or 1 when r or s is not below the group order, 2 when no key recovers.
   */
  ecrecover?(hash32: Uint8Array, sig64: Uint8Array, recid: number, out: Uint8Array): number;
  /** absent in an addon built before block txs ran on revm */
  transact?(
    input: RevmTxInput,
    account: RevmState['account'],
    code: RevmState['code'],
    storage: RevmState['storage'],
    blockHash: RevmState['blockHash'],
  ): Buffer;

  call(
    input: RevmCallInput,
    account: RevmState['account'],
    code: RevmState['code'],
    storage: RevmState['storage'],
    blockHash: RevmState['blockHash'],
  ): RevmCallOutput;
}

let loaded: { addon: Addon | undefined; why: string } | undefined;

/** The addon's path: dist/native/, two levels above this module (dist/src/evm/ or dist/src/bundle/). */
export function revmAddonPath(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'native', REVM_ADDON_FILE);
}

/** The addon, or why there is none (loaded once per thread). */
export function loadRevm(): { addon: Addon | undefined; why: string } {
  if (loaded) return loaded;
  const path = revmAddonPath();
  if (!existsSync(path)) {
    loaded = { addon: undefined, why: `${path} was not built (no Rust toolchain at build time?)` };
    return loaded;
  }
  try {
    loaded = { addon: createRequire(import.meta.url)(path) as Addon, why: 'loaded' };
  } catch (e) {
    loaded = { addon: undefined, why: `${path} failed to load: ${e instanceof Error ? e.message : String(e)}` };
  }
  return loaded;
}

/** revm's name of an ethereumjs hardfork ("cancun" → "Cancun"), as revm's SpecId::from_str reads it */
export function revmSpec(hardfork: string): string {
  return hardfork.charAt(0).toUpperCase() + hardfork.slice(1);
}

/**
 * The ethereumjs error name of a revm halt (revm-context-interface result.rs HaltReason), for the ones
 * whose geth text evm/vmerrors.ts vmErrorText gives; undefined: run the call on ethereumjs instead.
 */
export function haltError(reason: string): string | undefined {
  if (reason.startsWith('OutOfGas')) return 'out of gas';
  switch (reason) {
    case 'OpcodeNotFound':
    case 'InvalidFEOpcode':
    case 'NotActivated':
      return 'invalid opcode';
    case 'InvalidJump':
      return 'invalid JUMP';
    case 'StackUnderflow':
      return 'stack underflow';
    case 'StackOverflow':
      return 'stack overflow';
    case 'StateChangeDuringStaticCall':
      return 'static state change';
    default:
      return undefined;
  }
}

/** The engine block txs run on under `wanted` (evm/revmtx.ts), said at start-up (node/run.ts). */
export function blockEngineText(wanted: CallEngine): string {
  if (wanted === 'ethereumjs') return 'ethereumjs';
  const { addon, why } = loadRevm();
  if (addon === undefined) return `ethereumjs (${why})`;
  return addon.transact === undefined ? 'ethereumjs (the revm addon predates block txs: npm run build:native)' : 'revm (ethereumjs for what it leaves: docs/architecture.md "One block")';
}

/** The engine plain eth_calls run on under `wanted`, said at start-up (node/run.ts). */
export function callEngineText(wanted: CallEngine): string {
  if (wanted === 'ethereumjs') return 'ethereumjs';
  const { addon, why } = loadRevm();
  return addon !== undefined ? 'revm' : `ethereumjs (revm asked for, but ${why})`;
}
