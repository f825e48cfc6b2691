/**
 * Defects issue, item 2, against the real ferry process: eth_call and eth_estimateGas with explicit
 * fees answer geth's texts (core/state_transition.go preCheck/buyGas/execute, eth/gasestimator),
 * exactly, with the sender in EIP-55 form as geth prints it, and never an ethereumjs message. A zero
 * price runs without the base-fee check (geth's NoBaseFee). Before the fix these answered
 * `Transaction's gasPrice`, `sender doesn't have enough funds to send tx. The upfront cost is: …`
 * (cut) and `INTRINSIC_GAS_TOO_LOW: …`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, Interface, Transaction, Wallet, getAddress } from 'ethers';
import { devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, toHex, waitForReceipt, type RpcResponse } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const GWEI = 10n ** 9n;
const ZERO = '0x0000000000000000000000000000000000000000';
const iface = new Interface(compileToken().abi);
const TOTAL_SUPPLY = iface.encodeFunctionData('totalSupply');
/** 21000 + 4 non-zero calldata bytes × 16 */
const TOTAL_SUPPLY_INTRINSIC = 21_064n;

let node: FerryNode;
let token: string;
/** a block whose base fee the tests read, so every answer is pinned to it */
let block: string;
let baseFee: bigint;
/** an account without funds, and one holding 1,000 wei */
const poor = Wallet.createRandom().address.toLowerCase();
const dust = Wallet.createRandom().address.toLowerCase();

async function send(w: Wallet, f: { to?: string; data?: string; value?: bigint; gasLimit?: bigint }): Promise<any> {
  const nonce = Number(await call(node.url, 'eth_getTransactionCount', [w.address, 'pending']));
  const tx = Transaction.from({
    type: 2, chainId: EVM_CHAIN_ID, nonce, to: f.to ?? null, data: f.data ?? '0x', value: f.value ?? 0n,
    gasLimit: f.gasLimit ?? 100_000n, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI,
  });
  return waitForReceipt(node.url, await call(node.url, 'eth_sendRawTransaction', [await w.signTransaction(tx)]));
}

/** the error object of a call that must fail (exact comparison: no stray `data`) */
async function error(method: string, params: unknown[]): Promise<RpcResponse['error']> {
  const r = await rpc(node.url, method, params);
  assert.ok(r.error, `${method}(${JSON.stringify(params)}) should fail, got ${JSON.stringify(r.result)}`);
  return r.error;
}

const server = (message: string) => ({ code: -32000, message });

