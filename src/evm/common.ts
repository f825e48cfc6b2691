/**
 * ethereumjs Common for ferry's chain, with native Keccak-256 and secp256k1 recovery plugged into the
 * custom-crypto hooks (~45 µs per sender instead of ~1200 µs in pure JS; docs/architecture.md "Where
 * transactions are decoded").
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
import { loadRevm } from './revm.js';

const require = createRequire(import.meta.url);

interface SecpPackage {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean, out?: Uint8Array): Uint8Array;
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(key: Uint8Array, compressed?: boolean): Uint8Array;
}
let secpPackage: SecpPackage | undefined;
/** the `secp256k1` package's native binding (N-API, prebuilt in the package), loaded when first needed */
const secp = (): SecpPackage => (secpPackage ??= require('secp256k1') as SecpPackage);

/**
 * Keccak-256 and secp256k1 recovery from ferry's own addon (native/revm-call/src/crypto.rs), one N-API
 * call each, when it was built with them; the `keccak` and `secp256k1` packages' bindings otherwise
 * (docs/benchmarks.md "Native Keccak and secp256k1").
 */
const { addon } = loadRevm();
const addonKeccak = addon?.keccak256;
const addonRecover = addon?.ecrecover;

/**
 * Typed arrays of up to 64 bytes live on V8's heap (its typed_array_max_size_in_heap), and N-API
 * moves such an array's bytes off the heap before the addon may read them, which costs more than the
 * hash: input that short is copied into a scratch array of this size first. Every scratch array here
 * has its own ArrayBuffer (off the heap), made once per thread; a hash or recovery runs to its end
 * synchronously, so one set per thread serves them all.
 */
const ON_HEAP_MAX_BYTES = 64;

/** The `keccak` package's N-API state object (prebuilt in the package), used without its stream wrapper. */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Uint8Array;
}
function loadPackageKeccak(): (new () => KeccakState) | undefined {
  try {
    const dir = dirname(require.resolve('keccak/package.json'));
    const binding = (require('node-gyp-build') as (d: string) => unknown)(dir);
    return typeof binding === 'function' ? (binding as new () => KeccakState) : undefined;
  } catch {
    return undefined;
  }
}
/** Keccak-256 rate and capacity in bits; 0x01 is the Keccak (not SHA-3) padding suffix. */
const KECCAK_RATE = 1088;
const KECCAK_CAPACITY = 512;
const KECCAK_PAD = 0x01;

/**
 * The addon's Keccak-256: writes into one scratch output, copied out per hash (cheaper than a new
 * Buffer made by the addon: docs/benchmarks.md "Native Keccak and secp256k1").
 */
function addonKeccak256(hash: (data: Uint8Array, len: number, out: Uint8Array) => void): (msg: Uint8Array) => Uint8Array {
  const input = new Uint8Array(new ArrayBuffer(ON_HEAP_MAX_BYTES));
  const out = new Uint8Array(new ArrayBuffer(32));
  return (msg) => {
    const n = msg.length;
    if (n <= ON_HEAP_MAX_BYTES) {
      input.set(msg);
      hash(input, n, out);
    } else {
      hash(msg, n, out);
    }
    return out.slice();
  };
}

/**
 * The `keccak` package's Keccak-256: one sponge per thread, reset by `initialize` (the package's
 * KeccakWidth1600_SpongeInitialize zeroes it) before each hash: a new state object per hash cost a
 * third of the hash (docs/benchmarks.md "The chain thread per transfer").
 */
function packageKeccak256(State: new () => KeccakState): (msg: Uint8Array) => Uint8Array {
  const sponge = new State();
  return (msg) => {
    sponge.initialize(KECCAK_RATE, KECCAK_CAPACITY);
    sponge.absorb(Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength));
    sponge.absorbLastFewBits(KECCAK_PAD);
    const out = sponge.squeeze(32);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  };
}

const PackageKeccak = addonKeccak ? undefined : loadPackageKeccak();

