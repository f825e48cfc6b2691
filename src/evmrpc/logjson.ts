/**
 * eth_getLogs' answer written straight as JSON text (docs/benchmarks.md "Reads"): the same bytes
 * JSON.stringify writes for `logs.map(formatLog)` (format.ts, geth's field order), from the logs' hex
 * text (the store makes it in SQLite: ChainReader.getLogsHex), without a Buffer, a hex conversion or
 * an object per field. Every field is a hex string, a quantity or `false`: nothing needs escaping.
 */
import { bytesToHex } from '../lib/hex.js';
import type { EvmLog } from '../types/chain.js';
import type { HexLog } from '../types/query.js';

/** a log's fields as hex text (for a backend without getLogsHex) */
export function hexLog(l: EvmLog): HexLog {
  return {
    address: bytesToHex(l.address),
    topics: l.topics.map(bytesToHex),
    data: bytesToHex(l.data),
    blockNumber: Number(l.blockNumber),
    blockHash: bytesToHex(l.blockHash),
    transactionHash: bytesToHex(l.transactionHash),
    transactionIndex: l.transactionIndex,
    logIndex: l.logIndex,
  };
}

/** JSON.stringify(logs.map(formatLog)), from the logs' hex text */
export function logsJson(logs: readonly HexLog[]): string {
  const parts: string[] = new Array(logs.length);
  for (let i = 0; i < logs.length; i++) {
    const l = logs[i]!;
    let topics = '';
    for (let t = 0; t < l.topics.length; t++) topics += (t === 0 ? '"0x' : ',"0x') + l.topics[t]! + '"';
    parts[i] =
      `{"address":"0x${l.address}","topics":[${topics}],"data":"0x${l.data}","blockNumber":"0x${l.blockNumber.toString(16)}",` +
      `"transactionHash":"0x${l.transactionHash}","transactionIndex":"0x${l.transactionIndex.toString(16)}","blockHash":"0x${l.blockHash}",` +
      `"logIndex":"0x${l.logIndex.toString(16)}","removed":false}`;
  }
  return `[${parts.join(',')}]`;
}
