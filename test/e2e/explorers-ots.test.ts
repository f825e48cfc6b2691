/**
 * Otterscan's `ots_*` and `erigon_getHeaderByNumber` (docs/compatibility.md "ots") on ferry
 * against Anvil 1.7.1 on the fixed transactions of debug-fixtures.ts, field by field.
 *
 * Normalized, each for a reason: block hashes, miners and fees are chain-specific; Anvil's
 * ots_traceTransaction leaves out CREATE/CREATE2/SELFDESTRUCT frames, which ferry lists as Erigon
 * does; Anvil keeps `logsBloom` in ots_getBlockDetails, Erigon (and ferry) answer null.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devAddress } from '../helpers/accounts.js';
import { call } from '../helpers/rpc.js';
import { searchPlaceless as placeless, searchReceiptPlaceless as receiptPlaceless, walkSearch as walk } from './explorers-norm.js';
import { eachScenario, usePair } from './explorers-pair.js';

const SENDER = devAddress(0).toLowerCase();

const each = eachScenario;

describe('Otterscan views: ferry vs Anvil on the same transactions', { timeout: 240_000 }, () => {
  const p = usePair('eth,net,web3,ots,erigon');
  const both = async (m: string, pf: unknown[], pa: unknown[]) => [await call(p.ferry.url, m, pf), await call(p.anvil.url, m, pa)];

  it('ots_getApiLevel and ots_hasCode', async () => {
    assert.deepEqual(await both('ots_getApiLevel', [], []), [8, 8]);
    const [f, a] = await both('ots_hasCode', [p.onFerry.deployed.token, 'latest'], [p.onAnvil.deployed.token, 'latest']);
    assert.equal(f, true);
    assert.equal(a, true);
    assert.equal(await call(p.ferry.url, 'ots_hasCode', [SENDER, 'latest']), false);
    assert.equal(await call(p.ferry.url, 'ots_hasCode', [p.onFerry.deployed.token, '0x1']), false, 'no code before the deploy');
  });

  each('ots_getTransactionError', async (s) => {
    const [f, a] = await both('ots_getTransactionError', [p.onFerry.txs[s]], [p.onAnvil.txs[s]]);
    assert.equal(f, a);
  });

  each('ots_getInternalOperations', async (s) => {
    const [f, a] = await both('ots_getInternalOperations', [p.onFerry.txs[s]], [p.onAnvil.txs[s]]);
    assert.deepEqual(f, a);
  });

  each('ots_traceTransaction', async (s) => {
    const [f, a] = await both('ots_traceTransaction', [p.onFerry.txs[s]], [p.onAnvil.txs[s]]);
    const anvilKinds = f.filter((e: any) => !['CREATE', 'CREATE2', 'SELFDESTRUCT'].includes(e.type));
    assert.deepEqual(anvilKinds, a);
    if (s === 'createDestroy') assert.deepEqual(f.map((e: any) => `${e.type}@${e.depth}`), ['CALL@0', 'CREATE@1', 'CALL@1', 'SELFDESTRUCT@2']);
  });

  it('ots_getBlockDetails, ...ByHash and ots_getBlockTransactions', async () => {
    const fr = await call(p.ferry.url, 'eth_getTransactionReceipt', [p.onFerry.txs.erc20]);
    const ar = await call(p.anvil.url, 'eth_getTransactionReceipt', [p.onAnvil.txs.erc20]);
    const [f, a] = await both('ots_getBlockDetails', [fr.blockNumber], [ar.blockNumber]);
    assert.deepEqual(await call(p.ferry.url, 'ots_getBlockDetailsByHash', [fr.blockHash]), f);
    assert.deepEqual(f.issuance, a.issuance);
    assert.equal(f.block.transactionCount, a.block.transactionCount);
    assert.equal(f.block.logsBloom, null);
    assert.equal(f.block.transactions, undefined);
    assert.equal(f.block.hash, fr.blockHash);
    assert.equal(BigInt(f.totalFees), BigInt(fr.gasUsed) * BigInt(fr.effectiveGasPrice));
    const eth = await call(p.ferry.url, 'eth_getBlockByNumber', [fr.blockNumber, false]);
    for (const k of Object.keys(eth)) if (k !== 'transactions' && k !== 'logsBloom') assert.deepEqual(f.block[k], eth[k], k);

    const [ft, at] = await both('ots_getBlockTransactions', [fr.blockNumber, 0, 10], [Number(ar.blockNumber), 0, 10]);
    assert.equal(ft.fullblock.transactions.length, 1);
    assert.equal(ft.fullblock.transactions[0].input, at.fullblock.transactions[0].input, '4-byte selector only');
    assert.equal(ft.fullblock.transactions[0].hash, p.onFerry.txs.erc20);
    assert.deepEqual(Object.keys(ft).sort(), Object.keys(at).sort());
    assert.equal(ft.receipts[0].logs, null);
    assert.equal(ft.receipts[0].gasUsed, fr.gasUsed);
  });

  it('ots_getTransactionBySenderAndNonce', async () => {
    for (const nonce of [0, 3, 7]) {
      const f = await call(p.ferry.url, 'ots_getTransactionBySenderAndNonce', [SENDER, nonce]);
      const a = await call(p.anvil.url, 'ots_getTransactionBySenderAndNonce', [SENDER, '0x' + nonce.toString(16)]);
      assert.equal(f, a, `nonce ${nonce}`);
      assert.equal((await call(p.ferry.url, 'eth_getTransactionByHash', [f])).nonce, '0x' + nonce.toString(16));
    }
    assert.equal(await call(p.ferry.url, 'ots_getTransactionBySenderAndNonce', [SENDER, 10_000]), null);
  });

  it('ots_getContractCreator: by a transaction and by a contract', async () => {
    for (const k of ['token', 'child', 'caller'] as const) {
      const [f, a] = await both('ots_getContractCreator', [p.onFerry.deployed[k]], [p.onAnvil.deployed[k]]);
      assert.deepEqual(f, a, k);
    }
    const ops = await call(p.ferry.url, 'ots_getInternalOperations', [p.onFerry.txs.create2]);
    const child2 = ops.find((o: any) => o.type === 3).to;
    assert.deepEqual(await call(p.ferry.url, 'ots_getContractCreator', [child2]), { hash: p.onFerry.txs.create2, creator: p.onFerry.deployed.factory.toLowerCase() });
    assert.equal(await call(p.ferry.url, 'ots_getContractCreator', [SENDER]), null);
  });

  it('ots_searchTransactionsBefore/After: the same pages as Anvil, every fixture address', async () => {
    const other = devAddress(1).toLowerCase();
    const addrs: Record<string, string> = { sender: SENDER, other };
    for (const [k, v] of Object.entries(p.onFerry.deployed)) {
      assert.equal(v.toLowerCase(), (p.onAnvil.deployed as any)[k].toLowerCase(), `${k} has the same address on both`);
      addrs[k] = v.toLowerCase();
    }
    // Anvil's search does not count a SELFDESTRUCT's beneficiary; ferry does, as Erigon (docs/compatibility.md)
    const beneficiaryOnly: Record<string, string[]> = { other: [p.onFerry.txs.selfdestruct] };
    let pages = 0;
    for (const [name, addr] of Object.entries(addrs)) {
      for (const dir of ['Before', 'After'] as const) {
        const [f, a] = await Promise.all([walk(p.ferry.url, dir, addr), walk(p.anvil.url, dir, addr)]);
        const extra = beneficiaryOnly[name] ?? [];
        const fPages = f.map((pg) => ({ ...pg, txs: pg.txs.filter((t: any) => !extra.includes(t.hash)), receipts: pg.receipts.filter((r: any) => !extra.includes(r.transactionHash)) }));
        assert.equal(fPages.length, a.length, `${name} ${dir}: pages`);
        fPages.forEach((pg, i) => {
          const ap = a[i]!;
          const at = `${name} ${dir} page ${i}`;
          assert.deepEqual(pg.txs.map((t: any) => t.hash), ap.txs.map((t: any) => t.hash), `${at}: txs`);
          assert.equal(pg.firstPage, ap.firstPage, `${at}: firstPage`);
          assert.equal(pg.lastPage, ap.lastPage, `${at}: lastPage`);
          assert.deepEqual(pg.txs.map(placeless), ap.txs.map(placeless), `${at}: tx objects`);
          assert.deepEqual(pg.receipts.map(receiptPlaceless), ap.receipts.map(receiptPlaceless), `${at}: receipts`);
          pages++;
        });
        for (const [pg, ts] of f.flatMap((pg) => pg.receipts.map((r: any) => [r, r.timestamp] as const))) {
          const block = await call(p.ferry.url, 'eth_getBlockByNumber', [pg.blockNumber, false]);
          assert.equal(ts, block.timestamp, 'the receipt carries its block timestamp');
        }
        if (extra.length > 0) assert.ok(f.some((pg) => pg.txs.some((t: any) => extra.includes(t.hash))), `${name}: the beneficiary's tx is found`);
      }
    }
    assert.ok(pages > 20, `compared ${pages} pages`);
    const sender = await call(p.ferry.url, 'ots_searchTransactionsBefore', [SENDER, 0, 1000]);
    assert.equal(sender.txs.length, 14, 'the sender sent every fixture tx');
    assert.deepEqual(await call(p.ferry.url, 'ots_searchTransactionsBefore', ['0x' + '00'.repeat(19) + '99', 0, 5]), { txs: [], receipts: [], firstPage: true, lastPage: true });
    await assert.rejects(call(p.ferry.url, 'ots_searchTransactionsBefore', [SENDER, 0, 0]), /page size/);
    await assert.rejects(call(p.ferry.url, 'ots_searchTransactionsAfter', [SENDER, 0, 1_000_001]), /page size/);
  });

  it('erigon_getHeaderByNumber', async () => {
    const fr = await call(p.ferry.url, 'eth_getTransactionReceipt', [p.onFerry.txs.nested]);
    const h = await call(p.ferry.url, 'erigon_getHeaderByNumber', [fr.blockNumber]);
    const a = await call(p.anvil.url, 'erigon_getHeaderByNumber', ['0x1']);
    assert.equal(h.hash, fr.blockHash);
    for (const k of Object.keys(h)) assert.ok(k in a, `${k} is in Anvil's header too`);
    assert.equal(h.transactions, undefined);
    assert.equal(await call(p.ferry.url, 'erigon_getHeaderByNumber', ['0xffffff']), null);
  });
});
