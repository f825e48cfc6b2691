/**
 * Fork benchmark (docs/fork-mode.md; issue 24): an ERC-20 transfer (test/contracts/Token.sol) on a fork of
 * an Anvil origin holding the token, on a cold fork (nothing fetched yet) and on a warm one (the same
 * transfer again after a restart of the fork's home: everything it touches is in data/fork-cache.db),
 * beside Anvil forking the same origin (warm: a second transfer on the same Anvil, which caches in
 * memory). Each row: wall-clock time from eth_sendRawTransaction to the receipt, and the requests the
 * origin got, counted by the proxy in front of it (test/helpers/originproxy.ts). A swap through a
 * Uniswap-style pair is not measured: forge is not installed on this machine to build the pair.
 *
 * Run alone: `npm run build && node dist/bench/fork.js [--rounds N]`; `npm run bench -- --suites fork`.
 */
import { parseArgs } from 'node:util';
import { createPublicClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil } from '../test/e2e/debug-fixtures.js';
import { devKeys } from '../test/helpers/accounts.js';
import { startFerry, VIEM_CHAIN } from '../test/helpers/node.js';
import { OriginProxy } from '../test/helpers/originproxy.js';
import { compileContract } from '../test/helpers/solc.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 3);
const HOLDER_KEY = 3;
const token = compileContract('Token.sol', 'Token');

function clients(url: string) {
  const account = privateKeyToAccount(devKeys()[HOLDER_KEY] as Hex);
  return {
    pub: createPublicClient({ chain: VIEM_CHAIN, transport: http(url), cacheTime: 0, pollingInterval: 20 }),
    wallet: createWalletClient({ chain: VIEM_CHAIN, account, transport: http(url) }),
  };
}

/** ms from sending the transfer to its receipt */
async function transfer(url: string, tokenAddr: Address, to: Address): Promise<number> {
  const c = clients(url);
  const data = encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, 1n] });
  const t0 = performance.now();
  const hash = await c.wallet.sendTransaction({ to: tokenAddr, data });
  const r = await c.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  const ms = performance.now() - t0;
  if (r.status !== 'success') throw new Error(`transfer ${hash} failed on ${url}`);
  return ms;
}

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
    const c = clients(origin.url);
    const deploy = await c.wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: ['Bench', 'BNC', 10n ** 24n] });
    const tokenAddr = (await c.pub.waitForTransactionReceipt({ hash: deploy })).contractAddress!;
    for (let round = 0; round < ROUNDS; round++) {
      const to = `0x${(0xbe0000 + round).toString(16).padStart(40, '0')}` as Address;
      const proxy = await new OriginProxy(origin.url).start();
      try {
        const measure = async (row: Row, url: string) => {
          proxy.reset();
          row.ms.push(await transfer(url, tokenAddr, to));
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
  process.stdout.write(`ERC-20 transfer on a fork of an Anvil origin (median of ${ROUNDS} rounds; a new fork each round):

| node | send → receipt ms | origin requests |
|---|---|---|
${table.join('\n')}

Origin requests are HTTP requests (a JSON-RPC batch is one). Ferry asks for an account as one batch of
eth_getBalance, eth_getTransactionCount and eth_getCode, and a slot with eth_getStorageAt. A swap through
a Uniswap-style pair is not measured: forge is not installed here.
`);
}

main().then(undefined, (e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
