/**
 * Fork benchmark (docs/fork-mode.md "Benchmark"; issue 24): a swap through a Uniswap V2-style pair
 * (test/contracts/Pair.sol `swapIn`: transferFrom token A into the pair, token B out, over two
 * test/contracts/Token.sol ERC-20s) on a fork of an Anvil origin that holds the pair with liquidity and a
 * few swaps of history (test/helpers/swap.ts). Rows: a cold fork (nothing fetched yet), a warm one (the
 * same swap again after a restart of the fork's home: everything it touches is in data/fork-cache.db),
 * and Anvil forking the same origin, cold and warm (a second swap on the same Anvil, which caches in
 * memory). Each row: wall-clock time from eth_sendRawTransaction to the receipt (viem's nonce, gas and fee
 * look-ups included), and the HTTP requests the origin got, counted by the proxy in front of it
 * (test/helpers/originproxy.ts).
 *
 * Run alone: `npm run build && node dist/bench/fork.js [--rounds N]`; `npm run bench -- --suites fork`.
 */
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import { startAnvil } from '../test/e2e/debug-fixtures.js';
import { startFerry } from '../test/helpers/node.js';
import { OriginProxy } from '../test/helpers/originproxy.js';
import { deployPair, swapOnce, type PairDeployment } from '../test/helpers/swap.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 3);
const AMOUNT_IN = 10n ** 18n;

interface Row {
  node: string;
  ms: number[];
  requests: number[];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function main(): Promise<void> {
  const origin = await startAnvil();
  const rows: Row[] = ['ferry cold', 'ferry warm (restarted home)', 'anvil cold', 'anvil warm (same process)'].map((node) => ({ node, ms: [], requests: [] }));
  try {
    const d: PairDeployment = await deployPair(origin.url);
    for (let round = 0; round < ROUNDS; round++) {
      const to = `0x${(0xbe0000 + round).toString(16).padStart(40, '0')}` as Address;
      const proxy = await new OriginProxy(origin.url).start();
      try {
        const measure = async (row: Row, url: string) => {
          proxy.reset();
          row.ms.push((await swapOnce(url, d, AMOUNT_IN, to)).ms);
          row.requests.push(proxy.requests);
        };
        const fork = await startFerry({ args: ['--dev', '--fork-url', proxy.url] });
        let home: string;
        try {
          home = fork.home;
          await measure(rows[0]!, fork.url);
        } finally {
          await fork.stop();
        }
        const again = await startFerry({ home, args: ['--dev', '--fork-url', proxy.url] });
        try {
          await measure(rows[1]!, again.url);
        } finally {
          await again.stop();
        }
        const anvil = await startAnvil('cancun', ['--fork-url', proxy.url]);
        try {
          await measure(rows[2]!, anvil.url);
          await measure(rows[3]!, anvil.url);
        } finally {
          await anvil.stop();
        }
      } finally {
        await proxy.close();
      }
    }
  } finally {
    await origin.stop();
  }
  const table = rows.map((r) => `| ${r.node} | ${median(r.ms).toFixed(1)} | ${median(r.requests)} |`);
  process.stdout.write(`A swap (Pair.sol swapIn, token A in, token B out) on a fork of an Anvil origin (median of ${ROUNDS} rounds; a new fork each round):

| node | send → receipt ms | origin requests |
|---|---|---|
${table.join('\n')}

Origin requests are HTTP requests (a JSON-RPC batch is one). Ferry asks for an account as one batch of
eth_getBalance, eth_getTransactionCount and eth_getCode, and a slot with eth_getStorageAt.
`);
}

main().then(undefined, (e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
