/**
 * eth_getLogs' read path over a temporary store (defects issue, item 1): every topic position is
 * filtered in the query and answered from an index; logs-cap counts matching logs only, and 0 means no
 * cap; an existing database without the topic 1-3 indexes gets them when the writer opens it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ChainReader } from '../../src/chain/reader.js';
import { Store } from '../../src/store/store.js';
import type { LogQuery } from '../../src/types/query.js';
import type { EvmLog, EvmReceipt } from '../../src/types/chain.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-logs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const fill = (n: number, byte: number): Uint8Array => new Uint8Array(n).fill(byte);
const word = (byte: number): Uint8Array => fill(32, byte);
const TOKEN = fill(20, 0xaa);
const OTHER = fill(20, 0xbb);
const TRANSFER = word(0xdd);
const SENDER = word(0x51);
/** recipients of the token's transfers, in order: RARE only at the 6th and 9th of 10 */
const RECIPIENTS = [1, 2, 3, 4, 2, 9, 3, 4, 9, 1].map((b) => word(b));
const RARE = word(9);

function receipt(height: bigint, index: number, logs: Omit<EvmLog, 'blockNumber' | 'blockHash' | 'transactionIndex'>[]): EvmReceipt {
  const hash = fill(32, 0x40 + index);
  hash[0] = Number(height);
  return {
    transactionHash: hash, transactionIndex: index, blockHash: fill(32, Number(height)), blockNumber: height, from: fill(20, 1),
    to: TOKEN, type: 2, status: 1, cumulativeGasUsed: 0n, gasUsed: 0n, effectiveGasPrice: 0n, contractAddress: undefined,
    logs: logs.map((l) => ({ ...l, transactionHash: hash, blockNumber: height, blockHash: fill(32, Number(height)), transactionIndex: index })),
    logsBloom: new Uint8Array(256), vmError: undefined, revertData: undefined,
  };
}

/** block 1: ten Transfer logs of TOKEN (SENDER → RECIPIENTS[i]) in one tx, and one of OTHER to RARE */
function writeChain(store: Store): void {
  const base = { data: new Uint8Array(32), transactionHash: new Uint8Array(32) };
  const tokenLogs = RECIPIENTS.map((to, i) => ({ ...base, address: TOKEN, topics: [TRANSFER, SENDER, to], logIndex: i }));
  const receipts = [receipt(1n, 0, tokenLogs), receipt(1n, 1, [{ ...base, address: OTHER, topics: [TRANSFER, SENDER, RARE], logIndex: 10 }])];
  const header = {
    number: 1n, hash: fill(32, 1), parentHash: fill(32, 0), stateRoot: fill(32, 0), transactionsRoot: fill(32, 0),
    receiptsRoot: fill(32, 0), logsBloom: new Uint8Array(256), miner: fill(20, 0), gasLimit: 30_000_000n, gasUsed: 0n,
    timestamp: 1n, extraData: new Uint8Array(), baseFeePerGas: 0n, mixHash: fill(32, 0), size: 0n,
  };
  store.transaction(() => store.putBlock({ height: 1n, hash: header.hash, evm: { header, transactions: [] }, receipts, nativeHashes: receipts.map(() => fill(32, 0)) }));
}

async function reader(store: Store, logsCap: number): Promise<ChainReader> {
  const r = await ChainReader.create(store, {
    chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap, coinbase: fill(20, 0),
    simulator: { call: () => Promise.reject(new Error('unused')), estimateGas: () => Promise.reject(new Error('unused')), createAccessList: () => Promise.reject(new Error('unused')) },
    submit: () => Promise.reject(new Error('unused')),
  });
  r.onCommitted(1n);
  return r;
}

const query = (topics: (Uint8Array[] | null)[], addresses: Uint8Array[] = [TOKEN]) => ({ fromBlock: 0n, toBlock: 1n, addresses, topics });
const indexes = (l: EvmLog[]) => l.map((x) => x.logIndex);

describe('log queries over a store', () => {
  const path = join(dir, 'db');
  const store = new Store(path);
  writeChain(store);
  after(() => store.close());

  it('a topic-2 query finds every match even when more than logs-cap logs share address and topic 0', async () => {
    const r = await reader(store, 3);
    assert.deepEqual(indexes(r.getLogs(query([[TRANSFER], null, [RARE]]))), [5, 8]);
    assert.deepEqual(indexes(r.getLogs(query([null, [SENDER], [RARE]]))), [5, 8]);
    assert.deepEqual(indexes(r.getLogs(query([null, null, [RARE]], []))), [5, 8, 10]);
    // two alternatives at one position, across addresses
    assert.deepEqual(indexes((await reader(store, 5)).getLogs(query([null, null, [RARE, word(1)]], [TOKEN, OTHER]))), [0, 5, 8, 9, 10]);
    // a position the logs do not have matches nothing
    assert.deepEqual(r.getLogs(query([null, null, null, [RARE]], [])), []);
  });

  it('logs-cap counts matching logs only: exactly cap matches pass, one more is the cap error', async () => {
    assert.deepEqual(indexes((await reader(store, 2)).getLogs(query([null, null, [RARE]]))), [5, 8]);
    const r1 = await reader(store, 1);
    assert.throws(() => r1.getLogs(query([null, null, [RARE]])), { kind: 'limitExceeded', message: 'query returned more than 1 results' });
    const r3 = await reader(store, 3);
    assert.throws(() => r3.getLogs(query([[TRANSFER]])), { kind: 'limitExceeded', message: 'query returned more than 3 results' });
  });

  it('logs-cap 0 means no cap', async () => {
    const r = await reader(store, 0);
    assert.deepEqual(indexes(r.getLogs(query([[TRANSFER]]))), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(indexes(r.getLogs(query([[TRANSFER], null, [RARE]]))), [5, 8]);
    assert.equal(r.getLogs(query([], [])).length, 11);
  });

  it('every topic position is answered from its index, the most selective one', () => {
    const q = (topics: (Uint8Array[] | null)[], addresses: Uint8Array[] = [TOKEN]): LogQuery => ({ fromBlock: 0n, toBlock: 1n, addresses, topics });
    const plan = (l: LogQuery) => store.logQueryPlan(l).join(' | ');
    assert.match(plan(q([[TRANSFER], null, [RARE]])), /USING INDEX logs_t2 /);
    assert.match(plan(q([null, null, null, [RARE]], [])), /USING INDEX logs_t3 /);
    assert.match(plan(q([null, [RARE]], [])), /USING INDEX logs_t1 /);
    assert.match(plan(q([[TRANSFER]], [])), /USING INDEX logs_t0 /);
    assert.match(plan(q([], [OTHER])), /USING INDEX logs_address /);
    // the rare address beats the common topic 0
    assert.match(plan(q([[TRANSFER]], [OTHER])), /USING INDEX logs_address /);
  });

  it('a database made before the topic 1-3 indexes gets them when the writer opens it', async () => {
    const old = join(dir, 'old');
    const s = new Store(old);
    writeChain(s);
    s.db.exec('DROP INDEX logs_t1; DROP INDEX logs_t2; DROP INDEX logs_t3');
    s.close();
    const reopened = new Store(old);
    try {
      const names = (reopened.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'logs'").all() as { name: string }[]).map((r) => r.name);
      for (const n of ['logs_t1', 'logs_t2', 'logs_t3']) assert.ok(names.includes(n), `${n} missing after reopening: ${names.join(', ')}`);
      assert.deepEqual(indexes((await reader(reopened, 3)).getLogs(query([[TRANSFER], null, [RARE]]))), [5, 8]);
    } finally {
      reopened.close();
    }
  });
});
