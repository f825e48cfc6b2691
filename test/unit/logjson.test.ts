/**
 * eth_getLogs' answer written as JSON text (evmrpc/logjson.ts, docs/benchmarks.md "Reads"): the text
 * from the store's hex rows, and from a backend without them, is exactly JSON.stringify of the
 * formatted logs, for logs of every shape; the core splices a JsonText result into the same envelope
 * bytes JSON.stringify writes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ChainReader } from '../../src/chain/reader.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { findLogs, findLogsJson } from '../../src/evmrpc/methods.js';
import { createDispatcher } from '../../src/jsonrpc/core.js';
import { JsonText, type CallContext } from '../../src/jsonrpc/types.js';
import { Store } from '../../src/store/store.js';
import type { EvmLog, EvmReceipt } from '../../src/types/chain.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-logjson-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (seed * 31 + i * 7) & 0xff);
/** log shapes: topics 0..4, data empty / 1 byte / 32 / 300 bytes */
const SHAPES: [number, number][] = [[0, 0], [1, 1], [2, 32], [3, 32], [4, 300], [0, 5], [4, 0]];

function writeChain(store: Store): void {
  let logIndex = 0;
  for (let height = 1; height <= 3; height++) {
    const hash = bytes(32, 100 + height);
    const receipts: EvmReceipt[] = [];
    // 18 txs in block 2: indexes and log indexes past 0xf
    for (let tx = 0; tx < (height === 2 ? 18 : 2); tx++) {
      const txHash = bytes(32, 1000 * height + tx);
      const logs: EvmLog[] = SHAPES.slice(0, 1 + ((height + tx) % SHAPES.length)).map(([topics, data], k) => ({
        address: bytes(20, k), topics: Array.from({ length: topics }, (_, t) => bytes(32, 50 + t + k)), data: bytes(data, k + tx),
        blockNumber: BigInt(height), blockHash: hash, transactionHash: txHash, transactionIndex: tx, logIndex: logIndex++,
      }));
      receipts.push({
        transactionHash: txHash, transactionIndex: tx, blockHash: hash, blockNumber: BigInt(height), from: bytes(20, 9), to: bytes(20, 8), type: 2,
        status: 1, cumulativeGasUsed: 0n, gasUsed: 0n, effectiveGasPrice: 0n, contractAddress: undefined, logs, logsBloom: new Uint8Array(256),
        vmError: undefined, revertData: undefined,
      });
    }
    logIndex = 0;
    const header = {
      number: BigInt(height), hash, parentHash: new Uint8Array(32), stateRoot: new Uint8Array(32), transactionsRoot: new Uint8Array(32),
      receiptsRoot: new Uint8Array(32), logsBloom: new Uint8Array(256), miner: new Uint8Array(20), gasLimit: 30_000_000n, gasUsed: 0n,
      timestamp: BigInt(height), extraData: new Uint8Array(), baseFeePerGas: 0n, mixHash: new Uint8Array(32), size: 0n,
    };
    store.transaction(() => store.putBlock({ height: header.number, hash, evm: { header, transactions: [] }, receipts, nativeHashes: receipts.map((r) => r.transactionHash) }));
  }
}

describe('eth_getLogs as JSON text', () => {
  const store = new Store(join(dir, 'db'));
  writeChain(store);
  after(() => store.close());
  const caps = { blockRangeCap: 0, logsCap: 0 };
  const filter = (addresses: Uint8Array[], topics: (Uint8Array[] | null)[]) => ({
    blockHash: undefined, fromBlock: { kind: 'number' as const, number: 0n }, toBlock: { kind: 'number' as const, number: 3n }, addresses, topics,
  });
  const reader = () =>
    ChainReader.create(store, {
      chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, logsCap: 0, coinbase: new Uint8Array(20),
      simulator: { call: () => Promise.reject(new Error('unused')), estimateGas: () => Promise.reject(new Error('unused')), createAccessList: () => Promise.reject(new Error('unused')) },
      submit: () => Promise.reject(new Error('unused')),
    });

  it('is JSON.stringify of the formatted logs, from the hex rows and without them', async () => {
    const r = await reader();
    r.onCommitted(3n);
    const withoutHex = Object.assign(Object.create(r) as ChainReader, { getLogsHex: undefined });
    for (const f of [filter([], []), filter([bytes(20, 0)], []), filter([], [null, [bytes(32, 51)]]), filter([bytes(20, 4)], [[bytes(32, 54)]]), filter([bytes(20, 77)], [])]) {
      const want = JSON.stringify(findLogs(r, caps, f));
      assert.equal(findLogsJson(r, caps, f).text, want);
      assert.equal(findLogsJson(withoutHex, caps, f).text, want);
    }
    assert.ok(JSON.parse(findLogsJson(r, caps, filter([], [])).text).length > 30, 'every shape of log is in the answer');
  });

  it('the core writes a JsonText result into the envelope JSON.stringify would write', async () => {
    const value = [{ a: '0x1', b: [false, null] }];
    const d = createDispatcher({
      table: { eth_text: { params: [], handler: () => new JsonText(JSON.stringify(value)) }, eth_plain: { params: [], handler: () => value } },
      enabledNamespaces: null,
      limits: { batchRequestLimit: 0, batchResponseMaxSize: 0 },
      errors: evmErrors,
      onInternalError: () => undefined,
    });
    const ctx: CallContext = { transport: 'http', authenticated: false };
    for (const id of [1, 0, -7, 1.5, 'x"\\\u2028y', null]) {
      const ask = (method: string) => d.handle(JSON.stringify({ jsonrpc: '2.0', id, method }), ctx);
      assert.equal(await ask('eth_text'), await ask('eth_plain'));
    }
    const batch = (method: string) => d.handle(JSON.stringify([1, 2].map((id) => ({ jsonrpc: '2.0', id, method }))), ctx);
    assert.equal(await batch('eth_text'), await batch('eth_plain'));
    assert.equal(JSON.stringify({ r: new JsonText('[1,{"a":2}]') }), '{"r":[1,{"a":2}]}');
  });
});
