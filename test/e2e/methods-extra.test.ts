/**
 * The methods beyond the core eth table, on a real node with history (the tracing fixture, plus a
 * legacy and an EIP-2930 tx): eth_createAccessList (viem, Foundry's cast, and the list proven by
 * sending a tx with it), eth_getHeaderBy* (against the block ethers reads), debug_getRaw* (decoded
 * and compared with what the eth_* methods answer, re-hashed, trie roots recomputed),
 * debug_traceBlock (a block's RLP traces as debug_traceBlockByNumber does), and the
 * lower-case eth_getTransactionbyBlockNumberAndIndex. Results with an execution-apis schema are
 * validated against it (test/helpers/schema.ts reads the schemas as the conformance test does).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { RLP } from '@ethereumjs/rlp';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import {
  ContractFactory,
  Interface,
  JsonRpcProvider,
  Transaction,
  Wallet,
  decodeRlp,
  encodeRlp,
  getCreateAddress,
  getBytes,
  hexlify,
  keccak256,
  toBeArray,
  zeroPadValue,
  toQuantity,
} from 'ethers';
import { createPublicClient, http } from 'viem';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, waitForReceipt } from '../helpers/rpc.js';
import { resultErrors } from '../helpers/schema.js';
import { slotOf } from '../helpers/solc.js';
import { contracts, runFixture, type FixtureRun } from './debug-fixtures.js';

const GWEI = 10n ** 9n;
/** json-rpc.gas-cap default */
const GAS_CAP = 25_000_000n;
const ZERO_SLOT = zeroPadValue('0x', 32);

let node: FerryNode;
let fx: FixtureRun;
const c = contracts();
const callerI = new Interface(c.caller.abi);
const wallets = devKeys().map((k) => new Wallet(k));
/** the extra legacy and EIP-2930 txs (dev account 2) */
const extraTxs: string[] = [];

const slotHex = (n: bigint) => zeroPadValue(toBeArray(n), 32);
const lower = (a: string) => a.toLowerCase();

function assertSchema(method: string, value: unknown): void {
  const errors = resultErrors(method, value);
  assert.equal(errors, undefined, `${method}: ${errors}\n${JSON.stringify(value)}`);
}

async function sendSigned(type: 0 | 1, nonce: number): Promise<string> {
  const raw = await wallets[2]!.signTransaction({
    type,
    chainId: EVM_CHAIN_ID,
    nonce,
    gasLimit: 100_000n,
    gasPrice: 50n * GWEI,
    to: devAddress(3),
    value: 1000n + BigInt(type),
    ...(type === 1 ? { accessList: [{ address: devAddress(4), storageKeys: [ZERO_SLOT] }] } : {}),
  });
  const hash = await call<string>(node.url, 'eth_sendRawTransaction', [raw]);
  await waitForReceipt(node.url, hash);
  return hash;
}

before(async () => {
  node = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.api', 'eth,net,web3,debug'] });
  fx = await runFixture(node.url);
  extraTxs.push(await sendSigned(0, 0), await sendSigned(1, 1));
});

after(async () => {
  await node?.stop();
});

/** Blocks holding the fixture's and the extra txs. */
async function historyBlocks(): Promise<string[]> {
  const hashes = [...Object.values(fx.txs), ...extraTxs];
  const blocks = new Set<string>();
  for (const h of hashes) blocks.add((await call(node.url, 'eth_getTransactionReceipt', [h])).blockNumber);
  return [...blocks];
}

// ------------------------------------------------------------------------------------------------

