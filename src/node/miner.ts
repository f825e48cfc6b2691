/**
 * What the `miner_*` methods do to this node: src/evmrpc/miner.ts declares the wire side and its
 * port; this implements it over the chain thread, the chain reader and the home directory. (The dev
 * methods reach the chain thread through the typed dev channel, src/types/dev.ts.)
 */
import type { ChainReader } from '../chain/reader.js';
import type { MinerBackend } from '../evmrpc/miner.js';
import type { Logger } from '../lib/log.js';
import type { ChainClient } from './chainclient.js';
import { writeMinimumGasPrice } from './home.js';

export interface MinerDeps {
  chain: ChainClient;
  reader: ChainReader;
  /** the home directory whose app.toml miner_setGasPrice writes */
  home: string;
  /** the node was started with --minimum-gas-prices (which wins over app.toml while given) */
  minimumGasPriceFromFlag: boolean;
  log: Logger;
}

/** miner_setEtherbase and miner_setGasPrice (docs: src/evmrpc/miner.ts's table). */
export function createMinerBackend(d: MinerDeps): MinerBackend {
  return {
    async setEtherbase(address) {
      await d.chain.setCoinbase(address);
      d.reader.setCoinbase(address);
      d.log.info({ address: '0x' + Buffer.from(address).toString('hex') }, 'new blocks pay fees to this address');
    },
    setGasPrice(price) {
      writeMinimumGasPrice(d.home, price);
      if (d.minimumGasPriceFromFlag) {
        d.log.warn({ price: price.toString() }, 'miner_setGasPrice wrote minimum-gas-prices to app.toml, but this node was started with --minimum-gas-prices, which takes precedence while it is given');
      } else {
        d.log.info({ price: price.toString() }, 'miner_setGasPrice wrote minimum-gas-prices to app.toml; it takes effect when the node restarts');
      }
    },
  };
}
