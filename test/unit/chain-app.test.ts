/**
 * chain/app.ts (EvmApp) driven directly over a temporary store with real signed txs: CheckTx's
 * verdicts (ABCI codes and logs as clients see them), PrepareProposal / ProcessProposal /
 * orderProposal, FinalizeBlock that changes nothing until Commit (in the block's store transaction)
 * and afterCommit, abortBlock, RECHECK after a commit, and Info.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, keccak256 } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';
import { chainGenesis } from '../helpers/chaingen.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const GWEI = 10n ** 9n;
const GENESIS_MS = Date.parse('2026-01-01T00:00:00Z');
const MEMPOOL = { size: 100, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 };
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const TO = '0x' + '42'.repeat(20);

// CheckTx codes as clients read them (Cosmos SDK's where one fits)
const OK = 0;
const TX_DECODE = 2;
const INSUFFICIENT_FUNDS = 5;
const OUT_OF_GAS = 11;
const INSUFFICIENT_FEE = 13;
const IN_MEMPOOL_CACHE = 19;
const WRONG_SEQUENCE = 32;

interface TxOpts {
  nonce: number;
  key?: string;
  gasLimit?: number;
  maxFeePerGas?: bigint;
  value?: bigint;
}

/** a native-wrapped signed EIP-1559 transfer, and its EVM hash */
async function nativeTx(o: TxOpts): Promise<{ native: Uint8Array; hash: string }> {
  const wallet = new Wallet(o.key ?? devKeys()[0]!);
  const gasLimit = o.gasLimit ?? 21_000;
  const fee = o.maxFeePerGas ?? 100n * GWEI;
  const raw = await wallet.signTransaction({ chainId: 9000, type: 2, nonce: o.nonce, to: TO, value: o.value ?? 1n, gasLimit, maxFeePerGas: fee, maxPriorityFeePerGas: fee < GWEI ? fee : GWEI });
  const evm = bytes(raw);
  return { native: wrapEthereumTx(evm, bytes(wallet.address), BigInt(gasLimit), fee), hash: keccak256(raw) };
}

async function openApp(store: Store, minGasPrice = 0n): Promise<EvmApp> {
  const app = await EvmApp.create(store, chainGenesis(), { minGasPrice, mempool: MEMPOOL }, silent, { onPoolChange() {} });
  await app.initChain();
  return app;
}

