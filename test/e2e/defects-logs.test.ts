/**
 * Defects issue, item 1, against the real ferry process: a log query by topic 1-3 (ERC-20 Transfer
 * *to* an address) answers every match when more than `logs-cap` logs share the token's address and
 * topic 0 (before, the node read logs-cap + 1 such rows and filtered them: some matches were silently
 * lost); logs-cap counts matching logs only; `logs-cap = 0` means no cap (before, every such query
 * answered nothing and any other non-empty one failed with `query returned more than 0 results`).
 * eth_getLogs through ethers, and eth_newFilter + eth_getFilterLogs, which share the read path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Contract, ContractFactory, JsonRpcProvider, Network, NonceManager, id, zeroPadValue, type Log } from 'ethers';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const TRANSFER = id('Transfer(address,address,uint256)');
const LOGS_CAP = 3;
const topicOf = (a: string) => zeroPadValue(a, 32).toLowerCase();

let node: FerryNode;
let provider: JsonRpcProvider;
let token: string;
const owner = devWallet(0);
/** the rare recipient: only the 5th and 7th of the transfers go to it, after more than LOGS_CAP others */
const rare = devWallet(5).address;
const others = [1, 2, 3, 4].map((i) => devWallet(i).address);
const RECIPIENTS = [others[0]!, others[1]!, others[2]!, others[3]!, rare, others[0]!, rare];

const connect = (n: FerryNode) => new JsonRpcProvider(n.url, Network.from(EVM_CHAIN_ID), { staticNetwork: true, pollingInterval: 100 });
const byRare = () => ({ address: token, topics: [TRANSFER, null, topicOf(rare)], fromBlock: 0, toBlock: 'latest' });
const amounts = (logs: readonly Log[]) => logs.map((l) => BigInt(l.data));

before(async () => {
  node = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.logs-cap', String(LOGS_CAP)] });
  provider = connect(node);
  const c = compileToken();
  const signer = new NonceManager(owner.connect(provider));
  const deployed = await new ContractFactory(c.abi, c.bytecode, signer).deploy('Logs Token', 'LOG', 10n ** 24n);
  await deployed.waitForDeployment();
  token = (await deployed.getAddress()).toLowerCase();
  const erc20 = new Contract(token, c.abi, signer);
  // amount i+1 tells the transfers apart; sent back to back, mined in order
  const sent = [];
  for (const [i, to] of RECIPIENTS.entries()) sent.push(await erc20.getFunction('transfer')(to, BigInt(i + 1)));
  for (const tx of sent) assert.equal((await tx.wait())!.status, 1);
});

after(async () => {
  provider?.destroy();
  if (node) assert.equal(await node.stop(), 0);
});

describe(`eth_getLogs by topic 2 with logs-cap ${LOGS_CAP}`, () => {
  it('returns every Transfer to the rare recipient though 8 Transfers of the token precede or surround them', async () => {
    assert.deepEqual(amounts(await provider.getLogs(byRare())), [5n, 7n]);
    assert.deepEqual(amounts(await provider.getLogs({ ...byRare(), address: undefined })), [5n, 7n], 'without an address');
    const toRareOrFirst = { address: token, topics: [null, null, [topicOf(rare), topicOf(others[1]!)]], fromBlock: 0 };
    assert.deepEqual(amounts(await provider.getLogs(toRareOrFirst)), [2n, 5n, 7n]);
  });

  it('eth_newFilter + eth_getFilterLogs answers the same', async () => {
    const f = await call<string>(node.url, 'eth_newFilter', [{ ...byRare(), fromBlock: '0x0' }]);
    const logs = await call<{ data: string; topics: string[] }[]>(node.url, 'eth_getFilterLogs', [f]);
    assert.deepEqual(logs.map((l) => BigInt(l.data)), [5n, 7n]);
    assert.equal(logs[0]!.topics[2], topicOf(rare));
  });

  it('more matching logs than the cap is the cap error', async () => {
    const r = await rpc(node.url, 'eth_getLogs', [{ address: token, topics: [TRANSFER], fromBlock: '0x0' }]);
    assert.deepEqual(r.error, { code: -32000, message: `query returned more than ${LOGS_CAP} results` });
  });
});

describe('logs-cap = 0 (no cap), after a restart on the same home', () => {
  before(async () => {
    provider.destroy();
    assert.equal(await node.stop(), 0);
    node = await startFerry({ home: node.home, args: ['--consensus.timeout_commit', '200ms', '--json-rpc.logs-cap', '0'] });
    provider = connect(node);
  });

  it('a topic-2 query answers its matches, a topic-0 query every Transfer', async () => {
    assert.deepEqual(amounts(await provider.getLogs(byRare())), [5n, 7n]);
    const all = await provider.getLogs({ address: token, topics: [TRANSFER], fromBlock: 0 });
    assert.deepEqual(amounts(all), [10n ** 24n, 1n, 2n, 3n, 4n, 5n, 6n, 7n]);
    const f = await call<string>(node.url, 'eth_newFilter', [{ address: token, fromBlock: '0x0' }]);
    assert.equal((await call<unknown[]>(node.url, 'eth_getFilterLogs', [f])).length, 8);
  });
});
