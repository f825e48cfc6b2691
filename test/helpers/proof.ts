/** EIP-1186 proof checks with @ethereumjs/mpt: the proof must verify against the given root. */
import { verifyMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { bytesToBigInt, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';

/** keccak256 of empty code */
export const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
/** root of an empty trie */
export const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

export interface ProvenAccount {
  nonce: bigint;
  balance: bigint;
  storageRoot: string;
  codeHash: string;
}

/**
 * Verifies an account proof against a state root. Returns the RLP-decoded account, or null for a
 * valid proof of absence. Throws when the proof does not verify against the root.
 */
export async function verifyAccountProof(
  stateRoot: string,
  address: string,
  accountProof: readonly string[],
): Promise<ProvenAccount | null> {
  const value = await verifyMerkleProof(hexToBytes(address as `0x${string}`), accountProof.map((p) => hexToBytes(p as `0x${string}`)), {
    root: hexToBytes(stateRoot as `0x${string}`),
    useKeyHashing: true,
  });
  if (value === null) return null;
  const fields = RLP.decode(value) as Uint8Array[];
  if (!Array.isArray(fields) || fields.length !== 4) throw new Error('account RLP is not a 4-item list');
  return {
    nonce: bytesToBigInt(fields[0]!),
    balance: bytesToBigInt(fields[1]!),
    storageRoot: bytesToHex(fields[2]!),
    codeHash: bytesToHex(fields[3]!),
  };
}

/**
 * Verifies a storage proof against an account's storage root. Returns the slot value (0n for a
 * valid proof of absence). Throws when the proof does not verify.
 */
export async function verifyStorageProof(storageHash: string, key: string, proof: readonly string[]): Promise<bigint> {
  const slot = setLengthLeft(hexToBytes(key as `0x${string}`), 32);
  const value = await verifyMerkleProof(slot, proof.map((p) => hexToBytes(p as `0x${string}`)), {
    root: hexToBytes(storageHash as `0x${string}`),
    useKeyHashing: true,
  });
  if (value === null) return 0n;
  return bytesToBigInt(RLP.decode(value) as Uint8Array);
}