describe('eth_createAccessList', () => {
  const chainData = callerI.encodeFunctionData('chain', [5n]);

  it('lists the callee and both contracts\' slots (recipient kept for its storage, as geth); a tx sent with it uses exactly gasUsed', async () => {
    const client = createPublicClient({ transport: http(node.url) });
    const from = devAddress(5);
    const res = await client.createAccessList({ account: from as `0x${string}`, to: fx.deployed.caller as `0x${string}`, data: chainData as `0x${string}` });
    const expected = [
      { address: lower(fx.deployed.callee), storageKeys: [slotHex(slotOf(c.callee, 'hits'))] },
      { address: lower(fx.deployed.caller), storageKeys: [slotHex(slotOf(c.caller, 'last'))] },
    ].sort((a, b) => (a.address < b.address ? -1 : 1));
    assert.deepEqual(
      res.accessList.map((i) => ({ address: lower(i.address), storageKeys: [...i.storageKeys] })),
      expected,
    );
    const raw = await call(node.url, 'eth_createAccessList', [{ from, to: fx.deployed.caller, data: chainData }]);
    assertSchema('eth_createAccessList', raw);
    assert.deepEqual(Object.keys(raw), ['accessList', 'gasUsed']);
    assert.equal(BigInt(raw.gasUsed), res.gasUsed);

    // the same call as a type-1 tx with the list: its receipt's gas is the answer's gasUsed
    const signed = await new Wallet(devKeys()[5]!).signTransaction({
      type: 1,
      chainId: EVM_CHAIN_ID,
      nonce: await call(node.url, 'eth_getTransactionCount', [from, 'latest']).then(Number),
      gasLimit: 300_000n,
      gasPrice: 50n * GWEI,
      to: fx.deployed.caller,
      data: chainData,
      accessList: raw.accessList,
    });
    const receipt = await waitForReceipt(node.url, await call(node.url, 'eth_sendRawTransaction', [signed]));
    assert.equal(receipt.status, '0x1');
    assert.equal(BigInt(receipt.gasUsed), res.gasUsed);
    // the call workers still answer eth_call as before (the tracer is detached after each run)
    const calleeI = new Interface(c.callee.abi);
    const hits = await call(node.url, 'eth_call', [{ to: fx.deployed.callee, data: calleeI.encodeFunctionData('hits') }]);
    assert.equal(BigInt(hits), BigInt(await call(node.url, 'eth_getStorageAt', [fx.deployed.callee, slotHex(slotOf(c.callee, 'hits'))])));
    assert.ok(BigInt(hits) >= 2n);
  });

  it('leaves out precompiles, sender and recipient: a call that only reaches precompiles gets an empty list', async () => {
    const data = callerI.encodeFunctionData('precompiles', ['0xdeadbeef']);
    const raw = await call(node.url, 'eth_createAccessList', [{ from: devAddress(0), to: fx.deployed.caller, data }, 'latest']);
    assert.deepEqual(raw.accessList, []);
    assert.ok(BigInt(raw.gasUsed) > 21_000n);
  });

  it('a creation lists the created contract with the slots its constructor writes; the initial list is kept', async () => {
    const from = devAddress(6);
    const nonce = Number(await call(node.url, 'eth_getTransactionCount', [from, 'latest']));
    const created = getCreateAddress({ from, nonce });
    const deploy = c.child.bytecode + new ContractFactory(c.child.abi, c.child.bytecode).interface.encodeDeploy([7n]).slice(2);
    const given = { address: devAddress(7), storageKeys: [slotHex(3n)] };
    const raw = await call(node.url, 'eth_createAccessList', [{ from, data: deploy, value: toQuantity(5n), accessList: [given] }]);
    const expected = [
      { address: lower(created), storageKeys: [slotHex(slotOf(c.child, 'value')), slotHex(slotOf(c.child, 'owner'))].sort() },
      { address: lower(given.address), storageKeys: given.storageKeys },
    ].sort((a, b) => (a.address < b.address ? -1 : 1));
    assert.deepEqual(raw.accessList.map((i: any) => ({ ...i, address: lower(i.address) })), expected);
  });

  it('a failing call answers the list with geth\'s error text, in geth\'s field order', async () => {
    const data = callerI.encodeFunctionData('mustFail', [3n]);
    const raw = await call(node.url, 'eth_createAccessList', [{ from: devAddress(0), to: fx.deployed.caller, data }]);
    assertSchema('eth_createAccessList', raw);
    assert.deepEqual(Object.keys(raw), ['accessList', 'error', 'gasUsed']);
    assert.equal(raw.error, 'execution reverted');
    assert.deepEqual(raw.accessList, []);
  });

  it('fee defaults as geth: an unfunded sender cannot pay gas cap × (tip + 2 × base fee)', async () => {
    const poor = Wallet.createRandom().address;
    const latest = await call(node.url, 'eth_getBlockByNumber', ['latest', false]);
    const tip = BigInt(await call(node.url, 'eth_maxPriorityFeePerGas'));
    const r = await rpc(node.url, 'eth_createAccessList', [{ from: poor, to: fx.deployed.caller, data: chainData }, latest.number]);
    const want = GAS_CAP * (tip + 2n * BigInt(latest.baseFeePerGas));
    // geth names the call by the hash of its fields as an unsigned legacy tx
    const unsigned = keccak256(encodeRlp(['0x', '0x', toBeArray(GAS_CAP), fx.deployed.caller, '0x', chainData, '0x', '0x', '0x']));
    assert.equal(r.error?.code, -32000);
    assert.equal(
      r.error?.message,
      `failed to apply transaction: ${unsigned} err: insufficient funds for gas * price + value: address ${poor} have 0 want ${want}`,
    );
    // a state override that gives the sender exactly that much lets it run (overrides apply first, as in geth)
    const funded = await call(node.url, 'eth_createAccessList', [
      { from: poor, to: fx.deployed.caller, data: chainData },
      latest.number,
      { [poor]: { balance: toQuantity(want) } },
    ]);
    assert.equal(funded.accessList.length, 2);
    const short = await rpc(node.url, 'eth_createAccessList', [
      { from: poor, to: fx.deployed.caller, data: chainData },
      latest.number,
      { [poor]: { balance: toQuantity(want - 1n) } },
    ]);
    assert.match(short.error!.message, new RegExp(`have ${want - 1n} want ${want}$`));
  });

  it('Foundry\'s cast access-list prints the same list', async () => {
    const dir = dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json'));
    const from = devAddress(5);
    const { stdout } = await promisify(execFile)(join(dir, 'bin', 'cast'), [
      'access-list', fx.deployed.caller, 'chain(uint256)', '5', '--from', from, '--rpc-url', node.url, '--json',
    ]);
    const printed = JSON.parse(stdout);
    const raw = await call(node.url, 'eth_createAccessList', [{ from, to: fx.deployed.caller, data: chainData }]);
    assert.deepEqual(printed.access_list ?? printed.accessList, raw.accessList);
    assert.equal(BigInt(printed.gas_used ?? printed.gasUsed), BigInt(raw.gasUsed));
  });
});