describe('EvmApp over a temporary store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chain-app-'));
  let store: Store;
  let app: EvmApp;
  let height = 0n;

  /** FinalizeBlock + Commit (one store transaction) + afterCommit, as the engine does */
  async function commitBlock(txs: Uint8Array[]) {
    height++;
    const res = await app.finalizeBlock({ height, timeMs: GENESIS_MS + Number(height) * 1000, hash: new Uint8Array(32).fill(Number(height)), proposerAddress: new Uint8Array(20), txs });
    store.transaction(() => app.commit());
    await app.afterCommit();
    return res;
  }

  before(async () => {
    store = new Store(join(dir, 'ferry.db'));
    app = await openApp(store);
  });
  after(() => {
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Info before any block: height 0 with the genesis state root; initChain again returns that root', async () => {
    const genesisRoot = hex(store.evmBlock(0n)!.header.stateRoot);
    const info = app.info();
    assert.equal(info.data, 'ferry');
    assert.equal(info.lastBlockHeight, 0n);
    assert.equal(hex(info.lastBlockAppHash), genesisRoot);
    assert.equal(hex(await app.initChain()), genesisRoot);
  });

  it('CheckTx admits a valid tx (data = its hash, gas wanted), and the same again is "already known"', async () => {
    const tx = await nativeTx({ nonce: 0 });
    const r = await app.checkTx(tx.native);
    assert.equal(r.code, OK, r.log);
    assert.equal('0x' + hex(r.data), tx.hash);
    assert.equal(r.gasWanted, 21_000n);
    assert.equal(app.pendingCount(), 1);
    const again = await app.checkTx(tx.native);
    assert.deepEqual([again.code, again.log, again.codespace], [IN_MEMPOOL_CACHE, 'already known', 'evm']);
    assert.equal(app.pendingCount(), 1);
  });

  it('CheckTx refuses bad txs with their code and log, and the pool is unchanged', async () => {
    const unfunded = Wallet.createRandom().privateKey;
    const cases: [string, Uint8Array, number, RegExp][] = [
      ['undecodable bytes', new Uint8Array([1, 2, 3]), TX_DECODE, /./],
      ['gas below intrinsic', (await nativeTx({ nonce: 1, gasLimit: 20_000 })).native, OUT_OF_GAS, /^intrinsic gas too low$/],
      ['fee cap below the base fee', (await nativeTx({ nonce: 1, maxFeePerGas: 1n })).native, INSUFFICIENT_FEE, /^max fee per gas less than block base fee/],
      ['no funds', (await nativeTx({ nonce: 0, key: unfunded })).native, INSUFFICIENT_FUNDS, /^insufficient funds for gas \* price \+ value$/],
    ];
    for (const [what, native, code, log] of cases) {
      const r = await app.checkTx(native);
      assert.equal(r.code, code, `${what}: ${r.log}`);
      assert.match(r.log, log, what);
    }
    assert.equal(app.pendingCount(), 1);
  });

  it('CheckTx dry run (Surface B check_tx): the same verdict, nothing enters the pool', async () => {
    const tx = await nativeTx({ nonce: 1 });
    const r = await app.checkTx(tx.native, true);
    assert.equal(r.code, OK, r.log);
    assert.equal('0x' + hex(r.data), tx.hash);
    assert.equal(app.pendingCount(), 1);
  });

  it('CheckTx below the node\'s minimum gas price is "transaction underpriced"', async () => {
    const other = new Store(join(dir, 'min-price.db'));
    try {
      const priced = await openApp(other, 200n * GWEI);
      const r = await priced.checkTx((await nativeTx({ nonce: 0 })).native);
      assert.deepEqual([r.code, r.log], [INSUFFICIENT_FEE, 'transaction underpriced']);
      assert.equal(priced.pendingCount(), 0);
    } finally {
      other.close();
    }
  });

  it('PrepareProposal takes the pool\'s executable txs in nonce order; ProcessProposal accepts them', async () => {
    const tx1 = await nativeTx({ nonce: 1 });
    const tx3 = await nativeTx({ nonce: 3 }); // gapped: stays queued
    for (const t of [tx1, tx3]) assert.equal((await app.checkTx(t.native)).code, OK);
    const txs = app.prepareProposal({ height: 1n, timeMs: GENESIS_MS + 1000, maxTxBytes: 1 << 20 });
    assert.equal(txs.length, 2);
    assert.equal(hex(txs[1]!), hex(tx1.native));
    assert.equal(await app.processProposal({ txs, height: 1n, timeMs: GENESIS_MS + 1000 } as never), true);
  });

  it('ProcessProposal rejects a block that breaks the rules: nonce gap, reordering, undecodable tx', async () => {
    const txs = app.prepareProposal({ height: 1n, timeMs: GENESIS_MS + 1000, maxTxBytes: 1 << 20 });
    const gapped = (await nativeTx({ nonce: 3 })).native;
    for (const bad of [[gapped], [...txs].reverse(), [...txs, new Uint8Array([9, 9])]]) {
      assert.equal(await app.processProposal({ txs: bad, height: 1n, timeMs: GENESIS_MS + 1000 } as never), false);
    }
  });

  it('orderProposal (under CometBFT) puts shuffled txs in block order and leaves out what cannot run', async () => {
    const txs = app.prepareProposal({ height: 1n, timeMs: GENESIS_MS + 1000, maxTxBytes: 1 << 20 });
    const ordered = await app.orderProposal({ txs: [...txs].reverse().concat([new Uint8Array([1])]), height: 1n, timeMs: GENESIS_MS + 1000 } as never);
    assert.deepEqual(ordered.map(hex), txs.map(hex));
  });

  it('FinalizeBlock changes nothing readable until Commit; abortBlock drops it and it can come again', async () => {
    const txs = app.prepareProposal({ height: 1n, timeMs: GENESIS_MS + 1000, maxTxBytes: 1 << 20 });
    const first = await app.finalizeBlock({ height: 1n, timeMs: GENESIS_MS + 1000, hash: new Uint8Array(32).fill(1), proposerAddress: new Uint8Array(20), txs });
    assert.equal(first.txResults.length, 2);
    assert.equal(store.latestHeight(), 0n);
    assert.equal(app.info().lastBlockHeight, 0n);
    await app.abortBlock();
    assert.equal(store.evmBlock(1n), undefined);
    // the same block again gives the same result, and this time it is committed
    const res = await commitBlock(txs);
    assert.equal(hex(res.appHash), hex(first.appHash));
    assert.deepEqual(res.txResults.map((r) => r.code), [0, 0]);
    assert.deepEqual(res.txResults.map((r) => r.gasUsed), [21_000n, 21_000n]);
    assert.equal(store.latestHeight(), 1n);
    const info = app.info();
    assert.equal(info.lastBlockHeight, 1n);
    assert.equal(hex(info.lastBlockAppHash), hex(res.appHash));
    assert.equal(app.latestHeader().number, 1n);
    assert.equal(hex(app.latestHeader().stateRoot), hex(res.appHash));
    assert.equal(store.evmBlock(1n)!.transactions.length, 2);
  });

  it('after Commit the included txs leave the pool; the gapped one stays; a height already applied is refused', async () => {
    assert.equal(app.pendingCount(), 1);
    await assert.rejects(
      () => app.finalizeBlock({ height: 1n, timeMs: GENESIS_MS + 1000, hash: new Uint8Array(32).fill(1), proposerAddress: new Uint8Array(20), txs: [] }),
      /FinalizeBlock: height 1 is already applied \(last 1\)/,
    );
  });

  it('RECHECK after a commit: an included tx is "nonce too low"; a re-sent one is refused likewise', async () => {
    const included = await nativeTx({ nonce: 0 });
    const r = await app.recheckTx(included.native);
    assert.deepEqual([r.code, r.log], [WRONG_SEQUENCE, 'nonce too low']);
    const again = await app.checkTx(included.native);
    assert.deepEqual([again.code, again.log], [WRONG_SEQUENCE, 'nonce too low']);
  });

  it('the queued tx runs once its nonce gap is filled: both go into the next block', async () => {
    const tx2 = await nativeTx({ nonce: 2 });
    assert.equal((await app.checkTx(tx2.native)).code, OK);
    const txs = app.prepareProposal({ height: height + 1n, timeMs: GENESIS_MS + 3000, maxTxBytes: 1 << 20 });
    assert.equal(txs.length, 2);
    const res = await commitBlock(txs);
    assert.deepEqual(res.txResults.map((x) => x.code), [0, 0]);
    assert.equal(app.pendingCount(), 0);
    assert.equal(store.latestHeight(), 2n);
  });
});
