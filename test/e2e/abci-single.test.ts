/**
 * One real CometBFT v0.38 + one ferry (--with-cometbft=false) over the ABCI socket: ethers and viem
 * flows through ferry's Surface A (txs submitted through CometBFT's mempool), the EVM block hash is
 * CometBFT's header hash, eth_getProof verifies against the state root CometBFT carries as app_hash,
 * and CosmJS's Comet38Client against CometBFT's own RPC finds the EVM tx through ferry's events.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { JsonRpcProvider, Wallet, parseEther } from 'ethers';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  http,
  keccak256,
  parseAbiItem,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { CometNet, assertEvmMatchesComet, cometbftOrSkip, rpc, type NetNode } from '../helpers/cometnet.js';
import { EVM_CHAIN_ID } from '../helpers/node.js';
import { verifyAccountProof, verifyStorageProof } from '../helpers/proof.js';
import { compileToken, slotOf } from '../helpers/solc.js';

const comet = cometbftOrSkip();
const POLL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SUPPLY = 1_000n * 10n ** 18n;
const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** how long a CometBFT may take to notice its application died and stop (docs/abci.md) */
const COMET_EXIT_MS = 15_000;
/** CometBFT's mempool limit set for the oversized-tx case: below ferry's own (so CometBFT refuses first) */
const COMET_MAX_TX_BYTES = 2048;

/** Surface A's error object for a call that must fail */
async function rpcError(url: string, method: string, params: unknown[]): Promise<{ code: number; message: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
  assert.ok(body.error, `${method} answered ${JSON.stringify(body.result)}, not an error`);
  return { code: body.error.code, message: body.error.message };
}

/**
 * Restarts only CometBFT (ferry keeps running) with `extra` appended to its config.toml for this run
 * (`ferry testnet` writes no `[mempool]` table, so one can be appended).
 */
async function restartComet(node: NetNode, extra = ''): Promise<void> {
  await node.comet.stop();
  const file = join(node.cometHome, 'config', 'config.toml');
  const base = readFileSync(file, 'utf8').split(EXTRA_MARK)[0]!;
  writeFileSync(file, extra === '' ? base : `${base}${EXTRA_MARK}${extra}`);
  node.comet.start();
  await node.waitComet();
}
const EXTRA_MARK = '\n# --- added by abci-single.test.ts ---\n';

