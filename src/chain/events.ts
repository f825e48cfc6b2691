/**
 * The RPC thread's event hub, fed by the chain thread's messages: committed blocks, mempool changes
 * and dev rewinds. Surfaces subscribe through it (filters, eth_subscribe, CometBFT subscriptions);
 * the engine's round steps go straight to Surface B's event bus (node/consensusrpc.ts).
 * Listeners run synchronously and must not throw or block; a throwing listener is removed.
 */
import type { EvmLog, EvmTx } from '../types/chain.js';

export interface PoolEvent {
  added: EvmTx[];
  removed: Uint8Array[];
}

/** A dev revert rewound the chain to `height` (docs/dev-mode.md); the logs of the rewound blocks, oldest first. */
export interface RewindEvent {
  height: bigint;
  removedLogs: EvmLog[];
  truncated: boolean;
}

type Listener<T> = (e: T) => void;

class Channel<T> {
  private readonly listeners = new Set<Listener<T>>();
  on(l: Listener<T>): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  emit(e: T): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        this.listeners.delete(l);
      }
    }
  }
  get size(): number {
    return this.listeners.size;
  }
}

export class ChainEvents {
  /** a block was committed and is readable from the store */
  readonly blocks = new Channel<bigint>();
  /** txs entered or left the mempool */
  readonly pool = new Channel<PoolEvent>();
  /** the chain was rewound (evm_revert, anvil_reset): emitted after the reader's own caches follow */
  readonly rewound = new Channel<RewindEvent>();
}
