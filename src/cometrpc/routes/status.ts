/**
 * The node itself (rpc/core/health.go, status.go, net.go): health, status, net_info, genesis,
 * genesis_chunked, and the unsafe dial_seeds and dial_peers.
 */
import { domainError, invalidArgument, notFound, unsupported } from '../../lib/errors.js';
import type { BlockStore, NodeInfo } from '../backend.js';
import { NODE_CHANNELS, P2P_PROTOCOL, formatTime, hexUpper, pubKeyJson } from '../format.js';
import type { Json, PubKeyJson } from '../jsontypes.js';
import { boolParam, stringListParam, uintParam } from '../params.js';
import { route, type CometRoute } from '../route.js';

/** genesis_chunked slices the genesis JSON into chunks of this many bytes */
export const GENESIS_CHUNK_SIZE = 16 * 1024 * 1024;

/** NO_P2P: ferry is one node with no p2p layer, so the unsafe control routes have nothing to act on. */
export const NO_P2P = 'ferry runs a single node without a p2p network: there is no peer to dial';

/** an empty result (ResultHealth, ResultSubscribe, …) */
export type EmptyResult = Record<string, never>;

/** coretypes.ResultStatus */
export interface StatusResult {
  node_info: {
    protocol_version: { p2p: string; block: string; app: string };
    id: string;
    listen_addr: string;
    network: string;
    version: string;
    channels: string;
    moniker: string;
    other: { tx_index: string; rpc_address: string };
  };
  sync_info: {
    latest_block_hash: string;
    latest_app_hash: string;
    latest_block_height: string;
    latest_block_time: string;
    earliest_block_hash: string;
    earliest_app_hash: string;
    earliest_block_height: string;
    earliest_block_time: string;
    catching_up: boolean;
  };
  validator_info: { address: string; pub_key: PubKeyJson; voting_power: string };
}

/** coretypes.ResultNetInfo (no peers: ferry has no p2p layer) */
export interface NetInfoResult {
  listening: boolean;
  listeners: string[];
  n_peers: string;
  /** coretypes.Peer per peer: ferry has none */
  peers: never[];
}

/** coretypes.ResultGenesis */
export interface GenesisResult {
  /** the genesis document as the home holds it, passed through unchanged */
  genesis: Json;
}

/** coretypes.ResultGenesisChunk */
export interface GenesisChunkResult {
  chunk: string;
  total: string;
  data: string;
}

export function statusRoutes(blocks: BlockStore, node: NodeInfo) {
  let genesisCache: { obj: Json; chunks: string[] } | undefined;
  const genesis = () => {
    if (!genesisCache) {
      const bytes = Buffer.from(node.genesisJson, 'utf8');
      const chunks: string[] = [];
      for (let at = 0; at < bytes.length; at += GENESIS_CHUNK_SIZE) chunks.push(bytes.subarray(at, at + GENESIS_CHUNK_SIZE).toString('base64'));
      genesisCache = { obj: JSON.parse(node.genesisJson) as Json, chunks };
    }
    return genesisCache;
  };

  function status(): StatusResult {
    const id = node.identity;
    const top = blocks.latestHeight();
    const base = blocks.baseHeight();
    const last = top >= base ? blocks.block(top) : undefined;
    const first = top >= base ? blocks.block(base) : undefined;
    const own = blocks.validators(top + 1n)?.find((v) => Buffer.compare(v.address, id.validator.address) === 0);
    return {
      node_info: {
        protocol_version: { p2p: P2P_PROTOCOL, block: '11', app: id.appVersion.toString() },
        id: id.nodeId,
        listen_addr: id.listenAddr,
        network: id.network,
        version: id.version,
        channels: NODE_CHANNELS,
        moniker: id.moniker,
        other: { tx_index: 'on', rpc_address: id.rpcAddress },
      },
      sync_info: {
        latest_block_hash: last ? hexUpper(last.blockId.hash) : '',
        latest_app_hash: last ? hexUpper(last.block.header.appHash) : '',
        latest_block_height: (last ? top : 0n).toString(),
        latest_block_time: last ? formatTime(last.block.header.time) : formatTime({ seconds: 0n, nanos: 0 }),
        earliest_block_hash: first ? hexUpper(first.blockId.hash) : '',
        earliest_app_hash: first ? hexUpper(first.block.header.appHash) : '',
        earliest_block_height: (first ? base : 0n).toString(),
        earliest_block_time: first ? formatTime(first.block.header.time) : formatTime({ seconds: 0n, nanos: 0 }),
        catching_up: false,
      },
      validator_info: {
        address: hexUpper(id.validator.address),
        pub_key: pubKeyJson(id.validator.pubKey),
        voting_power: (own?.votingPower ?? 0n).toString(),
      },
    };
  }

  return {
    health: route([], (): EmptyResult => ({})),
    status: route([], status),
    net_info: route([], (): NetInfoResult => ({ listening: false, listeners: [], n_peers: '0', peers: [] })),
    genesis: route(
      [],
      (): GenesisResult => {
        const g = genesis();
        if (g.chunks.length > 1) throw domainError('resultTooLarge', 'genesis response is large, please use the genesis_chunked API instead');
        return { genesis: g.obj };
      },
      { cache: 'always' },
    ),
    genesis_chunked: route(
      [uintParam('chunk')],
      ([chunk]): GenesisChunkResult => {
        const g = genesis();
        const id = Number(chunk ?? 0n);
        if (id > g.chunks.length - 1) throw notFound(`there are ${g.chunks.length - 1} chunks, ${id} is invalid`);
        return { chunk: String(id), total: String(g.chunks.length), data: g.chunks[id]! };
      },
      { cache: 'always' },
    ),
  } satisfies Record<string, CometRoute>;
}

/** rpc/core/routes.go AddUnsafeRoutes, the p2p part (with `rpc.unsafe = true`). */
export function dialRoutes() {
  return {
    dial_seeds: route([stringListParam('seeds')], ([seeds]): never => {
      if (seeds.length === 0) throw invalidArgument('no seeds provided');
      throw unsupported(NO_P2P);
    }),
    dial_peers: route(
      [stringListParam('peers'), boolParam('persistent'), boolParam('unconditional'), boolParam('private')],
      ([peers]): never => {
        if (peers.length === 0) throw invalidArgument('no peers provided');
        throw unsupported(NO_P2P);
      },
    ),
  } satisfies Record<string, CometRoute>;
}
