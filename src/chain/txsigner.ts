/**
 * The signer and hash of a type-1 (EIP-2930) or type-2 (EIP-1559) envelope, found on the RPC thread
 * without building ethereumjs's transaction object (docs/benchmarks.md "The RPC thread per transfer"):
 * the envelope's RLP list is decoded once; the signing hash is keccak256(type ‖ rlp(the fields before
 * v, r, s)) and the tx hash keccak256(envelope), as @ethereumjs/tx's getHashedMessageToSign and hash()
 * compute them from the same fields (capabilities/eip2718.ts), and the signer is recovered as decodeTx's
 * recoverSigner does (evm/tx.ts).
 *
 * Only a canonical envelope takes this path: every integer field without leading zeros and the list
 * re-encoding to exactly the bytes received, so that ethereumjs's own serialization (what its hash
 * covers) is these bytes. Anything else answers `undefined` and the caller decodes the usual way. What
 * this finds is only the sender and hash: the chain thread still decodes and checks every rule itself.
 */
import type { Common } from '@ethereumjs/common';
import { decode, encode } from '@ethereumjs/rlp';
import { bytesToBigInt } from '@ethereumjs/util';
import { ecrecover, keccak256 } from '../evm/common.js';
import { concatBytes } from '../lib/bytes.js';
import { impersonatedSender, txTypeActive } from '../evm/tx.js';

/** Items of the signed list by type, v r s last; the integer fields by index (EIP-2930, EIP-1559) */
const LAYOUT: ReadonlyMap<number, { items: number; integers: readonly number[] }> = new Map([
  // chainId, nonce, gasPrice, gasLimit, to, value, data, accessList, v, r, s
  [1, { items: 11, integers: [0, 1, 2, 3, 5, 8, 9, 10] }],
  // chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList, v, r, s
  [2, { items: 12, integers: [0, 1, 2, 3, 4, 6, 9, 10, 11] }],
]);

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** The signer and hash of a canonical type-1 or type-2 envelope; undefined for any other bytes (decode them the usual way). */
export function typedSigned(raw: Uint8Array, common: Common): { sender: Uint8Array; hash: Uint8Array } | undefined {
  const type = raw[0];
  const layout = type === undefined ? undefined : LAYOUT.get(type);
  if (layout === undefined || !txTypeActive(type!, common)) return undefined;
  let items: unknown;
  try {
    items = decode(raw.subarray(1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(items) || items.length !== layout.items) return undefined;
  for (const i of layout.integers) {
    const b = items[i] as unknown;
    if (!(b instanceof Uint8Array) || (b.length > 0 && b[0] === 0)) return undefined;
  }
  // the re-encoding is the envelope: what ethereumjs serializes (and hashes) is these bytes
  if (!sameBytes(encode(items as Uint8Array[]), raw.subarray(1))) return undefined;
  const [v, r, s] = items.slice(-3) as Uint8Array[];
  const hash = keccak256(raw);
  // evm/tx.ts: the dev placeholder signature names its sender
  if (s!.length === 1 && s![0] === 1) {
    const named = impersonatedSender({ v: bytesToBigInt(v!), r: bytesToBigInt(r!), s: 1n }, type!);
    if (named !== undefined) return { sender: named, hash };
  }
  try {
    const message = keccak256(concatBytes(Uint8Array.of(type!), encode(items.slice(0, -3) as Uint8Array[])));
    return { sender: keccak256(ecrecover(message, bytesToBigInt(v!), r!, s!)).slice(12), hash };
  } catch {
    return undefined;
  }
}
