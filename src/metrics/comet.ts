/**
 * CometBFT v0.38's Prometheus metrics, for what Ferry's embedded engine does. Names, types, help
 * texts, labels and buckets are those of CometBFT's generated `metrics.gen.go` files (consensus/,
 * mempool/, state/, proxy/, blocksync/, statesync/, p2p/), namespace `[instrumentation] namespace`
 * (default `cometbft`), every series labelled `chain_id` (node/setup.go `DefaultMetricsProvider`).
 *
 * Metrics of peer gossip (block parts, duplicate and late votes, quorum delays, vote extensions,
 * peer bytes) are not exported: a single validator without peers never has a value for them, and
 * CometBFT shows a labelled series only once it was set.
 *
 * Everything here is observed on the RPC thread: the chain thread sends one `BlockStats` with each
 * committed height (see src/node/protocol.ts) and the CheckTx outcome with each reply.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Go's `prometheus.ExponentialBucketsRange(min, max, count)`. */
export function exponentialBucketsRange(min: number, max: number, count: number): number[] {
  const factor = Math.pow(max / min, 1 / (count - 1));
  return Array.from({ length: count }, (_, i) => min * Math.pow(factor, i));
}

/** Go's `prometheus.ExponentialBuckets(start, factor, count)`. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * Math.pow(factor, i));
}

/** Go's `prometheus.LinearBuckets(start, width, count)`. */
export function linearBuckets(start: number, width: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start + width * i);
}

/** proxy/metrics.go MethodTimingSeconds */
export const ABCI_TIMING_BUCKETS = [0.0001, 0.0004, 0.002, 0.009, 0.02, 0.1, 0.65, 2, 6, 25];
/** prometheus.DefBuckets (consensus_block_interval_seconds has no buckets of its own) */
export const PROMETHEUS_DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the chain thread reports of one committed height. */
export interface BlockStats {
  height: bigint;
  txs: number;
  /** protobuf size of the block (CometBFT `block.Size()`) */
  sizeBytes: number;
  /** seconds since the previous block's header time; undefined for the first block of this run */
  intervalSeconds?: number;
  validators: number;
  validatorsPower: bigint;
  /** hex address → power, of this height's set */
  validatorPowers: Array<[string, bigint]>;
  /** address of this node's validator (it signs every height) */
  ownAddress: string;
  validatorUpdates: number;
  consensusParamUpdates: number;
  /** seconds */
  prepareSeconds: number;
  finalizeSeconds: number;
  commitSeconds: number;
  /** seconds from the height's NewRound step to its commit */
  roundSeconds: number;
  /** each step left during the height: [step name without `RoundStep`, seconds] */
  steps: Array<[string, number]>;
  /** EVM side */
  gasUsed: bigint;
  gasLimit: bigint;
  baseFee: bigint;
  /** chain thread's trie node cache, totals since start */
  trieCacheHits: number;
  trieCacheMisses: number;
}

export interface CometMetricsOptions {
  namespace: string;
  chainId: string;
}

export interface MempoolView {
  readonly size: number;
  readonly totalBytes: number;
}

export class CometMetrics {
  readonly registry = new Registry();
  private readonly height: Gauge;
  private readonly latestBlockHeight: Gauge;
  private readonly validators: Gauge;
  private readonly validatorsPower: Gauge;
  private readonly validatorPower: Gauge<'validator_address'>;
  private readonly validatorLastSigned: Gauge<'validator_address'>;
  private readonly validatorMissed: Gauge<'validator_address'>;
  private readonly missingValidators: Gauge;
  private readonly missingValidatorsPower: Gauge;
  private readonly byzantineValidators: Gauge;
  private readonly byzantineValidatorsPower: Gauge;
  private readonly blockInterval: Histogram;
  private readonly numTxs: Gauge;
  private readonly blockSize: Gauge;
  private readonly chainSize: Counter;
  private readonly totalTxs: Gauge;
  private readonly rounds: Gauge;
  private readonly roundDuration: Histogram;
  private readonly stepDuration: Histogram<'step'>;
  private readonly proposalCreate: Counter;
  private readonly votingPowerPercent: Gauge<'vote_type'>;
  private readonly mempoolTxSize: Histogram;
  private readonly failedTxs: Counter;
  private readonly rejectedTxs: Counter;
  private readonly evictedTxs: Counter;
  private readonly blockProcessing: Histogram;
  private readonly consensusParamUpdates: Counter;
  private readonly validatorSetUpdates: Counter;
  private readonly abciTiming: Histogram<'method' | 'type'>;

