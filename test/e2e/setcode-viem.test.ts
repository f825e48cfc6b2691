/**
 * EIP-7702 on a ferry dev node with a Prague genesis, as a user drives it with viem: a local account's
 * `signAuthorization` and `sendTransaction({ authorizationList })`, eth_getTransactionByHash showing the
 * authorizationList, eth_call / eth_estimateGas / debug_traceCall honouring `authorizationList`,
 * eth_sendTransaction signing a type-4 tx with a node-held key, and CheckTx's refusals in geth's words
 * (core/txpool/validation.go, core/txpool/legacypool/legacypool.go, core/types/tx_setcode.go decoding).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SigningKey, encodeRlp, keccak256, toBeHex } from 'ethers';
import { createPublicClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { startFerryOn } from '../helpers/hardfork.js';
import { EVM_CHAIN_ID, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { chromium } from 'playwright-core';
import { missingPrerequisite, onPath } from '../helpers/prereq.js';
import { assertConforms } from '../helpers/schema.js';
import { compileContract } from '../helpers/solc.js';

/** `chromium` on PATH, as test/e2e/page-browser.test.ts finds it */
const CHROMIUM = onPath('chromium');
const skipPage = CHROMIUM ? false : missingPrerequisite('the node page check of a type-4 tx', 'no `chromium` on PATH (apt-get install -y chromium)');
const PAGE_WAIT_MS = 60_000;
const FEES = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const GAS = 200_000n;
const key = (i: number) => devKeys()[i] as Hex;
const sponsor = privateKeyToAccount(key(0));
const carol = privateKeyToAccount(key(7));
const dave = privateKeyToAccount(key(8));
const erin = privateKeyToAccount(key(9));
const delegate = compileContract('Delegate.sol', 'Delegate');
const COUNT = encodeFunctionData({ abi: delegate.abi, functionName: 'count' });
/** an RLP integer (even-length hex; zero is cleaned to empty in rawSetCodeTx) */
const q = (n: bigint | number) => toBeHex(n);
/** a JSON-RPC quantity */
const qty = (n: bigint | number) => '0x' + BigInt(n).toString(16);

/** A type-4 envelope signed by `signer`, built field by field (viem and ethereumjs refuse the malformed ones). */
function rawSetCodeTx(signer: Hex, f: { nonce: bigint; to: string; auths: unknown[] }): Hex {
  const body = [q(EVM_CHAIN_ID), q(f.nonce), q(FEES.maxPriorityFeePerGas), q(FEES.maxFeePerGas), q(GAS), f.to, '0x', '0x', [], f.auths];
  const clean = (v: unknown): unknown => (Array.isArray(v) ? v.map(clean) : v === '0x00' ? '0x' : v);
  const fields = clean(body) as unknown[];
  const digest = keccak256('0x04' + encodeRlp(fields as never).slice(2));
  const sig = new SigningKey(signer).sign(digest);
  const signed = [...fields, sig.yParity === 0 ? '0x' : '0x01', sig.r, sig.s];
  return ('0x04' + encodeRlp(signed as never).slice(2)) as Hex;
}