describe('eth_getHeaderByNumber / eth_getHeaderByHash', () => {
  it('are the block without size, totalDifficulty, transactions and uncles, in the same key order', async () => {
    const provider = new JsonRpcProvider(node.url, EVM_CHAIN_ID, { staticNetwork: true });
    for (const n of await historyBlocks()) {
      const block = await call(node.url, 'eth_getBlockByNumber', [n, false]);
      const header = await provider.send('eth_getHeaderByNumber', [n]);
      const { size: _s, totalDifficulty: _t, transactions: _x, uncles: _u, ...expected } = block;
      assert.deepEqual(header, expected);
      assert.deepEqual(Object.keys(header), Object.keys(expected));
      assert.deepEqual(await provider.send('eth_getHeaderByHash', [block.hash]), expected);
      const viaEthers = await provider.getBlock(Number(n));
      assert.equal(header.hash, viaEthers!.hash);
      assert.equal(BigInt(header.baseFeePerGas), viaEthers!.baseFeePerGas);
      assert.equal(BigInt(header.gasUsed), viaEthers!.gasUsed);
      assert.equal(Number(header.timestamp), viaEthers!.timestamp);
    }
    provider.destroy();
  });

  it('answer null for a block that does not exist', async () => {
    assert.equal(await call(node.url, 'eth_getHeaderByNumber', ['0xffffff']), null);
    assert.equal(await call(node.url, 'eth_getHeaderByHash', ['0x' + 'ab'.repeat(32)]), null);
  });
});

