/**
 * viem against a real ferry: deploy, writeContract, readContract at a block, logs and contract
 * events, simulateContract / estimateGas reverts, legacy / eip2930 / eip1559 transactions, getProof.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  keccak256,
  parseAbiItem,
  parseEther,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { devKeys, DEV_BALANCE } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { ferryChain } from '../helpers/viemchain.js';
import { EMPTY_CODE_HASH, verifyAccountProof, verifyStorageProof } from '../helpers/proof.js';
import { compileToken, slotOf } from '../helpers/solc.js';

const SUPPLY = 5_000n * 10n ** 18n;
const POLL_MS = 100;
const GWEI = 10n ** 9n;
const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** the revert error a viem error wraps, if any */
function revertOf(err: unknown): ContractFunctionRevertedError | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const found = err.walk((e) => e instanceof ContractFunctionRevertedError);
  return found instanceof ContractFunctionRevertedError ? found : undefined;
}

describe('viem against ferry', () => {
  let node: FerryNode;
  let pub: PublicClient;
  let wallet: WalletClient;
  let owner: PrivateKeyAccount;
  let token: Address;
  let deployBlock: bigint;
  let transferReceipt: TransactionReceipt;
  const compiled = compileToken();
  const abi = compiled.abi as Abi;
  const accounts = devKeys().map((k) => privateKeyToAccount(k as Hex));
  const alice = accounts[6]!.address;
  const bob = accounts[5]!.address;
  const poor = accounts[9]!; // never holds tokens
  const balanceKey = (addr: Address) =>
    keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [addr, slotOf(compiled, 'balanceOf')]));

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '200ms'] });
    const chain = ferryChain([node.url]);
    owner = accounts[0]!;
    pub = createPublicClient({ chain, transport: http(node.url), pollingInterval: POLL_MS, cacheTime: 0 });
    wallet = createWalletClient({ account: owner, chain, transport: http(node.url), pollingInterval: POLL_MS, cacheTime: 0 });
    assert.equal(await pub.getChainId(), EVM_CHAIN_ID);

    const hash = await wallet.deployContract({ abi, bytecode: compiled.bytecode, args: ['Viem Token', 'VTK', SUPPLY], account: owner, chain });
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS });
    assert.equal(receipt.status, 'success');
    assert.ok(receipt.contractAddress, 'contractAddress in the receipt');
    token = receipt.contractAddress;
    deployBlock = receipt.blockNumber;
    // the fixture the log and proof tests read: 777 tokens to alice (no test sends her any)
    const transfer = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [alice, 777n], account: owner, chain });
    transferReceipt = await pub.waitForTransactionReceipt({ hash: transfer, pollingInterval: POLL_MS });
    assert.equal(transferReceipt.status, 'success');
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0, 'ferry exits 0 on SIGTERM');
  });

  it('deploys: getCode and readContract', async () => {
    assert.equal(await pub.getCode({ address: token }), compiled.deployedBytecode);
    assert.equal(await pub.getCode({ address: token, blockNumber: deployBlock - 1n }), undefined);
    assert.equal(await pub.readContract({ address: token, abi, functionName: 'symbol' }), 'VTK');
    assert.equal(await pub.readContract({ address: token, abi, functionName: 'totalSupply' }), SUPPLY);
  });

  it('writeContract transfer; readContract at blockNumber', async () => {
    // a recipient of its own, so no other test's transfers show in the balances
    const carol = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [carol, 555n], account: owner, chain: wallet.chain });
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS });
    assert.equal(receipt.status, 'success');
    const n = receipt.blockNumber;
    const read = async (who: Address, blockNumber: bigint) => (await pub.readContract({ address: token, abi, functionName: 'balanceOf', args: [who], blockNumber })) as bigint;
    assert.equal(await read(carol, n - 1n), 0n);
    assert.equal(await read(carol, n), 555n);
    assert.equal(await read(owner.address, n), (await read(owner.address, n - 1n)) - 555n);
    assert.equal(await read(owner.address, deployBlock), SUPPLY);
    assert.equal(await pub.getBalance({ address: carol, blockNumber: n }), 0n);
  });

  it('getLogs and getContractEvents', async () => {
    const logs = await pub.getLogs({ address: token, event: TRANSFER_EVENT, args: { to: alice }, fromBlock: deployBlock, toBlock: 'latest' });
    assert.equal(logs.length, 1);
    const [log] = logs;
    assert.equal(log!.transactionHash, transferReceipt.transactionHash);
    assert.equal(log!.blockHash, transferReceipt.blockHash);
    assert.equal(log!.blockNumber, transferReceipt.blockNumber);
    assert.equal(log!.args.from, owner.address);
    assert.equal(log!.args.value, 777n);
    assert.equal(log!.removed, false);

    const events = await pub.getContractEvents({ address: token, abi, eventName: 'Transfer', fromBlock: deployBlock, toBlock: transferReceipt.blockNumber });
    assert.equal(events.length, 2, 'mint + transfer');
    assert.equal((events[0] as any).args.from, '0x0000000000000000000000000000000000000000');
    assert.equal((events[0] as any).args.value, SUPPLY);
    assert.equal(events[1]!.transactionHash, transferReceipt.transactionHash);

    const byBlock = await pub.getLogs({ address: token, blockHash: transferReceipt.blockHash });
    assert.equal(byBlock.length, 1);
  });

  it('simulateContract surfaces the revert reason and the custom error', async () => {
    await assert.rejects(
      pub.simulateContract({ address: token, abi, functionName: 'transfer', args: [alice, 1n], account: poor }),
      (err) => {
        assert.equal(revertOf(err)?.reason, 'insufficient balance', String(err));
        return true;
      },
    );
    await assert.rejects(pub.simulateContract({ address: token, abi, functionName: 'guarded', account: poor }), (err) => {
      const rev = revertOf(err);
      assert.equal(rev?.data?.errorName, 'Unauthorized', String(err));
      assert.deepEqual(rev?.data?.args, [poor.address, 42n]);
      return true;
    });
    const ok = await pub.simulateContract({ address: token, abi, functionName: 'transfer', args: [alice, 1n], account: owner });
    assert.equal(ok.result, true);
  });

  it('estimateGas reverts with the reason', async () => {
    await assert.rejects(
      pub.estimateContractGas({ address: token, abi, functionName: 'transfer', args: [alice, 1n], account: poor }),
      (err) => {
        assert.equal(revertOf(err)?.reason, 'insufficient balance', String(err));
        return true;
      },
    );
    const data = encodeFunctionData({ abi, functionName: 'transfer', args: [alice, 1n] });
    await assert.rejects(pub.estimateGas({ account: poor, to: token, data }), (err) => {
      assert.ok(err instanceof BaseError);
      const reverted = err.walk((e) => e instanceof ExecutionRevertedError);
      assert.ok(reverted, `an ExecutionRevertedError in ${String(err)}`);
      assert.match((reverted as BaseError).details ?? (reverted as BaseError).message, /insufficient balance/);
      return true;
    });
  });

  it('sends legacy, eip2930 and eip1559 transactions', async () => {
    const sender = accounts[3]!;
    const gasPrice = (await pub.getGasPrice()) * 2n;
    const send = (tx: Record<string, unknown>) => wallet.sendTransaction({ account: sender, chain: wallet.chain, ...tx } as any);

    const h0 = await send({ type: 'legacy', to: bob, value: 1n, gasPrice });
    const r0 = await pub.waitForTransactionReceipt({ hash: h0, pollingInterval: POLL_MS });
    assert.equal(r0.type, 'legacy');
    assert.equal(r0.effectiveGasPrice, gasPrice);
    assert.equal((await pub.getTransaction({ hash: h0 })).type, 'legacy');

    const accessList = [{ address: token, storageKeys: [balanceKey(alice)] }];
    const h1 = await send({
      type: 'eip2930',
      to: token,
      data: encodeFunctionData({ abi, functionName: 'balanceOf', args: [alice] }),
      gasPrice,
      accessList,
    });
    const r1 = await pub.waitForTransactionReceipt({ hash: h1, pollingInterval: POLL_MS });
    assert.equal(r1.type, 'eip2930');
    assert.equal(r1.status, 'success');
    assert.equal(r1.effectiveGasPrice, gasPrice);
    const t1 = await pub.getTransaction({ hash: h1 });
    assert.equal(t1.type, 'eip2930');
    assert.deepEqual(
      t1.accessList?.map((a) => ({ address: a.address.toLowerCase(), storageKeys: a.storageKeys })),
      accessList.map((a) => ({ address: a.address.toLowerCase(), storageKeys: a.storageKeys })),
    );

    const fees = await pub.estimateFeesPerGas();
    const tip = 3n * GWEI;
    const maxFeePerGas = fees.maxFeePerGas + tip;
    const h2 = await send({ type: 'eip1559', to: bob, value: parseEther('0.25'), maxFeePerGas, maxPriorityFeePerGas: tip });
    const r2 = await pub.waitForTransactionReceipt({ hash: h2, pollingInterval: POLL_MS });
    assert.equal(r2.type, 'eip1559');
    const block = await pub.getBlock({ blockNumber: r2.blockNumber });
    assert.ok(block.baseFeePerGas !== null, 'baseFeePerGas');
    const expected = maxFeePerGas < block.baseFeePerGas + tip ? maxFeePerGas : block.baseFeePerGas + tip;
    assert.equal(r2.effectiveGasPrice, expected);
    const t2 = await pub.getTransaction({ hash: h2 });
    assert.equal(t2.type, 'eip1559');
    assert.equal(t2.maxFeePerGas, maxFeePerGas);
    assert.equal(t2.maxPriorityFeePerGas, tip);
    assert.ok(block.transactions.includes(h2), 'block lists the tx hash');
  });

  it('getProof verifies against the block stateRoot', async () => {
    const blockNumber = transferReceipt.blockNumber;
    const block = await pub.getBlock({ blockNumber });
    const key = balanceKey(alice);
    const proof = await pub.getProof({ address: token, storageKeys: [key], blockNumber });
    const account = await verifyAccountProof(block.stateRoot, token, proof.accountProof);
    assert.ok(account);
    assert.equal(account.nonce, BigInt(proof.nonce));
    assert.equal(account.balance, proof.balance);
    assert.equal(account.storageRoot, proof.storageHash);
    assert.equal(account.codeHash, proof.codeHash);
    assert.equal(proof.codeHash, keccak256(compiled.deployedBytecode));
    assert.equal(await verifyStorageProof(proof.storageHash, key, proof.storageProof[0]!.proof), 777n);
    assert.equal(proof.storageProof[0]!.value, 777n);

    const eoa = await pub.getProof({ address: alice, storageKeys: [], blockNumber });
    const acct = await verifyAccountProof(block.stateRoot, alice, eoa.accountProof);
    assert.equal(acct?.balance, DEV_BALANCE);
    assert.equal(acct?.codeHash, EMPTY_CODE_HASH);
    const earlier = await pub.getBlock({ blockNumber: deployBlock - 1n });
    await assert.rejects(verifyAccountProof(earlier.stateRoot, token, proof.accountProof), 'wrong root must not verify');
  });
});
