/**
 * Decoding incoming txs once (src/chain/txdecode.ts): the decoded-tx cache is bounded by bytes and
 * counts what it drops; a sender is recovered once per tx across CheckTx, PrepareProposal,
 * ProcessProposal, FinalizeBlock and RECHECK, and not at all when the RPC thread handed it over;
 * bad signatures are still refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTx } from '@ethereumjs/tx';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { DecodedTxCache, decodedTxWeight, senderOfNative, signedRaw } from '../../src/chain/txdecode.js';
import { devGenesis } from '../../src/config/genesis.js';
import { DEFAULT_MEMPOOL } from '../../src/config/options.js';
import { keccak256, makeCommon } from '../../src/evm/common.js';
import { decodeTx, feeCap } from '../../src/evm/tx.js';
import { createLogger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const GWEI = 10n ** 9n;
const common = makeCommon(9000n);
const silent = createLogger({ level: 'error', destination: { write: () => undefined } });
const keys = devKeys();
const unhex = (h: string) => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));

async function signed(key: string, nonce: number, to = '0x000000000000000000000000000000000000dEaD'): Promise<Uint8Array> {
  return unhex(await new Wallet(key).signTransaction({ to, value: 1n, nonce, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 }));
}

function nativeOf(raw: Uint8Array, from?: Uint8Array): Uint8Array {
  const d = decodeTx(raw, common);
  return wrapEthereumTx(raw, from ?? d.evm.from, d.evm.gasLimit, feeCap(d.evm));
}

/** a type-2 tx whose signature recovers no key (r = 0) */
function badSignature(): Uint8Array {
  return createTx({ type: 2, nonce: 0n, to: '0x000000000000000000000000000000000000dEaD', value: 1n, gasLimit: 21_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000n, v: 0n, r: 0n, s: 1n }, { common }).serialize();
}

/** counts the secp256k1 recoveries ethereumjs asks of `c` */
function countRecoveries(c: typeof common): { count: number } {
  const counter = { count: 0 };
  const crypto = c.customCrypto as { ecrecover: (...a: never[]) => Uint8Array };
  const real = crypto.ecrecover;
  crypto.ecrecover = (...a: never[]) => {
    counter.count++;
    return real(...a);
  };
  return counter;
}

describe('decoded-tx cache', () => {
  it('stays within its byte bound, drops the least recently used first and counts the drops', async () => {
    const raws = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => signed(keys[1]!, n)));
    const natives = raws.map((r) => nativeOf(r));
    const decoded = raws.map((r) => decodeTx(r, common));
    const one = decodedTxWeight(natives[0]!, decoded[0]!);
    const cache = new DecodedTxCache(one * 3);
    const hash = (i: number) => new Uint8Array(32).fill(i + 1);
    for (let i = 0; i < 10; i++) cache.put(hash(i), natives[i]!, decoded[i]!);
    const s = cache.stats();
    assert.ok(s.bytes <= one * 3, `weight ${s.bytes} over bound ${one * 3}`);
    assert.equal(s.entries, 3);
    assert.equal(s.evictions, 7);
    assert.equal(cache.get(hash(0)), undefined);
    assert.equal(cache.get(hash(9)), decoded[9]);
    // a hit makes an entry recent: it outlives a newer one
    cache.get(hash(7));
    cache.put(hash(10), natives[0]!, decoded[0]!);
    assert.equal(cache.get(hash(8)), undefined);
    assert.equal(cache.get(hash(7)), decoded[7]);
  });

  it('signedRaw / senderOfNative: the signer (and hash) of good bytes, nothing for bad ones', async () => {
    const raw = await signed(keys[2]!, 0);
    const addr = unhex(new Wallet(keys[2]!).address);
    assert.deepEqual(signedRaw(raw, common), { sender: addr, hash: keccak256(raw) });
    assert.deepEqual(senderOfNative(nativeOf(raw), common), addr);
    assert.equal(signedRaw(badSignature(), common), undefined);
    assert.equal(signedRaw(new Uint8Array([0x02, 0xc0]), common), undefined);
    assert.equal(senderOfNative(new Uint8Array([0xff, 0xff]), common), undefined);
  });
});

describe('EvmApp decodes each tx once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-txdecode-'));
  const genesis = devGenesis({ validatorPubKey: new Uint8Array(32).fill(7), genesisTime: '2026-01-01T00:00:00.000Z' });
  let store: Store;
  let app: EvmApp;
  let recoveries: { count: number };

  before(async () => {
    store = new Store(join(dir, 'ferry.db'));
    app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: DEFAULT_MEMPOOL, coinbaseFromProposer: true }, silent, { onPoolChange: () => undefined });
    await app.initChain();
    recoveries = countRecoveries(app.common);
  });
  after(() => {
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one recovery per tx across CheckTx, the proposal calls, FinalizeBlock and RECHECK', async () => {
    const a0 = nativeOf(await signed(keys[3]!, 0));
    const a1 = nativeOf(await signed(keys[3]!, 1));
    const before = recoveries.count;
    assert.equal((await app.checkTx(a0)).code, 0);
    assert.equal((await app.checkTx(a1)).code, 0);
    assert.equal(recoveries.count - before, 2);
    const txs = await app.orderProposal({ height: 1n, timeMs: Date.parse('2026-01-01T00:00:01Z'), txs: [a1, a0] });
    assert.deepEqual(txs, [a0, a1]);
    assert.equal(await app.processProposal({ height: 1n, timeMs: Date.parse('2026-01-01T00:00:01Z'), txs }), true);
    const r = await app.finalizeBlock({ height: 1n, timeMs: Date.parse('2026-01-01T00:00:01Z'), hash: new Uint8Array(32).fill(1), proposerAddress: new Uint8Array(20).fill(1), txs });
    assert.deepEqual(r.txResults.map((t) => t.code), [0, 0]);
    store.transaction(() => app.commit());
    await app.afterCommit();
    // both are in the block now: RECHECK refuses them (nonce too low) without decoding again
    assert.notEqual((await app.recheckTx(a0)).code, 0);
    assert.equal(recoveries.count - before, 2, 'no recovery after CheckTx');
  });

  it('a sender handed over by the RPC thread is not recovered again; the tx is admitted the same', async () => {
    const raw = await signed(keys[4]!, 0);
    const from = unhex(new Wallet(keys[4]!).address);
    const before = recoveries.count;
    const r = await app.checkTx(nativeOf(raw), false, from);
    assert.equal(r.code, 0, r.log);
    assert.equal(recoveries.count, before);
    assert.deepEqual(app.pool.get(decodeTx(raw, common).evm.hash)?.decoded.evm.from, from);
  });

  it('still refuses a bad signature and a MsgEthereumTx.from that is not the signer, from the cache too', async () => {
    const bad = wrapEthereumTx(badSignature(), new Uint8Array(20), 21_000n, 100n * GWEI);
    for (let i = 0; i < 2; i++) {
      const r = await app.checkTx(bad);
      assert.notEqual(r.code, 0);
      assert.match(r.log, /invalid transaction v, r, s values|invalid sender/);
    }
    const raw = await signed(keys[5]!, 0);
    const wrongFrom = nativeOf(raw, unhex(new Wallet(keys[6]!).address));
    for (let i = 0; i < 2; i++) {
      const r = await app.checkTx(wrongFrom, true);
      assert.notEqual(r.code, 0);
      assert.match(r.log, /does not match the transaction signer/);
    }
  });
});
