/**
 * Surface A method table (src/evmrpc/) over a fake in-memory EvmBackend, driven through the real
 * JSON-RPC dispatcher so codes and messages are what the wire sees. Results are validated against
 * the Ethereum execution-apis schemas (vendored in test/vendor/execution-apis) with ajv.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createDispatcher } from '../../src/jsonrpc/core.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import type { CallContext, MethodTable } from '../../src/jsonrpc/types.js';
import { txRejected } from '../../src/lib/errors.js';
import type {
  AccountProof,
  BlockSelector,
  CallRequest,
  EvmBackend,
  FeeHistory,
  LogQuery,
  StateOverrides,
} from '../../src/evmrpc/backend.js';
import { createEvmMethods, type EvmMethodsInfo } from '../../src/evmrpc/methods.js';
import { formatDuration as goDuration } from '../../src/config/duration.js';
import { EMPTY_UNCLES_HASH } from '../../src/evmrpc/format.js';
import { checksumAddress } from '../../src/lib/address.js';
import { Lru } from '../../src/lib/lru.js';
import type { Address, Bytes, EvmBlock, EvmLog, EvmReceipt, EvmTx, Hash, TxLocation } from '../../src/types/chain.js';
import { assertConforms, assertMatchesSchema, spec } from '../helpers/schema.js';

// -----------------------------------------------------------------------------------------------
// fake chain

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const fill = (byte: number, len: number): Uint8Array => new Uint8Array(len).fill(byte);
const addr = (byte: number): Address => fill(byte, 20);
const h32 = (byte: number): Hash => fill(byte, 32);
const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

const CHAIN_ID = 9000n;
const BASE_FEE = 7n;
const SENDER = addr(0xa1);
const CONTRACT = addr(0xc1);
const CREATED = addr(0xc2);
const TOPIC_A = h32(0x0a);
const TOPIC_B = h32(0x0b);
const TOPIC_C = h32(0x0c);

function makeTx(over: Partial<EvmTx> & Pick<EvmTx, 'type' | 'nonce'>): EvmTx {
  const raw = new Uint8Array([over.type, Number(over.nonce), 0xee]);
  return {
    hash: keccak_256(raw),
    chainId: CHAIN_ID,
    gasLimit: 21000n,
    gasPrice: over.type === 2 ? undefined : 10n,
    maxFeePerGas: over.type === 2 ? 20n : undefined,
    maxPriorityFeePerGas: over.type === 2 ? 2n : undefined,
    to: CONTRACT,
    value: 5n,
    input: new Uint8Array([1, 2, 3]),
    accessList: [],
    v: over.type === 0 ? CHAIN_ID * 2n + 35n : 1n,
    r: 0x1234n,
    s: 0x5678n,
    from: SENDER,
    raw,
    ...over,
  };
}

const txLegacy = makeTx({ type: 0, nonce: 0n });
const txAccessList = makeTx({
  type: 1,
  nonce: 1n,
  accessList: [{ address: CONTRACT, storageKeys: [h32(0x01)] }],
});
const txCreate = makeTx({ type: 2, nonce: 2n, to: undefined, gasLimit: 100000n, maxFeePerGas: 8n, maxPriorityFeePerGas: 3n });
const txBlock3 = makeTx({ type: 2, nonce: 3n, v: 0n });
const txPreEip155 = makeTx({ type: 0, nonce: 4n, chainId: undefined, v: 27n });
const txPending = makeTx({ type: 2, nonce: 5n });

function makeHeader(n: number, txCount: number): EvmBlock['header'] {
  return {
    number: BigInt(n),
    hash: h32(0xb0 + n),
    parentHash: n === 0 ? h32(0) : h32(0xb0 + n - 1),
    stateRoot: h32(0x50 + n),
    transactionsRoot: h32(0x60 + n),
    receiptsRoot: h32(0x70 + n),
    logsBloom: fill(0, 256),
    miner: addr(0xee),
    gasLimit: 30_000_000n,
    gasUsed: BigInt(21000 * txCount),
    timestamp: 1_700_000_000n + BigInt(n),
    extraData: new Uint8Array(0),
    baseFeePerGas: BASE_FEE,
    mixHash: h32(0),
    size: 600n + BigInt(txCount),
  };
}

const blocks: EvmBlock[] = [
  { header: makeHeader(0, 0), transactions: [] },
  { header: makeHeader(1, 3), transactions: [txLegacy, txAccessList, txCreate] },
  { header: makeHeader(2, 1), transactions: [txPreEip155] },
  { header: makeHeader(3, 1), transactions: [txBlock3] },
];
const LATEST = 3n;

function makeLog(block: EvmBlock, txIndex: number, logIndex: number, address: Address, topics: Hash[]): EvmLog {
  return {
    address,
    topics,
    data: new Uint8Array([0xda, 0x7a]),
    blockNumber: block.header.number,
    blockHash: block.header.hash,
    transactionHash: block.transactions[txIndex]!.hash,
    transactionIndex: txIndex,
    logIndex,
  };
}

function makeReceipts(block: EvmBlock): EvmReceipt[] {
  let cumulative = 0n;
  return block.transactions.map((tx, i) => {
    const gasUsed = tx.to === undefined ? 60000n : 21000n;
    cumulative += gasUsed;
    const logs =
      block.header.number === 1n && i === 2
        ? [makeLog(block, i, 0, CREATED, [TOPIC_A, TOPIC_B]), makeLog(block, i, 1, CREATED, [TOPIC_C])]
        : block.header.number === 3n
          ? [makeLog(block, i, 0, CONTRACT, [TOPIC_A])]
          : [];
    return {
      transactionHash: tx.hash,
      transactionIndex: i,
      blockHash: block.header.hash,
      blockNumber: block.header.number,
      from: tx.from,
      to: tx.to,
      type: tx.type,
      status: i === 1 ? 0 : 1,
      cumulativeGasUsed: cumulative,
      gasUsed,
      effectiveGasPrice: tx.type === 2 ? 10n : (tx.gasPrice ?? 0n),
      contractAddress: tx.to === undefined ? CREATED : undefined,
      logs,
      logsBloom: fill(i, 256),
      vmError: i === 1 ? 'execution reverted' : undefined,
      revertData: undefined,
    };
  });
}

const receiptsByBlock = blocks.map(makeReceipts);

type Call = [string, ...unknown[]];

class FakeBackend implements EvmBackend {
  readonly chainId = CHAIN_ID;
  readonly networkId = '9000';
  readonly calls: Call[] = [];
  /** when set, call()/estimateGas() never settle (deadline tests) */
  hang = false;

  private record(name: string, ...args: unknown[]): void {
    this.calls.push([name, ...args]);
  }
  callsOf(name: string): Call[] {
    return this.calls.filter((c) => c[0] === name);
  }

  latestNumber(): bigint {
    return LATEST;
  }
  genesisNumber(): bigint {
    return 0n;
  }
  resolveBlock(sel: BlockSelector): bigint | undefined {
    this.record('resolveBlock', sel);
    switch (sel.kind) {
      case 'number':
        return sel.number <= LATEST ? sel.number : undefined;
      case 'hash':
        return blocks.find((b) => eq(b.header.hash, sel.hash))?.header.number;
      case 'tag':
        return sel.tag === 'earliest' ? 0n : LATEST;
    }
  }
  blockByNumber(n: bigint): EvmBlock | undefined {
    this.record('blockByNumber', n);
    return blocks[Number(n)];
  }
  blockByHash(hash: Hash): EvmBlock | undefined {
    this.record('blockByHash', hash);
    return blocks.find((b) => eq(b.header.hash, hash));
  }
  transactionByHash(hash: Hash): { tx: EvmTx; location: TxLocation | undefined; baseFee: bigint | undefined } | undefined {
    this.record('transactionByHash', hash);
    if (eq(hash, txPending.hash)) return { tx: txPending, location: undefined, baseFee: undefined };
    for (const b of blocks) {
      const index = b.transactions.findIndex((t) => eq(t.hash, hash));
      if (index >= 0) {
        return {
          tx: b.transactions[index]!,
          location: { blockNumber: b.header.number, blockHash: b.header.hash, index },
          baseFee: b.header.baseFeePerGas,
        };
      }
    }
    return undefined;
  }
  receipt(hash: Hash): EvmReceipt | undefined {
    this.record('receipt', hash);
    return receiptsByBlock.flat().find((r) => eq(r.transactionHash, hash));
  }
  blockReceipts(n: bigint): EvmReceipt[] | undefined {
    this.record('blockReceipts', n);
    return receiptsByBlock[Number(n)];
  }
  getLogs(q: LogQuery): EvmLog[] {
    this.record('getLogs', q);
    return receiptsByBlock
      .flat()
      .flatMap((r) => r.logs)
      .filter(
        (l) =>
          l.blockNumber >= q.fromBlock &&
          l.blockNumber <= q.toBlock &&
          (q.addresses.length === 0 || q.addresses.some((a) => eq(a, l.address))) &&
          q.topics.every((alts, i) => alts === null || (l.topics[i] !== undefined && alts.some((t) => eq(t, l.topics[i]!)))),
      );
  }
  async balance(a: Address, n: bigint): Promise<bigint> {
    this.record('balance', a, n);
    return 10n ** 18n + n;
  }
  async nonce(a: Address, n: bigint): Promise<bigint> {
    this.record('nonce', a, n);
    return n;
  }
  async pendingNonce(a: Address): Promise<bigint> {
    this.record('pendingNonce', a);
    return 42n;
  }
  async code(a: Address, n: bigint): Promise<Bytes> {
    this.record('code', a, n);
    return new Uint8Array([0x60, 0x80]);
  }
  async storageAt(a: Address, slot: Hash, n: bigint): Promise<Hash> {
    this.record('storageAt', a, slot, n);
    return h32(0x11);
  }
  async proof(a: Address, slots: Hash[], n: bigint): Promise<AccountProof> {
    this.record('proof', a, slots, n);
    return {
      address: a,
      accountProof: [new Uint8Array([0xf8, 0x51]), new Uint8Array([0xe2])],
      balance: 100n,
      codeHash: h32(0xcd),
      nonce: 3n,
      storageHash: h32(0x5e),
      storageProof: slots.map((key) => ({ key, value: 9n, proof: [new Uint8Array([0xe3])] })),
    };
  }
  async sendRawTransaction(raw: Bytes): Promise<Hash> {
    this.record('sendRawTransaction', raw);
    return keccak_256(raw);
  }
  call(req: CallRequest, n: bigint, overrides: StateOverrides | undefined): Promise<Bytes> {
    this.record('call', req, n, overrides);
    return this.hang ? new Promise(() => {}) : Promise.resolve(new Uint8Array([0xab, 0xcd]));
  }
  estimateGas(req: CallRequest, n: bigint, overrides: StateOverrides | undefined): Promise<bigint> {
    this.record('estimateGas', req, n, overrides);
    return this.hang ? new Promise(() => {}) : Promise.resolve(21000n);
  }
  gasPrice(): bigint {
    return 1_000_000_007n;
  }
  maxPriorityFeePerGas(): bigint {
    return 1_000_000_000n;
  }
  feeHistory(count: number, newest: bigint, percentiles: number[] | undefined): FeeHistory {
    this.record('feeHistory', count, newest, percentiles);
    const oldest = newest - BigInt(count) + 1n;
    const out: FeeHistory = {
      oldestBlock: oldest,
      baseFeePerGas: Array.from({ length: count + 1 }, () => BASE_FEE),
      gasUsedRatio: Array.from({ length: count }, () => 0.25),
    };
    if (percentiles !== undefined) out.reward = Array.from({ length: count }, () => percentiles.map(() => 1n));
    return out;
  }
  coinbase(): Address {
    return addr(0xee);
  }
  nextBaseFee(): bigint {
    return BASE_FEE;
  }
  pendingTransactions(): EvmTx[] {
    return [txPending];
  }
}

