/**
 * Decoding incoming transactions once. Sender recovery (secp256k1) is the dearest step of decoding a
 * transaction; under CometBFT the same bytes reach the application several times (CheckTx, the
 * proposal calls, FinalizeBlock, CheckTx RECHECK after every commit), so:
 *   - the RPC thread decodes what its clients submit (eth_sendRawTransaction, broadcast_tx_*) and
 *     hands the chain thread the recovered sender (and hash) with the bytes (`signedRaw`, `senderOfNative`);
 *   - the chain thread keeps each decoded tx by native tx hash in a bounded, byte-weighed cache
 *     (`DecodedTxCache`), so the later calls for the same bytes decode nothing.
 * A tx that does not decode is never cached, and no sender is handed over for it: the chain thread
 * decodes it again and refuses it with the same words as always.
 */
import type { Common } from '@ethereumjs/common';
import { decodeTx, type DecodedTx } from '../evm/tx.js';
import { Lru } from '../lib/lru.js';
import { unwrapEthereumTx } from './nativetx.js';
import { typedSigned } from './txsigner.js';

/** Memory bound of the chain thread's decoded-tx cache (bytes, as weighed by `decodedTxWeight`). */
export const DECODED_TX_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * What one decoded tx holds beyond its bytes: the ethereumjs transaction object and ferry's EvmTx
 * (measured: about 1.9 KB for a value transfer).
 */
export const DECODED_TX_ENTRY_BYTES = 2048;

/** A cached tx's weight: the fixed object cost, the native bytes, and the raw envelope held twice (raw and data). */
export function decodedTxWeight(native: Uint8Array, d: DecodedTx): number {
  return DECODED_TX_ENTRY_BYTES + native.length + 2 * d.evm.raw.length;
}

const key = (h: Uint8Array): string => Buffer.from(h.buffer, h.byteOffset, h.byteLength).toString('hex');

interface Entry {
  d: DecodedTx;
  weight: number;
}

export interface DecodedTxCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
  /** entries dropped to stay within the bound: each is decoded again when its bytes come back */
  evictions: number;
}

/** Decoded txs (sender included) by native tx hash; least recently used dropped first beyond `capacity` bytes. */
export class DecodedTxCache {
  private readonly lru: Lru<string, Entry>;

  constructor(capacity: number = DECODED_TX_CACHE_BYTES) {
    this.lru = new Lru<string, Entry>(capacity, (_k, e) => e.weight);
  }

  get(nativeHash: Uint8Array): DecodedTx | undefined {
    return this.lru.get(key(nativeHash))?.d;
  }

  /** remembers `d` as the decoding of `native` (whose hash is `nativeHash`); returns whether entries were evicted */
  put(nativeHash: Uint8Array, native: Uint8Array, d: DecodedTx): boolean {
    const before = this.lru.evictions;
    this.lru.set(key(nativeHash), { d, weight: decodedTxWeight(native, d) });
    return this.lru.evictions > before;
  }

  stats(): DecodedTxCacheStats {
    return { entries: this.lru.size, bytes: this.lru.weight, hits: this.lru.hits, misses: this.lru.misses, evictions: this.lru.evictions };
  }
}

/** What decoding a tx on the RPC thread found: its signer and hash (the chain thread does not compute them again). */
export interface Signed {
  sender: Uint8Array;
  hash: Uint8Array;
}

/**
 * The signer and hash of a raw EVM envelope, found here (off the chain thread), or undefined when
 * the bytes do not decode (the chain thread then decodes them itself and answers why).
 */
export function signedRaw(raw: Uint8Array, common: Common): Signed | undefined {
  // a canonical type-1/2 envelope without ethereumjs's tx object (chain/txsigner.ts)
  const fast = typedSigned(raw, common);
  if (fast !== undefined) return fast;
  try {
    const { evm } = decodeTx(raw, common);
    return { sender: evm.from, hash: evm.hash };
  } catch {
    return undefined;
  }
}

/** The signer of the EVM tx inside native (TxRaw) bytes, or undefined when they do not decode. */
export function senderOfNative(native: Uint8Array, common: Common): Uint8Array | undefined {
  try {
    const raw = unwrapEthereumTx(native).raw;
    return typedSigned(raw, common)?.sender ?? decodeTx(raw, common).evm.from;
  } catch {
    return undefined;
  }
}
