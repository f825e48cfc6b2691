/**
 * The genesis block: EVM block 0 from ferry's genesis (the allocation applied, its header, written
 * with its trie nodes and flat rows in one store transaction), and the check that the genesis
 * CometBFT hands over in InitChain is the one the application was started with (docs/abci.md).
 */
import { createBlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { renderGenesis, type Genesis } from '../config/genesis.js';
import { ethBlockSize } from '../evm/ethrlp.js';
import { EMPTY_TRIE_ROOT } from '../evm/orderedtrie.js';
import type { EvmRunner } from '../evm/runner.js';
import type { FlatStateManager } from '../evm/flatstate.js';
import type { FlatState } from '../store/flatstate.js';
import type { Store } from '../store/store.js';
import type { TrieDB } from '../store/triedb.js';
import type { InitChainRequest } from '../types/abci.js';
import type { EvmHeader } from '../types/chain.js';

/** Raised when a driver hands the application something inconsistent with its state (never a user error). */
export class AppStateError extends Error {}

/** What writing block 0 touches. */
export interface GenesisDeps {
  store: Store;
  genesis: Genesis;
  common: Common;
  trieDb: TrieDB;
  flat: FlatState;
  runner: EvmRunner<FlatStateManager>;
}

/**
 * The height of the genesis block: 0, or the block before CometBFT's initial_height. A fork's is the fork
 * block (its first block continues the origin's numbers: docs/fork-mode.md "Numbering and history").
 */
export function genesisHeight(genesis: Genesis): bigint {
  return genesis.initialHeight - 1n;
}

/**
 * Applies the genesis allocation and writes the genesis block; returns its header. A fork's genesis block
 * stands in for the origin's fork block: its number, and its hash as the origin reported it (never
 * re-hashed), so that the first block's parentHash is the origin's fork block hash.
 */
export async function writeGenesisBlock(d: GenesisDeps): Promise<EvmHeader> {
  const stateRoot = await d.runner.applyGenesis(d.genesis.evm.alloc);
  const number = genesisHeight(d.genesis);
  const fork = d.store.fork?.record;
  if (fork !== undefined && fork.blockNumber !== number) {
    throw new AppStateError(`genesis initial_height ${d.genesis.initialHeight} does not follow the fork block ${fork.blockNumber} (data/fork.json)`);
  }
  const timestamp = BigInt(Math.floor(Date.parse(d.genesis.genesisTime) / 1000));
  const ethHeader = createBlockHeader(
    {
      number,
      stateRoot,
      gasLimit: d.genesis.maxGas,
      timestamp,
      baseFeePerGas: d.genesis.evm.baseFeePerGas,
      difficulty: 0n,
      excessBlobGas: 0n,
      blobGasUsed: 0n,
      parentBeaconBlockRoot: new Uint8Array(32),
    },
    { common: d.common, skipConsensusFormatValidation: true },
  );
  const header: EvmHeader = {
    number,
    hash: fork !== undefined ? Uint8Array.from(Buffer.from(fork.blockHash.slice(2), 'hex')) : ethHeader.hash(),
    // size is set below from the full block encoding
    parentHash: new Uint8Array(32),
    stateRoot,
    transactionsRoot: EMPTY_TRIE_ROOT,
    receiptsRoot: EMPTY_TRIE_ROOT,
    logsBloom: new Uint8Array(256),
    miner: new Uint8Array(20),
    gasLimit: d.genesis.maxGas,
    gasUsed: 0n,
    timestamp,
    extraData: new Uint8Array(),
    baseFeePerGas: d.genesis.evm.baseFeePerGas,
    mixHash: new Uint8Array(32),
    size: 0n,
  };
  header.size = ethBlockSize(d.common, header, []);
  const genesisChange = d.runner.genesisChange!;
  d.store.transaction(() => {
    d.trieDb.flushInto(d.store);
    d.flat.write(Number(number), genesisChange);
    d.store.putBlock({ height: number, hash: header.hash, evm: { header, transactions: [] }, receipts: [], nativeHashes: [] });
  });
  d.trieDb.afterCommit();
  d.flat.applied(Number(number), genesisChange);
  d.runner.genesisChange = undefined; // a large genesis's change set is not kept alive
  return header;
}

/** JSON text with object keys sorted (two JSON documents compare equal whatever their key order). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** CometBFT's genesis must be the one this application was started with (same chain id, app_state). */
/** app_state without `evm.chain_config` */
function withoutSchedule(appState: unknown): unknown {
  const evm = (appState as { evm?: unknown } | null)?.evm;
  if (evm === null || typeof evm !== 'object' || !('chain_config' in evm)) return appState;
  const { chain_config: _schedule, ...rest } = evm as Record<string, unknown>;
  return { ...(appState as object), evm: rest };
}

export function checkInitChain(genesis: Genesis, req: InitChainRequest): void {
  if (req.chainId !== genesis.chainId) {
    throw new AppStateError(`InitChain: chain id ${JSON.stringify(req.chainId)} differs from ferry's genesis (${JSON.stringify(genesis.chainId)})`);
  }
  if (req.initialHeight !== genesis.initialHeight) {
    throw new AppStateError(`InitChain: initial height ${req.initialHeight} differs from ferry's genesis (${genesis.initialHeight})`);
  }
  let theirs: unknown;
  try {
    theirs = JSON.parse(Buffer.from(req.appStateBytes).toString('utf8'));
  } catch {
    throw new AppStateError('InitChain: app_state_bytes is not JSON');
  }
  const ours = (JSON.parse(renderGenesis(genesis)) as { app_state: unknown }).app_state;
  // the fork schedule is ferry's own: an upgrade adds it to ferry's genesis.json only (CometBFT keeps the hash
  // of the genesis it started with), so a node joining later has it in one file and not the other
  // (docs/configuration.md "Hardforks")
  if (canonicalJson(withoutSchedule(theirs)) !== canonicalJson(withoutSchedule(ours))) {
    throw new AppStateError("InitChain: CometBFT's genesis app_state differs from ferry's genesis.json (use the same file for both)");
  }
}
