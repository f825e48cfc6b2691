/**
 * What the `miner_*` methods and the dev controls (evm_*, anvil_*, hardhat_*) do to this node: the
 * method tables (src/evmrpc/miner.ts, src/evmrpc/devmethods.ts) declare the wire side; these
 * implement their ports over the chain thread, the chain reader and the home directory.
 */
import type { ChainReader } from '../chain/reader.js';
import type { AccountSigner } from '../evmrpc/accounts.js';
import type { DevControls } from '../evmrpc/devmethods.js';
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

/**
 * The dev controls on the chain thread (docs/dev-mode.md); the fee recipient is the miner's.
 * Impersonation: the chain thread admits the impersonated txs, the signer sends them, so both learn it.
 */
export function createDevControls(chain: ChainClient, miner: MinerBackend, signer: AccountSigner): DevControls {
  return {
    mine: (blocks, interval, timestamp) => chain.dev({ op: 'mine', blocks, interval, timestamp }),
    increaseTime: (seconds) => chain.dev({ op: 'increaseTime', seconds }),
    setNextTimestamp: (seconds) => chain.dev({ op: 'setNextTimestamp', seconds }),
    setAutomine: (enabled) => chain.dev({ op: 'setAutomine', enabled }),
    setIntervalMining: (seconds) => chain.dev({ op: 'setInterval', seconds }),
    setBlockGasLimit: (gas) => chain.dev({ op: 'setBlockGasLimit', gas }),
    setNextBaseFee: (fee) => chain.dev({ op: 'setNextBaseFee', fee }),
    dropTxs: (hashes) => chain.dev({ op: 'dropTxs', hashes }),
    setCoinbase: (address) => miner.setEtherbase(address),
    impersonate: async (address, on) => {
      await chain.dev({ op: 'impersonate', address, on });
      signer.setImpersonated(address, on);
    },
    autoImpersonate: async (enabled) => {
      await chain.dev({ op: 'autoImpersonate', enabled });
      signer.setAutoImpersonate(enabled);
    },
    snapshot: () => chain.dev({ op: 'snapshot' }),
    revert: (id) => chain.dev({ op: 'revert', id }),
    reset: () => chain.dev({ op: 'reset' }),
    status: () => chain.dev({ op: 'status' }),
  };
}
