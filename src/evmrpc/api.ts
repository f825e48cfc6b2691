/**
 * Surface A assembled in one place: one factory over one typed bag of the node's modules, as
 * lodestar's `getApi(opts, modules)` assembles its API (packages/beacon-node/src/api/impl/api.ts).
 * Each namespace group's `create*Methods` takes only the part of the bag it uses (a `*Modules`
 * interface of its own file, or the one module it needs); the bag's members are the narrow ports
 * declared in evmrpc/ and implemented by node/ objects (docs/architecture.md "Surface A's assembly").
 *
 * A new namespace: its file declares the part of the bag it uses, a port it needs that no member
 * offers becomes a member here, and its table joins the list below.
 */
import { ForkSchedule } from '../evm/forks.js';
import { createEthConfigMethods } from './ethconfig.js';
import type { ForkTimes } from '../config/genesis.js';
import type { JsonRpcOptions } from '../config/options.js';
import { clientVersion, COMMIT, VERSION } from '../config/version.js';
import { mergeTables, type MethodTable } from '../jsonrpc/types.js';
import type { DevChannel } from '../types/dev.js';
import { createAccountMethods, type AccountSigner } from './accounts.js';
import type { EvmBackend } from './backend.js';
import { createDebugMethods, type TraceRunner } from './debug.js';
import { createCheatMethods, type CheatBackend } from './devcheats.js';
import { createDevBlockMethods } from './devblocks.js';
import { createDevMethods, type Refork } from './devmethods.js';
import { createDevTokenMethods } from './devtokens.js';
import { createExtraEthMethods, type AccessListRunner } from './extra.js';
import { ForkHistory, type ForkHistoryPort } from './forkhistory.js';
import type { EvmFeed } from './feed.js';
import type { FilterService } from './filters.js';
import { createEvmMethods } from './methods.js';
import { createMinerMethods, type MinerBackend } from './miner.js';
import { createPersonalMethods } from './personal.js';
import { profileFileMethods, runtimeStatsMethods, type Profiler } from './profiling.js';
import { createRawDebugMethods, type ReplayRunner } from './rawdebug.js';
import { createReadMethods } from './reads.js';
import { createSendingMethods } from './sending.js';
import { createSimulateMethods, type SimulateRunner } from './simulate.js';
import type { SubscriptionService } from './subscriptions.js';
import { createOtsMethods } from './ots.js';
import { createTraceMethods } from './trace.js';
import { createTxPoolMethods, type TxPoolBackend } from './txpool.js';

/** The chain's read side as Surface A uses it (chain/reader.ts). */
export type EvmReader = EvmBackend & CheatBackend & TxPoolBackend;

/** The node's modules Surface A is made of. */
export interface EvmApiModules {
  reader: EvmReader;
  /** the EVM runs off this thread: access lists and eth_simulateV1 on the call workers, traces on the trace worker (node/evmruns.ts) */
  runs: AccessListRunner & TraceRunner & ReplayRunner & SimulateRunner;
  /** eth_accounts, eth_sign*, eth_sendTransaction, personal_*; impersonation */
  signer: AccountSigner;
  /** what miner_* change (node/miner.ts) */
  miner: MinerBackend;
  /** the dev operations on the chain thread (src/types/dev.ts; node/chainclient.ts) */
  chain: DevChannel;
  /** committed blocks as they come (synchronous sends wait on it) */
  feed: EvmFeed;
  filters: FilterService;
  subscriptions: SubscriptionService;
  /** the runtime reports follow `debug`; its file-writing methods exist only with `json-rpc.enable-profiling` */
  profiler: Profiler;
  /** a fork's history at or below the fork block, from its origin (docs/fork-mode.md); undefined: not a fork */
  history?: ForkHistoryPort;
  /** a fork's re-fork in place, for anvil_reset (node/refork.ts); undefined: not a fork */
  refork?: Refork;
}

export interface EvmApiOptions {
  jsonRpc: Pick<
    JsonRpcOptions,
    'clientVersionPrefix' | 'enableProfiling' | 'gasCap' | 'blockRangeCap' | 'logsCap' | 'feeHistoryCap' | 'evmTimeoutMs' | 'traceTimeoutCapMs' | 'filterTimeoutMs'
  >;
  chainId: bigint;
  hardfork: string;
  /** the chain's later forks by block time (evm/forks.ts) */
  forkTimes?: ForkTimes;
}

/** Surface A's method table: one part per namespace group, merged (a name declared twice is a bug). */
export function createEvmApi(opts: EvmApiOptions, modules: EvmApiModules): MethodTable {
  const { jsonRpc } = opts;
  const forks = new ForkSchedule(opts.chainId, opts);
  const core = createEvmMethods(modules.reader, {
    clientVersion: clientVersion(jsonRpc.clientVersionPrefix),
    gasCap: jsonRpc.gasCap,
    blockRangeCap: jsonRpc.blockRangeCap,
    logsCap: jsonRpc.logsCap,
    feeHistoryCap: jsonRpc.feeHistoryCap,
    evmTimeoutMs: jsonRpc.evmTimeoutMs,
  });
  const table = mergeTables(
    core,
    createExtraEthMethods(modules, { gasCap: jsonRpc.gasCap, evmTimeoutMs: jsonRpc.evmTimeoutMs }, core),
    createReadMethods(modules.reader),
    createEthConfigMethods(modules.reader, { chainId: opts.chainId, forks }),
    createSendingMethods(modules),
    createSimulateMethods(modules, { evmTimeoutMs: jsonRpc.evmTimeoutMs }),
    createRawDebugMethods(modules, { commonAt: (t) => forks.commonAt(t), traceTimeoutCapMs: jsonRpc.traceTimeoutCapMs }),
    runtimeStatsMethods(modules.profiler),
    jsonRpc.enableProfiling ? profileFileMethods(modules.profiler) : {},
    modules.filters.table,
    modules.subscriptions.table,
    createAccountMethods(modules.signer),
    createPersonalMethods(modules.signer),
    createMinerMethods(modules.miner),
    createDevMethods(modules, { clientVersion: clientVersion(), clientSemver: `ferry/${VERSION}`, commit: COMMIT, hardfork: opts.hardfork, fork: modules.history }),
    createDevBlockMethods(modules),
    createDevTokenMethods(modules),
    createCheatMethods(modules),
    createTxPoolMethods(modules.reader),
    createDebugMethods(modules, { gasCap: jsonRpc.gasCap, traceTimeoutCapMs: jsonRpc.traceTimeoutCapMs }),
    createTraceMethods(modules, { gasCap: jsonRpc.gasCap, commonNow: () => forks.commonAt(BigInt(Math.floor(Date.now() / 1000))) }),
    createOtsMethods(modules, core),
  );
  return modules.history === undefined ? table : new ForkHistory(table, modules.history, { filterTimeoutMs: jsonRpc.filterTimeoutMs }).wrap();
}
