/**
 * ethereumjs Common for ferry's chain, with native secp256k1 recovery plugged into the custom-crypto
 * hooks (~50 µs per sender instead of ~1200 µs in pure JS; docs/architecture.md "Where transactions are decoded").
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Common, Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common';
import { paramsBlock } from '@ethereumjs/block';
import { paramsEVM } from '@ethereumjs/evm';
import { paramsTx } from '@ethereumjs/tx';
import { paramsVM } from '@ethereumjs/vm';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { lazyKzg } from './kzg.js';

const require = createRequire(import.meta.url);
// the `secp256k1` package's native binding (N-API, prebuilt in the package)
const secp = require('secp256k1') as {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean, out?: Uint8Array): Uint8Array;
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(key: Uint8Array, compressed?: boolean): Uint8Array;
};

/** The `keccak` package's N-API state object (prebuilt in the package), used without its stream wrapper. */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Uint8Array;
}
function loadNativeKeccak(): (new () => KeccakState) | undefined {
  try {
    const dir = dirname(require.resolve('keccak/package.json'));
    const addon = (require('node-gyp-build') as (d: string) => unknown)(dir);
    return typeof addon === 'function' ? (addon as new () => KeccakState) : undefined;
  } catch {
    return undefined;
  }
}
const NativeKeccak = loadNativeKeccak();
/** Keccak-256 rate and capacity in bits; 0x01 is the Keccak (not SHA-3) padding suffix. */
const KECCAK_RATE = 1088;
const KECCAK_CAPACITY = 512;
const KECCAK_PAD = 0x01;

/**
 * Keccak-256: native when the addon loads (about 2-5x faster than JS on trie nodes), @noble/hashes otherwise.
 * One sponge per thread, reset by `initialize` (the addon's KeccakWidth1600_SpongeInitialize zeroes it)
 * before each hash: a hash runs to its end synchronously, and a new state object per hash cost a third
 * of the hash (docs/benchmarks.md "The chain thread per transfer").
 */
const sponge = NativeKeccak && new NativeKeccak();
export const keccak256: (msg: Uint8Array) => Uint8Array = sponge
  ? (msg) => {
      const s = sponge;
      s.initialize(KECCAK_RATE, KECCAK_CAPACITY);
      s.absorb(Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength));
      s.absorbLastFewBits(KECCAK_PAD);
      const out = s.squeeze(32);
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    }
  : (msg) => keccak_256(msg);

function pad32(b: Uint8Array): Uint8Array {
  if (b.length === 32) return b;
  if (b.length > 32) throw new Error('invalid signature component length');
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

function recoveryId(v: bigint, chainId: bigint | undefined): number {
  if (v === 0n || v === 1n) return Number(v);
  const rec = chainId === undefined ? v - 27n : v - (chainId * 2n + 35n);
  if (rec !== 0n && rec !== 1n) throw new Error('invalid signature v value');
  return Number(rec);
}

/** 64-byte uncompressed public key (no 0x04 prefix), as ethereumjs expects. */
export function ecrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const sig = new Uint8Array(64);
  sig.set(pad32(r), 0);
  sig.set(pad32(s), 32);
  const pub = secp.ecdsaRecover(sig, recoveryId(v, chainId), msgHash, false);
  return pub.subarray(1);
}

export function ecdsaSign(msgHash: Uint8Array, privateKey: Uint8Array): { r: Uint8Array; s: Uint8Array; recovery: number } {
  const { signature, recid } = secp.ecdsaSign(msgHash, privateKey);
  return { r: signature.slice(0, 32), s: signature.slice(32, 64), recovery: recid };
}

export function privateKeyToAddress(privateKey: Uint8Array): Uint8Array {
  const pub = secp.publicKeyCreate(privateKey, false).subarray(1);
  return keccak256(pub).slice(12);
}

export const DEFAULT_HARDFORK = Hardfork.Cancun;

/**
 * ethereumjs copies the Common and re-applies its module parameters (a JSON deep copy and a cache
 * rebuild) for EVERY transaction and block header it constructs — measured as the top cost of eth_call
 * and CheckTx. Ferry's Common is fixed once made (one chain, one hardfork), so all module parameters are
 * applied up front and the instance is shared instead of copied.
 */
export function makeCommon(chainId: bigint, hardfork: string = DEFAULT_HARDFORK): Common {
  const common = createCustomCommon({ chainId: Number(chainId), name: 'ferry' }, Mainnet, {
    hardfork,
    customCrypto: { keccak256, ecrecover, kzg: lazyKzg },
  });
  for (const p of [paramsEVM, paramsVM, paramsBlock, paramsTx]) common.updateParams(p);
  common.copy = () => common;
  common.updateParams = () => common;
  common.setHardfork = (hf) => {
    if (hf !== common.hardfork()) throw new Error(`ferry's Common is fixed at ${common.hardfork()}; refusing ${String(hf)}`);
    return common.hardfork();
  };
  return common;
}

/** true when keccak and secp256k1 recovery run natively (the tests require it) */
export const NATIVE_CRYPTO = NativeKeccak !== undefined && typeof (secp as { ecdsaRecover?: unknown }).ecdsaRecover === 'function';
