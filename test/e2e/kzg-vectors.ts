/**
 * Inputs of the point-evaluation differential (test/e2e/kzg-anvil.test.ts): the EIP-4844 precompile at
 * 0x0a takes versioned_hash ‖ z ‖ y ‖ commitment ‖ proof (32 + 32 + 32 + 48 + 48 = 192 bytes) and answers
 * FIELD_ELEMENTS_PER_BLOB ‖ BLS_MODULUS for a proof that p(z) = y for the committed polynomial p.
 *
 * The valid case is ethereum/c-kzg-4844 tests/verify_kzg_proof/kzg-mainnet/
 * verify_kzg_proof_case_correct_proof_4_4/data.yaml (the reference tests of ethereum/consensus-specs,
 * CC0-1.0; c-kzg-4844 is Apache-2.0): its commitment, z, y and proof, the versioned hash made from the
 * commitment as EIP-4844 kzg_to_versioned_hash does (0x01 ‖ sha256(commitment)[1:]).
 */
import { createHash } from 'node:crypto';

const COMMITMENT = '8f59a8d2a1a625a17f3fea0fe5eb8c896db3764f3185481bc22f91b4aaffcca25f26936857bc3a7c2539ea8ec3a952b7';
const Z = '73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000';
const Y = '1522a4a7f34e1ea350ae07c29c96c7e79655aa926122e95fe69fcbd932ca49e9';
const PROOF = 'a62ad71d14c5719385c0686f1871430475bf3a00f0aa3f7b8dd99a9abc2160744faf0070725e00b60ad9a026a15b1a8c';

function versionedHash(commitment: string, version = '01'): string {
  return version + createHash('sha256').update(Buffer.from(commitment, 'hex')).digest('hex').slice(2);
}

export const POINT_EVALUATION = {
  /** the c-kzg-4844 vector: the proof holds */
  valid: `0x${versionedHash(COMMITMENT)}${Z}${Y}${COMMITMENT}${PROOF}`,
  /** y one off: the proof does not hold for it */
  badProof: `0x${versionedHash(COMMITMENT)}${Z}${Y.slice(0, -1)}8${COMMITMENT}${PROOF}`,
  /** the hash of the commitment under version 0x02: not the commitment's versioned hash */
  wrongHash: `0x${versionedHash(COMMITMENT, '02')}${Z}${Y}${COMMITMENT}${PROOF}`,
  /** the valid input one byte short (EIP-4844: the input must be 192 bytes) */
  short: `0x${versionedHash(COMMITMENT)}${Z}${Y}${COMMITMENT}${PROOF.slice(0, -2)}`,
} as const;

/** what the precompile answers: FIELD_ELEMENTS_PER_BLOB (4096) ‖ BLS_MODULUS, 32 bytes each (EIP-4844) */
export const POINT_EVALUATION_OUTPUT =
  '0x0000000000000000000000000000000000000000000000000000000000001000' + '73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001';
