/**
 * A pruning node as an operator runs it (docs/abci.md "Pruning"): `ferry start --pruning everything
 * --min-retain-blocks N` makes blocks, serves the head, and answers pruned heights on both surfaces
 * with the documented errors: geth's "historical state <root> is not available" (-32000) for state it
 * removed, "pruned history unavailable" (4444) for blocks below the retained history, and CometBFT's
 * "height X is not available, lowest height is Y" on Surface B. After its trie nodes were collected
 * (store/triegc.ts), eth_getProof at the head and at the lowest retained state height still verifies
 * against the block's state root, and one height lower answers the pruned-state error. Transfers to
 * new accounts while it runs give every block new trie nodes; once the node stopped, its store holds
 * exactly the nodes its retained roots reach (the references its blocks journaled were all counted).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { verifyAccountProof } from '../helpers/proof.js';
import { JsonRpcProvider, Wallet } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { walkStoredTrie } from '../helpers/triewalk.js';
import { DATA_DIR } from '../../src/config/load.js';
import { DB_FILE } from '../../src/node/home.js';
import { Store } from '../../src/store/store.js';

const MIN_RETAIN = 20;
/** `everything` keeps 2 heights of state and prunes every 10 blocks (Cosmos SDK presets) */
const KEEP_RECENT = 2;
const INTERVAL = 10;
const TARGET_HEIGHT = 3 * MIN_RETAIN;
/** transfers to new accounts at the start, each in its own block */
const TRANSFERS = 15;
const hex = (n: number) => '0x' + n.toString(16);
const ZERO = '0x' + '00'.repeat(20);

describe('a node with pruning = "everything" and min-retain-blocks', () => {
  let node: FerryNode;
  let head = 0;

  before(async () => {
    const pruning = ['--pruning', 'everything', '--min-retain-blocks', String(MIN_RETAIN)];
    node = await startFerry({ args: [...pruning, '--consensus.timeout_commit', '50ms'] });
    // transfers to new accounts for the first heights (new trie nodes in their blocks); ethers' 250 ms
    // result cache is off, as blocks come faster than that
    const provider = new JsonRpcProvider(node.url, Number(EVM_CHAIN_ID), { staticNetwork: true, cacheTimeout: -1 });
    const sender = new Wallet(devKeys()[1]!, provider);
    for (let i = 0; i < TRANSFERS; i++) await (await sender.sendTransaction({ to: '0x' + (0x1000 + i).toString(16).padStart(40, '0'), value: 1n })).wait();
    provider.destroy();
    // empty blocks keep coming: wait for enough of them that both pruners have run
    while (Number(await call<string>(node.url, 'eth_blockNumber')) < TARGET_HEIGHT) await new Promise((r) => setTimeout(r, 200));
    // the same home again with blocks an hour apart: the heights below stay still while they are asked about
    await node.stop();
    node = await startFerry({ home: node.home, args: [...pruning, '--consensus.timeout_commit', '1h'] });
    head = Number(await call<string>(node.url, 'eth_blockNumber'));
  });
  after(async () => {
    await node?.stop();
  });

  it('serves the head and the retained heights', async () => {
    assert.match(await call<string>(node.url, 'eth_getBalance', [ZERO, 'latest']), /^0x[0-9a-f]+$/);
    const block = await call<{ number: string } | null>(node.url, 'eth_getBlockByNumber', [hex(head), false]);
    assert.equal(block?.number, hex(head));
  });

  it("answers state it pruned with geth's historical-state error", async () => {
    // below the last pruning floor (head rounded down to the interval, minus keep-recent) and above the retained history
    const floor = head - (head % INTERVAL) - KEEP_RECENT;
    const n = floor - 1;
    assert.ok(n > head - MIN_RETAIN, `height ${n} still has its block`);
    const block = await call<{ stateRoot: string }>(node.url, 'eth_getBlockByNumber', [hex(n), false]);
    const r = await rpc(node.url, 'eth_getBalance', [ZERO, hex(n)]);
    assert.deepEqual(r.error, { code: -32000, message: `historical state ${block.stateRoot.slice(2)} is not available` });
  });

  it('answers blocks below the retained history with 4444 on Surface A and CometBFT\'s error on Surface B', async () => {
    for (const method of ['eth_getBlockByNumber', 'eth_getBalance']) {
      const params = method === 'eth_getBlockByNumber' ? [hex(1), false] : [ZERO, hex(1)];
      const r = await rpc(node.url, method, params);
      assert.deepEqual(r.error, { code: 4444, message: 'pruned history unavailable' }, method);
    }
    const status = (await (await fetch(`${node.cometUrl}/status`)).json()) as { result: { sync_info: { earliest_block_height: string } } };
    const lowest = Number(status.result.sync_info.earliest_block_height);
    assert.ok(lowest > 1 && lowest >= head - MIN_RETAIN, `earliest_block_height ${lowest}`);
    const res = (await (await fetch(`${node.cometUrl}/block?height=1`)).json()) as { error?: { data: string } };
    assert.match(res.error?.data ?? '', new RegExp(`^height 1 is not available, lowest height is \\d+$`));
  });

  it('proves accounts at the retained heights against their state roots after trie GC, and refuses the pruned one', async () => {
    const floor = head - (head % INTERVAL) - KEEP_RECENT;
    const funded = new Wallet(devKeys()[0]!).address;
    for (const n of [head, floor]) {
      const block = await call<{ stateRoot: string }>(node.url, 'eth_getBlockByNumber', [hex(n), false]);
      for (const addr of [funded, ZERO]) {
        const proof = await call<{ accountProof: string[]; balance: string }>(node.url, 'eth_getProof', [addr, [], hex(n)]);
        const account = await verifyAccountProof(block.stateRoot, addr, proof.accountProof);
        assert.equal(account?.balance ?? 0n, BigInt(proof.balance), `${addr} at ${n}`);
      }
    }
    const r = await rpc(node.url, 'eth_getProof', [funded, [], hex(floor - 1)]);
    assert.equal((r.error as { code: number } | undefined)?.code, -32000);
  });
  it('keeps exactly the trie nodes its retained roots reach, once stopped', async () => {
    assert.ok(head > TRANSFERS, 'the transfers were pruned below the retained heights');
    await node.stop();
    const store = new Store(join(node.home, DATA_DIR, DB_FILE), { reader: true });
    try {
      const roots = store.db.prepare('SELECT height, root FROM trie_roots ORDER BY height').all() as { height: number; root: Buffer }[];
      assert.ok(roots.length > 0 && roots[0]!.height > TRANSFERS, `retained roots from ${roots[0]?.height}`);
      const seen = new Set<string>();
      for (const r of roots) walkStoredTrie(store, r.root, seen);
      const stored = store.db.prepare('SELECT count(*) AS n FROM trie WHERE length(k) = 32').get() as { n: number };
      assert.equal(stored.n, seen.size, 'trie nodes stored against those the retained roots reach');
    } finally {
      store.close();
    }
    node = await startFerry({ home: node.home, args: ['--pruning', 'everything', '--min-retain-blocks', String(MIN_RETAIN), '--consensus.timeout_commit', '1h'] });
  });
});
