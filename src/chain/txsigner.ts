/**
 * The signer and hash of a type-1 (EIP-2930) or type-2 (EIP-1559) envelope, found on the RPC thread
 * without building ethereumjs's transaction object (docs/benchmarks.md "The RPC thread per transfer"):
 * the signing hash is keccak256(type ‖ rlp(the fields before v, r, s)) and the tx hash keccak256(envelope),
 * as @ethereumjs/tx's getHashedMessageToSign and hash() compute them from the same fields
 * (capabilities/eip2718.ts), and the signer is recovered as decodeTx's recoverSigner does (evm/tx.ts).
 *
 * Only a canonical envelope takes this path: every RLP prefix minimal (evm/rlpcanonical.ts), the list
 * exactly filling the envelope, and every integer field without leading zeros. Such bytes are the
 * one encoding of their fields, so they are what ethereumjs serializes (and hashes), and the fields
 * before v, r, s are encoded, as they stand, in the envelope itself: the signing payload is that byte
 * range under a new list prefix, with nothing decoded into copies or encoded again (docs/benchmarks.md
 * "Ingest: admission and the V8 platform threads"). Anything else answers `undefined` and the caller
 * decodes the usual way. What this finds is only the sender and hash: the chain thread still decodes and
 * checks every rule itself.
 */
import type { Common } from '@ethereumjs/common';
import { bytesToBigInt } from '@ethereumjs/util';
import { ecrecover, keccak256 } from '../evm/common.js';
import { canonicalItem, canonicalList, type RlpSpan } from '../evm/rlpcanonical.js';
import { typedListOfEncoded } from '../evm/rlpwrite.js';
import { impersonatedSender, txTypeActive } from '../evm/tx.js';

/** Items of the signed list by type, v r s last; the integer fields by index (EIP-2930, EIP-1559) */
const LAYOUT: ReadonlyMap<number, { items: number; integers: readonly number[] }> = new Map([
  // chainId, nonce, gasPrice, gasLimit, to, value, data, accessList, v, r, s
  [1, { items: 11, integers: [0, 1, 2, 3, 5, 8, 9, 10] }],
  // chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList, v, r, s
  [2, { items: 12, integers: [0, 1, 2, 3, 4, 6, 9, 10, 11] }],
]);

/** The signer and hash of a canonical type-1 or type-2 envelope; undefined for any other bytes (decode them the usual way). */
export function typedSigned(raw: Uint8Array, common: Common): { sender: Uint8Array; hash: Uint8Array } | undefined {
  const type = raw[0];
  const layout = type === undefined ? undefined : LAYOUT.get(type);
  if (layout === undefined || !txTypeActive(type!, common)) return undefined;
  const outer = canonicalItem(raw, 1, raw.length);
  if (outer === undefined || !outer.list || outer.stop !== raw.length) return undefined;
  const items = canonicalList(raw, outer.start, outer.stop);
  if (items === undefined || items.length !== layout.items) return undefined;
  for (const i of layout.integers) {
    const it = items[i]!;
    if (it.list || (it.stop > it.start && raw[it.start] === 0)) return undefined;
  }
  const bytes = (it: RlpSpan) => raw.subarray(it.start, it.stop);
  const [v, r, s] = items.slice(-3).map(bytes) as [Uint8Array, Uint8Array, Uint8Array];
  const hash = keccak256(raw);
  // evm/tx.ts: the dev placeholder signature names its sender
  if (s.length === 1 && s[0] === 1) {
    const named = impersonatedSender({ v: bytesToBigInt(v), r: bytesToBigInt(r), s: 1n }, type!);
    if (named !== undefined) return { sender: named, hash };
  }
  try {
    // the fields before v, r, s as the envelope encodes them
    const message = keccak256(typedListOfEncoded(type!, raw.subarray(outer.start, items[layout.items - 3]!.at)));
    return { sender: keccak256(ecrecover(message, bytesToBigInt(v), r, s)).slice(12), hash };
  } catch {
    return undefined;
  }
}