describe('eth_getTransactionbyBlockNumberAndIndex (lower-case spelling, docs/compatibility.md)', () => {
  it('answers as eth_getTransactionByBlockNumberAndIndex', async () => {
    const r = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.nested]);
    const canonical = await call(node.url, 'eth_getTransactionByBlockNumberAndIndex', [r.blockNumber, r.transactionIndex]);
    assert.equal(canonical.hash, fx.txs.nested);
    assert.deepEqual(await call(node.url, 'eth_getTransactionbyBlockNumberAndIndex', [r.blockNumber, r.transactionIndex]), canonical);
  });
});

// ------------------------------------------------------------------------------------------------

/** The header fields an Ethereum header RLP holds, as eth_getBlockByNumber writes them. */
function headerFromRlp(fields: string[]): Record<string, string> {
  const q = (h: string) => toQuantity(h === '0x' ? 0n : BigInt(h));
  return {
    parentHash: fields[0]!,
    sha3Uncles: fields[1]!,
    miner: fields[2]!,
    stateRoot: fields[3]!,
    transactionsRoot: fields[4]!,
    receiptsRoot: fields[5]!,
    logsBloom: fields[6]!,
    difficulty: q(fields[7]!),
    number: q(fields[8]!),
    gasLimit: q(fields[9]!),
    gasUsed: q(fields[10]!),
    timestamp: q(fields[11]!),
    extraData: fields[12]!,
    mixHash: fields[13]!,
    nonce: fields[14]!,
    baseFeePerGas: q(fields[15]!),
  };
}

async function trieRoot(values: Uint8Array[]): Promise<string> {
  const trie = new MerklePatriciaTrie();
  for (let i = 0; i < values.length; i++) await trie.put(RLP.encode(i), values[i]!);
  return hexlify(trie.root());
}

