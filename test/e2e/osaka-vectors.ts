/**
 * Inputs of the Osaka differential (test/e2e/osaka-anvil.test.ts).
 *
 * P-256 (EIP-7951) vectors: three entries of ethereum/EIPs assets/eip-7951/test-vectors.json (commit
 * 63e43271f50cdbfcc8d46a39974c42946b129909; the EIPs repository is CC0-1.0), which took them from
 * Wycheproof's ecdsa_secp256r1_sha256_p1363_test.json (Apache-2.0). Each input is hash ‖ r ‖ s ‖ qx ‖ qy,
 * 32 bytes each; the precompile answers 32 bytes of 1 for a valid signature and nothing otherwise.
 */

const HASH = 'bb5a52f42f9c9261ed4361f59422a1e30036e7c32b270c8807a419feca605023';
const PUBKEY = '2927b10512bae3eddcfe467828128bad2903269919f7086069c8c4df6c732838' + 'c7787964eaac00e5921fb1498a60f4606766b3d9685001558d1a974e7341513e';

export const P256 = {
  /** Wycheproof #1 (signature malleability): valid */
  valid: `0x${HASH}2ba3a8be6b94d5ec80a6d9d1190a436effe50d85a1eee859b8cc6af9bd5c2e184cd60b855d442f5b3c7b11eb6c4e0ae7525fe710fab9aa7c77a67f79e6fadd76${PUBKEY}`,
  /** Wycheproof #3 (r or s modified by the group order): invalid */
  modified: `0x${HASH}d45c5740946b2a147f59262ee6f5bc90bd01ed280528b62b3aed5fc93f06f739b329f479a2bbd0a5c384ee1493b1f5186a87139cac5df4087c134b49156847db${PUBKEY}`,
  /** Wycheproof #9 (r = s = 0): invalid */
  zero: `0x${HASH}${'00'.repeat(64)}${PUBKEY}`,
} as const;

/** The valid vector one byte short: EIP-7951 answers nothing for an input that is not 160 bytes. */
export const P256_SHORT = P256.valid.slice(0, -2) as `0x${string}`;

const word = (n: number) => n.toString(16).padStart(64, '0');

/** A modexp (0x05) input: base, exponent, modulus as hex without 0x, each with its 32-byte length word. */
export function modexpInput(base: string, exp: string, mod: string): `0x${string}` {
  return `0x${word(base.length / 2)}${word(exp.length / 2)}${word(mod.length / 2)}${base}${exp}${mod}`;
}

/** EIP-7823's bound on each of base, exponent and modulus length (bytes) */
export const MODEXP_MAX_LEN = 1024;

export const MODEXP = {
  /** 3^5 mod 7 = 5: EIP-7883 raises the minimum price from 200 to 500 */
  small: modexpInput('03', '05', '07'),
  /** a 64-byte exponent: EIP-7883 prices each exponent byte past 32 at 16 */
  longExponent: modexpInput('02'.repeat(32), 'ff'.repeat(64), 'f1'.repeat(32)),
  /** base and modulus of exactly 1024 bytes: still allowed */
  atBound: modexpInput('05'.repeat(MODEXP_MAX_LEN), '03', 'fb'.repeat(MODEXP_MAX_LEN)),
  /** a 1025-byte base: over EIP-7823's bound, the call fails */
  overBound: modexpInput('05'.repeat(MODEXP_MAX_LEN + 1), '03', 'fb'),
} as const;
