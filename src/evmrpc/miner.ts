/**
 * The `miner` namespace (private: every method needs an authenticated request). docs/accounts-and-auth.md's
 * table, with Evmos's texts where it has them (docs/compatibility.md):
 *
 * | method             | answer |
 * |--------------------|--------|
 * | miner_getHashrate  | `0` |
 * | miner_setExtra     | error: first the 32-byte cap (`extra exceeds max length. N > 32`), then `unsupported rpc function: miner_setExtra` |
 * | miner_setGasPrice  | `true`; writes `minimum-gas-prices` into app.toml, effective after a restart, and without effect while the node is started with `--minimum-gas-prices`; a price above MAX_MINIMUM_GAS_PRICE is -32602 and writes nothing |
 * | miner_start        | error `unsupported rpc function: miner_start` |
 * | miner_stop         | `null` (no-op) |
 * | miner_setGasLimit  | `false` |
 * | miner_setEtherbase | `true`; new blocks pay fees to the address (block `miner`, `eth_coinbase`), kept across restarts |
 */
import { argumentError, jsonKind, typeMismatch } from '../lib/hex.js';
import { invalidRequest, unsupported as unsupportedError } from '../lib/errors.js';
import { EVM_DENOM, MAX_MINIMUM_GAS_PRICE } from '../config/options.js';
import { address, quantity, string } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import type { Address } from '../types/chain.js';

/** the extra data a validator may add to proposed blocks (geth's params.MaximumExtraDataSize) */
export const MAX_EXTRA_DATA_BYTES = 32;

/** What the miner methods change; node/ wires it to the chain thread and the config file. */
export interface MinerBackend {
  /** the fee recipient of blocks made from now on; persisted */
  setEtherbase(address: Address): Promise<void>;
  /** writes `minimum-gas-prices` into app.toml (takes effect at the next start) */
  setGasPrice(price: bigint): void;
}

/** miner_start's thread count: geth takes a JSON number; a hex quantity decodes too. */
const threads: ParamCodec<number | undefined> = {
  name: 'threads',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return Number(quantity.decode(v, i));
    if (typeof v !== 'number' || !Number.isInteger(v)) throw typeMismatch(i, jsonKind(v), 'int');
    return v;
  },
};

/** every miner method needs the token */
const PRIVATE = { private: true } as const;

const unsupported = (method: string): never => {
  throw unsupportedError(`unsupported rpc function: ${method}`);
};

export function createMinerMethods(backend: MinerBackend): MethodTable {
  const table: Record<string, MethodSpec> = {
    miner_getHashrate: method([], () => 0, PRIVATE),
    miner_setExtra: method([string], ([extra]) => {
      const size = Buffer.byteLength(extra, 'utf8');
      if (size > MAX_EXTRA_DATA_BYTES) throw invalidRequest(`extra exceeds max length. ${size} > ${MAX_EXTRA_DATA_BYTES}`);
      return unsupported('miner_setExtra');
    }, PRIVATE),
    miner_setGasPrice: method([quantity], ([price]) => {
      // a larger minimum would refuse every tx after the restart (see MAX_MINIMUM_GAS_PRICE)
      if (price > MAX_MINIMUM_GAS_PRICE) {
        throw argumentError(0, `gas price ${price}${EVM_DENOM} is above the maximum ${MAX_MINIMUM_GAS_PRICE}${EVM_DENOM}`);
      }
      backend.setGasPrice(price);
      return true;
    }, PRIVATE),
    miner_start: method([threads], () => unsupported('miner_start'), PRIVATE),
    miner_stop: method([], () => null, PRIVATE),
    miner_setGasLimit: method([quantity], () => false, PRIVATE),
    miner_setEtherbase: method([address], async ([addr]) => {
      await backend.setEtherbase(addr);
      return true;
    }, PRIVATE),
  };
  return Object.freeze(table);
}
