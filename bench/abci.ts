/**
 * `node dist/bench/abci.js [--transfers N] [--timeout-commit 300ms]` — transfer throughput and block
 * time of ferry's embedded engine beside ferry under real CometBFT (v0.38 and v0.39; one node, and a
 * network of four validators; v0.39 also over gRPC with its flood and its application-side mempool). Each setup gets the same pre-signed transfers from 8 senders, all sent to node 0;
 * tx/s = transfers / (first send → last receipt); block time = wall time / heights made meanwhile.
 * Needs the cometbft binaries (test/helpers/cometnet.ts findCometbft; docs/abci.md "Tests").
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

async function measure(setup: string, url: string, txs: string[]): Promise<Row> {
  const h0 = BigInt(await rpc<string>(url, 'eth_blockNumber'));
  const start = performance.now();
  const hashes: string[] = [];
  for (let i = 0; i < txs.length; i += BATCH) {
    hashes.push(...(await Promise.all(txs.slice(i, i + BATCH).map((t) => rpc<string>(url, 'eth_sendRawTransaction', [t])))));
  }
  // the last tx of every sender is mined last (nonce order)
  for (const h of hashes.slice(-SENDERS)) {
    while (!(await rpc(url, 'eth_getTransactionReceipt', [h]))) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const ms = performance.now() - start;
  const h1 = BigInt(await rpc<string>(url, 'eth_blockNumber'));
  const blocks = Number(h1 - h0);
  return { setup, txPerSec: (txs.length * 1000) / ms, blockMs: blocks > 0 ? ms / blocks : NaN, blocks };
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
    return await measure('embedded engine', url, txs);
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
    return await measure(name, net.nodes[0]!.ethUrl, txs);
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
  const { values } = parseArgs({ options: { transfers: { type: 'string' }, 'timeout-commit': { type: 'string' } } });
  const n = Number(values.transfers ?? 1000);
  const tc = values['timeout-commit'] ?? '300ms';
  const txs = await signAll(n);
  const rows: Row[] = [await embedded(tc, txs)];
  for (const setup of NET_SETUPS) {
    const bin = findCometbft(setup.line);
    if (bin) rows.push(await network(bin, setup, tc, txs));
    else process.stderr.write(`no cometbft v${setup.line} binary: that setup was not measured\n`);
  }
  const lines = [`${n} transfers from ${SENDERS} senders, timeout_commit ${tc}`, '', '| setup | transfers/s | ms per block | blocks |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.setup} | ${r.txPerSec.toFixed(0)} | ${r.blockMs.toFixed(0)} | ${r.blocks} |`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});