// -----------------------------------------------------------------------------------------------
// harness

const INFO: EvmMethodsInfo = {
  clientVersion: 'ferry/v0.1.0/linux/node20',
  gasCap: 25_000_000n,
  blockRangeCap: 10_000,
  logsCap: 10_000,
  feeHistoryCap: 100,
  evmTimeoutMs: 5_000,
};

const CTX: CallContext = { transport: 'http', authenticated: false };

interface Reply {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

function harness(info: Partial<EvmMethodsInfo> = {}) {
  const backend = new FakeBackend();
  const table: MethodTable = createEvmMethods(backend, { ...INFO, ...info });
  const dispatcher = createDispatcher({
    table,
    enabledNamespaces: null,
    limits: { batchRequestLimit: 0, batchResponseMaxSize: 0 },
    errors: evmErrors,
    onInternalError: (err) => {
      throw err;
    },
  });
  let id = 0;
  async function rpc(method: string, params: unknown[] = []): Promise<Reply> {
    const text = await dispatcher.handle(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }), CTX);
    assert.ok(text !== undefined);
    return JSON.parse(text) as Reply;
  }
  async function ok(method: string, params: unknown[] = []): Promise<unknown> {
    const r = await rpc(method, params);
    assert.equal(r.error, undefined, `${method} failed: ${JSON.stringify(r.error)}`);
    return r.result;
  }
  async function fails(method: string, params: unknown[], code: number, message: string | RegExp): Promise<void> {
    const r = await rpc(method, params);
    assert.ok(r.error, `${method}(${JSON.stringify(params)}) should fail, got ${JSON.stringify(r.result)}`);
    assert.equal(r.error.code, code, `code of ${method}: ${r.error.message}`);
    if (typeof message === 'string') assert.equal(r.error.message, message);
    else assert.match(r.error.message, message);
  }
  return { backend, table, rpc, ok, fails };
}

const H = (b: Uint8Array) => hex(b);

// -----------------------------------------------------------------------------------------------

