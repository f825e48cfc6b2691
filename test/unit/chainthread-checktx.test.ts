/**
 * A CheckTx refusal crosses from the chain thread to the RPC thread as the domain error it is
 * (src/node/protocol.ts `checked`), not as an ABCI code turned back into a reason: the real chain
 * thread (src/node/chainworker.ts, dev preset, no block timer) over a temporary home, driven through
 * ChainClient as eth_sendRawTransaction and Surface B's broadcast_tx_* drive it. Each refusal keeps
 * its reason, and Surface A answers geth's `{code, message}` for it (go-ethereum
 * internal/ethapi/api.go SubmitTransaction, core/txpool/errors.go, core/error.go: every refusal is a
 * plain error, so -32000 with its text). An unprotected tx is `invalid`, not `decode`, though both
 * have ABCI code 2. Under CometBFT, a tx eth_sendRawTransaction admitted locally (`EvmApp.admitLocal`)
 * is answered OK by CometBFT's CheckTx of the forwarded bytes, not `already known`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Transaction, Wallet } from 'ethers';
import { devGenesis } from '../../src/config/genesis.js';
import { DEFAULT_ABCI, DEFAULT_PRUNING, DEFAULT_STATE_SYNC, DEFAULT_CONSENSUS, DEFAULT_INSTRUMENTATION, DEFAULT_JSON_RPC, DEFAULT_MEMPOOL, DEFAULT_RPC, type NodeOptions } from '../../src/config/options.js';
import { generateValidatorKey, validatorKeyJson } from '../../src/consensus/cometbft/keys.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { DomainError, mapDomainError, type TxRejectReason } from '../../src/lib/errors.js';
import { silentLogger } from '../../src/lib/log.js';
import { ChainClient } from '../../src/node/chainclient.js';
import { takeChainThread } from '../../src/node/chainspawn.js';
import { nativeHash, wrapEthereumTx } from '../../src/chain/nativetx.js';
import { Store } from '../../src/store/store.js';
import { decodeTx } from '../../src/evm/tx.js';
import { devKeys } from '../helpers/accounts.js';
import { quietListener } from '../helpers/chainlistener.js';
import type { FromChain } from '../../src/node/protocol.js';
import { chainApp } from '../helpers/chaingen.js';

const CHAIN_ID = 9000;
const GWEI = 10n ** 9n;
const TO = '0x' + '42'.repeat(20);
/** the pool's per-sender queue of gapped txs in this test */
const ACCOUNT_QUEUE = 2;
const pick = (r: { code: number; log: string }) => [r.code, r.log];
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));

/** The refusal a submission rejected with: its reason and Surface A's answer for it. */
async function refusal(p: Promise<unknown>): Promise<{ reason: TxRejectReason; surfaceA: unknown }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DomainError && e.is('txRejected'), `a txRejected domain error, got ${String(e)}`);
    return { reason: e.detail.reason, surfaceA: mapDomainError(evmErrors, e) };
  }
  assert.fail('the submission was accepted');
}

