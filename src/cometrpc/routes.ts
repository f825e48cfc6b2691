/**
 * Surface B's route table (CometBFT v0.38 rpc/core/routes.go): one table for URI, JSON-RPC over HTTP
 * and JSON-RPC over WebSocket. The handlers live one file per route group under routes/ (as
 * rpc/core/*.go), each declared with `route(params, handler)` (route.ts) over the narrow backend
 * ports it needs (backend.ts); their failures are DomainErrors, answered through errors.ts.
 */
import type { ConsensusBackend } from './backend.js';
import type { EventBus } from './events.js';
import type { CometRoute, RouteTable } from './route.js';
import { abciRoutes } from './routes/abci.js';
import { blockRoutes } from './routes/blocks.js';
import { consensusRoutes } from './routes/consensus.js';
import { eventRoutes } from './routes/events.js';
import { evidenceRoutes } from './routes/evidence.js';
import { flushRoutes, mempoolRoutes } from './routes/mempool.js';
import { dialRoutes, statusRoutes } from './routes/status.js';
import { txRoutes } from './routes/tx.js';

export type { CometContext, CometRoute, RouteTable, SubscriptionSession } from './route.js';

export interface RouteOptions {
  /** config.toml `rpc.unsafe`: also serve dial_seeds, dial_peers and unsafe_flush_mempool */
  unsafe: boolean;
  timeoutBroadcastTxCommitMs: number;
  /** how long a height is expected to take (consensus_state's start time) */
  timeoutCommitMs: number;
}

export function createCometRoutes(backend: ConsensusBackend, bus: EventBus, opts: RouteOptions): RouteTable {
  const { blocks, txs, mempool, checker, app, node } = backend;
  const events = eventRoutes(bus);
  const status = statusRoutes(blocks, node);
  const block = blockRoutes(blocks, txs);
  const tx = txRoutes(txs);
  const consensus = consensusRoutes(blocks, node, opts);
  const pool = mempoolRoutes(checker, mempool, txs, bus, opts);
  const abci = abciRoutes(app);
  const table: Record<string, CometRoute> = {
    // subscribe
    subscribe: events.subscribe,
    unsubscribe: events.unsubscribe,
    unsubscribe_all: events.unsubscribe_all,
    // info
    health: status.health,
    status: status.status,
    net_info: status.net_info,
    blockchain: block.blockchain,
    genesis: status.genesis,
    genesis_chunked: status.genesis_chunked,
    block: block.block,
    block_by_hash: block.block_by_hash,
    block_results: block.block_results,
    commit: block.commit,
    header: block.header,
    header_by_hash: block.header_by_hash,
    check_tx: pool.check_tx,
    tx: tx.tx,
    tx_search: tx.tx_search,
    block_search: block.block_search,
    validators: consensus.validators,
    dump_consensus_state: consensus.dump_consensus_state,
    consensus_state: consensus.consensus_state,
    consensus_params: consensus.consensus_params,
    unconfirmed_txs: pool.unconfirmed_txs,
    num_unconfirmed_txs: pool.num_unconfirmed_txs,
    // tx broadcast API
    broadcast_tx_commit: pool.broadcast_tx_commit,
    broadcast_tx_sync: pool.broadcast_tx_sync,
    broadcast_tx_async: pool.broadcast_tx_async,
    // abci API
    abci_query: abci.abci_query,
    abci_info: abci.abci_info,
    // evidence API
    broadcast_evidence: evidenceRoutes().broadcast_evidence,
  };
  if (opts.unsafe) {
    // control API (rpc.unsafe)
    const dial = dialRoutes();
    Object.assign(table, { dial_seeds: dial.dial_seeds, dial_peers: dial.dial_peers, unsafe_flush_mempool: flushRoutes().unsafe_flush_mempool });
  }
  return table;
}
