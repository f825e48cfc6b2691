/** Compiles test contracts with the npm `solc` (0.8.28), standard JSON, Cancun, optimizer on. Cached per process. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { CONTRACTS_DIR } from './paths.js';

const SOLC_VERSION = '0.8.28';
const OPTIMIZER_RUNS = 200;

export interface StorageSlot {
  label: string;
  slot: string;
  offset: number;
  type: string;
}

export interface CompiledContract {
  abi: any[];
  /** creation code, 0x-hex */
  bytecode: `0x${string}`;
  /** runtime code, 0x-hex */
  deployedBytecode: `0x${string}`;
  storageLayout: { storage: StorageSlot[] };
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

const cache = new Map<string, Record<string, CompiledContract>>();
let solc: Solc | undefined;

function loadSolc(): Solc {
  if (!solc) {
    solc = createRequire(import.meta.url)('solc') as Solc;
    if (!solc.version().startsWith(SOLC_VERSION)) throw new Error(`solc ${SOLC_VERSION} expected, got ${solc.version()}`);
  }
  return solc;
}

/** Compiles one source file; returns its contracts by name. */
export function compileFile(path: string): Record<string, CompiledContract> {
  const hit = cache.get(path);
  if (hit) return hit;
  const name = basename(path);
  const input = {
    language: 'Solidity',
    sources: { [name]: { content: readFileSync(path, 'utf8') } },
    settings: {
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'storageLayout'] } },
    },
  };
  const output = JSON.parse(loadSolc().compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  }
  const out: Record<string, CompiledContract> = {};
  for (const [contract, c] of Object.entries<any>(output.contracts[name])) {
    out[contract] = {
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      storageLayout: c.storageLayout,
    };
  }
  cache.set(path, out);
  return out;
}

/** test/contracts/<file> → contract <contract> */
export function compileContract(file: string, contract: string): CompiledContract {
  const c = compileFile(join(CONTRACTS_DIR, file))[contract];
  if (!c) throw new Error(`contract ${contract} not found in ${file}`);
  return c;
}

/** The test ERC-20 (test/contracts/Token.sol). */
export const compileToken = (): CompiledContract => compileContract('Token.sol', 'Token');

/** Storage slot number of a top-level variable of a compiled contract. */
export function slotOf(c: CompiledContract, label: string): bigint {
  const s = c.storageLayout.storage.find((x) => x.label === label);
  if (!s) throw new Error(`no storage variable ${label}`);
  return BigInt(s.slot);
}