describe('EIP-7702 with viem on ferry --dev (prague genesis)', { timeout: 180_000 }, () => {
  let node: FerryNode;
  let pub: ReturnType<typeof createPublicClient>;
  let d: Address;
  let delegation: Hex;
  const wallet = (account: typeof sponsor) => createWalletClient({ chain: VIEM_CHAIN, transport: http(node.url), account });
  const nonceOf = (a: Address) => pub.getTransactionCount({ address: a, blockTag: 'pending' });
  const sendRaw = (raw: Hex) => rpc(node.url, 'eth_sendRawTransaction', [raw]);

  before(async () => {
    node = await startFerryOn('prague', ['--dev', '--json-rpc.api', 'eth,net,web3,debug,txpool,evm,anvil']);
    pub = createPublicClient({ chain: VIEM_CHAIN, transport: http(node.url), cacheTime: 0 });
    const hash = await wallet(sponsor).deployContract({ abi: delegate.abi, bytecode: delegate.bytecode, gas: 1_000_000n, ...FEES });
    d = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  });
  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('signAuthorization + sendTransaction({ authorizationList }): delegated, and the tx shows its authorizationList', async () => {
    const auth = await carol.signAuthorization({ address: d, chainId: EVM_CHAIN_ID, nonce: await nonceOf(carol.address) });
    const data = encodeFunctionData({ abi: delegate.abi, functionName: 'ping', args: [9n] });
    const hash = await wallet(sponsor).sendTransaction({ to: carol.address, data, authorizationList: [auth], gas: GAS, ...FEES });
    delegation = hash;
    const r = await pub.waitForTransactionReceipt({ hash });
    assert.equal(r.status, 'success');
    assert.equal(r.type, 'eip7702');
    assert.equal(r.logs.length, 1);
    assert.equal(await pub.getCode({ address: carol.address }), '0xef0100' + d.slice(2).toLowerCase());
    const tx = await call(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(tx.type, '0x4');
    assertConforms('eth_getTransactionByHash', tx);
    assertConforms('eth_getTransactionReceipt', await call(node.url, 'eth_getTransactionReceipt', [hash]));
    assert.deepEqual(tx.authorizationList, [
      { chainId: qty(auth.chainId), address: d.toLowerCase(), nonce: qty(auth.nonce), yParity: qty(auth.yParity!), r: qty(BigInt(auth.r)), s: qty(BigInt(auth.s)) },
    ]);
    const viewed = await pub.getTransaction({ hash });
    assert.equal(viewed.authorizationList?.[0]?.address.toLowerCase(), d.toLowerCase());
  });

  it("Surface B: the type-4 tx's events name txType 4", async () => {
    const query = encodeURIComponent(`"ethereum_tx.ethereumTxHash='${delegation}'"`);
    const found = (await (await fetch(`${node.cometUrl}/tx_search?query=${query}`)).json()) as any;
    assert.equal(found.result.total_count, '1');
    const message = found.result.txs[0].tx_result.events.find((e: any) => e.type === 'message');
    assert.equal(message.attributes.find((a: any) => a.key === 'txType').value, '4');
  });

  it('the node page shows the type-4 tx with its authorizations, and the delegated account', { skip: skipPage }, async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      await page.goto(`${node.url}/explorer#/tx/${delegation}`);
      await page.waitForSelector('#tx-auths', { timeout: PAGE_WAIT_MS });
      assert.match((await page.textContent('#tx-type'))!, /^4 \(EIP-7702 set code\)/);
      assert.match((await page.textContent('#tx-auths'))!, new RegExp(`${EVM_CHAIN_ID}.*0x5fbd`, 's'));
      await page.goto(`${node.url}/explorer#/address/${carol.address}`);
      await page.waitForSelector('#address', { timeout: PAGE_WAIT_MS });
      assert.match((await page.textContent('#address'))!, /delegated \(EIP-7702\) to 0x/);
    } finally {
      await browser.close();
    }
  });

  it('eth_call, eth_estimateGas and debug_traceCall run a call object with authorizationList as a set-code tx', async () => {
    const auth = await dave.signAuthorization({ address: d, chainId: EVM_CHAIN_ID, nonce: await nonceOf(dave.address) });
    const authJson = { chainId: qty(auth.chainId), address: d, nonce: qty(auth.nonce), yParity: qty(auth.yParity!), r: auth.r, s: auth.s };
    const plain = { from: sponsor.address, to: dave.address, data: COUNT };
    assert.equal(await call(node.url, 'eth_call', [plain, 'latest']), '0x', 'no code without the authorization');
    const withAuth = { ...plain, authorizationList: [authJson] };
    assert.equal(await call(node.url, 'eth_call', [withAuth, 'latest']), '0x' + '0'.repeat(64), 'count() through the delegation');
    const gasPlain = BigInt(await call(node.url, 'eth_estimateGas', [plain, 'latest']));
    const gasAuth = BigInt(await call(node.url, 'eth_estimateGas', [withAuth, 'latest']));
    assert.ok(gasAuth >= gasPlain + 12_500n, `an authorization costs gas (${gasPlain} → ${gasAuth})`);
    const traced = await call(node.url, 'debug_traceCall', [withAuth, 'latest', { tracer: 'callTracer' }]);
    assert.equal(traced.output, '0x' + '0'.repeat(64));
    assert.equal(await pub.getCode({ address: dave.address }), undefined, 'nothing was written');
    const empty = await rpc(node.url, 'eth_call', [{ ...plain, authorizationList: [] }, 'latest']);
    assert.equal(empty.error?.message, `EIP-7702 transaction with empty auth list (sender ${sponsor.address})`);
    const bad = await rpc(node.url, 'eth_call', [{ ...plain, authorizationList: [{ ...authJson, r: undefined }] }, 'latest']);
    assert.equal(bad.error?.code, -32602);
    assert.match(bad.error!.message, /missing required field 'r' for SetCodeAuthorization/);
  });

  it('eth_sendTransaction with authorizationList signs a type-4 tx with a node-held key', async () => {
    const auth = await erin.signAuthorization({ address: d, chainId: EVM_CHAIN_ID, nonce: await nonceOf(erin.address) });
    const hash = await call(node.url, 'eth_sendTransaction', [
      { from: sponsor.address, to: erin.address, data: COUNT, gas: qty(GAS), authorizationList: [{ chainId: qty(auth.chainId), address: d, nonce: qty(auth.nonce), yParity: qty(auth.yParity!), r: auth.r, s: auth.s }] },
    ]);
    const r = await pub.waitForTransactionReceipt({ hash });
    assert.equal(r.status, 'success');
    assert.equal((await call(node.url, 'eth_getTransactionByHash', [hash])).type, '0x4');
    assert.equal(await pub.getCode({ address: erin.address }), '0xef0100' + d.slice(2).toLowerCase());
    const empty = await rpc(node.url, 'eth_sendTransaction', [{ from: sponsor.address, to: erin.address, gas: qty(GAS), authorizationList: [] }]);
    assert.equal(empty.error?.message, 'set code tx must have at least one authorization tuple');
    const create = await rpc(node.url, 'eth_sendTransaction', [{ from: sponsor.address, data: COUNT, gas: qty(GAS), authorizationList: [] }]);
    assert.equal(create.error?.message, 'authorizationList provided for contract creation, but "to" field is missing');
  });

  it("CheckTx refuses malformed set-code txs with geth's texts", async () => {
    const nonce = BigInt(await nonceOf(sponsor.address));
    const empty = await sendRaw(rawSetCodeTx(key(0), { nonce, to: carol.address, auths: [] }));
    assert.equal(empty.error?.message, 'set code tx must have at least one authorization tuple');
    const create = await sendRaw(rawSetCodeTx(key(0), { nonce, to: '0x', auths: [[q(EVM_CHAIN_ID), d, '0x', '0x', q(1n), q(1n)]] }));
    assert.equal(create.error?.message, 'rlp: input string too short for common.Address, decoding into (types.SetCodeTx).To');
  });

  it("the pool's delegation limits: one in-flight tx for a delegated sender, no gap, reserved authorities", async () => {
    await call(node.url, 'evm_setAutomine', [false]);
    try {
      // carol is delegated (first test): one executable tx at a time, and no gapped nonce
      const n = await nonceOf(carol.address);
      const send = (from: typeof sponsor, nonce: number) =>
        wallet(from).sendTransaction({ to: sponsor.address, value: 1n, gas: 100_000n, nonce, ...FEES }).then(
          () => undefined,
          (e: any) => String(e.details ?? e.message),
        );
      assert.equal(await send(carol, n + 1), 'gapped-nonce tx from delegated accounts');
      assert.equal(await send(carol, n), undefined);
      assert.equal(await send(carol, n + 1), 'in-flight transaction limit reached for delegated accounts');
      // an authority with more than one pooled tx cannot be named by a set-code tx
      const m = await nonceOf(sponsor.address);
      const f = await nonceOf(dave.address);
      assert.equal(await send(dave, f), undefined);
      assert.equal(await send(dave, f + 1), undefined);
      const auth = await dave.signAuthorization({ address: d, chainId: EVM_CHAIN_ID, nonce: f + 2 });
      const refused = await wallet(sponsor)
        .sendTransaction({ to: dave.address, authorizationList: [auth], gas: GAS, nonce: m, ...FEES })
        .then(() => undefined, (e: any) => String(e.details ?? e.message));
      assert.equal(refused, 'authority already reserved');
      const content = await call(node.url, 'txpool_content');
      assert.equal(Object.keys(content.pending[carol.address] ?? {}).length, 1);
    } finally {
      await call(node.url, 'evm_setAutomine', [true]);
      await call(node.url, 'evm_mine');
    }
  });
});