describe('debug_getRaw*', () => {
  it('raw block and header decode to what eth_getBlockByNumber answers; length = size; txs and receipts re-hash to the roots', async () => {
    for (const n of await historyBlocks()) {
      const block = await call(node.url, 'eth_getBlockByNumber', [n, true]);
      const rawBlock = await call<string>(node.url, 'debug_getRawBlock', [n]);
      const rawHeader = await call<string>(node.url, 'debug_getRawHeader', [n]);
      assertSchema('debug_getRawBlock', rawBlock);
      assertSchema('debug_getRawHeader', rawHeader);
      assert.equal(getBytes(rawBlock).length, Number(block.size));
      const [header, txs, uncles, withdrawals] = decodeRlp(rawBlock) as [string[], (string | string[])[], unknown[], unknown[]];
      assert.equal(encodeRlp(header), rawHeader);
      assert.deepEqual(uncles, []);
      assert.deepEqual(withdrawals, []);
      const fields = headerFromRlp(header);
      for (const [k, v] of Object.entries(fields)) assert.equal(v, block[k], `${n} ${k}`);
      // ferry's block hash is the CometBFT header hash, not keccak(rlp(header))
      assert.notEqual(keccak256(rawHeader), block.hash);
      assert.equal(await call(node.url, 'debug_getRawHeader', [block.hash]), rawHeader);
      assert.equal(await call(node.url, 'debug_getRawBlock', [block.hash]), rawBlock);

      // transactions: each embedded tx is the signed envelope debug_getRawTransaction answers
      assert.equal(txs.length, block.transactions.length);
      const envelopes = txs.map((t) => (Array.isArray(t) ? encodeRlp(t) : t));
      for (let i = 0; i < envelopes.length; i++) {
        const tx = block.transactions[i];
        assert.equal(keccak256(envelopes[i]!), tx.hash);
        assert.equal(lower(Transaction.from(envelopes[i]!).from!), lower(tx.from));
        const raw = await call<string>(node.url, 'debug_getRawTransaction', [tx.hash]);
        assertSchema('debug_getRawTransaction', raw);
        assert.equal(raw, envelopes[i]);
      }
      assert.equal(await trieRoot(envelopes.map((e) => getBytes(e))), block.transactionsRoot);

      // receipts: consensus encoding, type-prefixed, matching eth_getBlockReceipts and receiptsRoot
      const rawReceipts = await call<string[]>(node.url, 'debug_getRawReceipts', [n]);
      assertSchema('debug_getRawReceipts', rawReceipts);
      const receipts = await call(node.url, 'eth_getBlockReceipts', [n]);
      assert.equal(rawReceipts.length, receipts.length);
      rawReceipts.forEach((raw, i) => {
        const r = receipts[i];
        const bytes = getBytes(raw);
        const type = bytes[0]! >= 0xc0 ? 0 : bytes[0]!;
        assert.equal(toQuantity(type), r.type);
        const [status, cumulative, bloom, logs] = decodeRlp(type === 0 ? bytes : bytes.subarray(1)) as [string, string, string, string[][]];
        assert.equal(status === '0x01' ? '0x1' : '0x0', r.status);
        assert.equal(BigInt(cumulative), BigInt(r.cumulativeGasUsed));
        assert.equal(bloom, r.logsBloom);
        assert.deepEqual(
          logs.map(([address, topics, data]) => ({ address, topics, data })),
          r.logs.map((l: any) => ({ address: lower(l.address), topics: l.topics, data: l.data })),
        );
      });
      assert.equal(await trieRoot(rawReceipts.map((x) => getBytes(x))), block.receiptsRoot);
      assert.deepEqual(await call(node.url, 'debug_getRawReceipts', [block.hash]), rawReceipts);
    }
  });

  it('the genesis header does re-hash to its block hash', async () => {
    const genesis = await call(node.url, 'eth_getBlockByNumber', ['0x0', false]);
    assert.equal(keccak256(await call<string>(node.url, 'debug_getRawHeader', ['0x0'])), genesis.hash);
  });

  it('unknown blocks and txs answer as geth: null by number, an error (header, block) or [] (receipts) by hash', async () => {
    const missing = '0x' + 'cd'.repeat(32);
    assert.equal(await call(node.url, 'debug_getRawTransaction', [missing]), null);
    assert.equal(await call(node.url, 'debug_getRawHeader', ['0xffffff']), null);
    assert.equal(await call(node.url, 'debug_getRawBlock', ['0xffffff']), null);
    assert.equal(await call(node.url, 'debug_getRawReceipts', ['0xffffff']), null);
    assert.deepEqual(await call(node.url, 'debug_getRawReceipts', [missing]), []);
    const goBytes = `[${Array.from(getBytes(missing)).join(' ')}]`;
    const h = await rpc(node.url, 'debug_getRawHeader', [missing]);
    assert.deepEqual(h.error, { code: -32000, message: `header #${goBytes} not found` });
    const b = await rpc(node.url, 'debug_getRawBlock', [missing]);
    assert.deepEqual(b.error, { code: -32000, message: `block #${goBytes} not found` });
  });
});

