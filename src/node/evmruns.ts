/**
 * The EVM runs Surface A starts off this thread beyond eth_call and eth_estimateGas: access lists and
 * eth_simulateV1 on the call workers (src/node/callpool.ts), traces on the trace worker (src/chain/trace.ts). One
 * object implements the ports evmrpc/ declares for them (`AccessListRunner`, `TraceRunner`,
 * `ReplayRunner`, `SimulateRunner`), and it is the one place the pending dev cheats (chain/cheats.ts) go under a
 * caller's state overrides for these runs: a run at the latest height sees them, as `latest` reads
 * do (eth_call and eth_estimateGas get the same overlay inside ChainReader).
 */
import type { TraceService } from '../chain/trace.js';
import type { AccessListRunner } from '../evmrpc/extra.js';
import type { TraceRunner } from '../evmrpc/debug.js';
import type { ReplayRunner } from '../evmrpc/rawdebug.js';
import type { SimulateRunner } from '../evmrpc/simulate.js';
import type { StateOverrides } from '../types/query.js';
import type { CallPool } from './callpool.js';

/** What puts the pending dev cheats under a caller's overrides at a height (ChainReader.callOverrides). */
export interface CheatOverlayPort {
  callOverrides(n: bigint, overrides: StateOverrides | undefined): StateOverrides | undefined;
}

export class EvmRuns implements AccessListRunner, TraceRunner, ReplayRunner, SimulateRunner {
  constructor(
    private readonly cheats: CheatOverlayPort,
    private readonly calls: Pick<CallPool, 'createAccessList' | 'simulateV1'>,
    private readonly traces: Pick<TraceService, 'traceTransaction' | 'traceBlock' | 'traceCall' | 'traceReplay'>,
  ) {}

  createAccessList: AccessListRunner['createAccessList'] = (req, n, overrides, origin) =>
    this.calls.createAccessList(req, n, this.cheats.callOverrides(n, overrides), origin);

  simulateV1: SimulateRunner['simulateV1'] = (req, n, origin) => this.calls.simulateV1(req, n, this.cheats.callOverrides(n, undefined), origin);

  traceCall: TraceRunner['traceCall'] = (req, n, overrides, opts, origin, block) =>
    this.traces.traceCall(req, n, this.cheats.callOverrides(n, overrides), opts, origin, block);

  traceTransaction: TraceRunner['traceTransaction'] = (hash, opts, origin) => this.traces.traceTransaction(hash, opts, origin);

  traceBlock: TraceRunner['traceBlock'] = (n, opts, origin) => this.traces.traceBlock(n, opts, origin);

  traceReplay: ReplayRunner['traceReplay'] = (block, opts, origin) => this.traces.traceReplay(block, opts, origin);
}
