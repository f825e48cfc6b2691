/**
 * Surface A's batched and raw reads: eth_getStorageValues (many slots of many accounts at one block,
 * geth's BlockChainAPI.GetStorageValues) and the signed envelopes of transactions
 * (eth_getRawTransactionByHash, eth_getRawTransactionByBlockNumberAndIndex,
 * eth_getRawTransactionByBlockHashAndIndex, geth's TransactionAPI; go-ethereum internal/ethapi/api.go).
 */
import { invalidArgument, limitExceeded } from '../lib/errors.js';
import { jsonKind, parseData, typeMismatch } from '../lib/hex.js';
import { ADDRESS_LENGTH, HASH_LENGTH, hash, quantityNumber } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Address, EvmBlock, Hash } from '../types/chain.js';
import type { EvmBackend } from './backend.js';
import { blockNumberOrTag, blockNumberOrTagOrHash, blockOrDefault, isObject } from './codecs.js';
import { hexData, hexKey } from './format.js';
import { stateBlockNumber } from './methods.js';

/** geth's maxGetStorageSlots: the slots of one eth_getStorageValues, all accounts together */
export const MAX_STORAGE_VALUES_SLOTS = 1024;

/** What these methods read. */
export type ReadBackend = Pick<EvmBackend, 'resolveBlock' | 'blockByNumber' | 'blockByHash' | 'transactionByHash' | 'storageAt'>;

interface StorageRequest {
  address: Address;
  slots: Hash[];
}

/**
 * geth's `map[common.Address][]common.Hash`: an address given twice (in any hex case) keeps its last
 * list, as in Go's map; each key is a full 32-byte hash (common.Hash).
 */
const storageRequests: ParamCodec<StorageRequest[]> = {
  name: 'storage requests',
  decode(v, i) {
    if (!isObject(v)) throw typeMismatch(i, jsonKind(v), 'map[common.Address][]common.Hash');
    const out = new Map<string, StorageRequest>();
    for (const [key, keys] of Object.entries(v)) {
      const address = parseData(key, i, ADDRESS_LENGTH);
      if (keys === null) {
        out.set(hexKey(address), { address, slots: [] });
        continue;
      }
      if (!Array.isArray(keys)) throw typeMismatch(i, jsonKind(keys), '[]common.Hash');
      out.set(hexKey(address), { address, slots: keys.map((k) => parseData(k, i, HASH_LENGTH)) });
    }
    return [...out.values()];
  },
};

function rawOf(block: EvmBlock | undefined, index: number): string | null {
  const tx = block?.transactions[index];
  return tx === undefined ? null : hexData(tx.raw);
}

export function createReadMethods(reader: ReadBackend): MethodTable {
  const table: Record<string, MethodSpec> = {
    eth_getStorageValues: method(
      [storageRequests, blockOrDefault(blockNumberOrTagOrHash)],
      async ([requests, sel]): Promise<Record<string, string[]>> => {
        let total = 0;
        for (const r of requests) {
          total += r.slots.length;
          if (total > MAX_STORAGE_VALUES_SLOTS) throw limitExceeded(`too many slots (max ${MAX_STORAGE_VALUES_SLOTS})`);
        }
        if (total === 0) throw invalidArgument('empty request');
        const n = stateBlockNumber(reader, sel);
        // Go writes a map's keys sorted
        const sorted = [...requests].sort((a, b) => (hexKey(a.address) < hexKey(b.address) ? -1 : 1));
        const out: Record<string, string[]> = {};
        for (const r of sorted) {
          const values: string[] = [];
          for (const slot of r.slots) values.push(hexData(await reader.storageAt(r.address, slot, n)));
          out[hexKey(r.address)] = values;
        }
        return out;
      },
    ),
    eth_getRawTransactionByHash: method([hash], ([h]) => {
      const found = reader.transactionByHash(h);
      return found === undefined ? null : hexData(found.tx.raw);
    }),
    eth_getRawTransactionByBlockNumberAndIndex: method([blockNumberOrTag, quantityNumber], ([sel, index]) => {
      const n = reader.resolveBlock(sel);
      return n === undefined ? null : rawOf(reader.blockByNumber(n), index);
    }),
    eth_getRawTransactionByBlockHashAndIndex: method([hash, quantityNumber], ([h, index]) => rawOf(reader.blockByHash(h), index)),
  };
  return Object.freeze(table);
}

