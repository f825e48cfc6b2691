/**
 * eth_call runs a call to an address as its message alone (leanCall, src/evm/simulate.ts), without the whole-tx
 * work of ethereumjs' runTx that an answer never shows. What the call can see must be exactly what the
 * whole tx shows it: debug_traceCall still runs the whole tx (runTx), so for every kind of call the
 * probe contract's view of the world — gas left, gas price, origin, balances after the gas is bought,
 * block fields, cold and warm access costs (EIP-2929 precompiles/sender/recipient, EIP-3651 coinbase,
 * EIP-2930 access list) — and every failure must be byte-identical between the two, and match geth's
 * rules where a figure is known.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, ContractFactory, Interface, JsonRpcProvider, Wallet } from 'ethers';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';

const probeC = compileContract('CallProbe.sol', 'CallProbe');
const iface = new Interface(probeC.abi);
let node: FerryNode;
let provider: JsonRpcProvider;
let probe: string;
let at: string;
const other = Wallet.createRandom().address.toLowerCase();
const GAS = 1_000_000n;

before(async () => {
  node = await startFerry({ args: ['--json-rpc.api', 'eth,net,web3,debug'] });
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, polling: true, pollingInterval: 100 });
  const deployed = await new ContractFactory(probeC.abi, probeC.bytecode, devWallet(0, provider)).deploy();
  await deployed.waitForDeployment();
  probe = (await deployed.getAddress()).toLowerCase();
  at = await call<string>(node.url, 'eth_blockNumber');
});

after(async () => {
  provider?.destroy();
  await node?.stop();
});

/** the probe's figures as eth_call answers them, and as the whole-tx run (debug_traceCall) sees them */
async function both(args: Record<string, unknown>): Promise<{ lean: string; whole: string; figures: bigint[] }> {
  const lean = await call<string>(node.url, 'eth_call', [args, at]);
  const traced = await call<{ output: string; error?: string }>(node.url, 'debug_traceCall', [args, at, { tracer: 'callTracer' }]);
  assert.equal(traced.error, undefined, `the whole-tx run failed: ${traced.error}`);
  const [figures] = AbiCoder.defaultAbiCoder().decode(['uint256[]'], lean) as unknown as [bigint[]];
  return { lean, whole: traced.output, figures: [...figures] };
}

const hex = (n: bigint): string => '0x' + n.toString(16);

