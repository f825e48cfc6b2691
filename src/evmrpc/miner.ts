/**
 * The `miner` namespace (private: every method needs an authenticated request). SPEC.md's table,
 * with Evmos's texts where it has them:
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
import type { MethodSpec, MethodTable, ParamCodec } from '../jsonrpc/types.js';
import type { Address } from '../types/chain.js';

/** SPEC.md: the extra data a validator may add to proposed blocks */
export const MAX_EXTRA_DATA_BYTES = 32;

/** What the miner methods change; node/ wires it to the chain thread and the config file. */
export interface MinerBackend {
  /** the fee recipient of blocks made from now on; persisted */
  setEtherbase(address: Address): Promise<void>;
  /** writes `minimum-gas-prices` into app.toml (takes effect at the next start) */
  setGasPrice(price: bigint): void;
}

const NO_PARAMS: readonly ParamCodec[] = [];

/** miner_start's thread count: geth takes a JSON number; SPEC.md shows a hex quantity. Both decode. */
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

function privateSpec(params: readonly ParamCodec[], handler: MethodSpec['handler']): MethodSpec {
  return { params, private: true, handler };
}

const unsupported = (method: string): never => {
  throw unsupportedError(`unsupported rpc function: ${method}`);
};

export function createMinerMethods(backend: MinerBackend): MethodTable {
  const table: Record<string, MethodSpec> = {
    miner_getHashrate: privateSpec(NO_PARAMS, () => 0),
    miner_setExtra: privateSpec([string], ([extra]: [string]) => {
      const size = Buffer.byteLength(extra, 'utf8');
      if (size > MAX_EXTRA_DATA_BYTES) throw invalidRequest(`extra exceeds max length. ${size} > ${MAX_EXTRA_DATA_BYTES}`);
      return unsupported('miner_setExtra');
    }),
    miner_setGasPrice: privateSpec([quantity], ([price]: [bigint]) => {
      // a larger minimum would refuse every tx after the restart (see MAX_MINIMUM_GAS_PRICE)
      if (price > MAX_MINIMUM_GAS_PRICE) {
        throw argumentError(0, `gas price ${price}${EVM_DENOM} is above the maximum ${MAX_MINIMUM_GAS_PRICE}${EVM_DENOM}`);
      }
      backend.setGasPrice(price);
      return true;
    }),
    miner_start: privateSpec([threads], () => unsupported('miner_start')),
    miner_stop: privateSpec(NO_PARAMS, () => null),
    miner_setGasLimit: privateSpec([quantity], () => false),
    miner_setEtherbase: privateSpec([address], async ([addr]: [Address]) => {
      await backend.setEtherbase(addr);
      return true;
    }),
  };
  return Object.freeze(table);
}