describe('evmrpc: results conform to execution-apis', () => {
  it('blocks by number and hash, hashes and full objects; null when unknown', async () => {
    const { ok } = harness();
    for (const n of ['0x0', '0x1', '0x2', 'latest', 'earliest', 'pending']) {
      for (const full of [false, true]) assertConforms('eth_getBlockByNumber', await ok('eth_getBlockByNumber', [n, full]));
    }
    for (const b of blocks) {
      for (const full of [false, true]) assertConforms('eth_getBlockByHash', await ok('eth_getBlockByHash', [H(b.header.hash), full]));
    }
    assert.equal(await ok('eth_getBlockByNumber', ['0x99', false]), null);
    assert.equal(await ok('eth_getBlockByHash', [H(h32(0x77)), true]), null);
    assertConforms('eth_getBlockByHash', null);
  });

  it('block header fields', async () => {
    const { ok } = harness();
    const b = (await ok('eth_getBlockByNumber', ['0x1', false])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(b), [...Object.keys(b)].sort(), 'keys sorted like geth maps');
    assert.equal(b.number, '0x1');
    assert.equal(b.hash, H(h32(0xb1)));
    assert.equal(b.parentHash, H(h32(0xb0)));
    assert.equal(b.nonce, '0x0000000000000000');
    assert.equal(b.sha3Uncles, EMPTY_UNCLES_HASH);
    assert.equal(b.difficulty, '0x0');
    assert.equal(b.totalDifficulty, '0x0');
    assert.equal(b.extraData, '0x');
    assert.equal(b.baseFeePerGas, '0x7');
    assert.equal(b.gasUsed, hexQ(63000n));
    assert.equal(b.timestamp, hexQ(1_700_000_001n));
    assert.deepEqual(b.uncles, []);
    assert.deepEqual(b.transactions, [H(txLegacy.hash), H(txAccessList.hash), H(txCreate.hash)]);
    for (const k of ['withdrawals', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot']) {
      assert.equal(k in b, false, `${k} is not emitted`);
    }
  });

  it('transactions of every type, by hash and by block position', async () => {
    const { ok } = harness();
    for (const tx of [txLegacy, txAccessList, txCreate, txBlock3, txPreEip155]) {
      assertConforms('eth_getTransactionByHash', await ok('eth_getTransactionByHash', [H(tx.hash)]));
    }
    for (const i of ['0x0', '0x1', '0x2']) {
      assertConforms('eth_getTransactionByBlockHashAndIndex', await ok('eth_getTransactionByBlockHashAndIndex', [H(h32(0xb1)), i]));
      assertConforms('eth_getTransactionByBlockNumberAndIndex', await ok('eth_getTransactionByBlockNumberAndIndex', ['0x1', i]));
    }
    assert.equal(await ok('eth_getTransactionByHash', [H(h32(0x99))]), null);
    assert.equal(await ok('eth_getTransactionByBlockHashAndIndex', [H(h32(0xb1)), '0x3']), null);
    assert.equal(await ok('eth_getTransactionByBlockNumberAndIndex', ['0x9', '0x0']), null);
    assertConforms('eth_getTransactionByHash', null);
  });

  it('receipts, block receipts and logs', async () => {
    const { ok } = harness();
    for (const tx of [txLegacy, txAccessList, txCreate, txBlock3, txPreEip155]) {
      assertConforms('eth_getTransactionReceipt', await ok('eth_getTransactionReceipt', [H(tx.hash)]));
    }
    assert.equal(await ok('eth_getTransactionReceipt', [H(txPending.hash)]), null);
    for (const sel of ['0x0', '0x1', 'latest', H(h32(0xb1)), { blockHash: H(h32(0xb2)) }]) {
      assertConforms('eth_getBlockReceipts', await ok('eth_getBlockReceipts', [sel]));
    }
    assert.equal(await ok('eth_getBlockReceipts', ['0x9']), null);
    const logs = await ok('eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }]);
    assert.equal((logs as unknown[]).length, 3);
    assertConforms('eth_getLogs', logs);
  });

  it('state, execution, fees and node methods', async () => {
    const { ok } = harness();
    const a = H(SENDER);
    const cases: [string, unknown[]][] = [
      ['eth_getBalance', [a, 'latest']],
      ['eth_getBalance', [a]],
      ['eth_getStorageAt', [a, '0x0', 'latest']],
      ['eth_getTransactionCount', [a, 'pending']],
      ['eth_getTransactionCount', [a, '0x1']],
      ['eth_getCode', [a, 'latest']],
      ['eth_getProof', [a, [H(h32(1)), '0x2'], 'latest']],
      ['eth_getBlockTransactionCountByHash', [H(h32(0xb1))]],
      ['eth_getBlockTransactionCountByNumber', ['0x1']],
      ['eth_getBlockTransactionCountByNumber', ['0x77']],
      ['eth_call', [{ to: H(CONTRACT), input: '0x01' }, 'latest']],
      ['eth_estimateGas', [{ from: a, to: H(CONTRACT), value: '0x1' }]],
      ['eth_sendRawTransaction', ['0xf86901']],
      ['eth_gasPrice', []],
      ['eth_maxPriorityFeePerGas', []],
      ['eth_feeHistory', ['0x2', 'latest', [20, 30]]],
      ['eth_feeHistory', ['0x2', 'latest', []]],
      ['eth_chainId', []],
      ['eth_syncing', []],
      ['eth_coinbase', []],
      ['eth_blockNumber', []],
      ['net_version', []],
    ];
    for (const [method, params] of cases) assertConforms(method, await ok(method, params));
  });

  it('every method with execution-apis examples decodes the example params', () => {
    const { table } = harness();
    let decoded = 0;
    for (const [name, m] of spec.methods) {
      const mspec = table[name];
      if (mspec === undefined) continue;
      for (const ex of m.examples ?? []) {
        const params = (ex.params ?? []).map((p) => p.value);
        params.forEach((v, i) => assert.doesNotThrow(() => mspec.params[i]!.decode(v, i), `${name} example param ${i}`));
        decoded++;
      }
    }
    assert.ok(decoded >= 25, `decoded ${decoded} examples`);
  });
});

const hexQ = (n: bigint): string => '0x' + n.toString(16);

describe('evmrpc: transaction, receipt and log shapes', () => {
  it('legacy tx: chainId when EIP-155, no yParity/accessList/fee caps', async () => {
    const { ok } = harness();
    const t = (await ok('eth_getTransactionByHash', [H(txLegacy.hash)])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(t), [
      'blockHash', 'blockNumber', 'blockTimestamp', 'from', 'gas', 'gasPrice', 'hash', 'input', 'nonce', 'to',
      'transactionIndex', 'value', 'type', 'chainId', 'v', 'r', 's',
    ]);
    assert.equal(t.type, '0x0');
    assert.equal(t.gasPrice, '0xa');
    assert.equal(t.chainId, hexQ(CHAIN_ID));
    assert.equal(t.v, hexQ(CHAIN_ID * 2n + 35n));
    assert.equal(t.blockTimestamp, hexQ(1_700_000_001n));
    assert.equal(t.input, '0x010203');
    const pre = (await ok('eth_getTransactionByHash', [H(txPreEip155.hash)])) as Record<string, unknown>;
    assert.equal('chainId' in pre, false);
    assert.equal(pre.v, '0x1b');
  });

  it('typed txs: accessList, chainId, yParity; mined type-2 gasPrice is effective, pending is fee cap', async () => {
    const { ok } = harness();
    const t1 = (await ok('eth_getTransactionByHash', [H(txAccessList.hash)])) as Record<string, unknown>;
    assert.deepEqual(t1.accessList, [{ address: H(CONTRACT), storageKeys: [H(h32(1))] }]);
    assert.equal(t1.yParity, '0x1');
    assert.equal('maxFeePerGas' in t1, false);

    // tip 3 + base 7 = 10 > cap 8 → 8; tip 2 + base 7 = 9 < cap 20 → 9
    const created = (await ok('eth_getTransactionByHash', [H(txCreate.hash)])) as Record<string, unknown>;
    assert.equal(created.gasPrice, '0x8');
    assert.equal(created.to, null);
    assert.equal(created.maxFeePerGas, '0x8');
    assert.equal(created.maxPriorityFeePerGas, '0x3');
    const mined = (await ok('eth_getTransactionByHash', [H(txBlock3.hash)])) as Record<string, unknown>;
    assert.equal(mined.gasPrice, '0x9');
    assert.equal(mined.v, '0x0');
    assert.equal(mined.yParity, '0x0');

    const pending = (await ok('eth_getTransactionByHash', [H(txPending.hash)])) as Record<string, unknown>;
    assert.equal(pending.blockHash, null);
    assert.equal(pending.blockNumber, null);
    assert.equal(pending.blockTimestamp, null);
    assert.equal(pending.transactionIndex, null);
    assert.equal(pending.gasPrice, '0x14');
  });

  it('full block transactions equal the by-hash objects', async () => {
    const { ok } = harness();
    const b = (await ok('eth_getBlockByNumber', ['0x1', true])) as { transactions: unknown[] };
    for (const [i, tx] of [txLegacy, txAccessList, txCreate].entries()) {
      assert.deepEqual(b.transactions[i], await ok('eth_getTransactionByHash', [H(tx.hash)]));
    }
  });

  it('receipt fields: status, contractAddress null or created, to null on creation, logs removed:false', async () => {
    const { ok } = harness();
    const legacy = (await ok('eth_getTransactionReceipt', [H(txLegacy.hash)])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(legacy), [...Object.keys(legacy)].sort());
    assert.equal(legacy.status, '0x1');
    assert.equal(legacy.contractAddress, null);
    assert.equal(legacy.effectiveGasPrice, '0xa');
    assert.equal(legacy.type, '0x0');
    assert.deepEqual(legacy.logs, []);
    const failed = (await ok('eth_getTransactionReceipt', [H(txAccessList.hash)])) as Record<string, unknown>;
    assert.equal(failed.status, '0x0');
    assert.equal('vmError' in failed, false);
    const created = (await ok('eth_getTransactionReceipt', [H(txCreate.hash)])) as Record<string, unknown>;
    assert.equal(created.contractAddress, H(CREATED));
    assert.equal(created.to, null);
    assert.equal(created.cumulativeGasUsed, hexQ(21000n + 21000n + 60000n));
    const logs = created.logs as Record<string, unknown>[];
    assert.deepEqual(logs[1], {
      address: H(CREATED),
      topics: [H(TOPIC_C)],
      data: '0xda7a',
      blockNumber: '0x1',
      transactionHash: H(txCreate.hash),
      transactionIndex: '0x2',
      blockHash: H(h32(0xb1)),
      logIndex: '0x1',
      removed: false,
    });
    assertMatchesSchema('Log', logs[1]);
  });
});

describe('evmrpc: web3, net and fixed answers', () => {
  it('answers', async () => {
    const { ok, fails } = harness();
    assert.equal(await ok('web3_clientVersion'), INFO.clientVersion);
    // keccak256("hello") of the DECODED bytes
    assert.equal(await ok('web3_sha3', ['0x68656c6c6f']), '0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8');
    assert.equal(await ok('web3_sha3', ['0x']), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    assert.equal(await ok('net_version'), '9000');
    assert.equal(await ok('net_peerCount'), 0);
    assert.equal(await ok('net_listening'), false);
    assert.equal(await ok('eth_protocolVersion'), '0x41');
    assert.equal(await ok('eth_syncing'), false);
    assert.equal(await ok('eth_chainId'), '0x2328');
    assert.equal(await ok('eth_blockNumber'), '0x3');
    assert.equal(await ok('eth_coinbase'), H(addr(0xee)));
    assert.equal(await ok('eth_gasPrice'), hexQ(1_000_000_007n));
    assert.equal(await ok('eth_maxPriorityFeePerGas'), hexQ(1_000_000_000n));
    assert.equal(await ok('eth_mining'), false);
    assert.equal(await ok('eth_hashrate'), '0x0');
    assert.equal(await ok('eth_getUncleByBlockHashAndIndex', [H(h32(0xb1)), '0x0']), null);
    assert.equal(await ok('eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null);
    assert.equal(await ok('eth_getUncleCountByBlockHash', [H(h32(0xb1))]), '0x0');
    assert.equal(await ok('eth_getUncleCountByBlockNumber', ['0x1']), '0x0');
    assert.equal(await ok('eth_getUncleCountByBlockNumber', ['0x50']), null);
    assert.equal(await ok('eth_getBlockTransactionCountByNumber', ['0x1']), '0x3');
    assert.equal(await ok('eth_getBlockTransactionCountByHash', [H(h32(0xb0))]), '0x0');
    assert.equal(await ok('eth_getBlockTransactionCountByHash', [H(h32(0x55))]), null);
    await fails('eth_getWork', [], -32000, 'not supported');
    assert.equal(await ok('eth_submitWork', ['0x0000000000000001', H(h32(1)), H(h32(2))]), false);
    assert.equal(await ok('eth_submitHashrate', ['0x500000', H(h32(1))]), false);
    await fails('eth_submitWork', ['0x01', H(h32(1)), H(h32(2))], -32602, 'invalid argument 0: hex string has length 2, want 16 for types.BlockNonce');
  });

  it('sendRawTransaction passes the decoded bytes and returns the hash', async () => {
    const { ok, backend } = harness();
    assert.equal(await ok('eth_sendRawTransaction', ['0x02f8']), H(keccak_256(new Uint8Array([2, 0xf8]))));
    assert.deepEqual(backend.callsOf('sendRawTransaction')[0]![1], new Uint8Array([2, 0xf8]));
  });
});

describe('evmrpc: param codecs reject bad hex with -32602 naming the argument', () => {
  const badQuantities: [unknown, string][] = [
    ['0x', 'hex string "0x"'],
    ['0x0400', 'hex number with leading zero digits'],
    ['400', 'hex string without 0x prefix'],
    ['0xzz', 'invalid hex string'],
    ['', 'empty hex string'],
  ];
  const badData: [unknown, string][] = [
    ['0xabc', 'hex string of odd length'],
    ['abcd', 'hex string without 0x prefix'],
    ['0xzz', 'invalid hex string'],
    ['', 'empty hex string'],
  ];

  it('quantities (block numbers, indexes)', async () => {
    const { fails } = harness();
    for (const [v, reason] of badQuantities) {
      await fails('eth_getBlockByNumber', [v, false], -32602, `invalid argument 0: ${reason}`);
      await fails('eth_getTransactionByBlockHashAndIndex', [H(h32(0xb1)), v], -32602, `invalid argument 1: ${reason}`);
      await fails('eth_getBalance', [H(SENDER), v], -32602, `invalid argument 1: ${reason}`);
    }
    await fails('eth_getBlockByNumber', [5, false], -32602, 'invalid argument 0: hex string without 0x prefix');
    await fails('eth_getBlockByNumber', ['0x10000000000000000', false], -32602, 'invalid argument 0: hex number > 64 bits');
    await fails('eth_getBlockByNumber', ['0x8000000000000000', false], -32602, 'invalid argument 0: block number larger than int64');
    await fails('eth_getBalance', [H(SENDER), 7], -32602, 'invalid argument 1: json: cannot unmarshal number into Go value of type string');
  });

  it('data, addresses and hashes', async () => {
    const { fails } = harness();
    for (const [v, reason] of badData) {
      await fails('web3_sha3', [v], -32602, `invalid argument 0: ${reason}`);
      await fails('eth_sendRawTransaction', [v], -32602, `invalid argument 0: ${reason}`);
      // fixed-size values check the length before the digits, as geth does
      const fixedReason = v === '0xzz' ? 'hex string has length 2, want 40 for common.Address' : reason;
      await fails('eth_getBalance', [v, 'latest'], -32602, `invalid argument 0: ${fixedReason}`);
    }
    await fails('eth_getBalance', ['0x' + 'zz'.repeat(20), 'latest'], -32602, 'invalid argument 0: invalid hex string');
    await fails('eth_getTransactionByHash', ['0x' + 'zz'.repeat(32)], -32602, 'invalid argument 0: invalid hex string');
    await fails('eth_getTransactionByHash', ['0x' + '1'.repeat(63)], -32602, 'invalid argument 0: hex string of odd length');
    await fails('eth_getTransactionByHash', ['11'.repeat(32)], -32602, 'invalid argument 0: hex string without 0x prefix');
    await fails('eth_getBalance', ['0x' + '11'.repeat(19), 'latest'], -32602, 'invalid argument 0: hex string has length 38, want 40 for common.Address');
    await fails('eth_getTransactionByHash', ['0x' + '11'.repeat(31)], -32602, 'invalid argument 0: hex string has length 62, want 64 for common.Hash');
    await fails('eth_getBlockByHash', [H(h32(1)), 'yes'], -32602, 'invalid argument 1: json: cannot unmarshal string into Go value of type bool');
    await fails('eth_getBlockByHash', [H(h32(1))], -32602, 'missing value for required argument 1');
  });

  it('storage positions: quantity or up to 32 bytes', async () => {
    const { ok, fails, backend } = harness();
    assert.equal(await ok('eth_getStorageAt', [H(CONTRACT), '0x1a', 'latest']), H(h32(0x11)));
    assert.deepEqual(backend.callsOf('storageAt')[0]![2], Uint8Array.from([...new Uint8Array(31), 0x1a]));
    await ok('eth_getStorageAt', [H(CONTRACT), '0x0001']);
    assert.deepEqual(backend.callsOf('storageAt')[1]![2], Uint8Array.from([...new Uint8Array(31), 1]));
    await ok('eth_getStorageAt', [H(CONTRACT), H(h32(0x22))]);
    assert.deepEqual(backend.callsOf('storageAt')[2]![2], h32(0x22));
    await fails('eth_getStorageAt', [H(CONTRACT), '0x012'], -32602, 'invalid argument 1: hex number with leading zero digits');
    await fails('eth_getStorageAt', [H(CONTRACT), '0x' + '1'.repeat(65)], -32602, 'invalid argument 1: storage key too long (want at most 32 bytes)');
    await fails('eth_getStorageAt', [H(CONTRACT), '12'], -32602, 'invalid argument 1: hex string without 0x prefix');
    await fails('eth_getStorageAt', [H(CONTRACT), '0x'], -32602, 'invalid argument 1: hex string "0x"');
    await fails('eth_getStorageAt', [H(CONTRACT), 1], -32602, 'invalid argument 1: json: cannot unmarshal number into Go value of type string');
  });

  it('call object fields name the struct field like geth', async () => {
    const { fails } = harness();
    await fails('eth_call', [{ from: 'abc' }], -32602,
      'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field TransactionArgs.from of type common.Address');
    await fails('eth_call', [{ gas: '0x0400' }], -32602,
      'invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field TransactionArgs.gas of type hexutil.Uint64');
    await fails('eth_call', [{ value: 1 }], -32602,
      'invalid argument 0: json: cannot unmarshal non-string into Go struct field TransactionArgs.value of type *hexutil.Big');
    await fails('eth_call', [{ input: '0x123' }], -32602,
      'invalid argument 0: json: cannot unmarshal hex string of odd length into Go struct field TransactionArgs.input of type hexutil.Bytes');
    await fails('eth_call', [{ to: '0x1234' }], -32602, 'invalid argument 0: hex string has length 4, want 40 for common.Address');
    await fails('eth_call', [{ nonce: '0x10000000000000000' }], -32602,
      'invalid argument 0: hex number > 64 bits');
    await fails('eth_call', ['0x00'], -32602, 'invalid argument 0: json: cannot unmarshal string into Go value of type ethapi.TransactionArgs');
    await fails('eth_call', [{ accessList: [{ address: H(CONTRACT) }] }], -32602, "invalid argument 0: missing required field 'storageKeys' for AccessTuple");
  });
});

describe('evmrpc: block parameters and EIP-1898', () => {
  it('number, tag, hash string and objects reach the backend as selectors', async () => {
    const { ok, backend } = harness();
    const a = H(SENDER);
    await ok('eth_getBalance', [a, '0x2']);
    await ok('eth_getBalance', [a, 'earliest']);
    await ok('eth_getBalance', [a, H(h32(0xb1))]);
    await ok('eth_getBalance', [a, { blockNumber: '0x1' }]);
    await ok('eth_getBalance', [a, { blockNumber: 'latest' }]);
    await ok('eth_getBalance', [a, { blockHash: H(h32(0xb2)) }]);
    await ok('eth_getBalance', [a, { blockHash: H(h32(0xb2)), requireCanonical: true }]);
    await ok('eth_getBalance', [a, { blockHash: H(h32(0xb2)), blockNumber: null }]);
    await ok('eth_getBalance', [a, 'safe']);
    await ok('eth_getBalance', [a, 'finalized']);
    await ok('eth_getBalance', [a, null]);
    const sels = backend.callsOf('resolveBlock').map((c) => c[1]);
    assert.deepEqual(sels, [
      { kind: 'number', number: 2n },
      { kind: 'tag', tag: 'earliest' },
      { kind: 'hash', hash: h32(0xb1), requireCanonical: false },
      { kind: 'number', number: 1n },
      { kind: 'tag', tag: 'latest' },
      { kind: 'hash', hash: h32(0xb2), requireCanonical: false },
      { kind: 'hash', hash: h32(0xb2), requireCanonical: true },
      { kind: 'hash', hash: h32(0xb2), requireCanonical: false },
      { kind: 'tag', tag: 'safe' },
      { kind: 'tag', tag: 'finalized' },
      { kind: 'tag', tag: 'latest' },
    ]);
    assert.deepEqual(backend.callsOf('balance').map((c) => c[2]), [2n, 0n, 1n, 1n, 3n, 2n, 2n, 2n, 3n, 3n, 3n]);
  });

  it('bad EIP-1898 objects and unknown blocks', async () => {
    const { fails } = harness();
    const a = H(SENDER);
    await fails('eth_getBalance', [a, { blockNumber: '0x1', blockHash: H(h32(0xb1)) }], -32602,
      'invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other');
    await fails('eth_getBalance', [a, {}], -32602, 'invalid argument 1: must specify either BlockHash or BlockNumber');
    await fails('eth_getBalance', [a, { blockHash: '0x1234' }], -32602, 'invalid argument 1: hex string has length 4, want 64 for common.Hash');
    await fails('eth_getBalance', [a, { blockHash: H(h32(0xb1)), requireCanonical: 'yes' }], -32602,
      'invalid argument 1: json: cannot unmarshal string into Go struct field BlockNumberOrHash.requireCanonical of type bool');
    await fails('eth_getBalance', [a, 'pendingx'], -32602, 'invalid argument 1: hex string without 0x prefix');
    await fails('eth_getBalance', [a, '0x' + 'zz'.repeat(32)], -32602, 'invalid argument 1: invalid hex string');
    // a future block or an unknown hash is -32000 like geth
    await fails('eth_getBalance', [a, '0x4'], -32000, 'header not found');
    await fails('eth_getCode', [a, '0x100'], -32000, 'header not found');
    await fails('eth_getTransactionCount', [a, '0x100'], -32000, 'header not found');
    await fails('eth_getStorageAt', [a, '0x0', '0x100'], -32000, 'header not found');
    await fails('eth_getProof', [a, [], '0x100'], -32000, 'header not found');
    await fails('eth_call', [{ to: a }, '0x100'], -32000, 'header not found');
    await fails('eth_getBalance', [a, H(h32(0x99))], -32000, 'header for hash not found');
    await fails('eth_getBalance', [a, { blockHash: H(h32(0x99)) }], -32000, 'header for hash not found');
  });

  it('block-number-only params do not take hashes', async () => {
    const { fails } = harness();
    await fails('eth_getBlockByNumber', [H(h32(0xb1)), false], -32602, 'invalid argument 0: hex number > 64 bits');
    await fails('eth_getBlockByNumber', [{ blockNumber: '0x1' }, false], -32602, 'invalid argument 0: hex string without 0x prefix');
  });

  it('getTransactionCount pending uses the mempool nonce', async () => {
    const { ok, backend } = harness();
    assert.equal(await ok('eth_getTransactionCount', [H(SENDER), 'pending']), '0x2a');
    assert.equal(backend.callsOf('pendingNonce').length, 1);
    assert.equal(await ok('eth_getTransactionCount', [H(SENDER), 'latest']), '0x3');
    assert.equal(backend.callsOf('nonce').length, 1);
  });
});

describe('evmrpc: eth_call and eth_estimateGas', () => {
  it('decodes the call object; input wins over equal data; gas capped and defaulted', async () => {
    const { ok, backend } = harness({ gasCap: 1_000_000n });
    assert.equal(
      await ok('eth_call', [
        {
          from: H(SENDER), to: H(CONTRACT), gas: '0x5208', gasPrice: '0x7', value: '0x10', nonce: '0x3',
          data: '0x1234', input: '0x1234', accessList: [{ address: H(CONTRACT), storageKeys: [H(h32(1))] }], type: '0x01', chainId: '0x2328',
        },
        'latest',
      ]),
      '0xabcd',
    );
    const [, req, n, overrides] = backend.callsOf('call')[0]!;
    assert.deepEqual(req, {
      from: SENDER, to: CONTRACT, gas: 21000n, gasPrice: 7n, value: 16n, nonce: 3n, data: new Uint8Array([0x12, 0x34]),
      accessList: [{ address: CONTRACT, storageKeys: [h32(1)] }], type: 1,
    });
    assert.equal(n, 3n);
    assert.equal(overrides, undefined);

    await ok('eth_call', [{ to: H(CONTRACT), gas: '0xffffffff', Input: '0x99' }]);
    const capped = backend.callsOf('call')[1]![1] as CallRequest;
    assert.equal(capped.gas, 1_000_000n);
    assert.deepEqual(capped.data, new Uint8Array([0x99]), 'field names match case-insensitively like Go');
    await ok('eth_call', [{ to: H(CONTRACT) }]);
    assert.equal((backend.callsOf('call')[2]![1] as CallRequest).gas, 1_000_000n);

    await ok('eth_estimateGas', [{ to: H(CONTRACT) }]);
    assert.equal((backend.callsOf('estimateGas')[0]![1] as CallRequest).gas, undefined, 'estimateGas searches up to the cap itself');
    await ok('eth_estimateGas', [{ to: H(CONTRACT), gas: '0xffffffff' }, { blockNumber: '0x1' }]);
    assert.equal((backend.callsOf('estimateGas')[1]![1] as CallRequest).gas, 1_000_000n);
    assert.equal(backend.callsOf('estimateGas')[1]![2], 1n);
  });

  it('errors: data vs input, fee styles, chain id, deadline', async () => {
    const { fails } = harness({ evmTimeoutMs: 30 });
    await fails('eth_call', [{ data: '0x01', input: '0x02' }], -32602,
      'invalid argument 0: both "data" and "input" are set and not equal. Please use "input" to pass transaction call data');
    await fails('eth_estimateGas', [{ gasPrice: '0x1', maxFeePerGas: '0x2' }], -32000,
      'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
    await fails('eth_call', [{ chainId: '0x1' }], -32000, "chainId does not match node's (have=1, want=9000)");
    const slow = harness({ evmTimeoutMs: 30 });
    slow.backend.hang = true;
    await slow.fails('eth_call', [{ to: H(CONTRACT) }], -32000, 'execution aborted (timeout = 30ms)');
    await slow.fails('eth_estimateGas', [{ to: H(CONTRACT) }], -32000, 'execution aborted (timeout = 30ms)');
  });

  it('state overrides', async () => {
    const { ok, fails, backend } = harness();
    const target = '0x' + 'AbCd'.repeat(10);
    await ok('eth_call', [
      { to: H(CONTRACT) },
      'latest',
      {
        [target]: { balance: '0x64', nonce: '0x2', code: '0x6080', stateDiff: { [H(h32(1))]: H(h32(2)) } },
        [H(SENDER)]: { state: { [H(h32(3))]: H(h32(4)) } },
      },
    ]);
    const overrides = backend.callsOf('call')[0]![3] as StateOverrides;
    const targetBytes = Uint8Array.from(Buffer.from('abcd'.repeat(10), 'hex'));
    assert.deepEqual(overrides, [
      { address: targetBytes, balance: 100n, nonce: 2n, code: new Uint8Array([0x60, 0x80]), stateDiff: [{ slot: h32(1), value: h32(2) }] },
      { address: SENDER, state: [{ slot: h32(3), value: h32(4) }] },
    ]);
    await ok('eth_estimateGas', [{ to: H(CONTRACT) }, 'latest', { [H(SENDER)]: { balance: '0x1' } }]);
    assert.deepEqual(backend.callsOf('estimateGas')[0]![3], [{ address: SENDER, balance: 1n }]);
    // keyed by bytes: an address or a slot spelled twice (hex case differs) is one entry, the last one given (Go's map)
    await ok('eth_call', [
      { to: H(CONTRACT) },
      'latest',
      {
        ['0x' + 'abcd'.repeat(10)]: { balance: '0x1', stateDiff: { ['0x' + 'ab'.repeat(32)]: H(h32(1)), ['0x' + 'AB'.repeat(32)]: H(h32(2)) } },
        [target]: { balance: '0x2' },
      },
    ]);
    assert.deepEqual(backend.callsOf('call')[1]![3], [{ address: targetBytes, balance: 2n }]);
    await ok('eth_call', [{ to: H(CONTRACT) }, 'latest', { [H(SENDER)]: { stateDiff: { ['0x' + 'ab'.repeat(32)]: H(h32(1)), ['0x' + 'AB'.repeat(32)]: H(h32(2)) } } }]);
    assert.deepEqual(backend.callsOf('call')[2]![3], [{ address: SENDER, stateDiff: [{ slot: Uint8Array.from(Buffer.from('ab'.repeat(32), 'hex')), value: h32(2) }] }]);

    const both = { [H(SENDER)]: { state: {}, stateDiff: {} } };
    await fails('eth_call', [{}, 'latest', both], -32602,
      `invalid argument 2: account ${checksumAddress(SENDER)} has both 'state' and 'stateDiff'`);
    await fails('eth_call', [{}, 'latest', { '0x12': {} }], -32602, 'invalid argument 2: hex string has length 2, want 40 for common.Address');
    await fails('eth_call', [{}, 'latest', { [H(SENDER)]: { state: { '0x01': H(h32(1)) } } }], -32602,
      'invalid argument 2: hex string has length 2, want 64 for common.Hash');
    await fails('eth_call', [{}, 'latest', { [H(SENDER)]: { balance: '0x01' } }], -32602,
      'invalid argument 2: json: cannot unmarshal hex number with leading zero digits into Go struct field OverrideAccount.balance of type *hexutil.Big');
    await fails('eth_call', [{}, 'latest', []], -32602, 'invalid argument 2: json: cannot unmarshal array into Go value of type override.StateOverride');
  });

  it('EIP-55 checksum of error texts', () => {
    // the EIP-55 test vector
    const a = Uint8Array.from(Buffer.from('5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 'hex'));
    assert.equal(checksumAddress(a), '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
  });
});

describe('evmrpc: eth_getLogs', () => {
  it('filters by range, address and topics (null wildcard, any-of)', async () => {
    const { ok, backend } = harness();
    const all = (await ok('eth_getLogs', [{ fromBlock: '0x0' }])) as { logIndex: string }[];
    assert.equal(all.length, 3);
    assert.deepEqual(backend.callsOf('getLogs')[0]![1], { fromBlock: 0n, toBlock: 3n, addresses: [], topics: [] });
    assert.equal(((await ok('eth_getLogs', [{}])) as unknown[]).length, 1, 'defaults are latest..latest');
    assert.equal(((await ok('eth_getLogs', [{ fromBlock: '0x0', address: H(CREATED) }])) as unknown[]).length, 2);
    assert.equal(((await ok('eth_getLogs', [{ fromBlock: '0x0', address: [H(CONTRACT), H(CREATED)] }])) as unknown[]).length, 3);
    assert.equal(((await ok('eth_getLogs', [{ fromBlock: '0x0', topics: [H(TOPIC_A)] }])) as unknown[]).length, 2);
    assert.equal(((await ok('eth_getLogs', [{ fromBlock: '0x0', topics: [null, H(TOPIC_B)] }])) as unknown[]).length, 1);
    assert.equal(((await ok('eth_getLogs', [{ fromBlock: '0x0', topics: [[H(TOPIC_C), H(TOPIC_A)]] }])) as unknown[]).length, 3);
    await ok('eth_getLogs', [{ fromBlock: '0x0', topics: [[H(TOPIC_C), null], [], null] }]);
    assert.deepEqual((backend.callsOf('getLogs').at(-1)![1] as LogQuery).topics, [null, null, null]);
    // EIP-234, with the lower-case `blockhash` spelling
    const byHash = (await ok('eth_getLogs', [{ blockhash: H(h32(0xb1)) }])) as unknown[];
    assert.equal(byHash.length, 2);
    assert.deepEqual(backend.callsOf('getLogs').at(-1)![1], { fromBlock: 1n, toBlock: 1n, addresses: [], topics: [] });
    // a range reaching past the head is cut at the head; one wholly beyond it is empty
    await ok('eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x50' }]);
    assert.deepEqual((backend.callsOf('getLogs').at(-1)![1] as LogQuery).toBlock, 3n);
    const calls = backend.callsOf('getLogs').length;
    assert.deepEqual(await ok('eth_getLogs', [{ fromBlock: '0x40', toBlock: '0x50' }]), []);
    assert.equal(backend.callsOf('getLogs').length, calls);
  });

  it('range errors, unknown block hash, caps', async () => {
    const { fails } = harness({ blockRangeCap: 2, logsCap: 1 });
    await fails('eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x1' }], -32602, 'invalid block range params');
    await fails('eth_getLogs', [{ fromBlock: '0x5' }], -32602, 'invalid block range params');
    await fails('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3' }], -32000, 'maximum [from, to] blocks distance: 2');
    await fails('eth_getLogs', [{ blockHash: H(h32(0x99)) }], -32000, 'unknown block');
    await fails('eth_getLogs', [{ blockHash: H(h32(0xb1)), fromBlock: '0x1' }], -32602,
      'invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    await fails('eth_getLogs', [{ blockHash: H(h32(0xb1)) }], -32000, 'query returned more than 1 results');
  });

  it('filter object decoding errors', async () => {
    const { fails } = harness();
    await fails('eth_getLogs', [{ address: '0x1234' }], -32602,
      'invalid argument 0: invalid address: hex has invalid length 2 after decoding; expected 20 for address');
    await fails('eth_getLogs', [{ address: [H(CONTRACT), 'zz'] }], -32602,
      'invalid argument 0: invalid address at index 1: hex string without 0x prefix');
    await fails('eth_getLogs', [{ address: [7] }], -32602, 'invalid argument 0: non-string address at index 0');
    await fails('eth_getLogs', [{ address: 7 }], -32602, 'invalid argument 0: invalid addresses in query');
    await fails('eth_getLogs', [{ topics: [null, null, null, null, null] }], -32602, 'invalid argument 0: exceed max topics');
    await fails('eth_getLogs', [{ topics: [7] }], -32602, 'invalid argument 0: invalid topic(s)');
    await fails('eth_getLogs', [{ topics: [[7]] }], -32602, 'invalid argument 0: invalid topic(s)');
    await fails('eth_getLogs', [{ topics: ['0x1234'] }], -32602,
      'invalid argument 0: hex has invalid length 2 after decoding; expected 32 for topic');
    await fails('eth_getLogs', [{ topics: ['0x123'] }], -32602, 'invalid argument 0: hex string of odd length');
    await fails('eth_getLogs', [{ fromBlock: '0x01' }], -32602, 'invalid argument 0: hex number with leading zero digits');
    await fails('eth_getLogs', ['latest'], -32602, 'invalid argument 0: json: cannot unmarshal string into Go value of type filters.FilterCriteria');
  });
});

describe('evmrpc: eth_feeHistory', () => {
  it('count as quantity, decimal string or number; reward only with percentiles', async () => {
    const { ok, backend } = harness();
    const r = (await ok('eth_feeHistory', ['0x2', 'latest', [10, 90]])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(r), ['oldestBlock', 'reward', 'baseFeePerGas', 'gasUsedRatio']);
    assert.equal(r.oldestBlock, '0x2');
    assert.deepEqual(r.reward, [['0x1', '0x1'], ['0x1', '0x1']]);
    assert.deepEqual(r.baseFeePerGas, ['0x7', '0x7', '0x7']);
    assert.deepEqual(r.gasUsedRatio, [0.25, 0.25]);
    const plain = (await ok('eth_feeHistory', [2, '0x2'])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(plain), ['oldestBlock', 'baseFeePerGas', 'gasUsedRatio']);
    await ok('eth_feeHistory', ['3', 'earliest']);
    // clamped to the blocks that exist
    assert.deepEqual(backend.callsOf('feeHistory').map((c) => [c[1], c[2]]), [[2, 3n], [2, 2n], [1, 0n]]);
    assert.deepEqual(await ok('eth_feeHistory', ['0x0', 'latest']), { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] });
  });

  it('errors', async () => {
    const { fails } = harness({ feeHistoryCap: 4 });
    await fails('eth_feeHistory', ['0x5', 'latest'], -32000, 'FeeHistory user block count 5 higher than 4');
    await fails('eth_feeHistory', ['0x1', '0x9'], -32000, 'request beyond head block: requested 9, head 3');
    await fails('eth_feeHistory', ['0x1', 'latest', [101]], -32000, 'invalid reward percentile: 101.000000');
    await fails('eth_feeHistory', ['0x1', 'latest', [50, 10]], -32000, 'invalid reward percentile: #0:50.000000 >= #1:10.000000');
    await fails('eth_feeHistory', ['0x01', 'latest'], -32602, 'invalid argument 0: hex number with leading zero digits');
    await fails('eth_feeHistory', ['ten', 'latest'], -32602, 'invalid argument 0: invalid hex or decimal integer "ten"');
    await fails('eth_feeHistory', ['0x1', 'latest', ['10']], -32602, 'invalid argument 2: json: cannot unmarshal string into Go value of type float64');
  });
});

describe('evmrpc: eth_getProof', () => {
  it('echoes each key in the form it was given; caps the key count', async () => {
    const { ok, fails, backend } = harness();
    const p = (await ok('eth_getProof', [H(CONTRACT), [H(h32(1)), '0x2', '0x0003'], '0x2'])) as Record<string, unknown>;
    assert.deepEqual(backend.callsOf('proof')[0]!.slice(2), [[h32(1), Uint8Array.from([...new Uint8Array(31), 2]), Uint8Array.from([...new Uint8Array(31), 3])], 2n]);
    assert.deepEqual((p.storageProof as { key: string }[]).map((s) => s.key), [H(h32(1)), '0x2', '0x3']);
    assert.deepEqual(p.accountProof, ['0xf851', '0xe2']);
    assert.equal(p.nonce, '0x3');
    const tooMany = Array.from({ length: 1025 }, () => '0x1');
    await fails('eth_getProof', [H(CONTRACT), tooMany, 'latest'], -32602, 'too many storage keys requested (max 1024, got 1025)');
    await fails('eth_getProof', [H(CONTRACT), '0x1', 'latest'], -32602, 'invalid argument 1: json: cannot unmarshal string into Go value of type []string');
  });
});

describe('evmrpc: formatted answers of committed blocks are cached', () => {
  it('a block, a receipt and a tx are read from the backend once', async () => {
    const { ok, backend } = harness();
    const first = await ok('eth_getBlockByHash', [H(h32(0xb1)), true]);
    assert.deepEqual(await ok('eth_getBlockByHash', [H(h32(0xb1)), true]), first);
    assert.equal(backend.callsOf('blockByHash').length, 1);
    await ok('eth_getBlockByNumber', ['0x1', true]);
    assert.equal(backend.callsOf('blockByNumber').length, 0, 'number → hash index hit');
    // the full cached block answers by-position lookups
    await ok('eth_getTransactionByBlockHashAndIndex', [H(h32(0xb1)), '0x1']);
    assert.equal(backend.callsOf('blockByHash').length, 1);

    await ok('eth_getTransactionReceipt', [H(txCreate.hash)]);
    await ok('eth_getTransactionReceipt', [H(txCreate.hash)]);
    assert.equal(backend.callsOf('receipt').length, 1);
    await ok('eth_getBlockReceipts', ['0x1']);
    await ok('eth_getBlockReceipts', [H(h32(0xb1))]);
    assert.equal(backend.callsOf('blockReceipts').length, 1);

    await ok('eth_getTransactionByHash', [H(txLegacy.hash)]);
    await ok('eth_getTransactionByHash', [H(txLegacy.hash)]);
    assert.equal(backend.callsOf('transactionByHash').length, 0, 'the full block already formatted it');
    await ok('eth_getTransactionByHash', [H(txBlock3.hash)]);
    await ok('eth_getTransactionByHash', [H(txBlock3.hash)]);
    assert.equal(backend.callsOf('transactionByHash').length, 1);
    // a pending tx is never cached
    await ok('eth_getTransactionByHash', [H(txPending.hash)]);
    await ok('eth_getTransactionByHash', [H(txPending.hash)]);
    assert.equal(backend.callsOf('transactionByHash').length, 3);
  });

  it('Lru evicts the least recently used entry', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.get('a'), 1);
    lru.set('c', 3);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.get('c'), 3);
    assert.equal(lru.size, 2);
    assert.throws(() => new Lru(0), RangeError);
  });

  it('Lru bounded by weight evicts the oldest until the sum fits, replacing re-weighs', () => {
    const lru = new Lru<string, string>(10, (_k, v) => v.length);
    lru.set('a', 'xxxx');
    lru.set('b', 'xxxx');
    assert.equal(lru.weight, 8);
    lru.set('c', 'xxx'); // 11 > 10: 'a' goes
    assert.equal(lru.get('a'), undefined);
    assert.deepEqual([lru.size, lru.weight], [2, 7]);
    lru.set('b', 'x'); // replaced: 3 + 1
    assert.deepEqual([lru.size, lru.weight], [2, 4]);
    lru.set('d', 'x'.repeat(20)); // alone over the bound: everything older goes, it stays
    assert.deepEqual([lru.size, lru.weight, lru.get('d')?.length], [1, 20, 20]);
  });
});

describe('evmrpc: helpers', () => {
  it('goDuration prints like Go', () => {
    assert.equal(goDuration(30), '30ms');
    assert.equal(goDuration(5000), '5s');
    assert.equal(goDuration(1500), '1.5s');
    assert.equal(goDuration(90_000), '1m30s');
    assert.equal(goDuration(3_600_000), '1h0m0s');
  });

  it('backend errors pass through unchanged', async () => {
    const backend = new FakeBackend();
    backend.sendRawTransaction = async () => {
      throw txRejected('nonceTooLow', 'nonce too low');
    };
    const t = createEvmMethods(backend, INFO);
    await assert.rejects(async () => t.eth_sendRawTransaction!.handler([new Uint8Array([1])], CTX), {
      kind: 'txRejected',
      message: 'nonce too low',
    });
  });
});