describe('CheckTx refusals cross the chain thread with their reason', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-chainthread-'));
  const wallet = new Wallet(devKeys()[0]!);
  const poor = new Wallet('0x' + '00'.repeat(31) + '07');
  let chain: ChainClient;
  /** every message the chain thread sent (a batch, then each of its messages) */
  const seen: FromChain[] = [];

  const signed = (w: Wallet, nonce: number, fee = 10n * GWEI) =>
    w.signTransaction({ chainId: CHAIN_ID, type: 2, nonce, to: TO, value: 1n, gasLimit: 21_000, maxFeePerGas: fee, maxPriorityFeePerGas: GWEI });

  before(async () => {
    const key = generateValidatorKey();
    const opts: NodeOptions = {
      home: dir,
      minimumGasPrice: 0n,
      minimumGasPriceFromFlag: false,
      blockEngine: 'revm',
      logLevel: 'silent',
      jsonRpc: { ...DEFAULT_JSON_RPC, allowUnprotectedTxs: false },
      rpc: DEFAULT_RPC,
      consensus: DEFAULT_CONSENSUS,
      mempool: { ...DEFAULT_MEMPOOL, accountQueue: ACCOUNT_QUEUE },
      abci: DEFAULT_ABCI,
      pruning: DEFAULT_PRUNING,
      stateSync: DEFAULT_STATE_SYNC,
      instrumentation: DEFAULT_INSTRUMENTATION,
      // the dev preset: no block timer, so the pool keeps what it admits for the whole test
      dev: true,
    };
    const genesis = devGenesis({ validatorPubKey: key.pubKey });
    const held = takeChainThread({ opts, genesis, dbPath: join(dir, 'ferry.db'), validatorKeyJson: validatorKeyJson(key) });
    ({ chain } = await ChainClient.start(held, quietListener(seen), silentLogger));
  });
  after(async () => {
    await chain.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('eth_sendRawTransaction: each refusal keeps its reason, and Surface A answers geth\'s code and text', async () => {
    const first = await signed(wallet, 0);
    assert.equal(Buffer.from(await chain.submitEvm(bytes(first))).toString('hex'), Transaction.from(first).hash!.slice(2));
    const unprotected = Transaction.from({ type: 0, nonce: 1, gasPrice: 10n * GWEI, gasLimit: 21_000, to: TO, value: 1n });
    unprotected.signature = wallet.signingKey.sign(unprotected.unsignedHash);
    // gapped txs fill the sender's queue; one more is refused
    for (let n = 10; n < 10 + ACCOUNT_QUEUE; n++) await chain.submitEvm(bytes(await signed(wallet, n)));
    const server = (message: string) => ({ code: -32000, message });
    const cases: [string, Promise<unknown>, TxRejectReason, unknown][] = [
      ['unprotected', chain.submitEvm(bytes(unprotected.serialized)), 'invalid', server('only replay-protected (EIP-155) transactions allowed over RPC')],
      ['again', chain.submitEvm(bytes(first)), 'known', server('already known')],
      ['far ahead, queue full', chain.submitEvm(bytes(await signed(wallet, 100))), 'poolFull', server('txpool is full')],
      ['no funds', chain.submitEvm(bytes(await signed(poor, 0))), 'insufficientFunds', server('insufficient funds for gas * price + value')],
      ['unknown tx type', chain.submitEvm(Uint8Array.of(0x7f, 0xc0)), 'decode', server('transaction type not supported')],
    ];
    const got = [];
    for (const [name, p] of cases) got.push([name, await refusal(p)]);
    assert.deepEqual(
      got,
      cases.map(([name, , reason, surfaceA]) => [name, { reason, surfaceA }]),
    );
  });

  it('answers the CheckTx requests of one batch in one message (docs/benchmarks.md "Ingesting transfers")', async () => {
    const sender = new Wallet('0x' + '00'.repeat(31) + '09');
    const raws = await Promise.all([0, 1, 2].map((n) => signed(sender, n)));
    const from = seen.length;
    // made in one turn: the three requests go in one batch (the RPC thread's outbox)
    const refused = await Promise.all(raws.map((r) => chain.submitEvm(bytes(r)).then(() => '', (e: Error) => e.message)));
    assert.deepEqual(refused, Array(3).fill('insufficient funds for gas * price + value'));
    // (the listener sees a batch, then each message in it)
    const batches = seen.slice(from).filter((m) => m.type === 'batch');
    assert.deepEqual(batches.map((b) => b.messages.filter((x) => x.type === 'checked').length), [3]);
  });

  it('Surface B (submitNative): the CheckTx response keeps its ABCI code and log', async () => {
    const raw = bytes(await signed(poor, 0));
    const native = wrapEthereumTx(raw, bytes(poor.address), 21_000n, 10n * GWEI);
    const check = await chain.checkNative(native, false);
    assert.deepEqual([check.code, check.log, check.codespace], [5, 'insufficient funds for gas * price + value', 'evm']);
  });
});

describe('under CometBFT: CometBFT\'s CheckTx of a tx admitted locally', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-admit-local-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('answers OK once for the forwarded bytes; any other CheckTx of them is the normal one', async () => {
    const store = new Store(join(dir, 'ferry.db'));
    try {
      const app = await chainApp(store);
      const wallet = new Wallet(devKeys()[0]!);
      const sign = async (nonce: number) => bytes(await wallet.signTransaction({ chainId: CHAIN_ID, type: 2, nonce, to: TO, value: 1n, gasLimit: 21_000, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }));
      const raw = await sign(0);
      const native = wrapEthereumTx(raw, bytes(wallet.address), 21_000n, 10n * GWEI);
      const d = decodeTx(raw, app.common);
      await app.admitLocal(d, native, nativeHash(native));
      assert.equal(app.pendingCount(), 1);
      // a refusal of the local checks is geth's, and nothing is admitted or remembered
      await assert.rejects(app.admitLocal(d, native, nativeHash(native)), /already known/);
      assert.equal(app.pendingCount(), 1);
      // CometBFT's CheckTx(NEW) of the forwarded bytes: OK, the pool unchanged
      assert.deepEqual(pick(await app.checkTx(native)), [0, '']);
      assert.equal(app.pendingCount(), 1);
      // the same bytes again (a peer's gossip): the normal check
      assert.deepEqual(pick(await app.checkTx(native)), [19, 'already known']);
      // forgotten (its forward ended) before CometBFT asked: the normal check too
      const raw1 = await sign(1);
      const native1 = wrapEthereumTx(raw1, bytes(wallet.address), 21_000n, 10n * GWEI);
      await app.admitLocal(decodeTx(raw1, app.common), native1, nativeHash(native1));
      app.forgetLocal(nativeHash(native1));
      assert.deepEqual(pick(await app.checkTx(native1)), [19, 'already known']);
    } finally {
      store.close();
    }
  });
});