/** Keccak-256: ferry's addon, else the `keccak` package's binding, else @noble/hashes (JS, 2-10x slower). */
export const keccak256: (msg: Uint8Array) => Uint8Array = addonKeccak
  ? addonKeccak256(addonKeccak)
  : PackageKeccak
    ? packageKeccak256(PackageKeccak)
    : (msg) => keccak_256(msg);

function recoveryId(v: bigint, chainId: bigint | undefined): number {
  if (v === 0n || v === 1n) return Number(v);
  const rec = chainId === undefined ? v - 27n : v - (chainId * 2n + 35n);
  if (rec !== 0n && rec !== 1n) throw new Error('invalid signature v value');
  return Number(rec);
}

/** the `secp256k1` package's texts (its lib/index.js), thrown by the addon's path too */
const MESSAGE_LENGTH_TEXT = 'Expected message to be an Uint8Array with length 32';
const SIGNATURE_PARSE_TEXT = 'Signature could not be parsed';
const RECOVER_TEXT = 'Public key could not be recover';
/** the addon's ecrecover answers other than 0 (recovered) */
const RECOVER_FAILURES: Record<number, string> = { 1: SIGNATURE_PARSE_TEXT, 2: RECOVER_TEXT };

/** `b` (r or s) right-aligned in the 32 bytes of `into` at `at`; more than 32 bytes is refused */
function put32(into: Uint8Array, at: number, b: Uint8Array): void {
  if (b.length > 32) throw new Error('invalid signature component length');
  into.fill(0, at, at + 32 - b.length);
  into.set(b, at + 32 - b.length);
}

type Recover = (msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint) => Uint8Array;

/** The addon's recovery: hash ‖ r ‖ s written into one scratch input, the key copied out of one scratch output. */
function addonEcrecover(recover: (hash32: Uint8Array, sig64: Uint8Array, recid: number, out: Uint8Array) => number): Recover {
  const input = new Uint8Array(new ArrayBuffer(96));
  const hash = input.subarray(0, 32);
  const sig = input.subarray(32, 96);
  const out = new Uint8Array(new ArrayBuffer(64));
  return (msgHash, v, r, s, chainId) => {
    // the package path's order of refusals: r, s, v, then the message's length
    put32(sig, 0, r);
    put32(sig, 32, s);
    const recid = recoveryId(v, chainId);
    if (msgHash.length !== 32) throw new Error(MESSAGE_LENGTH_TEXT);
    hash.set(msgHash);
    const status = recover(hash, sig, recid, out);
    if (status !== 0) throw new Error(RECOVER_FAILURES[status] ?? RECOVER_TEXT);
    return out.slice();
  };
}

/** The `secp256k1` package's recovery. */
const packageEcrecover: Recover = (msgHash, v, r, s, chainId) => {
  const sig = new Uint8Array(64);
  put32(sig, 0, r);
  put32(sig, 32, s);
  const pub = secp().ecdsaRecover(sig, recoveryId(v, chainId), msgHash, false);
  return pub.subarray(1);
};

/**
 * 64-byte uncompressed public key (no 0x04 prefix), as ethereumjs expects. Either path accepts a high s
 * (libsecp256k1 recovers with it; tx decoding refuses it before) and throws for r or s zero or not below
 * the group order and for a signature no key recovers.
 */
export const ecrecover: Recover = addonRecover ? addonEcrecover(addonRecover) : packageEcrecover;

export function ecdsaSign(msgHash: Uint8Array, privateKey: Uint8Array): { r: Uint8Array; s: Uint8Array; recovery: number } {
  const { signature, recid } = secp().ecdsaSign(msgHash, privateKey);
  return { r: signature.slice(0, 32), s: signature.slice(32, 64), recovery: recid };
}

export function privateKeyToAddress(privateKey: Uint8Array): Uint8Array {
  const pub = secp().publicKeyCreate(privateKey, false).subarray(1);
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
export const NATIVE_CRYPTO =
  (addonKeccak !== undefined || PackageKeccak !== undefined) &&
  (addonRecover !== undefined || typeof (secp() as { ecdsaRecover?: unknown }).ecdsaRecover === 'function');
