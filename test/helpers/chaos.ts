/**
 * Fault injection on a real network (docs/abci.md "Fault injection"): a 4-validator CometBFT network of
 * ferry nodes under continuous transfer load while faults are injected one at a time — kill -9 of a
 * ferry, of a CometBFT, of both; SIGSTOP/SIGCONT pauses; network partitions between validators (in
 * network namespaces, test/helpers/netns.ts; without them those faults are not injected, and the report
 * says so). Checked throughout: every node's block hash and state root equal at every height; after each
 * heal the chain makes blocks again within LIVE_BOUND_MS. At the end, with every fault healed: every node
 * has every block, and every transaction a node acknowledged with a receipt has the same receipt on
 * every node. `npm run chaos` (bench/chaos.ts) runs it for minutes; test/e2e/chaos-short.test.ts runs each
 * fault once.
 */
import { Wallet } from 'ethers';
import { devKeys } from './accounts.js';
import { prng } from './chaingen.js';
import { CometNet, type NetNode } from './cometnet.js';
import { NetnsNetwork, netnsAvailable } from './netns.js';
import { EVM_CHAIN_ID } from './node.js';

export const FAULT_KINDS = ['kill-ferry', 'kill-comet', 'kill-node', 'pause', 'partition-one', 'partition-halves'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
const NEEDS_NETNS: ReadonlySet<FaultKind> = new Set(['partition-one', 'partition-halves']);

/** after a heal, the chain must make LIVE_BLOCKS more blocks within this bound */
export const LIVE_BOUND_MS = 60_000;
const LIVE_BLOCKS = 2n;
const VALIDATORS = 4;
const SENDERS = 8;
/** a sent tx without a receipt after this long is sent again, to another node */
const RESUBMIT_MS = 8_000;
/** a monitoring request to a paused or partitioned node gives up after this long */
const PROBE_TIMEOUT_MS = 3_000;
const MONITOR_EVERY_MS = 1_000;
/** heights compared per monitor round (the rest on the next rounds) */
const MONITOR_BATCH = 40;
const CATCH_UP_MS = 180_000;
/** how long a CometBFT may take to notice its ferry died and stop (docs/abci.md) */
const COMET_EXIT_MS = 15_000;
const GWEI = 10n ** 9n;
const POLL_MS = 200;

export interface ChaosOptions {
  cometBin: string;
  durationMs: number;
  seed: number;
  /** use network namespaces when the machine allows (partitions); false: loopback only */
  namespaces: boolean;
  /** each fault in this order, once (the short suite run); default: random kinds until `durationMs` */
  schedule?: readonly FaultKind[];
  /** how long a fault lasts, ms: [min, max] */
  holdMs?: [number, number];
  log?: (line: string) => void;
}

export interface ChaosReport {
  seed: number;
  durationMs: number;
  /** 'namespaces', or why partitions were not injected */
  network: string;
  faults: Record<FaultKind, { injected: number; survived: number }>;
  /** a fault the run could not inject on this machine, and why */
  notInjected: Record<string, string>;
  /** ms from each heal until LIVE_BLOCKS more blocks */
  recoveryMs: { median: number; max: number; count: number };
  liveFailures: string[];
  txs: { acknowledged: number; resubmitted: number; lost: number };
  heightsCompared: number;
  divergences: string[];
  finalHeight: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call<T>(url: string, method: string, params: unknown[] = [], timeoutMs = PROBE_TIMEOUT_MS): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

interface Acked {
  hash: string;
  blockHash: string;
  status: string;
}

class Run {
  private readonly random: () => number;
  private readonly acked: Acked[] = [];
  private resubmitted = 0;
  private loading = true;
  /** height → [hash, stateRoot] as first seen */
  private readonly canonical = new Map<number, string>();
  private checkedUpTo = 0;
  readonly divergences: string[] = [];
  readonly liveFailures: string[] = [];
  readonly recoveries: number[] = [];
  readonly faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, { injected: 0, survived: 0 }])) as ChaosReport['faults'];

  constructor(
    readonly net: CometNet,
    readonly netns: NetnsNetwork | undefined,
    readonly o: ChaosOptions,
  ) {
    this.random = prng(o.seed);
  }

  private log(line: string): void {
    this.o.log?.(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)]!;
  }

  private get nodes(): NetNode[] {
    return this.net.nodes;
  }

  private async height(n: NetNode): Promise<number | undefined> {
    try {
      return Number(await call<string>(n.ethUrl, 'eth_blockNumber'));
    } catch {
      return undefined;
    }
  }

  private async topHeight(): Promise<number> {
    const hs = await Promise.all(this.nodes.map((n) => this.height(n)));
    return Math.max(0, ...hs.filter((h): h is number => h !== undefined));
  }

  /** One sender: a transfer at a time, sent to a random node, sent again elsewhere until some node gives its receipt. */
  private async sender(key: string): Promise<void> {
    const wallet = new Wallet(key);
    let nonce = 0;
    while (this.loading) {
      const raw = await wallet.signTransaction({
        to: '0x000000000000000000000000000000000000c4a0',
        value: 1n,
        nonce,
        gasLimit: 21_000,
        maxFeePerGas: 100n * GWEI,
        maxPriorityFeePerGas: GWEI,
        chainId: EVM_CHAIN_ID,
        type: 2,
      });
      let hash: string | undefined;
      let sentAt = 0;
      let stopAt = 0;
      for (;;) {
        if (!this.loading && hash === undefined) return;
        // load is over: a tx still without a receipt gets LIVE_BOUND_MS more; then it counts as never acknowledged
        if (!this.loading && stopAt === 0) stopAt = Date.now();
        if (stopAt !== 0 && Date.now() - stopAt > LIVE_BOUND_MS) return;
        if (Date.now() - sentAt > RESUBMIT_MS) {
          const via = this.pick(this.nodes);
          try {
            hash = await call<string>(via.ethUrl, 'eth_sendRawTransaction', [raw]);
          } catch (e) {
            // "already known" / "nonce too low": it is in a pool or a block; anything else: a node that is down
            if (!/already known|nonce too low/.test((e as Error).message)) {
              await sleep(POLL_MS);
              continue;
            }
          }
          if (sentAt !== 0) this.resubmitted++;
          sentAt = Date.now();
        }
        if (hash !== undefined) {
          const r = await call<{ blockHash: string; status: string } | null>(this.pick(this.nodes).ethUrl, 'eth_getTransactionReceipt', [hash]).catch(() => null);
          if (r) {
            this.acked.push({ hash, blockHash: r.blockHash, status: r.status });
            break;
          }
        }
        await sleep(POLL_MS);
      }
      nonce++;
    }
  }

  /** Compares the heights every reachable node has, a batch at a time. */
  private async compareOnce(): Promise<void> {
    const hs = await Promise.all(this.nodes.map((n) => this.height(n)));
    const reachable = this.nodes.filter((_, i) => hs[i] !== undefined);
    if (reachable.length === 0) return;
    const upTo = Math.min(...hs.filter((h): h is number => h !== undefined), this.checkedUpTo + MONITOR_BATCH);
    for (let h = this.checkedUpTo + 1; h <= upTo; h++) {
      for (const n of reachable) await this.compareAt(n, h);
    }
    this.checkedUpTo = Math.max(this.checkedUpTo, upTo);
  }

  private async compareAt(n: NetNode, h: number): Promise<void> {
    let b: { hash: string; stateRoot: string } | null;
    try {
      b = await call(n.ethUrl, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
    } catch {
      return; // went down meanwhile: the final check covers it
    }
    if (!b) return;
    const seen = `${b.hash}/${b.stateRoot}`;
    const want = this.canonical.get(h);
    if (want === undefined) this.canonical.set(h, seen);
    else if (want !== seen) this.divergences.push(`${n.name} height ${h}: ${seen}, others ${want}`);
  }

  private async monitor(): Promise<void> {
    while (this.loading) {
      await this.compareOnce().catch((e: Error) => this.log(`monitor: ${e.message}`));
      await sleep(MONITOR_EVERY_MS);
    }
  }

  private holdMs(): number {
    const [lo, hi] = this.o.holdMs ?? [2_000, 6_000];
    return lo + Math.floor(this.random() * (hi - lo));
  }

  private async inject(kind: FaultKind): Promise<void> {
    const v = this.pick(this.nodes.slice(0, VALIDATORS));
    const hold = this.holdMs();
    this.log(`${kind} on ${v.name} for ${hold} ms`);
    this.faults[kind].injected++;
    switch (kind) {
      case 'kill-ferry':
        await v.ferry.kill('SIGKILL');
        // its CometBFT stops once its ABCI connections fail (docs/abci.md); make sure it is gone
        if (!(await v.comet.exited(COMET_EXIT_MS))) await v.comet.kill('SIGKILL');
        await sleep(hold);
        await v.start();
        break;
      case 'kill-comet':
        await v.comet.kill('SIGKILL');
        await sleep(hold);
        await v.start();
        break;
      case 'kill-node':
        await v.kill9();
        await sleep(hold);
        await v.start();
        break;
      case 'pause':
        v.comet.signal('SIGSTOP');
        v.ferry.signal('SIGSTOP');
        await sleep(hold);
        v.ferry.signal('SIGCONT');
        v.comet.signal('SIGCONT');
        break;
      case 'partition-one': {
        // the cut-off validator makes no block while the other three go on
        const i = this.nodes.indexOf(v);
        this.netns!.partition([i], [0, 1, 2, 3].filter((j) => j !== i));
        await this.expectDuringHold(hold, () => this.height(v), `${v.name} cut off`);
        this.netns!.heal();
        break;
      }
      case 'partition-halves':
        // two against two: neither side has 2/3 of the power, so the chain halts until the heal (a node
        // behind may still catch up from its side: the network's top height is what must not move)
        this.netns!.partition([0, 1], [2, 3]);
        await this.expectDuringHold(hold, () => this.topHeight(), 'two against two');
        this.netns!.heal();
        break;
    }
    const healedAt = Date.now();
    const from = await this.topHeight();
    for (;;) {
      if ((await this.topHeight()) >= from + Number(LIVE_BLOCKS)) {
        this.recoveries.push(Date.now() - healedAt);
        this.faults[kind].survived++;
        return;
      }
      if (Date.now() - healedAt > LIVE_BOUND_MS) {
        this.liveFailures.push(`${kind} on ${v.name}: no ${LIVE_BLOCKS} new blocks within ${LIVE_BOUND_MS} ms of the heal (height ${from})`);
        return;
      }
      await sleep(POLL_MS);
    }
  }

  /**
   * Holds a partition for `hold` ms and checks it took effect: after a settling second (a block in flight
   * may still commit), `height` (a node's, or the network's top) grows by at most one block (else the
   * partition is recorded as not effective, a failure).
   */
  private async expectDuringHold(hold: number, height: () => Promise<number | undefined>, what: string): Promise<void> {
    const settle = Math.min(1_000, hold / 2);
    await sleep(settle);
    const before = await height();
    await sleep(hold - settle);
    const after = await height();
    if (before !== undefined && after !== undefined && after > before + 1) this.liveFailures.push(`partition not effective (${what}): height went from ${before} to ${after}`);
  }

  private kinds(): FaultKind[] {
    return FAULT_KINDS.filter((k) => this.netns !== undefined || !NEEDS_NETNS.has(k));
  }

  async run(): Promise<{ finalHeight: number; lost: number }> {
    const load = devKeys().slice(1, 1 + SENDERS).map((k) => this.sender(k));
    const monitor = this.monitor();
    const start = Date.now();
    const schedule = this.o.schedule?.filter((k) => this.kinds().includes(k));
    if (schedule) {
      for (const k of schedule) {
        await this.inject(k);
        await sleep(1_000);
      }
    } else {
      while (Date.now() - start < this.o.durationMs) {
        await this.inject(this.pick(this.kinds()));
        await sleep(1_000 + Math.floor(this.random() * 2_000));
      }
    }
    this.loading = false;
    await Promise.all([...load, monitor]);
    return this.finalCheck();
  }

  /** Everything healed and running: every node reaches the top, equal at every height; every acknowledged receipt everywhere. */
  private async finalCheck(): Promise<{ finalHeight: number; lost: number }> {
    this.netns?.heal();
    for (const n of this.nodes) {
      n.ferry.signal('SIGCONT');
      n.comet.signal('SIGCONT');
      await n.start();
    }
    const top = await this.topHeight();
    await this.net.waitHeight(BigInt(top), this.nodes, CATCH_UP_MS);
    this.checkedUpTo = 0;
    for (let h = 1; h <= top; h++) for (const n of this.nodes) await this.compareAt(n, h);
    let lost = 0;
    for (const a of this.acked) {
      for (const n of this.nodes) {
        const r = await call<{ blockHash: string; status: string } | null>(n.ethUrl, 'eth_getTransactionReceipt', [a.hash], 10_000);
        if (!r || r.blockHash !== a.blockHash || r.status !== a.status) {
          lost++;
          this.divergences.push(`${n.name}: acknowledged tx ${a.hash} ${r ? `in ${r.blockHash} status ${r.status}` : 'missing'}, acknowledged in ${a.blockHash}`);
        }
      }
    }
    return { finalHeight: top, lost };
  }

  report(seed: number, durationMs: number, network: string, finalHeight: number, lost: number): ChaosReport {
    const sorted = [...this.recoveries].sort((a, b) => a - b);
    const notInjected: Record<string, string> = {
      'clock skew': 'CometBFT (Go) reads the wall clock through the vDSO, which neither LD_PRELOAD (libfaketime) nor Linux time namespaces (monotonic and boot clocks only) can shift for one process',
    };
    if (this.netns === undefined) for (const k of NEEDS_NETNS) notInjected[k] = network;
    return {
      seed,
      durationMs,
      network,
      faults: this.faults,
      notInjected,
      recoveryMs: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0, count: sorted.length },
      liveFailures: this.liveFailures,
      txs: { acknowledged: this.acked.length, resubmitted: this.resubmitted, lost },
      heightsCompared: this.canonical.size,
      divergences: this.divergences,
      finalHeight,
    };
  }
}

