/**
 * The impersonation placeholder signature (src/evm/tx.ts, docs/dev-mode.md) and where the
 * application allows it: decoding names the sender from the bytes alone and never mistakes a real
 * signature for it; CheckTx admits it only for an impersonated address, and only on a node serving
 * the dev namespaces; ProcessProposal rejects it without them; FinalizeBlock executes a decided
 * block holding one either way (a committed block stays valid), with the impersonated sender.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Wallet, keccak256 } from 'ethers';
import { AbciDriver } from '../../src/abci/driver.js';
import type { AbciRequest, AbciResponse } from '../../src/abci/wire.js';
import { EvmApp } from '../../src/chain/app.js';
import { CheckCode } from '../../src/chain/checkcodes.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devGenesis, renderGenesis } from '../../src/config/genesis.js';
import { DEFAULT_MEMPOOL } from '../../src/config/options.js';
import { makeCommon } from '../../src/evm/common.js';
import { decodeTx, feeCap, impersonatedSender, impersonationSignature, isImpersonated } from '../../src/evm/tx.js';
import { signTransaction, type TxFields } from '../../src/keystore/index.js';
import { createLogger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

const GWEI = 10n ** 9n;
const common = makeCommon(9000n);
const silent = createLogger({ level: 'error', destination: { write: () => undefined } });
const TIME_MS = Date.parse('2026-01-01T00:00:00Z');
/** a funded dev account, sent as without its key */
const SENDER = new Uint8Array(Buffer.from(new Wallet(devKeys()[3]!).address.slice(2), 'hex'));
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

const fields = (over: Partial<TxFields> = {}): TxFields => ({
  type: 2, chainId: 9000n, nonce: 0n, gasLimit: 21_000n, to: new Uint8Array(20).fill(0xde), value: 5n,
  data: new Uint8Array(), maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, ...over,
});

async function placeholder(over: Partial<TxFields> = {}, sender = SENDER): Promise<Uint8Array> {
  return (await signTransaction(fields(over), async () => impersonationSignature(sender))).raw;
}

const nativeOf = (raw: Uint8Array) => {
  const d = decodeTx(raw, common);
  return wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm));
};

describe('impersonation placeholder signature', () => {
  it('decodes to the sender it names, for typed and legacy (EIP-155) transactions; the hash is of the bytes', async () => {
    for (const over of [{}, { type: 0 as const, gasPrice: 100n * GWEI, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }]) {
      const raw = await placeholder(over);
      const d = decodeTx(raw, common);
      assert.deepEqual(d.evm.from, SENDER);
      assert.equal(d.evm.s, 1n);
      assert.equal(d.evm.r, (1n << 160n) + BigInt(hex(SENDER)));
      assert.equal(isImpersonated(d.evm), true);
      assert.equal(hex(d.evm.hash), keccak256(raw));
      assert.equal(d.tx.getSenderAddress().toString(), hex(SENDER), 'the VM sees the same sender');
    }
    // two senders, same fields: different transactions
    const other = await placeholder({}, new Uint8Array(20).fill(0x42));
    assert.notEqual(hex(decodeTx(other, common).evm.hash), hex(decodeTx(await placeholder(), common).evm.hash));
  });

  it('a real signature is never read as one; s = 1 without the tag or with y-parity 1 is not one either', async () => {
    const real = await new Wallet(devKeys()[1]!).signTransaction({ to: hex(new Uint8Array(20).fill(0xde)), value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, chainId: 9000, type: 2 });
    const d = decodeTx(new Uint8Array(Buffer.from(real.slice(2), 'hex')), common);
    assert.equal(isImpersonated(d.evm), false);
    assert.equal(hex(d.evm.from), new Wallet(devKeys()[1]!).address.toLowerCase());
    const tagged = (1n << 160n) + 0x42n;
    assert.equal(impersonatedSender({ v: 1n, r: tagged, s: 1n }, 2), undefined, 'y-parity 1');
    assert.equal(impersonatedSender({ v: 0n, r: 0x42n, s: 1n }, 2), undefined, 'no 2^160 tag');
    assert.equal(impersonatedSender({ v: 0n, r: tagged, s: 2n }, 2), undefined, 's != 1');
    assert.equal(impersonatedSender({ v: 36n + 2n * 9000n, r: tagged, s: 1n }, 0), undefined, 'legacy odd parity');
    assert.deepEqual(impersonatedSender({ v: 35n + 2n * 9000n, r: tagged, s: 1n }, 0), Uint8Array.from([...new Uint8Array(19), 0x42]), 'legacy even parity');
  });
});

