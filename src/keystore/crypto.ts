/**
 * secp256k1 signing and recovery for node-held keys (the native `secp256k1` package, as the EVM
 * layer uses for sender recovery), Ethereum addresses, and the EIP-191 personal-message hash that
 * eth_sign, personal_sign and personal_ecRecover share.
 */
import { createRequire } from 'node:module';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { concatBytes } from '../lib/bytes.js';
import { invalidRequest } from '../lib/errors.js';

const require = createRequire(import.meta.url);
// the `secp256k1` package's native binding (N-API, prebuilt in the package)
const secp = require('secp256k1') as {
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyCreate(key: Uint8Array, compressed?: boolean): Uint8Array;
  privateKeyVerify(key: Uint8Array): boolean;
};

export const PRIVATE_KEY_LENGTH = 32;
export const ADDRESS_LENGTH = 20;
export const HASH_LENGTH = 32;
/** r (32) ‖ s (32) ‖ v (1) */
export const SIGNATURE_LENGTH = 65;
/** v of a personal-message signature is 27 or 28 (the recovery id + 27) */
export const SIGNATURE_V_OFFSET = 27;
/** EIP-191 version 0x45: `\x19Ethereum Signed Message:\n` + decimal length + message */
const PERSONAL_MESSAGE_PREFIX = '\x19Ethereum Signed Message:\n';

export const keccak256 = (msg: Uint8Array): Uint8Array => keccak_256(msg);

/** A signature in its parts: r, s (32 bytes each) and the recovery id (0 or 1). */
export interface Signature {
  r: Uint8Array;
  s: Uint8Array;
  recovery: number;
}

export function isValidPrivateKey(key: Uint8Array): boolean {
  return key.length === PRIVATE_KEY_LENGTH && secp.privateKeyVerify(key);
}

/** Throws geth's `invalid private key` (an invalidRequest) unless `key` is a valid secp256k1 private key. */
export function checkPrivateKey(key: Uint8Array): void {
  if (!isValidPrivateKey(key)) throw invalidRequest('invalid private key');
}

export function privateKeyToAddress(key: Uint8Array): Uint8Array {
  const pub = secp.publicKeyCreate(key, false).subarray(1);
  return keccak256(pub).slice(HASH_LENGTH - ADDRESS_LENGTH);
}

/** Signs a 32-byte hash (RFC 6979 nonce, low s). */
export function signHash(hash: Uint8Array, key: Uint8Array): Signature {
  const { signature, recid } = secp.ecdsaSign(hash, key);
  return { r: signature.slice(0, 32), s: signature.slice(32, 64), recovery: recid };
}

/** r ‖ s ‖ (27 + recovery): the 65-byte form of eth_sign, personal_sign and typed-data signatures. */
export function encodeSignature(sig: Signature): Uint8Array {
  const out = new Uint8Array(SIGNATURE_LENGTH);
  out.set(sig.r, 0);
  out.set(sig.s, 32);
  out[64] = SIGNATURE_V_OFFSET + sig.recovery;
  return out;
}

/** The address whose key made `sig` (r ‖ s ‖ recovery id 0/1) over `hash`; throws on an invalid signature. */
export function recoverAddress(hash: Uint8Array, rs: Uint8Array, recovery: number): Uint8Array {
  const pub = secp.ecdsaRecover(rs, recovery, hash, false).subarray(1);
  return keccak256(pub).slice(HASH_LENGTH - ADDRESS_LENGTH);
}

/** keccak256("\x19Ethereum Signed Message:\n" + len(message) + message) — EIP-191, as geth's accounts.TextHash. */
export function personalMessageHash(message: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(`${PERSONAL_MESSAGE_PREFIX}${message.length}`);
  return keccak256(concatBytes(prefix, message));
}
