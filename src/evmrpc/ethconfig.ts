/**
 * eth_config (EIP-7910): the rules of the chain's current fork, of the next scheduled one and of the
 * last one, in geth's shape (go-ethereum internal/ethapi/api.go BlockChainAPI.Config; schema:
 * execution-apis src/schemas/client.yaml ConfigurationResponse). The current fork is the one of the
 * head block's time (evm/forks.ts); docs/compatibility.md "eth_config" says what ferry reports and runs.
 */
import { crc32 } from 'node:zlib';
import { getActivePrecompiles } from '@ethereumjs/evm';
import type { ForkActivation, ForkSchedule } from '../evm/forks.js';
import { method, type MethodTable } from '../jsonrpc/types.js';
import type { EvmBackend } from './backend.js';
import { hexData } from './format.js';

/** One fork's entry (geth's `config` struct, same field order). */
interface ForkConfig {
  activationTime: number;
  blobSchedule: { target: number; max: number; baseFeeUpdateFraction: number };
  chainId: string;
  forkId: string;
  precompiles: Record<string, string>;
  systemContracts: Record<string, string>;
}

/**
 * geth's precompile names (core/vm/contracts.go, each contract's Name()) by address; ethereumjs says
 * which addresses a fork has.
 */
const PRECOMPILE_NAMES: Readonly<Record<string, string>> = {
  '0x0000000000000000000000000000000000000001': 'ECREC',
  '0x0000000000000000000000000000000000000002': 'SHA256',
  '0x0000000000000000000000000000000000000003': 'RIPEMD160',
  '0x0000000000000000000000000000000000000004': 'ID',
  '0x0000000000000000000000000000000000000005': 'MODEXP',
  '0x0000000000000000000000000000000000000006': 'BN254_ADD',
  '0x0000000000000000000000000000000000000007': 'BN254_MUL',
  '0x0000000000000000000000000000000000000008': 'BN254_PAIRING',
  '0x0000000000000000000000000000000000000009': 'BLAKE2F',
  '0x000000000000000000000000000000000000000a': 'KZG_POINT_EVALUATION',
  '0x000000000000000000000000000000000000000b': 'BLS12_G1ADD',
  '0x000000000000000000000000000000000000000c': 'BLS12_G1MSM',
  '0x000000000000000000000000000000000000000d': 'BLS12_G2ADD',
  '0x000000000000000000000000000000000000000e': 'BLS12_G2MSM',
  '0x000000000000000000000000000000000000000f': 'BLS12_PAIRING_CHECK',
  '0x0000000000000000000000000000000000000010': 'BLS12_MAP_FP_TO_G1',
  '0x0000000000000000000000000000000000000011': 'BLS12_MAP_FP2_TO_G2',
  '0x0000000000000000000000000000000000000100': 'P256VERIFY',
};

/** geth params/config.go DefaultCancunBlobConfig / DefaultPragueBlobConfig / DefaultOsakaBlobConfig */
const BLOB_SCHEDULES: Readonly<Record<string, ForkConfig['blobSchedule']>> = {
  cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 },
  prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
  osaka: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
};

/** geth params/config.go ActiveSystemContracts, the addresses of params/protocol_params.go (mainnet's deposit contract, as geth's dev chain) */
const CANCUN_SYSTEM_CONTRACTS = { BEACON_ROOTS_ADDRESS: '0x000f3df6d732807ef1319fb7b8bb8522d0beac02' };
const PRAGUE_SYSTEM_CONTRACTS = {
  ...CANCUN_SYSTEM_CONTRACTS,
  CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS: '0x0000bbddc7ce488642fb579f8b00f3a590007251',
  DEPOSIT_CONTRACT_ADDRESS: '0x00000000219ab540356cbb839cbe05303d7705fa',
  HISTORY_STORAGE_ADDRESS: '0x0000f90827f1c53a10cb7a02335b175320002935',
  WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS: '0x00000961ef480eb55e80d19ad83579a64c007002',
};

/** keys in Go's map order as encoding/json writes them: sorted */
function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * EIP-6122 FORK_HASH as geth's forkid.NewID computes it: CRC32 of the genesis hash, then of each fork
 * time after genesis up to `time` (8 bytes big-endian); forks active at genesis add nothing.
 */
export function forkHash(genesisHash: Uint8Array, activations: readonly ForkActivation[], genesisTime: bigint, time: bigint): Uint8Array {
  let sum = crc32(genesisHash);
  const seen = new Set<bigint>();
  for (const a of activations) {
    if (a.time <= genesisTime || a.time > time || seen.has(a.time)) continue;
    seen.add(a.time);
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(a.time);
    sum = crc32(b, sum);
  }
  const out = Buffer.alloc(4);
  out.writeUInt32BE(sum >>> 0);
  return new Uint8Array(out);
}

export type EthConfigBackend = Pick<EvmBackend, 'latestNumber' | 'genesisNumber' | 'blockByNumber'>;

export function createEthConfigMethods(reader: EthConfigBackend, opts: { chainId: bigint; forks: ForkSchedule }): MethodTable {
  const { forks } = opts;
  const entry = (a: ForkActivation, genesisHash: Uint8Array, genesisTime: bigint): ForkConfig => {
    const precompiles: Record<string, string> = {};
    for (const addr of getActivePrecompiles(forks.commonOf(a.fork)).keys()) {
      const key = addr.startsWith('0x') ? addr.toLowerCase() : `0x${addr.toLowerCase()}`;
      const name = PRECOMPILE_NAMES[key];
      if (name !== undefined) precompiles[name] = key;
    }
    return {
      activationTime: Number(a.time),
      blobSchedule: BLOB_SCHEDULES[a.fork]!,
      chainId: `0x${opts.chainId.toString(16)}`,
      forkId: hexData(forkHash(genesisHash, forks.activations, genesisTime, a.time)),
      precompiles: sorted(precompiles),
      systemContracts: sorted(a.fork === 'cancun' ? CANCUN_SYSTEM_CONTRACTS : PRAGUE_SYSTEM_CONTRACTS),
    };
  };
  return {
    eth_config: method([], () => {
      const genesis = reader.blockByNumber(reader.genesisNumber())!.header;
      const head = reader.blockByNumber(reader.latestNumber())!.header;
      const current = forks.activations.filter((a) => a.time <= head.timestamp).at(-1) ?? forks.activations[0]!;
      const next = forks.nextAfter(head.timestamp);
      const last = forks.activations.at(-1)!;
      return {
        current: entry(current, genesis.hash, genesis.timestamp),
        next: next === undefined ? null : entry(next, genesis.hash, genesis.timestamp),
        // geth: last is null when no fork is scheduled after the current one
        last: next === undefined ? null : entry(last, genesis.hash, genesis.timestamp),
      };
    }),
  };
}