/** a tip above the fee cap, and both fee styles at once: the same answers from both methods */
async function feeFieldErrors(method: string): Promise<void> {
  const cases: [Record<string, string>, string][] = [
    [{ maxPriorityFeePerGas: '0x5' }, `max priority fee per gas higher than max fee per gas: address ${ZERO}, maxPriorityFeePerGas: 5, maxFeePerGas: 0`],
    [{ gasPrice: '0x1', maxFeePerGas: '0x1' }, 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified'],
    [{ gasPrice: '0x1', maxPriorityFeePerGas: '0x1' }, 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified'],
  ];
  for (const [fees, message] of cases) {
    assert.deepEqual(await error(method, [{ to: token, data: TOTAL_SUPPLY, ...fees }, block]), server(message), JSON.stringify(fees));
  }
}

before(async () => {
  node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
  const c = compileToken();
  const args = AbiCoder.defaultAbiCoder().encode(['string', 'string', 'uint256'], ['Call Token', 'CALL', 10n ** 24n]);
  const deployed = await send(devWallet(0), { data: c.bytecode + args.slice(2), gasLimit: 3_000_000n });
  assert.equal(deployed.status, '0x1');
  token = deployed.contractAddress;
  assert.equal((await send(devWallet(0), { to: dust, value: 1_000n })).status, '0x1');
  const head = await call(node.url, 'eth_getBlockByNumber', ['latest', false]);
  block = head.number;
  baseFee = BigInt(head.baseFeePerGas);
  assert.ok(baseFee > 1n, `base fee ${baseFee}: the tests need one above 1 wei`);
});

after(async () => {
  if (node) assert.equal(await node.stop(), 0);
});

describe('eth_call with explicit fees', () => {
  it('gasPrice 0 runs without the base-fee check, like a call without a price', async () => {
    const free = await call(node.url, 'eth_call', [{ to: token, data: TOTAL_SUPPLY }, block]);
    assert.equal(await call(node.url, 'eth_call', [{ to: token, data: TOTAL_SUPPLY, gasPrice: '0x0' }, block]), free);
    assert.equal(await call(node.url, 'eth_call', [{ to: token, data: TOTAL_SUPPLY, maxFeePerGas: '0x0', maxPriorityFeePerGas: '0x0' }, block]), free);
    assert.equal(BigInt(free), 10n ** 24n);
  });

  it('a fee cap below the base fee: geth\'s text, with the base fee of the block', async () => {
    assert.deepEqual(
      await error('eth_call', [{ to: token, data: TOTAL_SUPPLY, gasPrice: '0x1' }, block]),
      server(`max fee per gas less than block base fee: address ${ZERO}, maxFeePerGas: 1, baseFee: ${baseFee}`),
    );
    assert.deepEqual(
      await error('eth_call', [{ from: poor, to: token, data: TOTAL_SUPPLY, maxFeePerGas: '0x2', maxPriorityFeePerGas: '0x1' }, block]),
      server(`max fee per gas less than block base fee: address ${getAddress(poor)}, maxFeePerGas: 2, baseFee: ${baseFee}`),
    );
    await feeFieldErrors('eth_call');
  });

  it('a sender who cannot pay gas × price + value: geth\'s text, address in EIP-55 form', async () => {
    const price = 100n * GWEI;
    assert.deepEqual(
      await error('eth_call', [{ from: poor, to: token, data: TOTAL_SUPPLY, gas: toHex(100_000), gasPrice: toHex(price) }, block]),
      server(`insufficient funds for gas * price + value: address ${getAddress(poor)} have 0 want ${100_000n * price}`),
    );
    assert.deepEqual(
      await error('eth_call', [{ from: dust, to: token, data: TOTAL_SUPPLY, gas: toHex(30_000), maxFeePerGas: toHex(price), value: '0x7' }, block]),
      server(`insufficient funds for gas * price + value: address ${getAddress(dust)} have 1000 want ${30_000n * price + 7n}`),
    );
    // without a price the value alone must be covered (geth's buyGas)
    assert.deepEqual(
      await error('eth_call', [{ from: dust, to: poor, value: toHex(1_001) }, block]),
      server(`insufficient funds for gas * price + value: address ${getAddress(dust)} have 1000 want 1001`),
    );
    assert.equal(await call(node.url, 'eth_call', [{ from: dust, to: poor, value: toHex(1_000) }, block]), '0x');
  });

  it('a gas limit under the intrinsic gas, and oversized init code: geth\'s texts', async () => {
    assert.deepEqual(
      await error('eth_call', [{ to: token, data: TOTAL_SUPPLY, gas: '0x1' }, block]),
      server(`intrinsic gas too low: have 1, want ${TOTAL_SUPPLY_INTRINSIC}`),
    );
    assert.deepEqual(
      await error('eth_call', [{ from: devWallet(1).address, to: token, data: TOTAL_SUPPLY, gas: toHex(TOTAL_SUPPLY_INTRINSIC - 1n), gasPrice: toHex(2n * baseFee) }, block]),
      server(`intrinsic gas too low: have ${TOTAL_SUPPLY_INTRINSIC - 1n}, want ${TOTAL_SUPPLY_INTRINSIC}`),
    );
    assert.deepEqual(
      await error('eth_call', [{ data: '0x' + '00'.repeat(49_153) }, block]),
      server('max initcode size exceeded: code size 49153 limit 49152'),
    );
  });
});

describe('eth_estimateGas with explicit fees', () => {
  it('gasPrice 0 estimates like a call without a price', async () => {
    const free = await call(node.url, 'eth_estimateGas', [{ to: token, data: TOTAL_SUPPLY }, block]);
    assert.equal(await call(node.url, 'eth_estimateGas', [{ to: token, data: TOTAL_SUPPLY, gasPrice: '0x0' }, block]), free);
    assert.ok(BigInt(free) > TOTAL_SUPPLY_INTRINSIC);
  });

  it('fee cap below the base fee, both fee styles, tip above cap: geth\'s texts', async () => {
    assert.deepEqual(
      await error('eth_estimateGas', [{ from: devWallet(1).address, to: token, data: TOTAL_SUPPLY, gasPrice: '0x1' }, block]),
      server(`max fee per gas less than block base fee: address ${devWallet(1).address}, maxFeePerGas: 1, baseFee: ${baseFee}`),
    );
    await feeFieldErrors('eth_estimateGas');
  });

  it('a poor sender: geth\'s estimator texts', async () => {
    const price = toHex(100n * GWEI);
    // geth: the value (0) must be below the balance (0) when a price is given
    assert.deepEqual(
      await error('eth_estimateGas', [{ from: poor, to: token, data: TOTAL_SUPPLY, gasPrice: price }, block]),
      server('insufficient funds for transfer'),
    );
    // 1,000 wei buys no gas at 100 gwei: the allowance is 0
    assert.deepEqual(
      await error('eth_estimateGas', [{ from: dust, to: token, data: TOTAL_SUPPLY, gasPrice: price }, block]),
      server('gas required exceeds allowance (0)'),
    );
  });

  it('a gas limit under the intrinsic gas is raised (below 21000) or is the allowance (from 21000)', async () => {
    const free = await call(node.url, 'eth_estimateGas', [{ to: token, data: TOTAL_SUPPLY }, block]);
    assert.equal(await call(node.url, 'eth_estimateGas', [{ to: token, data: TOTAL_SUPPLY, gas: '0x1' }, block]), free);
    assert.deepEqual(
      await error('eth_estimateGas', [{ to: token, data: TOTAL_SUPPLY, gas: toHex(21_000) }, block]),
      server('gas required exceeds allowance (21000)'),
    );
  });
});
