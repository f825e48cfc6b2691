/**
 * Normalizers the explorer comparisons with Anvil share (test/e2e/explorers-anvil.test.ts,
 * explorers-ots.test.ts, setcode-anvil.test.ts): what is dropped is chain-specific (where a tx sits on
 * its chain, the fee its block's base fee makes), or a documented geth/Parity difference
 * (docs/debug-tracing.md "flatCallTracer").
 */
import assert from 'node:assert/strict';
import { call } from '../helpers/rpc.js';

export type Trace = Record<string, any>;

/** a Parity trace list without where the traces sit on their chain (checked to be well formed) */
export const tracePlaceless = (list: Trace[]): Trace[] =>
  list.map(({ blockHash, blockNumber, transactionHash, ...rest }) => {
    assert.match(blockHash, /^0x[0-9a-f]{64}$/);
    assert.equal(typeof blockNumber, 'number');
    assert.match(transactionHash, /^0x[0-9a-f]{64}$/);
    return rest;
  });

/**
 * ferry's flatCallTracer (Parity errors, precompiles) of a tx and Anvil's trace_transaction of the
 * same tx (Anvil 1.7.1 answers `{}` for flatCallTracer), both placeless and with geth's differences
 * checked and dropped: the top frame's `gas` is the tx gas limit and its `gasUsed` the receipt's (geth),
 * where Parity shows the message's own gas; geth omits a suicide's `result`, Parity prints `null`.
 */
export async function flatCallVsParity(ferryUrl: string, ferryHash: string, anvilUrl: string, anvilHash: string): Promise<[Trace[], Trace[]]> {
  const cfg = { tracer: 'flatCallTracer', tracerConfig: { convertParityErrors: true, includePrecompiles: true } };
  const f = tracePlaceless(await call(ferryUrl, 'debug_traceTransaction', [ferryHash, cfg]));
  const a = tracePlaceless(await call(anvilUrl, 'trace_transaction', [anvilHash]));
  const tx = await call(ferryUrl, 'eth_getTransactionByHash', [ferryHash]);
  const receipt = await call(ferryUrl, 'eth_getTransactionReceipt', [ferryHash]);
  assert.equal(f[0]!.action.gas, tx.gas, 'top frame gas is the tx gas limit (geth)');
  assert.equal(f[0]!.result.gasUsed, receipt.gasUsed, 'top frame gasUsed is the receipt gasUsed (geth)');
  for (const l of [f, a]) {
    delete l[0]!.action.gas;
    delete l[0]!.result?.gasUsed;
  }
  for (const t of a) if (t.type === 'suicide' && t.result === null) delete t.result;
  return [f, a];
}

/** an ots search page's tx or log without where it sits on its chain (and the fee its block's base fee makes) */
export const searchPlaceless = ({ blockHash, blockNumber, blockTimestamp, gasPrice, ...rest }: any) => rest;

/** an ots search page's receipt, likewise (its block timestamp checked to be there) */
export const searchReceiptPlaceless = ({ blockHash, blockNumber, effectiveGasPrice, timestamp, blobGasPrice, logs, ...rest }: any) => {
  assert.match(timestamp, /^0x[0-9a-f]+$/);
  return { ...rest, logs: logs.map(searchPlaceless) };
};

/** every page of an ots search, from the newest (Before) or the oldest (After) end, at 4 txs a page */
export async function walkSearch(url: string, dir: 'Before' | 'After', addr: string): Promise<any[]> {
  const pages: any[] = [];
  let n = 0;
  for (let i = 0; i < 20; i++) {
    const pg = await call(url, `ots_searchTransactions${dir}`, [addr, n, 4]);
    pages.push(pg);
    if ((dir === 'Before' ? pg.lastPage : pg.firstPage) || pg.txs.length === 0) break;
    n = Number((dir === 'Before' ? pg.txs.at(-1) : pg.txs[0]).blockNumber);
  }
  return pages;
}
