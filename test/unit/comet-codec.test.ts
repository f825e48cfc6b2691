/**
 * store/cometcodec.ts: a block's CometBFT record keeps each tx result as the bytes the event index
 * writes for that tx (encoded once for both), reads back as the record written, and a record an older
 * ferry wrote (results as values) still reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeValue, encodeValue } from '../../src/lib/serial.js';
import { decodeCometRecord, encodeCometRecord, encodeTxResultOnce } from '../../src/store/cometcodec.js';
import type { CometBlockRecord, ExecTxResult } from '../../src/types/cometbft.js';

const z = (n: number, fill = 0) => new Uint8Array(n).fill(fill);
const result = (code: number): ExecTxResult => ({
  code,
  data: z(32, code + 1),
  log: code === 0 ? '' : 'out of gas',
  info: '',
  gasWanted: 70_000n,
  gasUsed: 51_234n,
  events: [{ type: 'ethereum_tx', attributes: [{ key: 'txIndex', value: String(code), index: true }] }],
  codespace: code === 0 ? '' : 'evm',
});

function record(): CometBlockRecord {
  const id = { hash: z(32, 1), partSetHeader: { total: 1, hash: z(32, 7) } };
  return {
    block: {
      header: {
        version: { block: 11n, app: 1n }, chainId: 'ferry-test', height: 5n, time: { seconds: 1_700_000_000n, nanos: 5 },
        lastBlockId: id, lastCommitHash: z(32), dataHash: z(32), validatorsHash: z(32, 1), nextValidatorsHash: z(32, 1),
        consensusHash: z(32, 2), appHash: z(32, 3), lastResultsHash: z(32), evidenceHash: z(32), proposerAddress: z(20, 4),
      },
      data: { txs: [Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(3)] },
      evidence: [],
      lastCommit: { height: 4n, round: 0, blockId: id, signatures: [] },
    },
    blockId: id,
    commit: { height: 5n, round: 0, blockId: id, signatures: [] },
    results: { events: [{ type: 'block_bloom', attributes: [] }], txResults: [result(0), result(5), result(0)], appHash: z(32, 3) },
    size: 123,
    validators: [{ address: z(20, 4), pubKey: z(32, 5), votingPower: 10n }],
  };
}

test('a record reads back as written; its tx results are the bytes the event index writes', () => {
  const rec = record();
  const bytes = encodeCometRecord(rec);
  assert.deepEqual(decodeCometRecord(bytes), rec);
  const stored = decodeValue<CometBlockRecord>(bytes).results.txResults as unknown as Uint8Array[];
  rec.results.txResults.forEach((r, i) => {
    assert.ok(stored[i] instanceof Uint8Array, `tx result ${i} is stored as bytes`);
    assert.deepEqual(new Uint8Array(stored[i]!), new Uint8Array(encodeTxResultOnce(r)));
    assert.equal(encodeTxResultOnce(r), encodeTxResultOnce(r), 'encoded once per result');
    assert.deepEqual(decodeValue(encodeTxResultOnce(r)), r);
  });
});

test('a record in the older form (tx results as values) still reads', () => {
  const rec = record();
  assert.deepEqual(decodeCometRecord(encodeValue(rec)), rec);
  const empty = { ...rec, results: { ...rec.results, txResults: [] } };
  assert.deepEqual(decodeCometRecord(encodeCometRecord(empty)), empty);
});
