/**
 * ethers v6 against a real ferry: deploy an ERC-20, transfer, historic reads, logs, revert reasons,
 * the three transaction types, replacement of a pending transaction, and eth_getProof verified
 * against the block's stateRoot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AbiCoder,
  Contract,
  ContractFactory,
  JsonRpcProvider,
  Network,
  Transaction,
  Wallet,
  id,
  keccak256,
  parseEther,
  solidityPackedKeccak256,
  zeroPadValue,
  type TransactionReceipt,
} from 'ethers';
import { devAddress, devWallet, DEV_BALANCE } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, verifyAccountProof, verifyStorageProof } from '../helpers/proof.js';
import { call, rpc, toHex, waitFor } from '../helpers/rpc.js';
import { compileToken, slotOf } from '../helpers/solc.js';

const SUPPLY = 1_000_000n * 10n ** 18n;
const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');
const POLL_MS = 100;
const GWEI = 10n ** 9n;

function makeProvider(url: string): JsonRpcProvider {
  const p = new JsonRpcProvider(url, Network.from(EVM_CHAIN_ID), {
    staticNetwork: true,
    pollingInterval: POLL_MS,
    cacheTimeout: -1,
  });
  return p;
}

/** ABI encoding of Error(string), what a `require(cond, reason)` revert returns */
function errorStringData(reason: string): string {
  return '0x08c379a0' + AbiCoder.defaultAbiCoder().encode(['string'], [reason]).slice(2);
}

