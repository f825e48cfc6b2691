/**
 * The workloads, each run against one node at a time. A workload returns a figure or throws;
 * run.ts turns a throw into "n/a" with the reason and goes on.
 */
import type { HDNodeWallet } from 'ethers';
import {
  HOLDERS, HOLDER_COUNT, SENDERS, TOKEN_ABI, TOKEN_TRANSFER_GAS, TRANSFER_GAS, TRANSFER_TOPIC,
  chainInfo, deployToken, devWallet, pendingNonce, signTx, verifyReceipts, waitAllReceipts, waitReceipt,
  type ChainInfo, type Token, type TxFields,
} from './chain.js';
import { cpuMs, peakRssMiB, type RunningNode } from './nodes.js';
import { checkBatch, checkSingle, makeClient, percentile, runLoad, sleep, type LoadSpec, type RpcClient } from './rpc.js';
import { openAll, type Subscriber } from './ws.js';

export const WORKLOAD_NAMES = ['coldstart', 'blocknumber', 'balance', 'call', 'batch', 'transfers', 'erc20', 'logs', 'newheads', 'latency', 'rss'] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

export const CONCURRENCY = 32;
export const BATCH_SIZE = 100;
/** hard cap on requests of one throughput run, whatever its duration */
const MAX_LOAD_REQUESTS = 2_000_000;
const SETUP_TIMEOUT_MS = 60_000;
const LOGS_MAX_MS = 60_000;
const SAMPLER_GAP_MS = 2;
const MAX_LATENCY_SAMPLES = 200_000;
/** WebSocket clients subscribed to newHeads in the `newheads` workload (the issue-23 table's 200) */
export const WS_CLIENTS = 200;
/** how long one transfer of the `newheads` workload may take to reach every client */
const WS_HEAD_TIMEOUT_MS = 30_000;
const WS_HEAD_POLL_MS = 5;

export interface BenchConfig {
  quick: boolean;
  durationMs: number;
  warmupMs: number;
  transfers: number;
  /**
   * untimed transfers sent to every node (Anvil too) just before each timed `transfers` / `erc20` run, as
   * the rate workloads get `warmupMs` of load first: the timed run then measures the node's steady state,
   * not its first seconds (a JIT compiles ferry's and Hardhat's JavaScript while they run). The `erc20`
   * warm-up goes to a second token of the same code, so the first token's logs stay `transfers` per node.
   */
  transferWarmup: number;
  /** Anvil stalls when 2000 transfers arrive at once: it gets this many instead */
  anvilTransfers: number;
  bursts: number;
  burstSize: number;
  logsRepeats: number;
  /** value transfers sent one at a time in the `newheads` workload */
  wsTransfers: number;
  /** bound on one transfer run, sending plus waiting for receipts */
  transferTimeoutMs: number;
  /** cold starts measured per node (and per ferry home kind); the figure is their median */
  coldStarts: number;
}

/**
 * Cold start is measured before the node under test starts (run.ts), on instances of its own:
 * spawn → first `eth_chainId` answer, fresh home (in-memory for Anvil and Hardhat); for ferry also on
 * an existing home.
 */
export const COLD_START: Omit<Workload, 'run'> = {
  name: 'coldstart', title: 'cold start: spawn → first JSON-RPC answer (eth_chainId), fresh home; median', unit: 'ms', higherIsBetter: false, onBare: true,
};

export interface Figure {
  value: number;
  detail?: string;
  /**
   * CPU the node's processes used per request or per tx while it was measured, µs: on a machine shared
   * with other work this moves far less than the wall-clock rate
   */
  cpuUs?: number;
}

export interface Workload {
  name: WorkloadName;
  title: string;
  unit: string;
  higherIsBetter: boolean;
  /** the bare server answers a constant reply: only these make sense against it */
  onBare: boolean;
  run(ctx: NodeContext): Promise<Figure>;
}

/** Per-node state shared by the workloads of one run. */
export class NodeContext {
  readonly client: RpcClient;
  private info?: ChainInfo;
  private wallets?: HDNodeWallet[];
  private token?: Token;
  private warmToken?: Token;
  /** ERC-20 Transfer events the node should hold (mints + transfers) */
  tokenLogs = 0;
  tokenTransfers = 0;

  constructor(readonly node: RunningNode, readonly cfg: BenchConfig) {
    this.client = makeClient(node.url, CONCURRENCY);
  }

