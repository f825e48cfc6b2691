/**
 * `node dist/bench/abci.js [--transfers N] [--timeout-commit 300ms] [--lines 0.38,0.39]` — transfer throughput and block
 * time of ferry's embedded engine beside ferry under real CometBFT (v0.38 and v0.39; one node, and a
 * network of four validators; v0.39 also over gRPC with its flood and its application-side mempool). Each setup gets the same pre-signed transfers from 8 senders, all sent to node 0;
 * tx/s = transfers / (first send → last receipt); block time = wall time / heights made meanwhile.
 * CPU: node 0's ferry process, all its threads, and its busiest thread (the chain thread under load),
 * from /proc/<pid>/task/<tid>/stat (utime + stime) before the first send and after the last receipt,
 * per transfer: wall rates are noise on a shared machine, CPU per transfer much less so. Also the mean
 * time an eth_sendRawTransaction waits for its answer (50 in flight at a time).
 * Needs the cometbft binaries (test/helpers/cometnet.ts findCometbft; docs/abci.md "Tests").
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Wallet } from 'ethers';
import { CometNet, ferryNodeArgs, findCometbft, rpc, type CometLine } from '../test/helpers/cometnet.js';
import { devKeys } from '../test/helpers/accounts.js';
import { FERRY_BIN } from '../test/helpers/paths.js';
import { freePort } from '../test/helpers/node.js';

const SENDERS = 8;
const GWEI = 10n ** 9n;
const BATCH = 50;
const POLL_MS = 50;

interface Row {
  setup: string;
  txPerSec: number;
  blockMs: number;
  blocks: number;
  /** node 0's ferry: CPU µs per transfer of the whole process and of its busiest thread (NaN: not read) */
  cpuUs: number;
  busiestUs: number;
  /** mean time from an eth_sendRawTransaction's request to its answer, ms */
  sendMs: number;
}

/** clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux) */
const USER_HZ = 100;

/** CPU milliseconds of each thread of `pid`, by thread id (empty when /proc is not there) */
function threadCpuMs(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (pid === undefined) return out;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // fields after the command name in parentheses: utime and stime are the 14th and 15th of the line
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, ((Number(f[11]) + Number(f[12])) * 1000) / USER_HZ);
    }
  } catch {
    // not Linux, or the process is gone: no CPU figures
  }
  return out;
}

async function signAll(n: number): Promise<string[]> {
  const wallets = devKeys().slice(1, 1 + SENDERS).map((k) => new Wallet(k));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const w = wallets[i % SENDERS]!;
    out.push(await w.signTransaction({ to: '0x000000000000000000000000000000000000dEaD', value: 1n, nonce: Math.floor(i / SENDERS), gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 }));
  }
  return out;
}