describe('one CometBFT v0.38 + one ferry over ABCI', () => {
  let net: CometNet;
  let pub: PublicClient;
  let wallet: WalletClient;
  let provider: JsonRpcProvider;
  const keys = devKeys();
  const owner = privateKeyToAccount(keys[0] as Hex);
  const alice = privateKeyToAccount(keys[6] as Hex).address;
  const poor = privateKeyToAccount(keys[9] as Hex);
  const compiled = compileToken();
  const abi = compiled.abi as Abi;

  before(async () => {
    if (comet.skip) return;
    net = await CometNet.create({ cometBin: comet.bin!, validators: 1, timeoutCommit: '200ms' });
    await net.start();
    await net.waitHeight(2n);
    const url = net.nodes[0]!.ethUrl;
    const chain = defineChain({ id: EVM_CHAIN_ID, name: 'ferry', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
    pub = createPublicClient({ chain, transport: http(url), pollingInterval: POLL_MS, cacheTime: 0 });
    wallet = createWalletClient({ account: owner, chain, transport: http(url), pollingInterval: POLL_MS, cacheTime: 0 });
    provider = new JsonRpcProvider(url, EVM_CHAIN_ID, { staticNetwork: true, polling: true, pollingInterval: POLL_MS });
  });

  after(async () => {
    if (comet.skip) return;
    provider?.destroy();
    if (process.exitCode) process.stderr.write(net.logs());
    await net?.stop();
  });

  it('ethers: a transfer is mined in a CometBFT block whose header hash is the EVM block hash', { skip: comet.skip }, async () => {
    const sender = new Wallet(keys[1]!, provider);
    const to = Wallet.createRandom().address;
    const tx = await sender.sendTransaction({ to, value: parseEther('1.5') });
    const receipt = await tx.wait();
    assert.equal(receipt!.status, 1);
    assert.equal(await provider.getBalance(to), parseEther('1.5'));
    const block = await rpc<{ block_id: { hash: string }; block: { header: { app_hash: string } } }>(net.nodes[0]!.cometUrl, 'block', { height: String(receipt!.blockNumber) });
    assert.equal(receipt!.blockHash, '0x' + block.block_id.hash.toLowerCase(), 'EVM block hash = CometBFT header hash');
    // the state after block N is CometBFT header N+1's app_hash
    await net.waitHeight(BigInt(receipt!.blockNumber + 1));
    const next = await rpc<{ block: { header: { app_hash: string } } }>(net.nodes[0]!.cometUrl, 'block', { height: String(receipt!.blockNumber + 1) });
    const evmBlock = await provider.send('eth_getBlockByNumber', ['0x' + receipt!.blockNumber.toString(16), false]);
    assert.equal(evmBlock.stateRoot, '0x' + next.block.header.app_hash.toLowerCase());
  });

  it('ethers: geth error texts come back through CometBFT CheckTx', { skip: comet.skip }, async () => {
    const sender = new Wallet(keys[2]!, provider);
    const to = Wallet.createRandom().address;
    const tx = await sender.sendTransaction({ to, value: 1n });
    await tx.wait();
    const stale = await sender.signTransaction({ to, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
    await assert.rejects(provider.send('eth_sendRawTransaction', [stale]), /nonce too low/);
    const broke = new Wallet(Wallet.createRandom().privateKey, provider);
    const costly = await broke.signTransaction({ to, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
    await assert.rejects(provider.send('eth_sendRawTransaction', [costly]), /insufficient funds for gas \* price \+ value/);
  });

  it('viem: ERC-20 deploy, transfer, logs, revert reason, getProof against the state root', { skip: comet.skip }, async () => {
    const deploy = await wallet.deployContract({ abi, bytecode: compiled.bytecode, args: ['Comet Token', 'CTK', SUPPLY], account: owner, chain: wallet.chain });
    const deployed = await pub.waitForTransactionReceipt({ hash: deploy, pollingInterval: POLL_MS });
    assert.equal(deployed.status, 'success');
    const token = deployed.contractAddress as Address;
    const hash = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [alice, 777n], account: owner, chain: wallet.chain });
    const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS });
    assert.equal(r.status, 'success');
    assert.equal(await pub.readContract({ address: token, abi, functionName: 'balanceOf', args: [alice] }), 777n);

    const logs = await pub.getLogs({ address: token, event: TRANSFER_EVENT, args: { to: alice }, fromBlock: deployed.blockNumber });
    assert.equal(logs.length, 1);
    assert.equal(logs[0]!.transactionHash, hash);
    assert.equal(logs[0]!.args.value, 777n);

    await assert.rejects(pub.simulateContract({ address: token, abi, functionName: 'transfer', args: [alice, 1n], account: poor }), (err) => {
      const rev = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
      assert.equal((rev as ContractFunctionRevertedError | undefined)?.reason, 'insufficient balance', String(err));
      return true;
    });

    const key = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [alice, slotOf(compiled, 'balanceOf')]));
    const block = await pub.getBlock({ blockNumber: r.blockNumber });
    const proof = await pub.getProof({ address: token, storageKeys: [key], blockNumber: r.blockNumber });
    const account = await verifyAccountProof(block.stateRoot, token, proof.accountProof);
    assert.equal(account?.storageRoot, proof.storageHash);
    assert.equal(await verifyStorageProof(proof.storageHash, key, proof.storageProof[0]!.proof), 777n);
  });

  it("CosmJS Comet38Client on CometBFT's RPC finds the EVM tx by ethereumTxHash and by recipient", { skip: comet.skip }, async () => {
    const sender = new Wallet(keys[3]!, provider);
    const to = Wallet.createRandom().address.toLowerCase();
    const tx = await sender.sendTransaction({ to, value: 12345n });
    const receipt = await tx.wait();
    const client = await Comet38Client.connect(net.nodes[0]!.cometUrl);
    try {
      const byHash = await client.txSearchAll({ query: `ethereum_tx.ethereumTxHash='${tx.hash}'` });
      assert.equal(byHash.txs.length, 1);
      assert.equal(byHash.txs[0]!.height, receipt!.blockNumber);
      assert.equal(byHash.txs[0]!.result.code, 0);
      const byRecipient = await client.txSearchAll({ query: `ethereum_tx.recipient='${to}'` });
      assert.equal(byRecipient.txs.length, 1);
      assert.deepEqual(byRecipient.txs[0]!.hash, byHash.txs[0]!.hash);
      const status = await client.status();
      assert.equal(status.nodeInfo.network, 'ferry_9000-1');
      // CometBFT's abci_query reaches ferry's Query over the ABCI query connection
      const q = await client.abciQuery({ path: '/evm/balance', data: Buffer.from(to.slice(2), 'hex') });
      assert.equal(q.code, 0);
      assert.equal(BigInt('0x' + Buffer.from(q.value).toString('hex')), 12345n);
    } finally {
      client.disconnect();
    }
  });

  it("a resent mined tx gets geth's text; CometBFT's own refusal of an admitted tx drops it; CometBFT unreachable: cannot reach CometBFT", { skip: comet.skip }, async () => {
    const node = net.nodes[0]!;
    const sender = new Wallet(keys[5]!, provider);
    const to = Wallet.createRandom().address;
    const raw = await sender.signTransaction({ to, value: 1n, nonce: await provider.getTransactionCount(sender.address, 'pending'), gasLimit: 21_000, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
    const hash = await provider.send('eth_sendRawTransaction', [raw]);
    await provider.waitForTransaction(hash);
    // ferry's own CheckTx answers first (docs/abci.md "Mempool and txpool_* under CometBFT"), as geth's pool does
    assert.deepEqual(await rpcError(node.ethUrl, 'eth_sendRawTransaction', [raw]), { code: -32000, message: 'nonce too low' });
    /** the tx is gone from ferry's pool (dropped after CometBFT did not take it) */
    const dropped = async (h: string) => {
      for (let i = 0; i < 600 && (await provider.send('eth_getTransactionByHash', [h])) !== null; i++) await sleep(50);
      assert.equal(await provider.send('eth_getTransactionByHash', [h]), null, `${h} dropped from the pool`);
    };

    assert.doesNotMatch(readFileSync(join(node.cometHome, 'config', 'config.toml'), 'utf8'), /^\[mempool\]/m);
    await restartComet(node, `[mempool]\nmax_tx_bytes = ${COMET_MAX_TX_BYTES}\n`);
    try {
      const big = await sender.signTransaction({ to, data: '0x' + '01'.repeat(COMET_MAX_TX_BYTES), nonce: await provider.getTransactionCount(sender.address, 'pending'), gasLimit: 200_000, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
      // ferry admits it (its own limit is larger); CometBFT's mempool refuses it (`tx too large`): dropped, logged
      await dropped(await provider.send('eth_sendRawTransaction', [big]));
      assert.match(readFileSync(node.ferry.logFile, 'utf8'), /CometBFT did not take a tx ferry admitted: dropped from the pool/);
    } finally {
      await restartComet(node);
    }

    await node.comet.stop();
    try {
      const sign = async (value: bigint) => sender.signTransaction({ to, value, nonce: await provider.getTransactionCount(sender.address, 'pending'), gasLimit: 21_000, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
      // the first is admitted; its forward gets no answer, is retried, then dropped
      await dropped(await provider.send('eth_sendRawTransaction', [await sign(1n)]));
      // from then on (CometBFT still down), nothing is admitted
      const err = await rpcError(node.ethUrl, 'eth_sendRawTransaction', [await sign(2n)]);
      assert.equal(err.code, -32000);
      assert.match(err.message, new RegExp(`^cannot reach CometBFT at ${node.cometUrl.replace(/\./g, '\\.')}: `));
    } finally {
      node.comet.start();
      await node.waitComet();
    }
    // CometBFT back: the next submission is admitted and mined
    const again = await sender.signTransaction({ to, value: 3n, nonce: await provider.getTransactionCount(sender.address, 'pending'), gasLimit: 21_000, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n, chainId: EVM_CHAIN_ID, type: 2 });
    await provider.waitForTransaction(await provider.send('eth_sendRawTransaction', [again]));
  });

  it('miner_setEtherbase and the dev controls are refused under CometBFT (blocks pay their proposer; CometBFT makes them)', { skip: comet.skip }, async () => {
    const node = net.nodes[0]!;
    await node.stop();
    await node.start({ ferryArgs: ['--json-rpc.api', 'eth,net,web3,miner,evm', '--json-rpc.private-api-auth', 'false'] });
    try {
      assert.deepEqual(await rpcError(node.ethUrl, 'miner_setEtherbase', [Wallet.createRandom().address]), {
        code: -32000,
        message: 'miner_setEtherbase is unavailable under CometBFT: every block pays its proposer',
      });
      assert.deepEqual(await rpcError(node.ethUrl, 'evm_mine', []), { code: -32000, message: 'dev controls are unavailable under CometBFT' });
    } finally {
      await node.stop();
      await node.start();
    }
  });

  it("crash recovery: an application behind CometBFT is replayed by the handshake to the same blocks", { skip: comet.skip }, async () => {
    const node = net.nodes[0]!;
    await node.stop();
    const behind = await (async () => {
      await node.start();
      const h = await node.height();
      await node.stop();
      return h;
    })();
    // the application's database at `behind`; CometBFT then goes on without it being kept
    const data = join(node.ferryHome, 'data');
    const saved = join(net.dir, 'saved-data');
    cpSync(data, saved, { recursive: true });
    await node.start();
    const sender = new Wallet(keys[4]!, provider);
    const tx = await sender.sendTransaction({ to: Wallet.createRandom().address, value: 1n });
    const mined = await tx.wait();
    assert.ok(mined!.blockNumber > behind);
    const top = BigInt(mined!.blockNumber + 2);
    await net.waitHeight(top);
    const before: unknown[] = [];
    for (let h = behind + 1n; h <= top; h++) before.push(await provider.send('eth_getBlockByNumber', ['0x' + h.toString(16), true]));
    await node.stop();
    // back to the old database: the application lacks blocks behind+1.. that CometBFT has
    rmSync(data, { recursive: true, force: true });
    cpSync(saved, data, { recursive: true });
    await node.start();
    await net.waitHeight(top + 1n);
    for (let h = behind + 1n; h <= top; h++) {
      assert.deepEqual(await provider.send('eth_getBlockByNumber', ['0x' + h.toString(16), true]), before[Number(h - behind - 1n)], `block ${h} replayed identically`);
    }
    assert.equal((await provider.getTransactionReceipt(tx.hash))!.blockHash, mined!.blockHash);
    const log = readFileSync(node.comet.logFile, 'utf8');
    assert.match(log, new RegExp(`ABCI Replay Blocks\\s+module=consensus appHeight=${behind} storeHeight=\\d+`), 'CometBFT replayed blocks to the application');
  });
  it('a crash inside Commit (test fault): CometBFT exits too, and its handshake replays exactly that block', { skip: comet.skip }, async () => {
    const node = net.nodes[0]!;
    const tip = await node.height();
    await node.stop();
    const crashAt = tip + 8n;
    node.ferry.start({ FERRY_TEST_HOOKS: '1', FERRY_TEST_FAULT: `crash-in-commit:${crashAt}` });
    await node.waitFerry();
    node.comet.start();
    assert.ok(await node.ferry.exited(120_000), `ferry crashed in Commit of ${crashAt}\n${node.logs()}`);
    assert.match(readFileSync(node.ferry.logFile, 'utf8'), new RegExp(`FERRY_TEST_FAULT: crash in Commit of height ${crashAt}: SIGKILL`));
    // docs/abci.md: if ferry dies, CometBFT stops too (its ABCI connections fail)
    assert.ok(await node.comet.exited(COMET_EXIT_MS), `CometBFT exits when its application dies\n${node.comet.logTail()}`);
    await node.start();
    await net.waitHeight(crashAt + 1n);
    // the block store has crashAt, the application and CometBFT's state only crashAt - 1: the last block is replayed
    const log = readFileSync(node.comet.logFile, 'utf8');
    assert.match(log, new RegExp(`ABCI Replay Blocks\\s+module=consensus appHeight=${crashAt - 1n} storeHeight=${crashAt} stateHeight=${crashAt - 1n}`));
    assert.match(log, /Replay last block using real app/);
    await assertEvmMatchesComet(node, crashAt);
  });

  it('every height: the EVM block hash is the CometBFT block id and the state root the next header\'s app_hash', { skip: comet.skip }, async () => {
    const node = net.nodes[0]!;
    const top = await node.height();
    await net.waitHeight(top + 1n);
    await assertEvmMatchesComet(node, top);
  });
});
