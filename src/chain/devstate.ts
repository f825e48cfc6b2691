/**
 * The dev controls' state on the chain thread (docs/dev-mode.md): the gas limit of new blocks
 * (evm_setBlockGasLimit), the base fee and the prevRandao of the next block only
 * (anvil_setNextBlockBaseFeePerGas, anvil_setNextBlockPrevRandao), the
 * impersonated addresses (anvil_impersonateAccount, anvil_autoImpersonateAccount), and what a dev
 * revert reads before it rewinds (the logs it removes). None of it is persisted; a snapshot saves the
 * block fields (`save`/`restore`). The pending state changes (anvil_setBalance …) are chain/cheats.ts's.
 */
import type { Store } from '../store/store.js';
import type { EvmLog } from '../types/chain.js';
import { hexKey } from './txpool.js';

/** The dev block fields a snapshot keeps. */
export interface DevFields {
  blockGasLimit: bigint;
  baseFeeOverride: bigint | undefined;
  prevRandaoOverride: Uint8Array | undefined;
}

export class DevState {
  /** the gas limit of the blocks made from now on */
  blockGasLimit: bigint;
  /** the base fee of the next block only (cleared when a block is committed) */
  baseFeeOverride: bigint | undefined;
  /** the mixHash (prevRandao) of the next block only, else its parent's hash (cleared when a block is committed) */
  prevRandaoOverride: Uint8Array | undefined;
  /** addresses (hex keys) whose placeholder-signed txs CheckTx admits */
  private readonly impersonated = new Set<string>();
  /** every address is impersonated */
  private autoImpersonate = false;

  /**
   * `genesisGas`: the genesis block gas limit (a fresh node's); `impersonation`: whether the node
   * serves the dev namespaces at all (off, no address is ever impersonated).
   */
  constructor(
    private readonly genesisGas: bigint,
    private readonly impersonation: boolean,
  ) {
    this.blockGasLimit = genesisGas;
  }

  /** anvil_impersonateAccount / stopImpersonatingAccount; returns whether it was impersonated before. */
  setImpersonated(address: Uint8Array, on: boolean): boolean {
    const key = hexKey(address);
    const was = this.impersonated.has(key);
    if (on) this.impersonated.add(key);
    else this.impersonated.delete(key);
    return was;
  }

  /** anvil_autoImpersonateAccount */
  setAutoImpersonate(on: boolean): void {
    this.autoImpersonate = on;
  }

  /** Whether CheckTx may admit a placeholder-signed tx from `address` now. */
  mayImpersonate(address: Uint8Array): boolean {
    return this.impersonation && (this.autoImpersonate || this.impersonated.has(hexKey(address)));
  }

  save(): DevFields {
    return { blockGasLimit: this.blockGasLimit, baseFeeOverride: this.baseFeeOverride, prevRandaoOverride: this.prevRandaoOverride };
  }

  restore(saved: DevFields): void {
    this.blockGasLimit = saved.blockGasLimit;
    this.baseFeeOverride = saved.baseFeeOverride;
    this.prevRandaoOverride = saved.prevRandaoOverride;
  }

  /** anvil_reset: the block fields of a fresh node. */
  reset(): void {
    this.restore({ blockGasLimit: this.genesisGas, baseFeeOverride: undefined, prevRandaoOverride: undefined });
  }
}

/**
 * The logs of the blocks above `height`, oldest block first (what a revert to `height` removes), at
 * most `limit`; `truncated` when there were more.
 */
export function logsAbove(store: Store, height: bigint, limit: number): { logs: EvmLog[]; truncated: boolean } {
  const rows = store.logRows({ fromBlock: height + 1n, toBlock: BigInt(Number.MAX_SAFE_INTEGER), addresses: [], topics: [] }, limit + 1);
  const logs = rows.slice(0, limit).map((r) => ({
    address: new Uint8Array(r.address),
    topics: r.topics.map((t) => new Uint8Array(t)),
    data: new Uint8Array(r.data),
    blockNumber: BigInt(r.height),
    blockHash: store.blockHash(r.height)!,
    transactionHash: new Uint8Array(r.txHash),
    transactionIndex: r.txIndex,
    logIndex: r.logIndex,
  }));
  return { logs, truncated: rows.length > limit };
}
