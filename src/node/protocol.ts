/**
 * Messages between the RPC thread (main) and the chain thread (worker). Values are structured-cloned
 * (bigint, Uint8Array and Map survive).
 */
import type { DomainErrorData } from '../lib/errors.js';
import type { Genesis } from '../config/genesis.js';
import type { NodeOptions } from '../config/options.js';
import type { EvmLog, EvmTx } from '../types/chain.js';
import type { CheckTxResult } from '../consensus/abci.js';
import type { RoundStepEvent } from '../consensus/engine.js';
import type { AbciQueryRequest, AbciQueryResponse } from '../types/cometbft.js';
import type { BlockStats } from '../metrics/comet.js';
import type { DevOp } from '../types/dev.js';
import type { PendingCheat } from '../chain/cheats.js';

export interface ChainWorkerData {
  opts: NodeOptions;
  genesis: Genesis;
  dbPath: string;
  validatorKeyJson: string;
}

/** The chain thread's first message: its start data (it is spawned before the config is read: node/chainspawn.ts). */
export interface StartChain {
  type: 'start';
  data: ChainWorkerData;
}

export type ToChain =
  /** eth_sendRawTransaction; answered with `checked`. `sender`, `hash`: the signer and tx hash, found on the RPC thread (absent when the bytes did not decode there) */
  | { type: 'submit'; id: number; raw: Uint8Array; rpc: boolean; sender?: Uint8Array; hash?: Uint8Array }
  /** Surface B's broadcast_tx_* (and check_tx with `dryRun`: checked, never added to the mempool); answered with `checked` */
  | { type: 'submitNative'; id: number; tx: Uint8Array; dryRun?: boolean; sender?: Uint8Array }
  /** miner_setEtherbase: fee recipient of the next blocks (persisted); answered with a reply */
  | { type: 'setCoinbase'; id: number; address: Uint8Array }
  /** the answer to a chain-thread `query` (ABCI mode) */
  | { type: 'queryReply'; id: number; res: AbciQueryResponse }
  /** a dev operation (src/types/dev.ts): answered with a `devReply` carrying its `DevResults` entry */
  | { type: 'dev'; id: number; op: DevOp }
  /** whether some Surface B subscription could want the round steps' events (cometrpc/events.ts): they are made and posted only then */
  | { type: 'roundSteps'; wanted: boolean }
  | { type: 'stop' }
  /** several of the above, in the order they were made (the RPC thread's outbox: src/node/chainclient.ts) */
  | { type: 'batch'; messages: ToChain[] };

/** why a dev control failed: a domain error the client sees (a backwards time), or a bug */
export type DevError = { kind: 'domain'; error: DomainErrorData } | { kind: 'internal'; message: string };

/** The answer to `setCoinbase`: code 0 when it took effect, else the reason in `log`. */
export interface ChainReply {
  type: 'reply';
  id: number;
  code: number;
  log: string;
}

/**
 * The answer to `submit` and `submitNative`: CheckTx's verdict as the domain sees it, never a wire
 * code to be read back. Exactly one of `hash` (accepted: the EVM tx hash), `refused` (the domain
 * error the checks threw, its kind and detail kept: `txRejected` with its reason, or `unavailable`
 * when CometBFT cannot be reached) and `failed` (a bug on the chain thread, logged there).
 * `check`: the whole ABCI CheckTx response (submitNative; Surface B's answer). For the metrics,
 * `checkSeconds`: the time CheckTx took, `txBytes`: the tx's size when it was offered to the mempool
 * (not for a dry run).
 */
export interface CheckTxReply {
  type: 'checked';
  id: number;
  hash?: Uint8Array;
  refused?: DomainErrorData;
  failed?: string;
  check?: CheckTxResult;
  checkSeconds?: number;
  txBytes?: number;
}

export type FromChain =
  /** `cheats`: the dev cheats still pending from before a restart (the RPC thread's mirror starts with them) */
  | { type: 'ready'; height: bigint; cheats?: PendingCheat[] }
  /** dev cheats set (`replace`: the whole pending set, after evm_revert restored one); sent before the op's devReply */
  | { type: 'cheats'; pending: PendingCheat[]; replace?: boolean }
  /**
   * `stats`: what the metrics record of the height (observed on the RPC thread, which serves them);
   * absent under real CometBFT, which keeps its own consensus metrics
   */
  | { type: 'committed'; height: bigint; stats?: BlockStats; cheatsApplied?: number }
  | { type: 'pool'; added: EvmTx[]; removed: Uint8Array[]; natives?: Uint8Array[]; evicted?: number; forwardDropped?: number }
  | ChainReply
  | CheckTxReply
  /** a consensus step of the engine's round (Surface B's NewRound, Vote, ... events) */
  | { type: 'roundStep'; event: RoundStepEvent }
  /** ABCI mode: CometBFT's Query, answered by the RPC thread's reader (`queryReply`) */
  | { type: 'query'; id: number; req: AbciQueryRequest }
  | { type: 'devReply'; id: number; result?: unknown; error?: DevError }
  /**
   * evm_revert / anvil_reset rewound the chain to `height` (sent before the devReply and before any
   * new block): the logs of the rewound blocks, oldest first, for `removed: true` notifications
   */
  | { type: 'rewound'; height: bigint; removedLogs: EvmLog[]; truncated: boolean }
  | { type: 'stopped' }
  /** several of the above, in the order they happened (the chain thread's outbox: src/node/chainworker.ts) */
  | { type: 'batch'; messages: FromChain[] }
  | { type: 'fatal'; message: string };