describe('ethers v6 against ferry', () => {
  let node: FerryNode;
  let provider: JsonRpcProvider;
  let owner: Wallet;
  let token: Contract;
  let tokenAddress: string;
  let deployBlock: number;
  const compiled = compileToken();
  const balanceSlot = slotOf(compiled, 'balanceOf');
  const alice = devAddress(7);
  const bob = devAddress(8);
  const poor = devWallet(9); // never holds tokens
  /** storage key of balanceOf[addr] */
  const balanceKey = (addr: string) => solidityPackedKeccak256(['uint256', 'uint256'], [addr, balanceSlot]);
  let transferReceipt: TransactionReceipt;

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
    provider = makeProvider(node.url);
    owner = devWallet(0, provider);
    const factory = new ContractFactory(compiled.abi, compiled.bytecode, owner);
    const deployed = await factory.deploy('Ferry Token', 'FRY', SUPPLY);
    const receipt = await deployed.deploymentTransaction()!.wait();
    assert.ok(receipt, 'deployment receipt');
    assert.equal(receipt.status, 1);
    deployBlock = receipt.blockNumber;
    tokenAddress = await deployed.getAddress();
    token = new Contract(tokenAddress, compiled.abi, owner);
    // the fixture the log and proof tests read: 1000 tokens to alice (no test sends her any)
    const tx = await token.getFunction('transfer')(alice, 1000n);
    transferReceipt = (await tx.wait())!;
    assert.equal(transferReceipt.status, 1);
  });

  after(async () => {
    provider?.destroy();
    if (node) assert.equal(await node.stop(), 0, 'ferry exits 0 on SIGTERM');
  });

  it('deploys the ERC-20: code and metadata are readable', async () => {
    const code = await provider.getCode(tokenAddress);
    assert.equal(code, compiled.deployedBytecode);
    assert.equal(await provider.getCode(tokenAddress, deployBlock - 1), '0x');
    assert.equal(await token.getFunction('name')(), 'Ferry Token');
    assert.equal(await token.getFunction('symbol')(), 'FRY');
    assert.equal(await token.getFunction('decimals')(), 18n);
    assert.equal(await token.getFunction('totalSupply')(), SUPPLY);
    assert.equal(await token.getFunction('balanceOf')(owner.address, { blockTag: deployBlock }), SUPPLY);
  });

  it('transfers tokens and ETH; balances read at old blocks', async () => {
    // recipients of its own, so no other test's transfers show in the balances
    const carol = Wallet.createRandom().address;
    const dave = Wallet.createRandom().address;
    const tx = await token.getFunction('transfer')(carol, 700n);
    const receipt = (await tx.wait())!;
    assert.equal(receipt.status, 1);
    const [log] = receipt.logs;
    assert.ok(log, 'transfer emitted a log');
    const parsed = token.interface.parseLog(log)!;
    assert.equal(parsed.name, 'Transfer');
    assert.deepEqual([...parsed.args], [owner.address, carol, 700n]);

    const n = receipt.blockNumber;
    const balanceOf = token.getFunction('balanceOf');
    assert.equal(await balanceOf(carol, { blockTag: n - 1 }), 0n);
    assert.equal(await balanceOf(carol, { blockTag: n }), 700n);
    const ownerBefore = await balanceOf(owner.address, { blockTag: n - 1 });
    assert.equal(await balanceOf(owner.address, { blockTag: n }), ownerBefore - 700n);

    const value = parseEther('1.5');
    const ethTx = await owner.sendTransaction({ to: dave, value });
    const r = (await ethTx.wait())!;
    assert.equal(r.status, 1);
    const m = r.blockNumber;
    assert.equal(await provider.getBalance(dave, m - 1), 0n);
    assert.equal(await provider.getBalance(dave, m), value);
    assert.equal(await provider.getBalance(dave, r.blockHash), value, 'block hash as block tag (EIP-1898)');
    assert.equal(await provider.getBalance(bob, 0), DEV_BALANCE, 'genesis balance');
    const spent = (await provider.getBalance(owner.address, m - 1)) - (await provider.getBalance(owner.address, m));
    assert.equal(spent, value + r.gasUsed * r.gasPrice, 'sender pays value + gasUsed * effectiveGasPrice');
    assert.equal(await provider.getTransactionCount(owner.address, m) , (await provider.getTransactionCount(owner.address, m - 1)) + 1);
  });

  it('reads Transfer logs with eth_getLogs (getLogs, queryFilter, blockHash filter)', async () => {
    const logs = await provider.getLogs({ address: tokenAddress, topics: [TRANSFER_TOPIC], fromBlock: deployBlock, toBlock: transferReceipt.blockNumber });
    assert.equal(logs.length, 2, 'mint + transfer');
    const [mint, xfer] = logs;
    assert.equal(mint!.blockNumber, deployBlock);
    assert.equal(mint!.topics[1], zeroPadValue('0x', 32));
    assert.equal(xfer!.transactionHash, transferReceipt.hash);
    assert.equal(xfer!.blockHash, transferReceipt.blockHash);
    const block = await provider.getBlock(xfer!.blockNumber);
    assert.equal(xfer!.blockHash, block!.hash, 'log.blockHash is the real block hash');
    assert.equal(xfer!.topics[2], zeroPadValue(alice.toLowerCase(), 32));
    assert.equal(BigInt(xfer!.data), 1000n);

    const events = await token.queryFilter(token.filters.Transfer!(null, alice), deployBlock, 'latest');
    assert.equal(events.length, 1);
    const ev = events[0] as any;
    assert.deepEqual([...ev.args], [owner.address, alice, 1000n]);

    const byHash = await provider.getLogs({ blockHash: transferReceipt.blockHash, address: tokenAddress });
    assert.equal(byHash.length, 1);
    assert.equal(byHash[0]!.transactionHash, transferReceipt.hash);

    const none = await provider.getLogs({ address: tokenAddress, topics: [TRANSFER_TOPIC], fromBlock: 0, toBlock: deployBlock - 1 });
    assert.deepEqual(none, []);
  });

  it('eth_call surfaces the revert reason (string and custom error)', async () => {
    const asPoor = token.connect(poor.connect(provider)) as Contract;
    await assert.rejects(asPoor.getFunction('transfer').staticCall(alice, 1n), (err: any) => {
      assert.equal(err.code, 'CALL_EXCEPTION');
      assert.equal(err.reason, 'insufficient balance');
      return true;
    });
    await assert.rejects(asPoor.getFunction('guarded').staticCall(), (err: any) => {
      assert.equal(err.code, 'CALL_EXCEPTION');
      assert.equal(err.revert?.name, 'Unauthorized');
      assert.deepEqual([...err.revert.args], [poor.address, 42n]);
      return true;
    });

    const data = token.interface.encodeFunctionData('transfer', [alice, 1n]);
    const r = await rpc(node.url, 'eth_call', [{ from: poor.address, to: tokenAddress, data }, 'latest']);
    assert.deepEqual(r.error, { code: 3, message: 'execution reverted: insufficient balance', data: errorStringData('insufficient balance') });
    const g = await rpc(node.url, 'eth_call', [{ from: poor.address, to: tokenAddress, data: token.interface.encodeFunctionData('guarded') }, 'latest']);
    assert.deepEqual(g.error, {
      code: 3,
      message: 'execution reverted',
      data: token.interface.encodeErrorResult('Unauthorized', [poor.address, 42n]),
    });
  });

  it('eth_estimateGas surfaces the revert reason', async () => {
    const asPoor = token.connect(poor.connect(provider)) as Contract;
    await assert.rejects(asPoor.getFunction('transfer').estimateGas(alice, 1n), (err: any) => {
      assert.equal(err.code, 'CALL_EXCEPTION');
      assert.equal(err.reason, 'insufficient balance');
      return true;
    });
    const data = token.interface.encodeFunctionData('transfer', [alice, 1n]);
    const r = await rpc(node.url, 'eth_estimateGas', [{ from: poor.address, to: tokenAddress, data }]);
    assert.deepEqual(r.error, { code: 3, message: 'execution reverted: insufficient balance', data: errorStringData('insufficient balance') });
    // and a passing estimate is enough gas to run the call
    const ok = await token.getFunction('transfer').estimateGas(alice, 1n);
    assert.ok(ok > 21_000n && ok < 100_000n, `estimate ${ok}`);
  });

  it('sends type-0, type-1 (access list) and type-2 transactions', async () => {
    const sender = devWallet(1, provider);
    const fee = await provider.getFeeData();
    assert.ok(fee.gasPrice !== null && fee.gasPrice > 0n, 'eth_gasPrice');
    assert.ok(fee.maxFeePerGas !== null && fee.maxPriorityFeePerGas !== null, 'EIP-1559 fee data');
    const gasPrice = fee.gasPrice! * 2n;

    const t0 = await sender.sendTransaction({ type: 0, to: bob, value: 1n, gasPrice });
    const r0 = (await t0.wait())!;
    assert.equal(r0.type, 0);
    assert.equal(r0.gasPrice, gasPrice, 'legacy effectiveGasPrice = gasPrice');
    const g0 = (await provider.getTransaction(t0.hash))!;
    assert.equal(g0.type, 0);
    assert.equal(g0.gasPrice, gasPrice);
    assert.equal(g0.chainId, BigInt(EVM_CHAIN_ID));

    const accessList = [{ address: tokenAddress, storageKeys: [balanceKey(alice)] }];
    const t1 = await sender.sendTransaction({
      type: 1,
      to: tokenAddress,
      data: token.interface.encodeFunctionData('balanceOf', [alice]),
      gasPrice,
      accessList,
    });
    const r1 = (await t1.wait())!;
    assert.equal(r1.type, 1);
    assert.equal(r1.status, 1);
    assert.equal(r1.gasPrice, gasPrice);
    const g1 = (await provider.getTransaction(t1.hash))!;
    assert.equal(g1.type, 1);
    assert.deepEqual(
      g1.accessList?.map((a) => ({ address: a.address.toLowerCase(), storageKeys: a.storageKeys })),
      accessList.map((a) => ({ address: a.address.toLowerCase(), storageKeys: a.storageKeys })),
    );

    const tip = 2n * GWEI;
    const maxFee = fee.maxFeePerGas! + tip;
    const t2 = await sender.sendTransaction({ type: 2, to: bob, value: 2n, maxFeePerGas: maxFee, maxPriorityFeePerGas: tip });
    const r2 = (await t2.wait())!;
    assert.equal(r2.type, 2);
    const block = (await provider.getBlock(r2.blockNumber))!;
    assert.ok(block.baseFeePerGas !== null, 'block has baseFeePerGas');
    const expected = maxFee < block.baseFeePerGas! + tip ? maxFee : block.baseFeePerGas! + tip;
    assert.equal(r2.gasPrice, expected, 'effectiveGasPrice = min(maxFee, baseFee + tip)');
    const g2 = (await provider.getTransaction(t2.hash))!;
    assert.equal(g2.type, 2);
    assert.equal(g2.maxFeePerGas, maxFee);
    assert.equal(g2.maxPriorityFeePerGas, tip);

    // the wire form names the fields itself
    for (const [hash, type, price] of [
      [t0.hash, '0x0', gasPrice],
      [t1.hash, '0x1', gasPrice],
      [t2.hash, '0x2', expected],
    ] as const) {
      const raw = await call(node.url, 'eth_getTransactionReceipt', [hash]);
      assert.equal(raw.type, type);
      assert.equal(raw.effectiveGasPrice, toHex(price));
      assert.equal(raw.status, '0x1');
    }
  });

  it('eth_getProof verifies against the block stateRoot (account and storage)', async () => {
    const n = transferReceipt.blockNumber;
    const block = await call(node.url, 'eth_getBlockByNumber', [toHex(n), false]);
    const parent = await call(node.url, 'eth_getBlockByNumber', [toHex(n - 1), false]);
    const key = balanceKey(alice);

    const proof = await call(node.url, 'eth_getProof', [tokenAddress, [key], toHex(n)]);
    const account = await verifyAccountProof(block.stateRoot, tokenAddress, proof.accountProof);
    assert.ok(account, 'token account exists');
    assert.equal(account.nonce, BigInt(proof.nonce));
    assert.equal(account.nonce, 1n, 'contract nonce starts at 1');
    assert.equal(account.balance, BigInt(proof.balance));
    assert.equal(account.storageRoot, proof.storageHash);
    assert.equal(account.codeHash, proof.codeHash);
    assert.equal(proof.codeHash, keccak256(await provider.getCode(tokenAddress, n)));
    await assert.rejects(verifyAccountProof(parent.stateRoot, tokenAddress, proof.accountProof), 'a proof does not verify against another root');

    assert.equal(proof.storageProof.length, 1);
    const sp = proof.storageProof[0];
    assert.equal(BigInt(sp.key), BigInt(key));
    assert.equal(await verifyStorageProof(proof.storageHash, key, sp.proof), 1000n);
    assert.equal(BigInt(sp.value), 1000n);
    assert.equal(BigInt(await provider.getStorage(tokenAddress, key, n)), 1000n);

    // one block earlier alice had no tokens: a valid proof of absence
    const before = await call(node.url, 'eth_getProof', [tokenAddress, [key], toHex(n - 1)]);
    await verifyAccountProof(parent.stateRoot, tokenAddress, before.accountProof);
    assert.equal(await verifyStorageProof(before.storageHash, key, before.storageProof[0].proof), 0n);
    assert.equal(before.storageProof[0].value, '0x0');

    // an externally owned account
    const eoa = await call(node.url, 'eth_getProof', [owner.address, [], toHex(n)]);
    const acct = await verifyAccountProof(block.stateRoot, owner.address, eoa.accountProof);
    assert.ok(acct);
    assert.equal(acct.balance, await provider.getBalance(owner.address, n));
    assert.equal(acct.nonce, BigInt(await provider.getTransactionCount(owner.address, n)));
    assert.equal(acct.codeHash, EMPTY_CODE_HASH);
    assert.equal(acct.storageRoot, EMPTY_TRIE_ROOT);
    assert.deepEqual(eoa.storageProof, []);

    // an account that does not exist
    const nobody = '0x000000000000000000000000000000000000dEaD';
    const absent = await call(node.url, 'eth_getProof', [nobody, [], toHex(n)]);
    assert.equal(await verifyAccountProof(block.stateRoot, nobody, absent.accountProof), null);
    assert.equal(absent.balance, '0x0');
    assert.equal(absent.nonce, '0x0');
    assert.equal(absent.codeHash, EMPTY_CODE_HASH);
    assert.equal(absent.storageHash, EMPTY_TRIE_ROOT);
  });

  describe('pending transaction replacement (2 s blocks)', () => {
    let slow: FerryNode;
    let slowProvider: JsonRpcProvider;

    before(async () => {
      slow = await startFerry({ args: ['--consensus.timeout_commit', '2s'] });
      slowProvider = makeProvider(slow.url);
    });

    after(async () => {
      slowProvider?.destroy();
      if (slow) assert.equal(await slow.stop(), 0);
    });

    it('mines the replacement (same nonce, higher fees) and forgets the first', async () => {
      const sender = devWallet(2);
      const nonce = await slowProvider.getTransactionCount(sender.address, 'latest');
      const base = (await slowProvider.getBlock('latest'))!.baseFeePerGas!;
      const tip = 1n * GWEI;
      const fee = base * 2n + tip;
      // the three compete for nonce+1 behind a gap at `nonce`: none can be mined until the filler
      // comes, so the pool is looked at with no block able to interfere
      const sign = (value: bigint, pct: bigint, n = nonce + 1) =>
        sender.signTransaction({
          type: 2,
          chainId: EVM_CHAIN_ID,
          nonce: n,
          to: bob,
          value,
          gasLimit: 21_000n,
          maxFeePerGas: (fee * pct) / 100n,
          maxPriorityFeePerGas: (tip * pct) / 100n,
        });
      const [first, cheap, replacement] = await Promise.all([sign(1n, 100n), sign(3n, 105n), sign(2n, 120n)]);

      const a = await rpc(slow.url, 'eth_sendRawTransaction', [first]);
      const c = await rpc(slow.url, 'eth_sendRawTransaction', [cheap]);
      const b = await rpc(slow.url, 'eth_sendRawTransaction', [replacement]);
      const firstHash = Transaction.from(first).hash!;
      const replacementHash = Transaction.from(replacement).hash!;
      assert.equal(a.result, firstHash);
      assert.deepEqual(c.error, { code: -32000, message: 'replacement transaction underpriced' }, 'a bump under 10% is refused');
      assert.equal(b.result, replacementHash);

      // the pool holds the replacement, not the first
      const pendingB = await call(slow.url, 'eth_getTransactionByHash', [replacementHash]);
      const pendingA = await call(slow.url, 'eth_getTransactionByHash', [firstHash]);
      assert.ok(pendingB, 'the pending replacement is visible');
      assert.equal(pendingB.blockHash, null, 'pending tx has no blockHash');
      assert.equal(pendingB.blockNumber, null);
      assert.equal(pendingA, null, 'the replaced tx left the pool');
      assert.equal(await slowProvider.getTransactionCount(sender.address, 'latest'), nonce, 'nothing mined behind the gap');

      // the filler (value 0) closes the gap: the pending nonce counts it and the replacement once
      const filler = await call(slow.url, 'eth_sendRawTransaction', [await sign(0n, 200n, nonce)]);
      assert.equal(await slowProvider.getTransactionCount(sender.address, 'pending'), nonce + 2, 'pending nonce counts the replacement once');
      assert.equal((await waitFor('filler receipt', () => slowProvider.getTransactionReceipt(filler), 20_000)).status, 1);

      const receipt = await waitFor('replacement receipt', () => slowProvider.getTransactionReceipt(replacementHash), 20_000);
      assert.equal(receipt.status, 1);
      assert.equal(await slowProvider.getTransactionReceipt(firstHash), null, 'the replaced tx has no receipt');
      assert.equal(await slowProvider.getTransaction(firstHash), null, 'the replaced tx is gone');
      assert.equal(await slowProvider.getTransactionCount(sender.address, receipt.blockNumber), nonce + 2);
      const got = await slowProvider.getBalance(bob, receipt.blockNumber);
      const had = await slowProvider.getBalance(bob, receipt.blockNumber - 1);
      assert.equal(got - had, 2n, 'the replacement value was paid (the filler paid 0)');
    });
  });
});