  constructor(opts: CometMetricsOptions, mempool: MempoolView) {
    const r = [this.registry];
    const ns = opts.namespace;
    const name = (subsystem: string, n: string) => (ns === '' ? `${subsystem}_${n}` : `${ns}_${subsystem}_${n}`);
    this.registry.setDefaultLabels({ chain_id: opts.chainId });
    const gauge = <L extends string = never>(sub: string, n: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name: name(sub, n), help, labelNames, registers: r });
    const counter = (sub: string, n: string, help: string) => new Counter({ name: name(sub, n), help, registers: r });
    const C = 'consensus';
    this.height = gauge(C, 'height', 'Height of the chain.');
    this.validatorLastSigned = gauge(C, 'validator_last_signed_height', 'Last height signed by this validator if the node is a validator.', ['validator_address']);
    this.rounds = gauge(C, 'rounds', 'Number of rounds.');
    this.roundDuration = new Histogram({ name: name(C, 'round_duration_seconds'), help: 'Histogram of round duration.', buckets: exponentialBucketsRange(0.1, 100, 8), registers: r });
    this.validators = gauge(C, 'validators', 'Number of validators.');
    this.validatorsPower = gauge(C, 'validators_power', 'Total power of all validators.');
    this.validatorPower = gauge(C, 'validator_power', 'Power of a validator.', ['validator_address']);
    this.validatorMissed = gauge(C, 'validator_missed_blocks', 'Amount of blocks missed per validator.', ['validator_address']);
    this.missingValidators = gauge(C, 'missing_validators', 'Number of validators who did not sign.');
    this.missingValidatorsPower = gauge(C, 'missing_validators_power', 'Total power of the missing validators.');
    this.byzantineValidators = gauge(C, 'byzantine_validators', 'Number of validators who tried to double sign.');
    this.byzantineValidatorsPower = gauge(C, 'byzantine_validators_power', 'Total power of the byzantine validators.');
    this.blockInterval = new Histogram({ name: name(C, 'block_interval_seconds'), help: 'Time between this and the last block.', buckets: PROMETHEUS_DEFAULT_BUCKETS, registers: r });
    this.numTxs = gauge(C, 'num_txs', 'Number of transactions.');
    this.blockSize = gauge(C, 'block_size_bytes', 'Size of the block.');
    this.chainSize = counter(C, 'chain_size_bytes', 'Size of the chain in bytes.');
    this.totalTxs = gauge(C, 'total_txs', 'Total number of transactions.');
    this.latestBlockHeight = gauge(C, 'latest_block_height', 'The latest block height.');
    this.stepDuration = new Histogram({
      name: name(C, 'step_duration_seconds'),
      help: 'Histogram of durations for each step in the consensus protocol.',
      buckets: exponentialBucketsRange(0.1, 100, 8),
      labelNames: ['step'],
      registers: r,
    });
    this.proposalCreate = counter(C, 'proposal_create_count', 'ProposalCreationCount is the total number of proposals created by this node since process start. The metric is annotated by the status of the proposal from the application, either \'accepted\' or \'rejected\'.');
    this.votingPowerPercent = gauge(C, 'round_voting_power_percent', 'RoundVotingPowerPercent is the percentage of the total voting power received with a round. The value begins at 0 for each round and approaches 1.0 as additional voting power is observed. The metric is labeled by vote type.', ['vote_type']);

    const M = 'mempool';
    new Gauge({ name: name(M, 'size'), help: 'Number of uncommitted transactions in the mempool.', registers: r, collect() { this.set(mempool.size); } });
    new Gauge({ name: name(M, 'size_bytes'), help: 'Total size of the mempool in bytes.', registers: r, collect() { this.set(mempool.totalBytes); } });
    this.mempoolTxSize = new Histogram({ name: name(M, 'tx_size_bytes'), help: 'Histogram of transaction sizes in bytes.', buckets: exponentialBuckets(1, 3, 7), registers: r });
    this.failedTxs = counter(M, 'failed_txs', 'FailedTxs defines the number of failed transactions. These are transactions that failed to make it into the mempool because they were deemed invalid. metrics:Number of failed transactions.');
    this.rejectedTxs = counter(M, 'rejected_txs', 'RejectedTxs defines the number of rejected transactions. These are transactions that failed to make it into the mempool due to resource limits, e.g. mempool is full. metrics:Number of rejected transactions.');
    this.evictedTxs = counter(M, 'evicted_txs', 'EvictedTxs defines the number of evicted transactions. These are valid transactions that passed CheckTx and make it into the mempool but later became invalid. metrics:Number of evicted transactions.');

