/**
 * The methods today's clients call (issue 22), end to end on `ferry start --dev` with viem, and the
 * same requests sent to the Anvil binary where Anvil serves the method (answers compared, hashes aside):
 * block overrides (eth_call / eth_estimateGas 4th param, debug_traceCall's `blockOverrides`), the
 * synchronous sends of EIP-7966 (viem sendTransactionSync / writeContractSync, the timeout's code 4),
 * eth_fillTransaction (viem prepareTransactionRequest), the `transactionReceipts` subscription,
 * eth_getStorageValues and eth_getRawTransactionBy*.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  keccak256,
  parseEther,
  webSocket,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { componentErrors, resultErrors } from '../helpers/schema.js';
import { startAnvil, type AnvilNode } from './debug-fixtures.js';

const chain = VIEM_CHAIN;

/**
 * Code that returns the block context as 7 words: NUMBER, TIMESTAMP, COINBASE, BASEFEE, GASLIMIT,
 * PREVRANDAO, BLOBBASEFEE (each `op PUSH1 offset MSTORE`, then RETURN 0..0xe0).
 */
const CONTEXT_CODE = ('0x' + '43600052' + '42602052' + '41604052' + '48606052' + '45608052' + '4460a052' + '4a60c052' + '60e06000f3') as Hex;
const PROBE = '0x000000000000000000000000000000000000c0de';
const RECIPIENT = '0x00000000000000000000000000000000000000aa';
const RANDAO = '0x' + '11'.repeat(32);
/** a contract whose every call succeeds (runtime code STOP), deployed by init code that returns it */
const STOP_CONTRACT_INIT = '0x60016000f3' as Hex;
const POKE_ABI = [{ type: 'function', name: 'poke', inputs: [], outputs: [], stateMutability: 'nonpayable' }] as const;

const OVERRIDES = {
  number: '0x1234',
  time: '0x7fffffff',
  gasLimit: '0x1c9c380',
  feeRecipient: RECIPIENT,
  prevRandao: RANDAO,
  baseFeePerGas: '0x7',
  blobBaseFee: '0x9',
};

function words(hex: string): bigint[] {
  const body = hex.slice(2);
  const out: bigint[] = [];
  for (let i = 0; i < body.length; i += 64) out.push(BigInt('0x' + body.slice(i, i + 64)));
  return out;
}

const probeCall = (blockOverrides: object | undefined, withPrice: boolean) => [
  { from: devAddress(0), to: PROBE, ...(withPrice ? { gasPrice: '0x3b9aca00' } : {}) },
  'latest',
  { [PROBE]: { code: CONTEXT_CODE } },
  ...(blockOverrides === undefined ? [] : [blockOverrides]),
];

