/**
 * store/cometcodec.ts: a block's CometBFT record keeps each tx result as the bytes the event index
 * writes for that tx (encoded once for both), reads back as the record written, and a record an older
 * ferry wrote (results as values) still reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeValue } from '../../src/lib/serial.js';
import { COMET_FORMAT, decodeCometRecord, encodeCometRecord } from '../../src/store/cometcodec.js';
import { decodeTxResult, encodeTxResultOnce } from '../../src/store/resultcodec.js';
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
  assert.equal(bytes[0], COMET_FORMAT, 'the first byte is the layout tag');
  rec.results.txResults.forEach((r, i) => {
    assert.ok(bytes.includes(encodeTxResultOnce(r)), `tx result ${i} is stored as the event index's bytes`);
    assert.equal(encodeTxResultOnce(r), encodeTxResultOnce(r), 'encoded once per result');
    assert.deepEqual(decodeTxResult(encodeTxResultOnce(r)), r);
  });
});

test('a record in the older form (tx results as values) still reads', () => {
  const rec = record();
  assert.deepEqual(decodeCometRecord(encodeValue(rec)), rec);
  const empty = { ...rec, results: { ...rec.results, txResults: [] } };
  assert.deepEqual(decodeCometRecord(encodeCometRecord(empty)), empty);
});

test('records with every optional field absent or present, signatures, zero times and empty blocks read back as written', () => {
  const zeroTime = { seconds: -62_135_596_800n, nanos: 0 };
  const sig = (flag: 1 | 2 | 3, n: number) => ({ blockIdFlag: flag, validatorAddress: flag === 1 ? z(0) : z(20, n), timestamp: flag === 1 ? zeroTime : { seconds: 1_700_000_001n, nanos: 999_999_999 }, signature: flag === 1 ? z(0) : z(64, n) });
  const set = [{ address: z(20, 4), pubKey: z(32, 5), votingPower: 10n }, { address: z(20, 6), pubKey: z(32, 7), votingPower: 2n ** 62n }];
  for (let mask = 0; mask < 8; mask++) {
    const base = record();
    const rec: CometBlockRecord = {
      ...base,
      block: { ...base.block, data: { txs: mask & 1 ? [] : [...base.block.data.txs, Buffer.from('a Buffer tx')] }, lastCommit: { ...base.block.lastCommit, round: 3, signatures: [sig(2, 1), sig(1, 0), sig(3, 2)] } },
      commit: { ...base.commit, signatures: [sig(2, 9)] },
      results: {
        events: [{ type: 'ünï', attributes: [{ key: 'k', value: '✓', index: false }] }],
        txResults: mask & 1 ? [] : base.results.txResults,
        appHash: z(0),
        ...(mask & 2 ? { validatorUpdates: [{ pubKey: z(32, 8), power: 0n }] } : {}),
      },
      size: 2 ** 40,
    };
    delete rec.validators;
    if (mask & 4) rec.validators = set;
    if (mask & 2) rec.nextValidators = set.slice(1);
    const bytes = encodeCometRecord(rec);
    assert.equal(bytes[0], COMET_FORMAT);
    assert.deepStrictEqual(decodeCometRecord(bytes), rec, `mask ${mask}`);
  }
});

test('a record the previous ferry wrote (V8 serializer, tx results as their bytes) still reads', () => {
  const rec = record();
  const old = encodeValue({ ...rec, results: { ...rec.results, txResults: rec.results.txResults.map((r) => encodeValue(r)) } });
  assert.equal(old[0], 0xff);
  assert.deepStrictEqual(decodeCometRecord(old), rec);
  assert.deepStrictEqual(decodeTxResult(encodeTxResultOnce(rec.results.txResults[0]!)), rec.results.txResults[0]);
});

test('a damaged record is an error', () => {
  const enc = encodeCometRecord(record());
  assert.throws(() => decodeCometRecord(enc.subarray(0, enc.length - 1)), /ends early/);
  assert.throws(() => decodeCometRecord(Buffer.concat([enc, Uint8Array.of(0)])), /bytes after its end/);
  assert.throws(() => decodeCometRecord(Uint8Array.of(9, 0)), /unknown format 9/);
});