    const S = 'state';
    this.blockProcessing = new Histogram({ name: name(S, 'block_processing_time'), help: 'Time spent processing FinalizeBlock', buckets: linearBuckets(1, 10, 10), registers: r });
    this.consensusParamUpdates = counter(S, 'consensus_param_updates', 'Number of consensus parameter updates returned by the application since process start.');
    this.validatorSetUpdates = counter(S, 'validator_set_updates', 'Number of validator set updates returned by the application since process start.');

    this.abciTiming = new Histogram({
      name: name('abci_connection', 'method_timing_seconds'),
      help: 'Timing for each ABCI method.',
      buckets: ABCI_TIMING_BUCKETS,
      labelNames: ['method', 'type'],
      registers: r,
    });

    // a single validator never syncs from peers and has none
    gauge('blocksync', 'syncing', 'Whether or not a node is block syncing. 1 if yes, 0 if no.').set(0);
    gauge('statesync', 'syncing', 'Whether or not a node is state syncing. 1 if yes, 0 if no.').set(0);
    gauge('p2p', 'peers', 'Number of peers.').set(0);
  }

  /** The height the node starts at (committed height `h`: the engine works on h+1). */
  start(committed: bigint): void {
    this.height.set(Number(committed + 1n));
    this.latestBlockHeight.set(Number(committed));
  }

  /** One committed height (CometBFT `recordMetrics`, `updateHeight`, `MarkRound`, `MarkStep`). */
  onBlock(b: BlockStats): void {
    this.validators.set(b.validators);
    this.validatorsPower.set(Number(b.validatorsPower));
    for (const [address, power] of b.validatorPowers) {
      this.validatorPower.set({ validator_address: address }, Number(power));
      if (address === b.ownAddress) this.validatorLastSigned.set({ validator_address: address }, Number(b.height));
    }
    this.missingValidators.set(0);
    this.missingValidatorsPower.set(0);
    this.byzantineValidators.set(0);
    this.byzantineValidatorsPower.set(0);
    if (b.intervalSeconds !== undefined) this.blockInterval.observe(b.intervalSeconds);
    this.numTxs.set(b.txs);
    this.totalTxs.inc(b.txs);
    this.blockSize.set(b.sizeBytes);
    this.chainSize.inc(b.sizeBytes);
    this.latestBlockHeight.set(Number(b.height));
    this.height.set(Number(b.height + 1n));
    this.rounds.set(0);
    this.roundDuration.observe(b.roundSeconds);
    for (const [step, seconds] of b.steps) this.stepDuration.observe({ step }, seconds);
    this.proposalCreate.inc();
    // one validator holds all the power: each vote type reaches 100% in round 0
    this.votingPowerPercent.set({ vote_type: 'prevote' }, 1);
    this.votingPowerPercent.set({ vote_type: 'precommit' }, 1);
    this.blockProcessing.observe(b.finalizeSeconds * 1000);
    if (b.validatorUpdates > 0) this.validatorSetUpdates.inc();
    if (b.consensusParamUpdates > 0) this.consensusParamUpdates.inc();
    this.abciTiming.observe({ method: 'prepare_proposal', type: 'sync' }, b.prepareSeconds);
    this.abciTiming.observe({ method: 'finalize_block', type: 'sync' }, b.finalizeSeconds);
    this.abciTiming.observe({ method: 'commit', type: 'sync' }, b.commitSeconds);
  }

  /**
   * One CheckTx (`ok`: entered the mempool; `full`: refused for the mempool's size limit, CometBFT's
   * rejected_txs; otherwise a refusal is a failed tx). `bytes`: the tx size; `seconds`: CheckTx time.
   */
  onCheckTx(ok: boolean, full: boolean, bytes: number, seconds: number | undefined): void {
    if (seconds !== undefined) this.abciTiming.observe({ method: 'check_tx', type: 'sync' }, seconds);
    if (ok) this.mempoolTxSize.observe(bytes);
    else if (full) this.rejectedTxs.inc();
    else this.failedTxs.inc();
  }

  /** txs that passed CheckTx but were dropped from the mempool as invalid later */
  onEvicted(n: number): void {
    if (n > 0) this.evictedTxs.inc(n);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