async function measure(setup: string, url: string, txs: string[], pid: number | undefined): Promise<Row> {
  const h0 = BigInt(await rpc<string>(url, 'eth_blockNumber'));
  const cpu0 = threadCpuMs(pid);
  const start = performance.now();
  const hashes: string[] = [];
  let sendMs = 0;
  const send = async (t: string) => {
    const at = performance.now();
    const h = await rpc<string>(url, 'eth_sendRawTransaction', [t]);
    sendMs += performance.now() - at;
    return h;
  };
  for (let i = 0; i < txs.length; i += BATCH) {
    hashes.push(...(await Promise.all(txs.slice(i, i + BATCH).map(send))));
  }
  // the last tx of every sender is mined last (nonce order)
  for (const h of hashes.slice(-SENDERS)) {
    while (!(await rpc(url, 'eth_getTransactionReceipt', [h]))) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const ms = performance.now() - start;
  const used = [...threadCpuMs(pid)].map(([tid, cpu]) => cpu - (cpu0.get(tid) ?? 0));
  const h1 = BigInt(await rpc<string>(url, 'eth_blockNumber'));
  const blocks = Number(h1 - h0);
  const perTx = (cpuMs: number) => (used.length > 0 ? (cpuMs * 1000) / txs.length : NaN);
  return {
    setup,
    txPerSec: (txs.length * 1000) / ms,
    blockMs: blocks > 0 ? ms / blocks : NaN,
    blocks,
    cpuUs: perTx(used.reduce((a, b) => a + b, 0)),
    busiestUs: perTx(Math.max(0, ...used)),
    sendMs: sendMs / txs.length,
  };
}

async function embedded(timeoutCommit: string, txs: string[]): Promise<Row> {
  const home = mkdtempSync(join(tmpdir(), 'ferry-bench-abci-'));
  const [http, ws, comet] = [await freePort(), await freePort(), await freePort()];
  const proc = spawn(process.execPath, [...ferryNodeArgs(), FERRY_BIN, 'start', '--home', home, '--json-rpc.address', `127.0.0.1:${http}`, '--json-rpc.ws-address', `127.0.0.1:${ws}`, '--rpc.laddr', `tcp://127.0.0.1:${comet}`, '--consensus.timeout_commit', timeoutCommit], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${http}`;
  try {
    for (;;) {
      try {
        if (BigInt(await rpc<string>(url, 'eth_blockNumber')) >= 1n) break;
      } catch {
        // starting
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return await measure('embedded engine', url, txs, proc.pid);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.on('exit', r));
    rmSync(home, { recursive: true, force: true });
  }
}

interface NetSetup {
  line: CometLine;
  validators: number;
  transport: 'socket' | 'grpc';
  mempool: 'flood' | 'app';
}

async function network(cometBin: string, o: NetSetup, timeoutCommit: string, txs: string[]): Promise<Row> {
  const net = await CometNet.create({ cometBin, validators: o.validators, timeoutCommit, transport: o.transport, mempool: o.mempool });
  const name = `CometBFT v${o.line}, ${o.validators} validator${o.validators === 1 ? '' : 's'}, ABCI ${o.transport}, ${o.mempool} mempool`;
  try {
    await net.start();
    await net.waitHeight(2n);
    return await measure(name, net.nodes[0]!.ethUrl, txs, net.nodes[0]!.ferry.pid);
  } finally {
    await net.stop();
    rmSync(net.dir, { recursive: true, force: true });
  }
}

/**
 * The setups measured under CometBFT: each line with its default (flood) mempool over the socket, and
 * v0.39's application-side mempool (which needs gRPC) beside v0.39's flood mempool over gRPC, so the
 * mempool's effect is seen apart from the transport's (docs/abci.md "CometBFT versions").
 */
const NET_SETUPS: NetSetup[] = [1, 4].flatMap((validators) => [
  { line: '0.38', validators, transport: 'socket', mempool: 'flood' },
  { line: '0.39', validators, transport: 'socket', mempool: 'flood' },
  { line: '0.39', validators, transport: 'grpc', mempool: 'flood' },
  { line: '0.39', validators, transport: 'grpc', mempool: 'app' },
] satisfies NetSetup[]);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { transfers: { type: 'string' }, 'timeout-commit': { type: 'string' }, lines: { type: 'string' } } });
  // `--lines 0.38`: only that CometBFT line's setups (default: every line)
  const lines = values.lines?.split(',');
  const n = Number(values.transfers ?? 1000);
  const tc = values['timeout-commit'] ?? '300ms';
  const txs = await signAll(n);
  const rows: Row[] = [await embedded(tc, txs)];
  for (const setup of NET_SETUPS.filter((x) => lines === undefined || lines.includes(x.line))) {
    const bin = findCometbft(setup.line);
    if (bin) rows.push(await network(bin, setup, tc, txs));
    else process.stderr.write(`no cometbft v${setup.line} binary: that setup was not measured\n`);
  }
  const table = [
    `${n} transfers from ${SENDERS} senders, timeout_commit ${tc}, load average ${loadavg()[0]!.toFixed(1)} at the end`,
    '',
    '| setup | transfers/s | ms per block | blocks | node 0 ferry CPU µs/transfer | its busiest thread µs/transfer | eth_sendRawTransaction mean ms |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) table.push(`| ${r.setup} | ${r.txPerSec.toFixed(0)} | ${r.blockMs.toFixed(0)} | ${r.blocks} | ${r.cpuUs.toFixed(0)} | ${r.busiestUs.toFixed(0)} | ${r.sendMs.toFixed(1)} |`);
  process.stdout.write(table.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});