describe('debug_traceBlock', () => {
  it('traces a block\'s RLP as debug_traceBlockByNumber traces the block (callTracer and struct logs)', async () => {
    const r = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.nested]);
    const raw = await call<string>(node.url, 'debug_getRawBlock', [r.blockNumber]);
    for (const config of [{ tracer: 'callTracer' }, {}, { tracer: 'prestateTracer' }]) {
      const byNumber = await call(node.url, 'debug_traceBlockByNumber', [r.blockNumber, config]);
      const fromRlp = await call(node.url, 'debug_traceBlock', [raw, config]);
      assert.deepEqual(fromRlp, byNumber);
      assert.ok(fromRlp.some((e: any) => e.txHash === fx.txs.nested));
    }
  });

  it('a block that is not committed (its txs changed) is replayed on its parent\'s state', async () => {
    const r = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.transfer]);
    const [header] = decodeRlp(await call<string>(node.url, 'debug_getRawBlock', [r.blockNumber])) as [string[]];
    const transfer = await call<string>(node.url, 'debug_getRawTransaction', [fx.txs.transfer]);
    // a tx this block never had, valid on its parent's state: dev account 8's first transfer
    const fresh = await wallets[8]!.signTransaction({
      type: 0, chainId: EVM_CHAIN_ID, nonce: 0, gasLimit: 21_000n, gasPrice: 50n * GWEI, to: devAddress(9), value: 1n,
    });
    const made = encodeRlp([header, [transfer, fresh], [], []]);
    const out = await call(node.url, 'debug_traceBlock', [made, { tracer: 'callTracer' }]);
    assert.deepEqual(out.map((e: any) => e.txHash), [fx.txs.transfer, keccak256(fresh)]);
    assert.equal(out[0].result.type, 'CALL');
    assert.equal(BigInt(out[0].result.gasUsed), 21_000n);
    assert.deepEqual(
      { from: out[1].result.from, to: out[1].result.to, value: out[1].result.value, gasUsed: out[1].result.gasUsed },
      { from: lower(devAddress(8)), to: lower(devAddress(9)), value: '0x1', gasUsed: toQuantity(21_000n) },
    );
  });

  it('a tx that fails its checks gets geth\'s error entry and the block goes on', async () => {
    const r = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.transfer]);
    const [header] = decodeRlp(await call<string>(node.url, 'debug_getRawBlock', [r.blockNumber])) as [string[]];
    const transfer = await call<string>(node.url, 'debug_getRawTransaction', [fx.txs.transfer]);
    const nested = await call<string>(node.url, 'debug_getRawTransaction', [fx.txs.nested]);
    const stateNonce = Number((await call(node.url, 'eth_getTransactionByHash', [fx.txs.transfer])).nonce) + 1;
    const txNonce = Number((await call(node.url, 'eth_getTransactionByHash', [fx.txs.nested])).nonce);
    assert.ok(txNonce > stateNonce);
    const poor = Wallet.createRandom();
    const unfunded = await poor.signTransaction({ type: 0, chainId: EVM_CHAIN_ID, nonce: 0, gasLimit: 21_000n, gasPrice: 50n * GWEI, to: devAddress(9), value: 1n });
    const fresh = await wallets[8]!.signTransaction({ type: 0, chainId: EVM_CHAIN_ID, nonce: 0, gasLimit: 21_000n, gasPrice: 50n * GWEI, to: devAddress(9), value: 1n });
    const made = encodeRlp([header, [transfer, nested, unfunded, fresh], [], []]);
    const out = await call(node.url, 'debug_traceBlock', [made, { tracer: 'callTracer' }]);
    assert.deepEqual(out.map((e: any) => e.txHash), [fx.txs.transfer, fx.txs.nested, keccak256(unfunded), keccak256(fresh)]);
    assert.deepEqual(out[1], {
      txHash: fx.txs.nested,
      error: `tracing failed: nonce too high: address ${devAddress(0)}, tx: ${txNonce} state: ${stateNonce}`,
    });
    assert.deepEqual(out[2], {
      txHash: keccak256(unfunded),
      error: `tracing failed: insufficient funds for gas * price + value: address ${poor.address} have 0 want ${21_000n * 50n * GWEI + 1n}`,
    });
    assert.equal(out[0].result.type, 'CALL');
    assert.equal(out[3].result.from, lower(devAddress(8)));
  });

  it('answers geth\'s errors for bad RLP, genesis and an unknown parent', async () => {
    const bad = await rpc(node.url, 'debug_traceBlock', ['0x1234']);
    assert.equal(bad.error?.code, -32000);
    assert.match(bad.error!.message, /^could not decode block: /);
    const genesis = await rpc(node.url, 'debug_traceBlock', [await call(node.url, 'debug_getRawBlock', ['0x0'])]);
    assert.deepEqual(genesis.error, { code: -32000, message: 'genesis is not traceable' });
    const r = await call(node.url, 'eth_getTransactionReceipt', [fx.txs.transfer]);
    const [header, txs] = decodeRlp(await call<string>(node.url, 'debug_getRawBlock', [r.blockNumber])) as [string[], unknown[]];
    const orphan = [...header];
    orphan[0] = '0x' + 'ee'.repeat(32);
    const lost = await rpc(node.url, 'debug_traceBlock', [encodeRlp([orphan, txs as string[], [], []])]);
    assert.deepEqual(lost.error, { code: -32000, message: `block 0x${'ee'.repeat(32)} not found` });
  });
});