  async chain(): Promise<ChainInfo> {
    this.info ??= await chainInfo(this.client);
    return this.info;
  }

  /** The first SENDERS dev accounts; checks the node funds them. */
  async senders(): Promise<HDNodeWallet[]> {
    if (!this.wallets) {
      const ws = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
      for (const w of ws) {
        const bal = BigInt(await this.client.call<string>('eth_getBalance', [w.address, 'latest']));
        if (bal === 0n) throw new Error(`dev account ${w.address} has no funds on ${this.node.name}`);
      }
      this.wallets = ws;
    }
    return this.wallets;
  }

  async erc20(): Promise<Token> {
    if (!this.token) {
      this.token = await deployToken(this.client, await this.chain(), await this.senders(), SETUP_TIMEOUT_MS);
      this.tokenLogs = SENDERS;
    }
    return this.token;
  }

  /** A second BenchToken, only for the `erc20` warm-up (its Transfer logs are not the measured token's). */
  async warmupErc20(): Promise<Token> {
    this.warmToken ??= await deployToken(this.client, await this.chain(), await this.senders(), SETUP_TIMEOUT_MS);
    return this.warmToken;
  }

  close(): void {
    this.client.close();
  }
}

async function throughput(ctx: NodeContext, spec: Omit<LoadSpec, 'concurrency' | 'durationMs' | 'maxRequests'>): Promise<Figure> {
  const base = { ...spec, concurrency: CONCURRENCY, maxRequests: MAX_LOAD_REQUESTS };
  await runLoad(ctx.client, { ...base, durationMs: ctx.cfg.warmupMs });
  const cpu0 = cpuMs(ctx.node.pid);
  const r = await runLoad(ctx.client, { ...base, durationMs: ctx.cfg.durationMs });
  const cpuUs = ((cpuMs(ctx.node.pid) - cpu0) * 1000) / Math.max(1, r.ok);
  if (r.errors > 0) throw new Error(`${r.errors} failed requests (${r.ok} ok): ${r.firstError}`);
  return {
    value: r.perSecond,
    cpuUs,
    detail: `${r.ok} requests in ${(r.elapsedMs / 1000).toFixed(1)} s, node CPU ${Math.round(cpuUs)} µs/request, bench client CPU ${Math.round(r.clientCpu * 100)}%`,
  };
}

