/**
 * v0.39's ReapTxs (src/chain/reap.ts) through the ABCI driver over the real application: a pooled tx is
 * handed to CometBFT when it arrives (the very first one too) and again, with a doubling gap, while it
 * stays pooled, since CometBFT sends each reaped tx once to the peers connected then (docs/abci.md
 * "v0.39's application-side mempool"); an included tx is not offered again; reap_max_bytes/gas hold.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { AbciDriver } from '../../src/abci/driver.js';
import type { AbciRequest, AbciResponse } from '../../src/abci/wire.js';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { MAX_REAP_REOFFER_GAP, REAP_REOFFER_AFTER } from '../../src/chain/reap.js';
import { devGenesis, renderGenesis } from '../../src/config/genesis.js';
import { DEFAULT_MEMPOOL } from '../../src/config/options.js';
import { makeCommon } from '../../src/evm/common.js';
import { decodeTx, feeCap } from '../../src/evm/tx.js';
import { createLogger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const GWEI = 10n ** 9n;
const common = makeCommon(9000n);
const silent = createLogger({ level: 'error', destination: { write: () => undefined } });
const keys = devKeys();
const TIME_MS = Date.parse('2026-01-01T00:00:00Z');

async function native(key: string, nonce: number): Promise<Uint8Array> {
  const raw = await new Wallet(key).signTransaction({
    to: '0x000000000000000000000000000000000000dEaD', value: 1n, nonce, gasLimit: 21_000,
    maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 1n * GWEI, chainId: 9000, type: 2,
  });
  const d = decodeTx(new Uint8Array(Buffer.from(raw.slice(2), 'hex')), common);
  return wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm));
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('ReapTxs (CometBFT v0.39 application-side mempool)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-abci-reap-'));
  const genesis = devGenesis({ validatorPubKey: new Uint8Array(32).fill(7), genesisTime: '2026-01-01T00:00:00.000Z' });
  const appState = new TextEncoder().encode(JSON.stringify((JSON.parse(renderGenesis(genesis)) as { app_state: unknown }).app_state));
  const stores: Store[] = [];

  /** a new application (its own store and pool) behind the driver, past InitChain */
  async function node() {
    const store = new Store(join(dir, `ferry-${stores.length}.db`));
    stores.push(store);
    const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: DEFAULT_MEMPOOL, coinbaseFromProposer: true }, silent, { onPoolChange: () => undefined });
    const driver = new AbciDriver({ app, transaction: (fn) => store.transaction(fn), query: async () => { throw new Error('unused'); }, onCommitted: () => undefined, log: silent });
    const call = (req: AbciRequest): Promise<AbciResponse> => driver.handle(req);
    await call({ kind: 'initChain', timeMs: TIME_MS, chainId: genesis.chainId, validators: [], appStateBytes: appState, initialHeight: 1n });
    const reap = async (maxBytes = 0n, maxGas = 0n): Promise<string[]> =>
      ((await call({ kind: 'reapTxs', maxBytes, maxGas })) as Extract<AbciResponse, { kind: 'reapTxs' }>).txs.map(hex);
    return {
      call,
      reap,
      insert: async (tx: Uint8Array) => assert.equal(((await call({ kind: 'insertTx', tx })) as { code: number }).code, 0),
      /** the reaps (counted from 1, of the next `n`) that hand out `tx` */
      offersOf: async (tx: Uint8Array, n: number): Promise<number[]> => {
        const out: number[] = [];
        for (let i = 1; i <= n; i++) if ((await reap()).includes(hex(tx))) out.push(i);
        return out;
      },
    };
  }

  after(() => {
    for (const s of stores) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the first tx the pool ever holds is reaped at once; nothing new: nothing reaped', async () => {
    const n = await node();
    assert.deepEqual(await n.reap(), []);
    const a0 = await native(keys[1]!, 0);
    await n.insert(a0);
    assert.deepEqual(await n.reap(), [hex(a0)]);
    assert.deepEqual(await n.reap(), [], 'not again at the next reap');
  });

  it('a tx that stays pooled is offered again after REAP_REOFFER_AFTER reaps, the gap doubling up to MAX_REAP_REOFFER_GAP', async () => {
    const n = await node();
    const b0 = await native(keys[2]!, 0);
    await n.insert(b0);
    assert.deepEqual(await n.reap(), [hex(b0)], 'offered when it arrives');
    const reaps = 4 * MAX_REAP_REOFFER_GAP;
    const want: number[] = [];
    for (let at = 0, gap = REAP_REOFFER_AFTER; at + gap <= reaps; gap = Math.min(gap * 2, MAX_REAP_REOFFER_GAP)) want.push((at += gap));
    assert.deepEqual(await n.offersOf(b0, reaps), want);
    const gaps = want.map((r, i) => r - (want[i - 1] ?? 0));
    assert.deepEqual(gaps.slice(-2), [MAX_REAP_REOFFER_GAP, MAX_REAP_REOFFER_GAP], 'the gap stops growing');
  });

  it('new txs come in arrival order; reap_max_bytes and reap_max_gas hold, what does not fit comes later', async () => {
    const n = await node();
    const c0 = await native(keys[3]!, 0);
    const c1 = await native(keys[3]!, 1);
    const d0 = await native(keys[4]!, 0);
    for (const tx of [c1, c0, d0]) await n.insert(tx);
    assert.deepEqual(await n.reap(BigInt(c1.length + c0.length)), [hex(c1), hex(c0)], 'bytes: two fit');
    assert.deepEqual(await n.reap(0n, 21_000n), [hex(d0)], 'gas: one fits');
    assert.deepEqual(await n.reap(), []);
  });

  it('an included tx is never offered again', async () => {
    const n = await node();
    const e0 = await native(keys[5]!, 0);
    await n.insert(e0);
    assert.deepEqual(await n.reap(), [hex(e0)]);
    await n.call({ kind: 'finalizeBlock', txs: [e0], hash: new Uint8Array(32).fill(1), height: 1n, timeMs: TIME_MS + 1000, proposerAddress: new Uint8Array(20).fill(1) });
    await n.call({ kind: 'commit' });
    assert.deepEqual(await n.offersOf(e0, 2 * MAX_REAP_REOFFER_GAP), []);
  });
});
