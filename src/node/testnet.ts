/**
 * `ferry testnet`: the files of a ready local network under real CometBFT v0.38 — for each node a
 * CometBFT home (config.toml, node and validator keys, the shared genesis) and a ferry home started
 * with --with-cometbft=false (matching ABCI address, its own JSON-RPC ports), persistent peers wired,
 * distinct loopback ports; plus start.sh / stop.sh. Validators come first, then full nodes (a key of
 * their own that is not in the validator set).
 */
import { badConfig } from '../lib/errors.js';
import { mkdirSync, existsSync, readdirSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../lib/fs.js';
import {
  generateNodeKey,
  generateValidatorKey,
  initialPrivValidatorState,
  nodeId,
  nodeKeyJson,
  privValidatorStateJson,
  validatorKeyJson,
  type NodeKey,
  type ValidatorKey,
} from '../consensus/cometbft/index.js';
import { DEFAULT_CHAIN_ID, DEFAULT_NEW_HARDFORK, DEV_VALIDATOR_POWER, type ForkChoice, devGenesis, parseChainId, renderGenesis, validatorAddress } from '../config/genesis.js';
import { defaultOptions } from '../config/load.js';
import { renderAppToml, renderConfigToml } from '../config/templates.js';
import { ensureJwtSecret, homePaths } from './home.js';

/** Ports of node i: basePort + i * PORTS_PER_NODE + offset. */
export const PORTS_PER_NODE = 10;
export const PORT_OFFSETS = { p2p: 0, rpc: 1, abci: 2, jsonRpc: 3, ws: 4 } as const;
export const DEFAULT_TESTNET_BASE_PORT = 26600;
export const MAX_TESTNET_NODES = 64;
/** CometBFT timeouts of a local testnet (fast blocks; a dead proposer costs about timeout_propose) */
export const TESTNET_TIMEOUTS = { propose: '1s', prevote: '500ms', precommit: '500ms', commit: '500ms' } as const;

export interface TestnetOptions {
  validators: number;
  fullNodes: number;
  output: string;
  chainId?: string;
  /** the genesis hardfork and scheduled forks (default: DEFAULT_NEW_HARDFORK, none scheduled) */
  forks?: ForkChoice;
  basePort?: number;
  /** CometBFT's consensus.timeout_commit, a Go duration ("500ms") */
  timeoutCommit?: string;
  /** ABCI between each ferry and its CometBFT (default socket; `app` mempool implies grpc) */
  transport?: 'socket' | 'grpc';
  /** CometBFT's mempool: `flood` (its default, CheckTx gossip) or v0.39's application-side `app` */
  mempool?: 'flood' | 'app';
}

export interface TestnetNode {
  name: string;
  validator: boolean;
  cometHome: string;
  ferryHome: string;
  ports: { p2p: number; rpc: number; abci: number; jsonRpc: number; ws: number };
  nodeId: string;
}

const FILE_MODE = 0o644;
const KEY_MODE = 0o600;
const SCRIPT_MODE = 0o755;

function portsOf(basePort: number, i: number): TestnetNode['ports'] {
  const b = basePort + i * PORTS_PER_NODE;
  return { p2p: b + PORT_OFFSETS.p2p, rpc: b + PORT_OFFSETS.rpc, abci: b + PORT_OFFSETS.abci, jsonRpc: b + PORT_OFFSETS.jsonRpc, ws: b + PORT_OFFSETS.ws };
}

/** CometBFT's config.toml: only what differs from CometBFT's defaults (it fills in the rest). */
function cometConfigToml(node: TestnetNode, peers: string, timeoutCommit: string, transport: 'socket' | 'grpc', mempool: 'flood' | 'app'): string {
  return [
    '# CometBFT config written by `ferry testnet`; keys not listed take CometBFT\'s defaults.',
    `moniker = ${JSON.stringify(node.name)}`,
    // CometBFT's gRPC client resolves proxy_app as a gRPC target: host:port, without tcp://
    transport === 'grpc' ? `proxy_app = "127.0.0.1:${node.ports.abci}"` : `proxy_app = "tcp://127.0.0.1:${node.ports.abci}"`,
    ...(transport === 'grpc' ? ['abci = "grpc"'] : []),
    '',
    ...(mempool === 'app' ? ['[mempool]', 'type = "app"', ''] : []),
    '[rpc]',
    `laddr = "tcp://127.0.0.1:${node.ports.rpc}"`,
    '',
    '[p2p]',
    `laddr = "tcp://127.0.0.1:${node.ports.p2p}"`,
    `persistent_peers = ${JSON.stringify(peers)}`,
    'addr_book_strict = false',
    'allow_duplicate_ip = true',
    '',
    '[consensus]',
    `timeout_propose = "${TESTNET_TIMEOUTS.propose}"`,
    `timeout_prevote = "${TESTNET_TIMEOUTS.prevote}"`,
    `timeout_precommit = "${TESTNET_TIMEOUTS.precommit}"`,
    `timeout_commit = ${JSON.stringify(timeoutCommit)}`,
    '',
    '[tx_index]',
    'indexer = "kv"',
    '',
  ].join('\n');
}

function script(lines: string[]): string {
  return ['#!/usr/bin/env bash', 'set -euo pipefail', 'cd "$(dirname "$0")"', ...lines, ''].join('\n');
}

export function writeTestnet(o: TestnetOptions): TestnetNode[] {
  const total = o.validators + o.fullNodes;
  if (!Number.isInteger(o.validators) || o.validators < 1) throw badConfig('validators', '--validators must be at least 1');
  if (!Number.isInteger(o.fullNodes) || o.fullNodes < 0) throw badConfig('full-nodes', '--full-nodes cannot be negative');
  if (total > MAX_TESTNET_NODES) throw badConfig('validators', `at most ${MAX_TESTNET_NODES} nodes`);
  const basePort = o.basePort ?? DEFAULT_TESTNET_BASE_PORT;
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort + total * PORTS_PER_NODE > 65_535) {
    throw badConfig('base-port', `--base-port must leave room for ${total * PORTS_PER_NODE} ports between 1024 and 65535`);
  }
  const chainId = o.chainId ?? DEFAULT_CHAIN_ID;
  parseChainId(chainId);
  const out = resolve(o.output);
  if (existsSync(out) && readdirSync(out).length > 0) throw badConfig('output', `${out} is not empty`);
  const timeoutCommit = o.timeoutCommit ?? TESTNET_TIMEOUTS.commit;
  const mempool = o.mempool ?? 'flood';
  // v0.39.4's socket client does not accept InsertTx/ReapTxs responses: the app mempool needs gRPC
  if (mempool === 'app' && o.transport === 'socket') throw badConfig('mempool', '--mempool app needs --abci-transport grpc (CometBFT\'s socket client does not carry InsertTx/ReapTxs)');
  const transport = o.transport ?? (mempool === 'app' ? 'grpc' : 'socket');

  const keys: ValidatorKey[] = [];
  const nodes: TestnetNode[] = [];
  const nodeKeys: NodeKey[] = [];
  for (let i = 0; i < total; i++) {
    const name = `node${i}`;
    const nodeKey = generateNodeKey();
    nodeKeys.push(nodeKey);
    keys.push(generateValidatorKey());
    nodes.push({
      name,
      validator: i < o.validators,
      cometHome: join(out, name, 'cometbft'),
      ferryHome: join(out, name, 'ferry'),
      ports: portsOf(basePort, i),
      nodeId: nodeId(nodeKey),
    });
  }
  const genesis = devGenesis({ chainId, validatorPubKey: keys[0]!.pubKey, ...(o.forks ?? { hardfork: DEFAULT_NEW_HARDFORK }) });
  genesis.validators = keys.slice(0, o.validators).map((k, i) => ({ address: validatorAddress(k.pubKey), pubKey: k.pubKey, power: DEV_VALIDATOR_POWER, name: `node${i}` }));
  const genesisText = renderGenesis(genesis);

  nodes.forEach((node, i) => {
    const peers = nodes.filter((p) => p !== node).map((p) => `${p.nodeId}@127.0.0.1:${p.ports.p2p}`).join(',');
    // CometBFT home
    const cfg = join(node.cometHome, 'config');
    const data = join(node.cometHome, 'data');
    mkdirSync(cfg, { recursive: true, mode: 0o700 });
    mkdirSync(data, { recursive: true, mode: 0o700 });
    writeFileAtomic(join(cfg, 'config.toml'), cometConfigToml(node, peers, timeoutCommit, transport, mempool), FILE_MODE);
    writeFileAtomic(join(cfg, 'genesis.json'), genesisText, FILE_MODE);
    writeFileAtomic(join(cfg, 'node_key.json'), nodeKeyJson(nodeKeys[i]!) + '\n', KEY_MODE);
    writeFileAtomic(join(cfg, 'priv_validator_key.json'), validatorKeyJson(keys[i]!) + '\n', KEY_MODE);
    writeFileAtomic(join(data, 'priv_validator_state.json'), privValidatorStateJson(initialPrivValidatorState()) + '\n', KEY_MODE);
    // ferry home: the application of this node
    const fp = homePaths(node.ferryHome);
    mkdirSync(fp.configDir, { recursive: true, mode: 0o700 });
    mkdirSync(fp.dataDir, { recursive: true, mode: 0o700 });
    const opts = defaultOptions(node.ferryHome);
    opts.abci = { withCometbft: false, address: `tcp://127.0.0.1:${node.ports.abci}`, transport, cometbftRpc: `tcp://127.0.0.1:${node.ports.rpc}` };
    opts.jsonRpc.address = `127.0.0.1:${node.ports.jsonRpc}`;
    opts.jsonRpc.wsAddress = `127.0.0.1:${node.ports.ws}`;
    writeFileAtomic(fp.appToml, renderAppToml(opts), FILE_MODE);
    writeFileAtomic(fp.configToml, renderConfigToml(opts), FILE_MODE);
    writeFileAtomic(fp.privValidatorKey, validatorKeyJson(keys[i]!) + '\n', KEY_MODE);
    writeFileAtomic(fp.nodeKey, nodeKeyJson(nodeKeys[i]!) + '\n', KEY_MODE);
    writeFileAtomic(fp.privValidatorState, privValidatorStateJson(initialPrivValidatorState()) + '\n', KEY_MODE);
    ensureJwtSecret(node.ferryHome);
    writeFileAtomic(fp.genesis, genesisText, FILE_MODE);
  });

  const ferryBin = resolve(new URL('../../../bin/ferry.js', import.meta.url).pathname);
  const start = script([
    `FERRY="\${FERRY:-node ${ferryBin}}"`,
    'COMETBFT="${COMETBFT:-cometbft}"',
    'mkdir -p logs',
    ...nodes.flatMap((n) => [
      `$FERRY start --home ${n.name}/ferry > logs/${n.name}-ferry.log 2>&1 & echo $! > logs/${n.name}-ferry.pid`,
      `$COMETBFT start --home ${n.name}/cometbft > logs/${n.name}-cometbft.log 2>&1 & echo $! > logs/${n.name}-cometbft.pid`,
    ]),
    `echo "started ${total} nodes; JSON-RPC: ${nodes.map((n) => `http://127.0.0.1:${n.ports.jsonRpc}`).join(' ')}"`,
  ]);
  const stop = script(['for f in logs/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; rm -f "$f"; done', 'echo stopped']);
  writeFileAtomic(join(out, 'start.sh'), start, SCRIPT_MODE);
  writeFileAtomic(join(out, 'stop.sh'), stop, SCRIPT_MODE);
  chmodSync(join(out, 'start.sh'), SCRIPT_MODE);
  chmodSync(join(out, 'stop.sh'), SCRIPT_MODE);
  return nodes;
}
