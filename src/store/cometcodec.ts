/**
 * The stored form of the CometBFT record of a height (the `comet` table, types/cometbft.ts
 * CometBlockRecord): the storage codec's (lib/serial.ts), with each tx result of the FinalizeBlock
 * results written as the bytes the event index stores for that tx (`comet_txs.result`,
 * store/eventindex.ts), so a block's tx results are encoded once, not twice (docs/benchmarks.md "The
 * block's store transaction"). Records written before hold the results as values; both read the same.
 */
import { decodeValue, encodeValue } from '../lib/serial.js';
import type { CometBlockRecord, ExecTxResult } from '../types/cometbft.js';

/**
 * The storage-codec bytes of a tx result, made once per result object: the block's record and the
 * event index's row of the tx are written in the same store transaction from the same objects, which
 * are not changed once FinalizeBlock has answered.
 */
const encoded = new WeakMap<object, Buffer>();
export function encodeTxResultOnce(result: object): Buffer {
  let bytes = encoded.get(result);
  if (bytes === undefined) {
    bytes = encodeValue(result);
    encoded.set(result, bytes);
  }
  return bytes;
}

export function encodeCometRecord(rec: CometBlockRecord): Buffer {
  const txResults = rec.results.txResults.map(encodeTxResultOnce);
  return encodeValue({ ...rec, results: { ...rec.results, txResults } });
}

export function decodeCometRecord(bytes: Uint8Array): CometBlockRecord {
  const rec = decodeValue<CometBlockRecord>(bytes);
  const results = rec.results.txResults as (ExecTxResult | Uint8Array)[];
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (r instanceof Uint8Array) results[i] = decodeValue<ExecTxResult>(r);
  }
  return rec;
}