describe('EvmApp and impersonated transactions', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  const genesis = devGenesis({ validatorPubKey: new Uint8Array(32).fill(7), genesisTime: '2026-01-01T00:00:00.000Z' });
  const appState = new TextEncoder().encode(JSON.stringify((JSON.parse(renderGenesis(genesis)) as { app_state: unknown }).app_state));

  async function appWith(impersonation: boolean) {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-impersonation-'));
    dirs.push(dir);
    const store = new Store(join(dir, 'ferry.db'));
    stores.push(store);
    const app = await EvmApp.create(store, genesis, { minGasPrice: 0n, mempool: DEFAULT_MEMPOOL, impersonation }, silent, { onPoolChange: () => undefined });
    const driver = new AbciDriver({ app, transaction: (fn) => store.transaction(fn), query: async () => { throw new Error('unused'); }, onCommitted: () => undefined, log: silent });
    const call = (req: AbciRequest): Promise<AbciResponse> => driver.handle(req);
    await call({ kind: 'initChain', timeMs: TIME_MS, chainId: genesis.chainId, validators: [], appStateBytes: appState, initialHeight: 1n });
    return { app, store, call };
  }

  after(() => {
    for (const s of stores) s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('CheckTx: admitted only while the sender is impersonated on a dev node', async () => {
    const { app } = await appWith(true);
    const tx = nativeOf(await placeholder());
    const refused = await app.checkTx(tx);
    assert.equal(refused.code, CheckCode.txDecode);
    assert.match(refused.log, /impersonation signature for 0x[0-9a-fA-F]{40}, which is not impersonated/);
    assert.equal(app.dev.setImpersonated(SENDER, true), false);
    assert.equal((await app.checkTx(tx)).code, 0);
    assert.equal(app.dev.setImpersonated(SENDER, false), true);
    assert.equal((await app.checkTx(nativeOf(await placeholder({ nonce: 1n })))).code, CheckCode.txDecode);
    app.dev.setAutoImpersonate(true);
    assert.equal((await app.checkTx(nativeOf(await placeholder({ nonce: 1n })))).code, 0);

    const off = (await appWith(false)).app;
    off.dev.setImpersonated(SENDER, true);
    off.dev.setAutoImpersonate(true);
    assert.equal((await off.checkTx(tx)).code, CheckCode.txDecode, 'never without the dev namespaces');
  });

  it('ProcessProposal rejects one without the dev namespaces; FinalizeBlock executes a decided one either way', async () => {
    const tx = nativeOf(await placeholder());
    for (const impersonation of [true, false]) {
      const { call, store } = await appWith(impersonation);
      const proc = (await call({ kind: 'processProposal', txs: [tx], hash: new Uint8Array(32), height: 1n, timeMs: TIME_MS })) as Extract<AbciResponse, { kind: 'processProposal' }>;
      assert.equal(proc.accept, impersonation);
      const f = (await call({ kind: 'finalizeBlock', txs: [tx], hash: new Uint8Array(32).fill(1), height: 1n, timeMs: TIME_MS + 1000, proposerAddress: new Uint8Array(20).fill(1) })) as Extract<AbciResponse, { kind: 'finalizeBlock' }>;
      assert.equal(f.txResults[0]!.code, 0);
      const sender = f.txResults[0]!.events.find((e) => e.type === 'ethereum_tx')!.attributes.find((a) => a.key === 'sender')!.value;
      assert.equal(sender, hex(SENDER));
      await call({ kind: 'commit' });
      assert.deepEqual(store.evmBlock(1n)!.transactions[0]!.from, SENDER);
    }
  });
});