describe('eth_call as the message alone', () => {
  it('shows a free call (no fee fields) what the whole tx shows it', async () => {
    const from = devAddress(1);
    const { lean, whole, figures } = await both({ from, to: probe, gas: hex(GAS), data: iface.encodeFunctionData('probe', [other]) });
    assert.equal(lean, whole);
    assert.equal(figures[1], 0n, 'no fee given: gas price 0');
    assert.equal(figures[2], BigInt(from), 'origin');
    assert.equal(figures[6], await provider.getBalance(from, Number(at)), 'nothing bought at price 0');
    assert.equal(figures[14], 2_600n + figures[15]! - 100n, 'the other account is cold first, warm after');
    assert.equal(figures[16], figures[15], 'the coinbase is warm (EIP-3651)');
    assert.equal(figures[17], figures[15], 'precompiles are warm');
    assert.equal(figures[18], figures[15], 'the sender is warm');
  });

  it('shows a priced legacy call the gas price and the balance after the gas is bought', async () => {
    const from = devAddress(2);
    const gasPrice = 3n * 10n ** 9n;
    const { lean, whole, figures } = await both({
      from, to: probe, gas: hex(GAS), gasPrice: hex(gasPrice), data: iface.encodeFunctionData('probe', [other]),
    });
    assert.equal(lean, whole);
    assert.equal(figures[1], gasPrice);
    assert.equal(figures[6], (await provider.getBalance(from, Number(at))) - GAS * gasPrice);
  });

  it('shows an EIP-1559 call its effective gas price, with value', async () => {
    const from = devAddress(3);
    const block = await provider.getBlock(Number(at));
    const baseFee = block!.baseFeePerGas!;
    const tip = 2n;
    const { lean, whole, figures } = await both({
      from, to: probe, gas: hex(GAS), value: '0x7', maxFeePerGas: hex(baseFee * 2n + 10n), maxPriorityFeePerGas: hex(tip),
      data: iface.encodeFunctionData('probe', [other]),
    });
    assert.equal(lean, whole);
    assert.equal(figures[1], baseFee + tip, 'gas price = base fee + tip when the cap allows');
    assert.equal(figures[4], 7n);
    assert.equal(figures[10], baseFee);
  });

  it('warms what the access list names (EIP-2930)', async () => {
    const from = devAddress(4);
    const slot0 = '0x' + '0'.repeat(64);
    const plain = await both({ from, to: probe, gas: hex(GAS), data: iface.encodeFunctionData('probe', [other]) });
    const listed = await both({
      from, to: probe, gas: hex(GAS), data: iface.encodeFunctionData('probe', [other]),
      accessList: [{ address: other, storageKeys: [] }, { address: probe, storageKeys: [slot0] }],
    });
    assert.equal(listed.lean, listed.whole);
    assert.equal(listed.figures[14], listed.figures[15], 'a listed account is warm from the start');
    assert.equal(plain.figures[19]! - listed.figures[19]!, 2_000n, 'a listed slot is read warm (100, not 2100)');
    // the list's intrinsic gas comes off what the call is given: 2400 per address, 1900 per slot
    assert.equal(plain.figures[0]! - listed.figures[0]!, 2n * 2_400n + 1_900n);
  });

  it('a call from an account that does not exist sees a zero origin balance and the same figures', async () => {
    const from = Wallet.createRandom().address.toLowerCase();
    const { lean, whole, figures } = await both({ from, to: probe, gas: hex(GAS), data: iface.encodeFunctionData('probe', [other]) });
    assert.equal(lean, whole);
    assert.equal(figures[6], 0n);
  });

  it('runs nested frames as the whole tx does: precompiles, a value transfer, a call into itself', async () => {
    const args = { from: devAddress(6), to: probe, gas: hex(GAS), value: '0x10', data: iface.encodeFunctionData('frames', [other]) };
    const lean = await call<string>(node.url, 'eth_call', [args, at]);
    const traced = await call<{ output: string; error?: string; calls?: unknown[] }>(node.url, 'debug_traceCall', [args, at, { tracer: 'callTracer' }]);
    assert.equal(traced.error, undefined);
    assert.equal(lean, traced.output);
    assert.equal(traced.calls?.length, 4, 'sha256, identity, the transfer and the self-call are frames');
    const [, echoed, sent, got] = iface.decodeFunctionResult('frames', lean);
    assert.equal(Buffer.from(echoed.slice(2), 'hex').toString(), 'frames');
    assert.equal(sent, true);
    assert.deepEqual([got[0], got[1]], [21n, 2n]);
  });

  it('fails exactly as the whole tx does: revert with a reason, a panic, out of gas', async () => {
    const cases: [string, bigint][] = [
      [iface.encodeFunctionData('fail', [1n]), GAS],
      [iface.encodeFunctionData('fail', [2n]), GAS],
      [iface.encodeFunctionData('fail', [100_000n]), 100_000n],
    ];
    for (const [data, gas] of cases) {
      const args = { from: devAddress(5), to: probe, gas: hex(gas), data };
      const r = await rpc(node.url, 'eth_call', [args, at]);
      const traced = await call<{ output?: string; error?: string; revertReason?: string }>(node.url, 'debug_traceCall', [args, at, { tracer: 'callTracer' }]);
      assert.ok(r.error, `eth_call of ${data.slice(0, 10)}… must fail`);
      assert.ok(traced.error, 'and so must the whole tx');
      assert.equal(r.error.message, traced.revertReason ? `${traced.error}: ${traced.revertReason}` : traced.error);
      if (traced.error === 'execution reverted') assert.equal((r.error as { data?: string }).data, traced.output);
    }
  });
});