/** Runs the chaos scenario on a fresh network and tears it down. */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  let netns: NetnsNetwork | undefined;
  let network = 'loopback only: partitions were not injected (namespaces not requested)';
  if (o.namespaces) {
    const can = netnsAvailable();
    if (can.ok) {
      netns = NetnsNetwork.create(VALIDATORS);
      network = 'namespaces';
    } else {
      network = `loopback only: partitions were not injected (${can.reason})`;
      o.log?.(`!!!!!!!!!! chaos: ${network} !!!!!!!!!!`);
    }
  }
  const started = Date.now();
  const net = await CometNet.create({ cometBin: o.cometBin, validators: VALIDATORS, timeoutCommit: '300ms', netns });
  try {
    await net.start();
    await net.waitHeight(2n);
    const run = new Run(net, netns, o);
    const { finalHeight, lost } = await run.run();
    return run.report(o.seed, Date.now() - started, network, finalHeight, lost);
  } catch (e) {
    o.log?.(net.logs());
    throw e;
  } finally {
    await net.stop();
    netns?.tearDown();
  }
}

/** The report as text (the run's summary in docs/abci.md has this shape). */
export function formatChaosReport(r: ChaosReport): string {
  const lines = [
    `chaos run: seed ${r.seed}, ${Math.round(r.durationMs / 1000)} s, network: ${r.network}`,
    '| fault | injected | survived (live again within ' + LIVE_BOUND_MS / 1000 + ' s) |',
    '|---|---|---|',
    ...FAULT_KINDS.map((k) => `| ${k} | ${r.faults[k].injected} | ${r.faults[k].survived} |`),
    ...Object.entries(r.notInjected).map(([k, why]) => `| ${k} | not injected: ${why} | |`),
    `recovery after a heal: median ${r.recoveryMs.median} ms, max ${r.recoveryMs.max} ms over ${r.recoveryMs.count} heals`,
    `transactions acknowledged with a receipt: ${r.txs.acknowledged} (sent again to another node after ${RESUBMIT_MS / 1000} s without one: ${r.txs.resubmitted}); lost: ${r.txs.lost}`,
    `heights compared on every node: ${r.heightsCompared} (final height ${r.finalHeight}); divergent: ${r.divergences.length}`,
    ...r.divergences.slice(0, 20).map((d) => `  divergence: ${d}`),
    ...r.liveFailures.map((f) => `  failure: ${f}`),
  ];
  return lines.join('\n');
}