const rpcBody = (method: string, params: unknown[], id = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const holder = (i: number): string => HOLDERS[i % HOLDER_COUNT]!;
const hex = (n: number | bigint): string => '0x' + n.toString(16);

interface SendResult {
  sent: number;
  firstError?: string;
}

/** Sends each sender's txs in nonce order (one in flight per sender), all senders at once. */
async function sendStreams(c: RpcClient, streams: string[][], deadline: number): Promise<SendResult> {
  let sent = 0;
  let firstError: string | undefined;
  await Promise.all(
    streams.map(async (raws) => {
      for (const raw of raws) {
        if (Date.now() > deadline) {
          firstError ??= 'time bound reached while sending';
          return;
        }
        try {
          await c.call('eth_sendRawTransaction', [raw]);
          sent++;
        } catch (e) {
          firstError ??= (e as Error).message;
          return; // later nonces of this sender would only queue behind the gap
        }
      }
    }),
  );
  return { sent, firstError };
}

interface Signed {
  streams: string[][];
  hashes: string[];
  /** the last hash of each sender: once these have receipts, all do */
  lastHashes: string[];
}

/** Signs `count` txs round-robin over the senders, from their pending nonces (untimed). */
async function signBatch(ctx: NodeContext, count: number, fields: (k: number) => Omit<TxFields, 'nonce'>): Promise<Signed> {
  const info = await ctx.chain();
  const senders = await ctx.senders();
  const nonces = await Promise.all(senders.map((w) => pendingNonce(ctx.client, w.address)));
  const streams: string[][] = senders.map(() => []);
  const hashes: string[] = [];
  const lastHashes: string[] = senders.map(() => '');
  for (let k = 0; k < count; k++) {
    const s = k % senders.length;
    const { raw, hash } = signTx(senders[s]!, info, { ...fields(k), nonce: nonces[s]! + Math.floor(k / senders.length) });
    streams[s]!.push(raw);
    hashes.push(hash);
    lastHashes[s] = hash;
  }
  return { streams, hashes, lastHashes: lastHashes.filter((h) => h !== '') };
}

/**
 * Sends signed txs and waits for every sender's last receipt; returns the elapsed ms, and the ms until the
 * last send was answered (the rest is the blocks that hold the last txs, or with a block interval the wait for it).
 */
async function sendAndConfirm(ctx: NodeContext, signed: Signed): Promise<{ elapsed: number; sentMs: number }> {
  const start = performance.now();
  const deadline = Date.now() + ctx.cfg.transferTimeoutMs;
  const sent = await sendStreams(ctx.client, signed.streams, deadline);
  const sentMs = performance.now() - start;
  if (sent.firstError) throw new Error(`sent ${sent.sent}/${signed.hashes.length}, then: ${sent.firstError}`);
  const failure = await waitAllReceipts(ctx.client, signed.lastHashes, deadline);
  const elapsed = performance.now() - start;
  if (failure) throw new Error(`${signed.hashes.length} txs sent, not all mined: ${failure}`);
  return { elapsed, sentMs };
}

/** How many transfers one run sends to this node at once. */
function transferCount(ctx: NodeContext): number {
  return ctx.node.name === 'anvil' ? ctx.cfg.anvilTransfers : ctx.cfg.transfers;
}

async function transferRun(ctx: NodeContext, count: number, fields: (k: number) => Omit<TxFields, 'nonce'>): Promise<Figure> {
  const signed = await signBatch(ctx, count, fields);
  const cpu0 = cpuMs(ctx.node.pid);
  const { elapsed, sentMs } = await sendAndConfirm(ctx, signed);
  const cpuUs = ((cpuMs(ctx.node.pid) - cpu0) * 1000) / count;
  const { missing, failed } = await verifyReceipts(ctx.client, signed.hashes);
  if (missing > 0 || failed > 0) throw new Error(`${missing} receipts missing, ${failed} txs reverted out of ${count}`);
  let detail = `${count} txs from ${SENDERS} senders in ${(elapsed / 1000).toFixed(2)} s (the last send answered at ${(sentMs / 1000).toFixed(2)} s), node CPU ${Math.round(cpuUs)} µs/tx (with the receipt polling)`;
  if (ctx.node.name === 'anvil' && count < ctx.cfg.transfers) detail += ` (only ${count}: Anvil stalls when ${ctx.cfg.transfers} arrive at once)`;
  return { value: (count * 1000) / elapsed, detail, cpuUs };
}

/** The untimed transfers before a timed run (`BenchConfig.transferWarmup`); their figure is dropped. */
async function warmUp(ctx: NodeContext, fields: (k: number) => Omit<TxFields, 'nonce'>): Promise<void> {
  if (ctx.cfg.transferWarmup > 0) await transferRun(ctx, ctx.cfg.transferWarmup, fields);
}

const tokenTransfer = (token: Token, k: number): Omit<TxFields, 'nonce'> => ({
  to: token.address,
  gasLimit: TOKEN_TRANSFER_GAS,
  data: TOKEN_ABI.encodeFunctionData('transfer', [holder(k), 1n]),
});

const valueTransfer = (k: number): Omit<TxFields, 'nonce'> => ({ to: holder(k), value: 1n, gasLimit: TRANSFER_GAS });

async function tokenTransferRun(ctx: NodeContext, count: number): Promise<Figure> {
  const token = await ctx.erc20();
  const first = ctx.tokenTransfers;
  const fig = await transferRun(ctx, count, (k) => tokenTransfer(token, first + k));
  ctx.tokenLogs += count;
  ctx.tokenTransfers += count;
  return fig;
}

const sortNum = (a: number, b: number): number => a - b;

export const WORKLOADS: readonly Workload[] = [
  {
    ...COLD_START,
    run() {
      throw new Error('measured by run.ts before the node starts');
    },
  },
  {
    name: 'blocknumber', title: `eth_blockNumber, ${CONCURRENCY} keep-alive connections`, unit: 'req/s', higherIsBetter: true, onBare: true,
    run: (ctx) => throughput(ctx, { body: (i) => rpcBody('eth_blockNumber', [], i), check: checkSingle }),
  },
  {
    name: 'balance', title: `eth_getBalance (${HOLDER_COUNT} addresses), ${CONCURRENCY} connections`, unit: 'req/s', higherIsBetter: true, onBare: true,
    run: (ctx) => throughput(ctx, { body: (i) => rpcBody('eth_getBalance', [holder(i), 'latest'], i), check: checkSingle }),
  },
  {
    name: 'call', title: `eth_call ERC-20 balanceOf (${HOLDER_COUNT} holders), ${CONCURRENCY} connections`, unit: 'req/s', higherIsBetter: true, onBare: false,
    async run(ctx) {
      const token = await ctx.erc20();
      const data = HOLDERS.map((h) => TOKEN_ABI.encodeFunctionData('balanceOf', [h]));
      return throughput(ctx, {
        body: (i) => rpcBody('eth_call', [{ to: token.address, data: data[i % HOLDER_COUNT] }, 'latest'], i),
        check: checkSingle,
      });
    },
  },
  {
    name: 'batch', title: `batch of ${BATCH_SIZE} eth_getBalance per request, ${CONCURRENCY} connections`, unit: 'batches/s', higherIsBetter: true, onBare: true,
    run: (ctx) =>
      throughput(ctx, {
        body: (i) =>
          JSON.stringify(
            Array.from({ length: BATCH_SIZE }, (_, j) => ({ jsonrpc: '2.0', id: j + 1, method: 'eth_getBalance', params: [holder(i * BATCH_SIZE + j), 'latest'] })),
          ),
        check: checkBatch(BATCH_SIZE),
      }),
  },
  {
    name: 'transfers', title: 'pre-signed value transfers, end to end until every receipt exists', unit: 'tx/s', higherIsBetter: true, onBare: false,
    async run(ctx) {
      await warmUp(ctx, valueTransfer);
      return transferRun(ctx, transferCount(ctx), valueTransfer);
    },
  },
  {
    name: 'erc20', title: 'pre-signed ERC-20 transfers, end to end until every receipt exists', unit: 'tx/s', higherIsBetter: true, onBare: false,
    async run(ctx) {
      const warm = await ctx.warmupErc20();
      await warmUp(ctx, (k) => tokenTransfer(warm, k));
      return tokenTransferRun(ctx, transferCount(ctx));
    },
  },
  {
    name: 'logs', title: 'eth_getLogs of all ERC-20 Transfer events, one filter over every block (median of repeated calls)', unit: 'ms', higherIsBetter: false, onBare: false,
    async run(ctx) {
      // every node answers over the same number of transfers: top up (untimed) to cfg.transfers,
      // in runs Anvil can take, when the erc20 workload did not run or sent fewer
      while (ctx.tokenTransfers < ctx.cfg.transfers) {
        await tokenTransferRun(ctx, Math.min(ctx.cfg.transfers - ctx.tokenTransfers, transferCount(ctx)));
      }
      const token = await ctx.erc20();
      const filter = { fromBlock: hex(token.deployBlock), toBlock: 'latest', address: token.address, topics: [TRANSFER_TOPIC] };
      const lat: number[] = [];
      const deadline = Date.now() + LOGS_MAX_MS;
      while (lat.length < ctx.cfg.logsRepeats && Date.now() < deadline) {
        const t0 = performance.now();
        const logs = await ctx.client.call<unknown[]>('eth_getLogs', [filter]);
        lat.push(performance.now() - t0);
        if (logs.length !== ctx.tokenLogs) throw new Error(`eth_getLogs returned ${logs.length} logs, expected ${ctx.tokenLogs}`);
      }
      lat.sort(sortNum);
      return { value: percentile(lat, 50), detail: `${ctx.tokenLogs} logs, ${lat.length} calls, max ${lat[lat.length - 1]!.toFixed(1)} ms` };
    },
  },
  {
    name: 'newheads', title: `WebSocket newHeads: ${WS_CLIENTS} clients subscribed; one value transfer at a time, send → each client's newHeads of the tx's block, p50 over clients and transfers`, unit: 'ms', higherIsBetter: false, onBare: false,
    run: (ctx) => newHeadsLatency(ctx),
  },
  {
    name: 'latency', title: 'eth_blockNumber p99 latency (one connection) while bursts of value transfers execute', unit: 'ms', higherIsBetter: false, onBare: false,
    async run(ctx) {
      const sampler = makeClient(ctx.node.url, 1);
      const lat: number[] = [];
      try {
        for (let b = 0; b < ctx.cfg.bursts; b++) {
          const signed = await signBatch(ctx, ctx.cfg.burstSize, (k) => ({ to: holder(k + b), value: 1n, gasLimit: TRANSFER_GAS }));
          let done = false;
          const sampling = (async () => {
            while (!done && lat.length < MAX_LATENCY_SAMPLES) {
              const t0 = performance.now();
              await sampler.call('eth_blockNumber');
              lat.push(performance.now() - t0);
              await sleep(SAMPLER_GAP_MS);
            }
          })();
          try {
            await sendAndConfirm(ctx, signed);
          } finally {
            done = true;
            await sampling;
          }
        }
      } finally {
        sampler.close();
      }
      lat.sort(sortNum);
      const f = (p: number): string => percentile(lat, p).toFixed(1);
      return {
        value: percentile(lat, 99),
        detail: `${ctx.cfg.bursts}×${ctx.cfg.burstSize} transfers, ${lat.length} samples, p50 ${f(50)} ms, max ${lat[lat.length - 1]!.toFixed(1)} ms`,
      };
    },
  },
  {
    name: 'rss', title: 'peak RSS of the node process (VmHWM, after the workloads above)', unit: 'MiB', higherIsBetter: false, onBare: true,
    async run(ctx) {
      const { mib, processes } = peakRssMiB(ctx.node.pid);
      if (processes === 0) throw new Error(`cannot read /proc/${ctx.node.pid}/status`);
      return { value: mib, detail: processes > 1 ? `sum over ${processes} processes` : undefined };
    },
  },
];

/** Waits until every subscriber has head `n`; returns each one's arrival time of it. */
async function headArrivals(subs: Subscriber[], n: number, deadline: number): Promise<number[]> {
  for (;;) {
    const times = subs.map((s) => s.heads.find((h) => h.n === n)?.t);
    if (times.every((t) => t !== undefined)) return times as number[];
    const gone = subs.find((s) => s.closedEarly !== undefined);
    if (gone) throw new Error(`a WebSocket client was closed: ${gone.closedEarly}`);
    if (Date.now() > deadline) throw new Error(`block ${n} did not reach all ${subs.length} clients within ${WS_HEAD_TIMEOUT_MS} ms`);
    await sleep(WS_HEAD_POLL_MS);
  }
}

/**
 * `WS_CLIENTS` WebSocket clients subscribed to newHeads; value transfers are sent one at a time, and for
 * each the time from sending it to each client's arrival of the head of the block that holds it is a
 * sample. With automine (Anvil, Hardhat, ferry dev) and `ferry start` at timeout_commit 0 that is
 * execution + fan-out; with a block interval it also holds the wait for the next block (about half the
 * interval on average).
 */
async function newHeadsLatency(ctx: NodeContext): Promise<Figure> {
  const wsUrl = ctx.node.wsUrl;
  if (!wsUrl) throw new Error('the node serves no WebSocket');
  const signed = await signBatch(ctx, ctx.cfg.wsTransfers, (k) => ({ to: holder(k + 11), value: 1n, gasLimit: TRANSFER_GAS }));
  const subs = await openAll(WS_CLIENTS, wsUrl, undefined);
  const lat: number[] = [];
  const fan: number[] = [];
  try {
    for (let k = 0; k < signed.hashes.length; k++) {
      // signBatch deals the txs round-robin over the senders: tx k is the (k / senders)-th of sender k % senders
      const raw = signed.streams[k % signed.streams.length]![Math.floor(k / signed.streams.length)]!;
      const deadline = Date.now() + WS_HEAD_TIMEOUT_MS;
      const t0 = performance.now();
      await ctx.client.call('eth_sendRawTransaction', [raw]);
      const receipt = await waitReceipt(ctx.client, signed.hashes[k]!, WS_HEAD_TIMEOUT_MS);
      const times = await headArrivals(subs, Number(receipt.blockNumber), deadline);
      const first = Math.min(...times);
      for (const t of times) {
        lat.push(t - t0);
        fan.push(t - first);
      }
    }
  } finally {
    for (const s of subs) s.close();
  }
  lat.sort(sortNum);
  fan.sort(sortNum);
  return {
    value: percentile(lat, 50),
    detail: `${signed.hashes.length} transfers × ${WS_CLIENTS} clients; p99 ${percentile(lat, 99).toFixed(1)} ms; fan-out after the first client p50 ${percentile(fan, 50).toFixed(1)} / p99 ${percentile(fan, 99).toFixed(1)} ms`,
  };
}
