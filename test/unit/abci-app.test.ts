/**
 * The ABCI driver (src/abci/driver.ts) over the real application (EvmApp on a temporary SQLite store)
 * with real signed transactions: InitChain checks the genesis, PrepareProposal orders and filters,
 * ProcessProposal rejects rule breakers, FinalizeBlock + Commit persist once, RECHECK evicts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { AbciDriver } from '../../src/abci/driver.js';
import type { AbciRequest, AbciResponse } from '../../src/abci/wire.js';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
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

async function native(key: string, nonce: number, tip = 1n * GWEI, fee = 100n * GWEI): Promise<Uint8Array> {
  const raw = await new Wallet(key).signTransaction({
    to: '0x000000000000000000000000000000000000dEaD', value: 1n, nonce, gasLimit: 21_000,
    maxFeePerGas: fee, maxPriorityFeePerGas: tip, chainId: 9000, type: 2,
  });
  const d = decodeTx(new Uint8Array(Buffer.from(raw.slice(2), 'hex')), common);
  return wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm));
}

describe('ABCI driver over EvmApp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-abci-app-'));
  const genesis = devGenesis({ validatorPubKey: new Uint8Array(32).fill(7), genesisTime: '2026-01-01T00:00:00.000Z' });
  const appState = new TextEncoder().encode(JSON.stringify((JSON.parse(renderGenesis(genesis)) as { app_state: unknown }).app_state));
  let store: Store;
  let driver: AbciDriver;
  const committed: bigint[] = [];
  const call = (req: AbciRequest): Promise<AbciResponse> => driver.handle(req);
  const initChain = (over: Partial<Extract<AbciRequest, { kind: 'initChain' }>> = {}) =>
    call({ kind: 'initChain', timeMs: TIME_MS, chainId: genesis.chainId, validators: [], appStateBytes: appState, initialHeight: 1n, ...over });
  const finalize = (height: bigint, txs: Uint8Array[]) =>
    call({ kind: 'finalizeBlock', txs, hash: new Uint8Array(32).fill(Number(height)), height, timeMs: TIME_MS + Number(height) * 1000, proposerAddress: new Uint8Array(20).fill(1) });

  before(async () => {
    store = new Store(join(dir, 'ferry.db'));
    const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: DEFAULT_MEMPOOL, coinbaseFromProposer: true }, silent, { onPoolChange: () => undefined });
    driver = new AbciDriver({
      app,
      transaction: (fn) => store.transaction(fn),
      query: async () => { throw new Error('unused'); },
      onCommitted: (h) => committed.push(h),
      log: silent,
    });
  });
  after(() => {
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('InitChain: refuses another chain id or app_state; answers the genesis state root, idempotently', async () => {
    await assert.rejects(initChain({ chainId: 'other_1-1' }), /chain id "other_1-1" differs/);
    await assert.rejects(initChain({ appStateBytes: new TextEncoder().encode('{"evm":{}}') }), /app_state differs/);
    const a = (await initChain()) as Extract<AbciResponse, { kind: 'initChain' }>;
    const b = (await initChain()) as Extract<AbciResponse, { kind: 'initChain' }>;
    assert.equal(a.appHash.length, 32);
    assert.deepEqual(a.appHash, b.appHash);
    assert.deepEqual(await call({ kind: 'info' }), { kind: 'info', data: 'ferry', version: '0.1.0', appVersion: 1n, lastBlockHeight: 0n, lastBlockAppHash: new Uint8Array() });
  });

  it('PrepareProposal: nonce order per sender, higher tip first across senders; gapped, stale and undecodable txs dropped', async () => {
    const a0 = await native(keys[1]!, 0);
    const a1 = await native(keys[1]!, 1);
    const a5 = await native(keys[1]!, 5); // gap
    const b0 = await native(keys[2]!, 0, 5n * GWEI); // better tip
    const junk = new Uint8Array([1, 2, 3]);
    const r = (await call({ kind: 'prepareProposal', maxTxBytes: 1_000_000n, txs: [a1, junk, a5, a0, b0], height: 1n, timeMs: TIME_MS })) as Extract<AbciResponse, { kind: 'prepareProposal' }>;
    assert.deepEqual(r.txs, [b0, a0, a1]);
    const small = (await call({ kind: 'prepareProposal', maxTxBytes: BigInt(b0.length + 3), txs: [a0, b0], height: 1n, timeMs: TIME_MS })) as Extract<AbciResponse, { kind: 'prepareProposal' }>;
    assert.deepEqual(small.txs, [b0], 'max_tx_bytes counts the protobuf framing');
  });

  it('ProcessProposal: accepts a valid order; rejects a nonce out of order, a gap, junk, an underpriced tx', async () => {
    const a0 = await native(keys[1]!, 0);
    const a1 = await native(keys[1]!, 1);
    const a2 = await native(keys[1]!, 2);
    const cheap = await native(keys[3]!, 0, 0n, 1n); // fee cap below the base fee
    const proc = async (txs: Uint8Array[]) => ((await call({ kind: 'processProposal', txs, hash: new Uint8Array(32), height: 1n, timeMs: TIME_MS })) as Extract<AbciResponse, { kind: 'processProposal' }>).accept;
    assert.equal(await proc([a0, a1]), true);
    assert.equal(await proc([]), true);
    assert.equal(await proc([a1, a0]), false);
    assert.equal(await proc([a0, a2]), false);
    assert.equal(await proc([a0, a0]), false);
    assert.equal(await proc([a0, new Uint8Array([9])]), false);
    assert.equal(await proc([cheap]), false);
  });

  it('FinalizeBlock computes, Commit persists once; a re-sent FinalizeBlock before Commit is recomputed; a committed height is refused', async () => {
    const a0 = await native(keys[1]!, 0);
    assert.equal(((await call({ kind: 'checkTx', tx: a0, recheck: false })) as { code: number }).code, 0);
    const f1 = (await finalize(1n, [a0])) as Extract<AbciResponse, { kind: 'finalizeBlock' }>;
    assert.equal(f1.txResults.length, 1);
    assert.equal(f1.txResults[0]!.code, 0);
    assert.ok(f1.txResults[0]!.events.some((e) => e.type === 'ethereum_tx'));
    assert.equal(((await call({ kind: 'info' })) as { lastBlockHeight: bigint }).lastBlockHeight, 0n, 'nothing committed yet');
    // the driver went away before Commit and the block comes again: same result
    const again = (await finalize(1n, [a0])) as Extract<AbciResponse, { kind: 'finalizeBlock' }>;
    assert.deepEqual(again.appHash, f1.appHash);
    await call({ kind: 'commit' });
    assert.deepEqual(committed, [1n]);
    const info = (await call({ kind: 'info' })) as Extract<AbciResponse, { kind: 'info' }>;
    assert.equal(info.lastBlockHeight, 1n);
    assert.deepEqual(info.lastBlockAppHash, f1.appHash);
    const block = store.evmBlock(1n)!;
    assert.deepEqual(block.header.miner, new Uint8Array(20).fill(1), 'fees go to the proposer');
    assert.equal(block.header.timestamp, BigInt((TIME_MS + 1000) / 1000), 'block time from the request');
    await assert.rejects(finalize(1n, [a0]), /height 1 is already applied/);
    await assert.rejects(call({ kind: 'commit' }), /Commit without FinalizeBlock/);
  });

  it('RECHECK evicts a tx made stale by a block; keeps a still-valid one', async () => {
    const a1 = await native(keys[1]!, 1);
    const a1b = await native(keys[1]!, 1, 2n * GWEI, 200n * GWEI); // same nonce, included instead
    const c0 = await native(keys[4]!, 0);
    for (const tx of [a1, c0]) assert.equal(((await call({ kind: 'checkTx', tx, recheck: false })) as { code: number }).code, 0);
    await finalize(2n, [a1b]);
    await call({ kind: 'commit' });
    const stale = (await call({ kind: 'checkTx', tx: a1, recheck: true })) as Extract<AbciResponse, { kind: 'checkTx' }>;
    assert.equal(stale.log, 'nonce too low');
    assert.notEqual(stale.code, 0);
    assert.equal(((await call({ kind: 'checkTx', tx: c0, recheck: true })) as { code: number }).code, 0);
  });
});