describe('client methods of issue 22 on ferry --dev (viem), compared with Anvil', () => {
  let node: FerryNode;
  let anvil: AnvilNode;
  const account = privateKeyToAccount(devKeys()[1] as Hex);

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    anvil = await startAnvil();
  });

  after(async () => {
    await anvil?.stop();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('eth_call 4th param: every block override reaches the EVM; viem call({ blockOverrides }) works', async () => {
    const res = await call<string>(node.url, 'eth_call', probeCall(OVERRIDES, true));
    const [num, time, coinbase, baseFee, gasLimit, randao, blobBaseFee] = words(res);
    assert.equal(num, 0x1234n);
    assert.equal(time, 0x7fffffffn);
    assert.equal(coinbase, BigInt(RECIPIENT));
    assert.equal(baseFee, 7n);
    assert.equal(gasLimit, 30_000_000n);
    assert.equal(randao, BigInt(RANDAO));
    assert.equal(blobBaseFee, 9n);
    // without overrides: the latest block's own context
    const plain = words(await call<string>(node.url, 'eth_call', probeCall(undefined, true)));
    const head = await call<any>(node.url, 'eth_getBlockByNumber', ['latest', false]);
    assert.equal(plain[0], BigInt(head.number));
    assert.equal(plain[2], BigInt(head.miner));

    const pub = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
    const viemRes = await pub.call({
      account: devAddress(0) as Hex,
      to: PROBE,
      gasPrice: 10n ** 9n,
      stateOverride: [{ address: PROBE, code: CONTEXT_CODE }],
      blockOverrides: { number: 0x1234n, time: 0x7fffffffn, feeRecipient: RECIPIENT, prevRandao: BigInt(RANDAO), baseFeePerGas: 7n },
    });
    const got = words(viemRes.data!);
    assert.equal(got[0], 0x1234n);
    assert.equal(got[2], BigInt(RECIPIENT));
    assert.equal(got[5], BigInt(RANDAO));
  });

  it("an override of only the fee recipient and prevRandao is not served the height's cached block, nor leaks into it", async () => {
    const head = await call<any>(node.url, 'eth_getBlockByNumber', ['latest', false]);
    const only = { feeRecipient: RECIPIENT, prevRandao: RANDAO };
    // plain calls first, so every call worker holds the latest block's own context
    for (let i = 0; i < 4; i++) await call<string>(node.url, 'eth_call', probeCall(undefined, true));
    for (let i = 0; i < 4; i++) {
      const [num, , coinbase, , , randao] = words(await call<string>(node.url, 'eth_call', probeCall(only, true)));
      assert.equal(num, BigInt(head.number));
      assert.equal(coinbase, BigInt(RECIPIENT));
      assert.equal(randao, BigInt(RANDAO));
      const plain = words(await call<string>(node.url, 'eth_call', probeCall(undefined, true)));
      assert.equal(plain[2], BigInt(head.miner));
      assert.equal(plain[5], BigInt(head.mixHash));
    }
  });

  it('block overrides: the same answers as Anvil (with and without a gas price)', async () => {
    for (const withPrice of [true, false]) {
      // Anvil 1.7.1 ignores `blobBaseFee` (BLOBBASEFEE stays 1); geth's Apply sets it, as ferry does
      const { blobBaseFee: _geth, ...o } = OVERRIDES;
      const ours = words(await call<string>(node.url, 'eth_call', probeCall(o, withPrice)));
      const theirs = words(await call<string>(anvil.url, 'eth_call', probeCall(o, withPrice)));
      if (!withPrice) {
        // a call without a price runs with BASEFEE 0 in geth's applyMessage, overridden or not
        // (go-ethereum internal/ethapi/api.go); Anvil answers the override
        assert.equal(ours[3], 0n);
        assert.equal(theirs[3], 7n);
        ours[3] = theirs[3] = 0n;
      }
      assert.deepEqual(ours, theirs, `withPrice=${withPrice}`);
    }
    // eth_estimateGas takes the 4th param; its upper bound is the overridden block gas limit (geth's
    // estimator runs under the overridden header). Anvil's estimator searches to the exact gas, geth's
    // (and ferry's) stops within 1.5%, so the figures are not compared with Anvil's.
    const est = (o?: object) => rpc(node.url, 'eth_estimateGas', probeCall(o, false));
    assert.equal((await est({ number: '0x99', gasLimit: '0x989680' })).result, (await est()).result);
    assert.deepEqual((await est({ gasLimit: '0x5000' })).error, { code: -32000, message: 'gas required exceeds allowance (20480)' });
  });

  it("block overrides: geth's decoding (unknown field ignored, types named, beaconRoot/withdrawals refused)", async () => {
    const ok = await rpc(node.url, 'eth_call', probeCall({ number: '0x5', somethingElse: 1 }, true));
    assert.equal(ok.error, undefined);
    assert.equal(words(ok.result)[0], 5n);
    const bad = await rpc(node.url, 'eth_call', probeCall({ time: 'soon' }, true));
    assert.equal(bad.error?.code, -32602);
    assert.match(bad.error!.message, /^invalid argument 3: json: cannot unmarshal .* into Go struct field BlockOverrides.time of type \*hexutil.Uint64$/);
    const beacon = await rpc(node.url, 'eth_call', probeCall({ beaconRoot: '0x' + '00'.repeat(32) }, true));
    assert.deepEqual(beacon.error, { code: -32000, message: 'block override "beaconRoot" is not supported for this RPC method' });
    const traced = await call<any>(node.url, 'debug_traceCall', [
      { from: devAddress(0), to: PROBE, gasPrice: '0x3b9aca00' },
      'latest',
      { tracer: 'callTracer', stateOverrides: { [PROBE]: { code: CONTEXT_CODE } }, blockOverrides: { number: '0x4321' } },
    ]);
    assert.equal(words(traced.output)[0], 0x4321n);
  });

  it('viem sendTransactionSync and writeContractSync (eth_sendRawTransactionSync) answer the mined receipt', async () => {
    const wallet = createWalletClient({ account, chain, transport: http(node.url) });
    const pub = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
    const receipt = await wallet.sendTransactionSync({ to: RECIPIENT, value: parseEther('1') });
    assert.equal(receipt.status, 'success');
    const again = await pub.getTransactionReceipt({ hash: receipt.transactionHash });
    assert.equal(again.blockHash, receipt.blockHash);
    assert.equal(again.gasUsed, receipt.gasUsed);

    const deployed = await wallet.sendTransactionSync({ data: STOP_CONTRACT_INIT });
    assert.ok(deployed.contractAddress);
    const written = await wallet.writeContractSync({ address: deployed.contractAddress!, abi: POKE_ABI, functionName: 'poke' });
    assert.equal(written.status, 'success');
    assert.equal(written.to, deployed.contractAddress!.toLowerCase());
  });

  it('eth_sendTransactionSync signs with a dev account and answers the receipt', async () => {
    const r = await call<any>(node.url, 'eth_sendTransactionSync', [{ from: devAddress(2), to: RECIPIENT, value: '0x1' }]);
    assert.equal(r.status, '0x1');
    assert.equal(r.from, devAddress(2).toLowerCase());
    // EIP-7966 answers the receipt object eth_getTransactionReceipt answers
    assert.equal(componentErrors('ReceiptInfo', r), undefined);
    assert.deepEqual(await call(node.url, 'eth_getTransactionReceipt', [r.transactionHash]), r);
  });

  it('a receipt that does not come in time: code 4, the tx hash as data (EIP-7966)', async () => {
    const test = createTestClient({ chain, mode: 'anvil', transport: http(node.url) });
    const wallet = createWalletClient({ account, chain, transport: http(node.url) });
    await test.setAutomine(false);
    try {
      const raw = await wallet.signTransaction(await wallet.prepareTransactionRequest({ to: RECIPIENT, value: 1n }));
      const res = await rpc(node.url, 'eth_sendRawTransactionSync', [raw, 200]);
      assert.equal(res.error?.code, 4);
      assert.equal(res.error?.message, "The transaction was added to the transaction pool but wasn't processed in 200ms");
      assert.equal(res.error?.data, keccak256(raw));
      // the tx stays in the pool and is mined later
      await test.mine({ blocks: 1 });
      const r = await call<any>(node.url, 'eth_getTransactionReceipt', [keccak256(raw)]);
      assert.equal(r.status, '0x1');
    } finally {
      await test.setAutomine(true);
    }
  });

  it("eth_fillTransaction: geth's {raw, tx} (gas estimated, nonce, fees, chain id, type); viem prepareTransactionRequest uses it", async () => {
    const req = { from: devAddress(3), to: RECIPIENT, value: '0x5' };
    const filled = await call<any>(node.url, 'eth_fillTransaction', [req]);
    assert.equal(filled.tx.type, '0x2');
    assert.equal(filled.tx.gas, '0x5208');
    assert.equal(filled.tx.chainId, '0x2328');
    assert.equal(filled.tx.nonce, await call(node.url, 'eth_getTransactionCount', [devAddress(3), 'pending']));
    assert.equal(filled.tx.hash, keccak256(filled.raw));
    assert.equal(filled.tx.v, '0x0');
    assert.equal(resultErrors('eth_fillTransaction', filled), undefined);
    const legacy = await call<any>(node.url, 'eth_fillTransaction', [{ ...req, gasPrice: '0x77359400' }]);
    assert.equal(legacy.tx.type, '0x0');
    assert.equal(resultErrors('eth_fillTransaction', legacy), undefined);
    // Anvil: the same fill, hashes and fee values (which follow each chain's base fee) aside
    const theirs = await call<any>(anvil.url, 'eth_fillTransaction', [req]);
    const shape = (t: any) => ({ type: t.type, chainId: t.chainId, gas: t.gas, to: t.to, value: t.value, input: t.input, nonce: t.nonce });
    assert.deepEqual(shape(filled.tx), shape(theirs.tx));

    const wallet = createWalletClient({ account: devAddress(3) as Hex, chain, transport: http(node.url) });
    const prepared = await wallet.prepareTransactionRequest({ to: RECIPIENT, value: 5n });
    assert.equal(prepared.gas, 21_000n);
    assert.equal(prepared.nonce, Number(filled.tx.nonce));
    assert.equal(prepared.type, 'eip1559');
  });

  it('eth_subscribe("transactionReceipts"): the receipts of followed txs, per block', async () => {
    const ws = createPublicClient({ chain, transport: webSocket(node.wsUrl) });
    const wallet = createWalletClient({ account, chain, transport: http(node.url) });
    const raw = await wallet.signTransaction(await wallet.prepareTransactionRequest({ to: RECIPIENT, value: 2n }));
    const hash = keccak256(raw);
    const got: any[] = [];
    const all: any[] = [];
    // viem's subscribe is typed for the four older subscriptions only
    const subscribe = ws.transport.subscribe as unknown as (a: { params: unknown[]; onData: (d: any) => void }) => Promise<{ unsubscribe: () => Promise<unknown> }>;
    const { unsubscribe } = await subscribe({ params: ['transactionReceipts', { transactionHashes: [hash] }], onData: (d) => got.push(d.result) });
    const sub2 = await subscribe({ params: ['transactionReceipts'], onData: (d) => all.push(d.result) });
    await call(node.url, 'eth_sendRawTransaction', [raw]);
    const deadline = Date.now() + 30_000;
    while ((got.length === 0 || all.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await unsubscribe();
    await sub2.unsubscribe();
    assert.equal(got.length, 1);
    assert.equal(got[0].length, 1);
    assert.deepEqual(got[0][0], await call(node.url, 'eth_getTransactionReceipt', [hash]));
    assert.ok(all[0].some((r: any) => r.transactionHash === hash));
    const tooMany: any = await ws.transport.request({
      method: 'eth_subscribe',
      params: ['transactionReceipts', { transactionHashes: new Array(201).fill('0x' + '00'.repeat(32)) }],
    } as never).catch((e: unknown) => e);
    assert.match(String(tooMany?.details ?? tooMany), /exceed max number of transaction hashes/);
    ws.transport.getRpcClient().then((c: any) => c.close());
  });

  it('eth_getStorageValues and eth_getRawTransactionBy*: as eth_getStorageAt and the signed envelope', async () => {
    const slot0 = '0x' + '00'.repeat(32);
    const slot1 = '0x' + '00'.repeat(31) + '01';
    const addr = devAddress(0).toLowerCase();
    const vals = await call<Record<string, string[]>>(node.url, 'eth_getStorageValues', [{ [addr]: [slot0, slot1] }, 'latest']);
    assert.deepEqual(vals, { [addr]: ['0x' + '00'.repeat(32), '0x' + '00'.repeat(32)] });
    assert.equal(resultErrors('eth_getStorageValues', vals), undefined);
    const empty = await rpc(node.url, 'eth_getStorageValues', [{ [addr]: [] }]);
    assert.deepEqual(empty.error, { code: -32602, message: 'empty request' });
    const over = await rpc(node.url, 'eth_getStorageValues', [{ [addr]: new Array(1025).fill(slot0) }]);
    assert.equal(over.error?.message, 'too many slots (max 1024)');

    const r = await call<any>(node.url, 'eth_sendTransactionSync', [{ from: devAddress(4), to: RECIPIENT, value: '0x3' }]);
    const raw = await call<string>(node.url, 'eth_getRawTransactionByHash', [r.transactionHash]);
    assert.equal(keccak256(raw as Hex), r.transactionHash);
    assert.equal(await call(node.url, 'eth_getRawTransactionByBlockNumberAndIndex', [r.blockNumber, r.transactionIndex]), raw);
    assert.equal(await call(node.url, 'eth_getRawTransactionByBlockHashAndIndex', [r.blockHash, r.transactionIndex]), raw);
    assert.equal(await call(node.url, 'eth_getRawTransactionByBlockHashAndIndex', [r.blockHash, '0x63']), null);
    assert.equal(await call(node.url, 'eth_getRawTransactionByHash', ['0x' + 'ee'.repeat(32)]), null);
  });
});
