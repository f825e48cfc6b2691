/**
 * The revm call engine (json-rpc.call-engine = revm; src/chain/revmcalls.ts) answers plain eth_calls
 * byte-identically to ethereumjs: every call below is sent twice to one node at one height, once plain
 * (revm) and once with an empty state override (overridden calls always run on ethereumjs), and the two
 * JSON-RPC answers — result, or error code, message and data — must be equal. Without the addon the
 * test is skipped, except under CI=true, where the addon must have been built (test/unit/revm-addon.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbiCoder, ContractFactory, Interface, JsonRpcProvider, Signature, Wallet, getCreateAddress, keccak256, toBeHex } from 'ethers';
import { loadRevm } from '../../src/evm/revm.js';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';

const addon = loadRevm().addon !== undefined;
const probeC = compileContract('CallProbe.sol', 'CallProbe');
const tokenC = compileContract('Token.sol', 'Token');
const probeI = new Interface(probeC.abi);
const tokenI = new Interface(tokenC.abi);
let node: FerryNode;
let provider: JsonRpcProvider;
let probe: string;
let token: string;
let at: string;
const other = Wallet.createRandom().address.toLowerCase();
const hex = (n: bigint): string => '0x' + n.toString(16);

describe('revm answers plain eth_calls as ethereumjs does', { skip: addon ? false : 'the revm addon was not built' }, () => {
  before(async () => {
    node = await startFerry({ args: ['--json-rpc.call-engine', 'revm'] });
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, polling: true, pollingInterval: 100 });
    const w = devWallet(0, provider);
    const p = await new ContractFactory(probeC.abi, probeC.bytecode, w).deploy();
    await p.waitForDeployment();
    probe = (await p.getAddress()).toLowerCase();
    const t = await new ContractFactory(tokenC.abi, tokenC.bytecode, w).deploy('Ferry', 'FRY', 10n ** 24n);
    await t.waitForDeployment();
    token = (await t.getAddress()).toLowerCase();
    // a block after the deployments, so BLOCKHASH(number - 1) is a real hash
    const tx = await w.sendTransaction({ to: other, value: 1n });
    await tx.wait();
    at = await call<string>(node.url, 'eth_blockNumber');
  });

  after(async () => {
    provider?.destroy();
    await node?.stop();
  });

  /** the answer on revm and on ethereumjs; both must be the same JSON */
  async function same(args: Record<string, unknown>): Promise<unknown> {
    const { result: r1, error: e1 } = await rpc(node.url, 'eth_call', [args, at]);
    const { result: r2, error: e2 } = await rpc(node.url, 'eth_call', [args, at, {}]);
    assert.deepEqual({ result: r1, error: e1 }, { result: r2, error: e2 });
    return r1 ?? e1;
  }

  const from = devAddress(1);

  it('ERC-20 reads', async () => {
    assert.match(String(await same({ from, to: token, data: tokenI.encodeFunctionData('balanceOf', [devAddress(0)]) })), /^0x0{10}/);
    await same({ to: token, data: tokenI.encodeFunctionData('totalSupply') });
    await same({ to: token, data: tokenI.encodeFunctionData('name') });
    await same({ from, to: token, data: tokenI.encodeFunctionData('transfer', [other, 5n]) });
  });

  it('block fields, gas left, cold and warm access, BLOCKHASH, COINBASE, TIMESTAMP, BASEFEE', async () => {
    const r = await same({ from, to: probe, gas: hex(1_000_000n), data: probeI.encodeFunctionData('probe', [other]) });
    assert.match(String(r), /^0x/);
    await same({ from, to: probe, data: probeI.encodeFunctionData('probe', [other]) });
  });

  it('reverts with a reason, a custom error, a panic', async () => {
    const e = (await same({ from, to: probe, data: probeI.encodeFunctionData('fail', [1n]) })) as { message: string };
    assert.equal(e.message, 'execution reverted: probe says no');
    await same({ from, to: probe, data: probeI.encodeFunctionData('fail', [2n]) });
    await same({ from, to: token, data: tokenI.encodeFunctionData('guarded') });
    await same({ from, to: token, data: tokenI.encodeFunctionData('transfer', [other, 10n ** 30n]) });
  });

  it('out of gas, invalid opcode, a call to an account without code', async () => {
    const e = (await same({ from, to: probe, gas: hex(30_000n), data: probeI.encodeFunctionData('probe', [other]) })) as { message: string };
    assert.equal(e.message, 'out of gas');
    await same({ from, to: probe, data: probeI.encodeFunctionData('fail', [10n ** 9n]) });
    await same({ from, to: other, data: '0x1234' });
  });

  it('precompiles and nested frames', async () => {
    await same({ from, to: '0x0000000000000000000000000000000000000002', data: '0x616263' });
    await same({ from, to: '0x0000000000000000000000000000000000000004', data: '0xdeadbeef' });
    await same({ from, to: '0x0000000000000000000000000000000000000001', data: '0x' + '00'.repeat(128) });
    // ecrecover on real signatures (revm's libsecp256k1 against ethereumjs'): both parities, the high-s twin
    // (the precompile takes s up to n), a v the precompile refuses, r zero, and a short input (zero-padded)
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const abi = AbiCoder.defaultAbiCoder();
    const recovered: string[] = [];
    for (let k = 0; k < 6; k++) {
      const hash = keccak256(toBeHex(k + 1, 32));
      const sig = Signature.from(devWallet(k % 3).signingKey.sign(hash));
      const input = (v: number, r: string, s: bigint) => abi.encode(['bytes32', 'uint8', 'bytes32', 'bytes32'], [hash, v, r, toBeHex(s, 32)]);
      recovered.push(String(await same({ from, to: '0x0000000000000000000000000000000000000001', data: input(sig.v, sig.r, BigInt(sig.s)) })));
      await same({ from, to: '0x0000000000000000000000000000000000000001', data: input(sig.v === 27 ? 28 : 27, sig.r, N - BigInt(sig.s)) });
      await same({ from, to: '0x0000000000000000000000000000000000000001', data: input(29, sig.r, BigInt(sig.s)) });
      await same({ from, to: '0x0000000000000000000000000000000000000001', data: input(sig.v, toBeHex(0, 32), BigInt(sig.s)) });
      await same({ from, to: '0x0000000000000000000000000000000000000001', data: input(sig.v, sig.r, BigInt(sig.s)).slice(0, 2 + 2 * 100) });
    }
    for (let k = 0; k < 6; k++) assert.equal(recovered[k], '0x' + devAddress(k % 3).slice(2).toLowerCase().padStart(64, '0'), `signature ${k} recovers its signer`);
    await same({ from, to: probe, data: probeI.encodeFunctionData('frames', [other]) });
  });

  it('BALANCE of funded accounts and the address CREATE derives from the sender\'s nonce', async () => {
    // initcode: BALANCE(dev 0) at 0, BALANCE(other) at 32, ADDRESS (from the sender's nonce) at 64; RETURN 96 bytes
    const rich = devAddress(0).toLowerCase();
    const data = `0x73${rich.slice(2)}31600052` + `73${other.slice(2)}31602052` + '30604052' + '60606000f3';
    const out = String(await same({ from: rich, data }));
    const words = [0, 1, 2].map((i) => BigInt('0x' + out.slice(2 + 64 * i, 66 + 64 * i)));
    assert.equal(words[0], BigInt(await call<string>(node.url, 'eth_getBalance', [rich, at])));
    assert.equal(words[1], 1n);
    const nonce = Number(await call<string>(node.url, 'eth_getTransactionCount', [rich, at]));
    assert.ok(nonce > 1, 'the sender has sent transactions');
    assert.equal('0x' + words[2]!.toString(16).padStart(40, '0'), getCreateAddress({ from: rich, nonce }).toLowerCase());
  });

  it('CREATE in a call answers the deployed code', async () => {
    const code = await same({ from, data: probeC.bytecode });
    assert.equal(code, await call<string>(node.url, 'eth_getCode', [probe, at]));
  });
});
