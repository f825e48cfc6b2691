/**
 * EIP-55 mixed-case checksum form of a 20-byte address: the form geth's `common.Address.Hex()`
 * prints (go-ethereum common/types.go), used in error texts, console.log output and dev-account
 * listings.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex } from './hex.js';

/** `0x` + the address's hex, each letter upper-case where the matching nibble of keccak256(hex) is ≥ 8. */
export function checksumAddress(address: Uint8Array): string {
  const hex = bytesToHex(address);
  const hash = keccak_256(new TextEncoder().encode(hex));
  let out = '0x';
  for (let i = 0; i < hex.length; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  return out;
}
