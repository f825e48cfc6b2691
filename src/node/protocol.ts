/**
 * Messages between the RPC thread (main) and the chain thread (worker). Values are structured-cloned
 * (bigint, Uint8Array and Map survive).
 */
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import type { EvmTx } from '../types/chain.js';

export interface ChainWorkerData {
  opts: NodeOptions;
  genesis: Genesis;
  dbPath: string;
  validatorKeyJson: string;
}

export type ToChain =
  | { type: 'submit'; id: number; raw: Uint8Array; rpc: boolean }
  | { type: 'submitNative'; id: number; tx: Uint8Array }
  | { type: 'stop' };

export type FromChain =
  | { type: 'ready'; height: bigint }
  | { type: 'committed'; height: bigint }
  | { type: 'pool'; added: EvmTx[]; removed: Uint8Array[] }
  | { type: 'reply'; id: number; code: number; log: string; hash?: Uint8Array }
  | { type: 'stopped' }
  | { type: 'fatal'; message: string };
