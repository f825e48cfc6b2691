/**
 * Conformance: every method of Surface A's eth/web3/net table (src/evmrpc/methods.ts), called on a
 * real node with history (an ERC-20 deployed from Solidity, transfers of each tx type, a reverted
 * tx), and every result validated against the execution-apis result schema of its method
 * (test/vendor/execution-apis, strict where the schema forbids extra fields).
 *
 * Methods execution-apis does not define (web3_*, net_peerCount/listening, eth_protocolVersion,
 * the uncle and proof-of-work methods; Anvil's eth_getAccountInfo) are checked against geth's (Anvil's) result type, written here with
 * the execution-apis component schemas (docs/compatibility.md: net_peerCount is a JSON number).
 *
 * Pending transactions: execution-apis' TransactionInfo requires a block hash, number, timestamp and
 * index, which geth (and ferry) answer as null while a tx is in the pool. Those four must be null,
 * and the rest of the object is validated with them filled in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ContractFactory, Interface, Transaction, Wallet, id, keccak256, solidityPackedKeccak256, zeroPadValue, type TransactionRequest } from 'ethers';
import { createEvmMethods } from '../../src/evmrpc/methods.js';
import type { EvmBackend } from '../../src/evmrpc/backend.js';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, toHex, waitForReceipt, type RpcResponse } from '../helpers/rpc.js';
import { COMPONENT, resultErrors, schemaErrors, spec } from '../helpers/schema.js';
import { compileToken, slotOf } from '../helpers/solc.js';

const CHAIN_ID = 9000n;
const GWEI = 10n ** 9n;
const SUPPLY = 1_000_000n * 10n ** 18n;
const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');
const APPROVAL_TOPIC = id('Approval(address,address,uint256)');
const FEE_PERCENTILES = [10, 50, 90];
/** no block unless a tx arrives (history node) / no block at all after block 1 (pending node) */
const ON_DEMAND_BLOCKS = ['--consensus.timeout_commit', '1h', '--consensus.block_on_tx'];
const NO_BLOCKS = ['--consensus.timeout_commit', '1h'];

/** The table's method names, read from the table itself (built over a backend it never calls). */
const TABLE_METHODS = Object.keys(
  createEvmMethods({} as EvmBackend, { clientVersion: '', gasCap: 0n, blockRangeCap: 0, logsCap: 0, feeHistoryCap: 1, evmTimeoutMs: 0 }),
).sort();

const uint = { $ref: COMPONENT('uint') };
const nullResult = { $ref: COMPONENT('notFound') };
/** geth's result types for the methods execution-apis does not define */
const OWN_RESULT_SCHEMAS: Record<string, object> = {
  web3_clientVersion: { type: 'string', pattern: '^ferry/[^/]+/[^/]+-[^/]+/node' },
  web3_sha3: { $ref: COMPONENT('hash32') },
  net_peerCount: { type: 'integer', minimum: 0 },
  net_listening: { type: 'boolean' },
  eth_protocolVersion: uint,
  eth_getUncleCountByBlockNumber: uint,
  eth_getUncleCountByBlockHash: uint,
  eth_getUncleByBlockNumberAndIndex: nullResult,
  eth_getUncleByBlockHashAndIndex: nullResult,
  eth_mining: { type: 'boolean' },
  eth_hashrate: uint,
  eth_submitWork: { type: 'boolean' },
  eth_submitHashrate: { type: 'boolean' },
  // Anvil's account read (foundry crates/anvil/src/eth/api.rs get_account_info): the three single reads in one object
  eth_getAccountInfo: {
    type: 'object',
    additionalProperties: false,
    required: ['balance', 'nonce', 'code'],
    properties: { balance: uint, nonce: uint, code: { $ref: COMPONENT('bytes') } },
  },
};
/** methods whose answer is an error on ferry, as on geth without a proof-of-work engine */
const ERROR_METHODS = new Set(['eth_getWork']);
const rpcErrorSchema = {
  type: 'object',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
};

interface Case {
  params: unknown[];
  /** the result is a pool tx: block fields null */
  pending?: boolean;
  /** which node: history (default) or pending */
  node?: 'pending';
}

const PENDING_CONTEXT = ['blockHash', 'blockNumber', 'blockTimestamp', 'transactionIndex'] as const;
const ZERO_HASH = '0x' + '00'.repeat(32);

/** Why `result` is not a valid answer of `method` (undefined when it is). */
function whyInvalid(method: string, result: unknown, pending: boolean): string | undefined {
  let value = result;
  if (pending) {
    if (result === null || typeof result !== 'object') return `expected a pending transaction object, got ${JSON.stringify(result)}`;
    const tx = result as Record<string, unknown>;
    for (const k of PENDING_CONTEXT) if (tx[k] !== null) return `pending tx: ${k} must be null, got ${JSON.stringify(tx[k])}`;
    value = { ...tx, blockHash: ZERO_HASH, blockNumber: '0x0', blockTimestamp: '0x0', transactionIndex: '0x0' };
  }
  const own = OWN_RESULT_SCHEMAS[method];
  if (own !== undefined) return schemaErrors(own, value);
  // an empty list matches every branch of a oneOf of lists (eth_getLogs' FilterResults): not ambiguous to a client
  if (Array.isArray(value) && value.length === 0 && resultErrors(method, value) !== undefined && emptyListAllowed(method)) return undefined;
  return resultErrors(method, value);
}

/** The method's result schema is a oneOf whose branches are all lists. */
function emptyListAllowed(method: string): boolean {
  const schema = spec.methods.get(method)?.result?.schema as { $ref?: string; oneOf?: unknown[] } | undefined;
  const resolved = schema?.$ref ? (spec.schemas[schema.$ref.split('/').pop()!] as { oneOf?: unknown[] }) : schema;
  return (resolved?.oneOf ?? []).length > 1 && resolved!.oneOf!.every((b) => (b as { type?: string }).type === 'array');
}

// ------------------------------------------------------------------------------------------------
// history

const token = compileToken();
const tokenIface = new Interface(token.abi);
const wallets = devKeys().map((k) => new Wallet(k));
const nonces = new Map<number, number>();

function nextNonce(signer: number): number {
  const n = nonces.get(signer) ?? 0;
  nonces.set(signer, n + 1);
  return n;
}

/** Signs a tx of `type` from dev account `signer`, with the next nonce and explicit gas and fees. */
async function sign(signer: number, type: 0 | 1 | 2, fields: TransactionRequest): Promise<string> {
  const fees = type === 2 ? { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 2n * GWEI } : { gasPrice: 50n * GWEI };
  return wallets[signer]!.signTransaction({
    type,
    chainId: CHAIN_ID,
    nonce: nextNonce(signer),
    gasLimit: 200_000n,
    ...(type === 1 ? { accessList: [] } : {}),
    ...fees,
    ...fields,
  });
}

interface History {
  tokenAddress: string;
  deployBlock: string;
  deployTx: string;
  /** mined txs: one per type sending ETH, one per type calling the token, the reverted one */
  mined: { hash: string; block: string; blockHash: string; index: string }[];
  revertTx: string;
  /** a block with several txs */
  busyBlock: string;
  busyBlockHash: string;
  /** pool txs on the pending node, one per type */
  pendingTxs: string[];
  /** a raw tx for eth_sendRawTransaction on the pending node */
  freshRaw: string;
}

async function send(url: string, raw: string): Promise<string> {
  return call<string>(url, 'eth_sendRawTransaction', [raw]);
}

async function buildHistory(h: FerryNode, p: FerryNode): Promise<History> {
  const mined: History['mined'] = [];
  const record = async (hash: string) => {
    const r = await waitForReceipt(h.url, hash);
    mined.push({ hash, block: r.blockNumber, blockHash: r.blockHash, index: r.transactionIndex });
    return r;
  };
  const deployData = (await new ContractFactory(token.abi, token.bytecode).getDeployTransaction('Ferry Token', 'FRY', SUPPLY)).data;
  const deployTx = await send(h.url, await sign(0, 2, { data: deployData, gasLimit: 2_000_000n }));
  const deployed = await record(deployTx);
  assert.equal(deployed.status, '0x1');
  const tokenAddress: string = deployed.contractAddress;

  for (const type of [0, 1, 2] as const) {
    await record(await send(h.url, await sign(1, type, { to: devAddress(5), value: 10n ** 15n + BigInt(type), gasLimit: 21_000n })));
    const data = tokenIface.encodeFunctionData('transfer', [devAddress(6 + (type % 2)), 1000n + BigInt(type)]);
    await record(await send(h.url, await sign(0, type, { to: tokenAddress, data })));
  }
  await record(await send(h.url, await sign(0, 2, { to: tokenAddress, data: tokenIface.encodeFunctionData('approve', [devAddress(3), 5n]) })));
  // reverts on chain: dev 4 holds no tokens ("insufficient balance")
  const revertTx = await send(h.url, await sign(4, 2, { to: tokenAddress, data: tokenIface.encodeFunctionData('transfer', [devAddress(3), 1n]) }));
  const reverted = await record(revertTx);
  assert.equal(reverted.status, '0x0');

  // several txs in one block: one batch request, one block-on-tx block
  const batch = [
    await sign(2, 2, { to: devAddress(9), value: 1n, gasLimit: 21_000n }),
    await sign(6, 2, { to: tokenAddress, data: tokenIface.encodeFunctionData('transfer', [devAddress(9), 1n]) }),
    await sign(3, 0, { to: devAddress(9), value: 2n, gasLimit: 21_000n }),
  ];
  const res = await fetch(h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(batch.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] }))),
  });
  const answers = (await res.json()) as RpcResponse<string>[];
  let busyBlock = '0x0';
  let busyBlockHash = '';
  let most = 0;
  for (const a of answers) {
    assert.ok(a.result, JSON.stringify(a));
    const r = await record(a.result);
    const count = Number(await call(h.url, 'eth_getBlockTransactionCountByNumber', [r.blockNumber]));
    if (count > most) [most, busyBlock, busyBlockHash] = [count, r.blockNumber, r.blockHash];
  }

  // the pending node: one tx of each type stays in its pool
  const pendingTxs: string[] = [];
  nonces.set(5, 0);
  for (const type of [0, 1, 2] as const) {
    pendingTxs.push(await send(p.url, await sign(5, type, { to: devAddress(1), value: 7n, gasLimit: 21_000n })));
  }
  // and a contract creation
  pendingTxs.push(await send(p.url, await sign(5, 2, { data: deployData, gasLimit: 2_000_000n })));
  const freshRaw = await sign(8, 2, { to: devAddress(1), value: 1n, gasLimit: 21_000n });
  return { tokenAddress, deployBlock: deployed.blockNumber, deployTx, mined, revertTx, busyBlock, busyBlockHash, pendingTxs, freshRaw };
}

// ------------------------------------------------------------------------------------------------
// the cases

function casesFor(hist: History, latest: string): Record<string, Case[]> {
  const a0 = devAddress(0);
  const t = hist.tokenAddress;
  const byHash = (blockHash: string, requireCanonical?: boolean) => (requireCanonical === undefined ? { blockHash } : { blockHash, requireCanonical });
  const deployHash = hist.mined[0]!.blockHash;
  const balanceKey = solidityPackedKeccak256(['uint256', 'uint256'], [a0, slotOf(token, 'balanceOf')]);
  const slots = [toHex(slotOf(token, 'totalSupply')), balanceKey, toHex(99n)];
  const balanceOfCall = { to: t, input: tokenIface.encodeFunctionData('balanceOf', [a0]) };
  const blockSelectors: unknown[] = ['latest', 'earliest', 'pending', 'safe', 'finalized', hist.deployBlock, { blockNumber: hist.deployBlock }, byHash(deployHash), byHash(deployHash, true)];
  const minedTx = hist.mined.map((m) => ({ params: [m.hash] }));
  const old = toHex(BigInt(hist.deployBlock) - 1n);

  return {
    web3_clientVersion: [{ params: [] }],
    web3_sha3: [{ params: ['0x68656c6c6f'] }, { params: ['0x'] }],
    net_version: [{ params: [] }],
    net_peerCount: [{ params: [] }],
    net_listening: [{ params: [] }],
    eth_protocolVersion: [{ params: [] }],
    eth_syncing: [{ params: [] }],
    eth_chainId: [{ params: [] }],
    eth_coinbase: [{ params: [] }],
    eth_blockNumber: [{ params: [] }],
    eth_gasPrice: [{ params: [] }],
    eth_maxPriorityFeePerGas: [{ params: [] }],
    eth_feeHistory: [
      { params: [toHex(4), 'latest', FEE_PERCENTILES] },
      { params: [latest, 'latest', [0, 25, 50, 75, 100]] },
      { params: ['0x2', hist.busyBlock, [50]] },
      { params: ['0x1', 'earliest', []] },
      { params: [toHex(3), 'latest'] },
    ],
    eth_getBalance: blockSelectors.map((b) => ({ params: [a0, b] })).concat([{ params: [devAddress(5), old] }, { params: ['0x' + '42'.repeat(20), 'latest'] }]),
    eth_getTransactionCount: [{ params: [a0, 'latest'] }, { params: [a0, 'pending'] }, { params: [a0, old] }, { params: [a0, byHash(deployHash, false)] }],
    eth_getCode: [{ params: [t, 'latest'] }, { params: [t, old] }, { params: [t, byHash(deployHash)] }, { params: [a0, 'latest'] }],
    eth_getAccountInfo: [{ params: [t, 'latest'] }, { params: [a0, old] }, { params: [a0, 'pending'] }, { params: ['0x' + '42'.repeat(20), 'earliest'] }],
    eth_getStorageAt: [
      { params: [t, slots[0], 'latest'] },
      { params: [t, balanceKey, hist.deployBlock] },
      { params: [t, slots[0], old] },
      { params: [t, '0x0', { blockNumber: latest }] },
    ],
    eth_getProof: [
      { params: [t, slots, hist.deployBlock] },
      { params: [t, [balanceKey], byHash(deployHash)] },
      { params: [t, [], old] },
      { params: [a0, [], 'latest'] },
      { params: ['0x' + '42'.repeat(20), [slots[0]], 'earliest'] },
    ],
    eth_getBlockByNumber: ['latest', 'earliest', 'pending', 'safe', 'finalized', hist.deployBlock, hist.busyBlock, '0x1']
      .flatMap((b) => [{ params: [b, false] }, { params: [b, true] }])
      .concat([{ params: [toHex(BigInt(latest) + 100n), true] }]),
    eth_getBlockByHash: [{ params: [hist.busyBlockHash, true] }, { params: [hist.busyBlockHash, false] }, { params: [deployHash, true] }, { params: [ZERO_HASH, false] }],
    eth_getBlockTransactionCountByNumber: [{ params: [hist.busyBlock] }, { params: ['latest'] }, { params: ['earliest'] }],
    eth_getBlockTransactionCountByHash: [{ params: [hist.busyBlockHash] }, { params: [deployHash] }],
    eth_getBlockReceipts: [
      { params: [hist.busyBlock] },
      { params: [hist.deployBlock] },
      { params: [byHash(hist.busyBlockHash)] },
      { params: [hist.mined.find((m) => m.hash === hist.revertTx)!.block] },
      { params: ['latest'] },
      { params: ['earliest'] },
    ],
    eth_getUncleCountByBlockNumber: [{ params: ['latest'] }, { params: [hist.deployBlock] }],
    eth_getUncleCountByBlockHash: [{ params: [deployHash] }],
    eth_getUncleByBlockNumberAndIndex: [{ params: ['latest', '0x0'] }],
    eth_getUncleByBlockHashAndIndex: [{ params: [deployHash, '0x0'] }],
    eth_getTransactionByHash: [
      ...minedTx,
      { params: [ZERO_HASH] },
      ...hist.pendingTxs.map((h) => ({ params: [h], pending: true, node: 'pending' as const })),
    ],
    eth_getTransactionByBlockHashAndIndex: hist.mined.map((m) => ({ params: [m.blockHash, m.index] })).concat([{ params: [deployHash, '0x9'] }]),
    eth_getTransactionByBlockNumberAndIndex: hist.mined.map((m) => ({ params: [m.block, m.index] })).concat([{ params: ['latest', '0x0'] }]),
    eth_getTransactionReceipt: [...minedTx, ...hist.pendingTxs.map((h) => ({ params: [h], node: 'pending' as const }))],
    eth_sendRawTransaction: [{ params: [hist.freshRaw], node: 'pending' }],
    eth_call: [
      { params: [balanceOfCall, 'latest'] },
      { params: [balanceOfCall, hist.deployBlock] },
      { params: [balanceOfCall, byHash(deployHash, true)] },
      { params: [{ ...balanceOfCall, from: a0, gas: '0x100000', maxFeePerGas: toHex(100n * GWEI) }, 'pending'] },
      { params: [{ from: a0, to: devAddress(1), value: '0x1' }, 'latest', { [a0]: { balance: '0x1000000000000000' } }] },
      { params: [{ to: t, data: tokenIface.encodeFunctionData('name') }] },
    ],
    eth_estimateGas: [
      { params: [{ from: a0, to: devAddress(1), value: '0x1' }] },
      { params: [{ from: a0, to: t, input: tokenIface.encodeFunctionData('transfer', [devAddress(1), 1n]) }, 'latest'] },
      { params: [{ from: a0, data: token.bytecode + tokenIface.encodeDeploy(['A', 'B', 1n]).slice(2) }, hist.deployBlock] },
    ],
    eth_getLogs: [
      { params: [{ fromBlock: '0x0', toBlock: 'latest', address: t }] },
      { params: [{ blockHash: hist.busyBlockHash }] },
      { params: [{ blockHash: deployHash, topics: [TRANSFER_TOPIC] }] },
      { params: [{ fromBlock: hist.deployBlock, address: [t], topics: [[TRANSFER_TOPIC, APPROVAL_TOPIC], null, zeroPadValue(devAddress(6), 32)] }] },
      { params: [{ fromBlock: 'earliest', toBlock: 'earliest' }] },
    ],
    eth_mining: [{ params: [] }],
    eth_hashrate: [{ params: [] }],
    eth_getWork: [{ params: [] }],
    eth_submitWork: [{ params: ['0x0000000000000001', ZERO_HASH, ZERO_HASH] }],
    eth_submitHashrate: [{ params: ['0x500000', '0x' + '59'.repeat(32)] }],
  };
}

// ------------------------------------------------------------------------------------------------

describe('conformance: every eth/web3/net result validates against execution-apis', () => {
  let history: FerryNode;
  let pool: FerryNode;
  let cases: Record<string, Case[]>;
  let hist: History;

  before(async () => {
    [history, pool] = await Promise.all([startFerry({ args: ON_DEMAND_BLOCKS }), startFerry({ args: NO_BLOCKS })]);
    hist = await buildHistory(history, pool);
    cases = casesFor(hist, await call<string>(history.url, 'eth_blockNumber'));
  });

  after(async () => {
    for (const n of [history, pool]) if (n) assert.equal(await n.stop(), 0, 'ferry exits 0 on SIGTERM');
  });

  it('has a result schema (execution-apis or geth\'s type) for every method of the table', () => {
    const missing = TABLE_METHODS.filter((m) => !ERROR_METHODS.has(m) && OWN_RESULT_SCHEMAS[m] === undefined && !spec.methods.get(m)?.result);
    assert.deepEqual(missing, []);
    const redundant = Object.keys(OWN_RESULT_SCHEMAS).filter((m) => spec.methods.get(m)?.result);
    assert.deepEqual(redundant, [], 'execution-apis defines these now: use its schema');
  });

  it('has cases for every method of the table', () => {
    assert.deepEqual(TABLE_METHODS.filter((m) => !(cases[m]?.length)), []);
    assert.deepEqual(Object.keys(cases).filter((m) => !TABLE_METHODS.includes(m)), [], 'cases for methods the table lacks');
  });

  it('the history is what the cases assume', async () => {
    assert.ok(Number(await call(history.url, 'eth_getBlockTransactionCountByNumber', [hist.busyBlock])) >= 2, 'a block with several txs');
    for (const h of hist.pendingTxs) {
      const tx = await call<{ blockNumber: unknown } | null>(pool.url, 'eth_getTransactionByHash', [h]);
      assert.equal(tx?.blockNumber, null, `${h} is still pending`);
    }
    const types = new Set<string>();
    for (const m of hist.mined) types.add((await call<{ type: string }>(history.url, 'eth_getTransactionByHash', [m.hash])).type);
    assert.deepEqual([...types].sort(), ['0x0', '0x1', '0x2']);
  });

  for (const method of TABLE_METHODS) {
    it(method, async () => {
      const failures: string[] = [];
      for (const c of cases[method] ?? []) {
        const url = c.node === 'pending' ? pool.url : history.url;
        const r = await rpc(url, method, c.params);
        const where = `${method}(${JSON.stringify(c.params)})`;
        if (ERROR_METHODS.has(method)) {
          if (r.error === undefined) failures.push(`${where}: expected an error, got ${JSON.stringify(r.result)}`);
          else if (schemaErrors(rpcErrorSchema, r.error)) failures.push(`${where}: malformed error ${JSON.stringify(r.error)}`);
          continue;
        }
        if (r.error !== undefined) {
          failures.push(`${where}: error ${JSON.stringify(r.error)}`);
          continue;
        }
        const why = whyInvalid(method, r.result, c.pending === true);
        if (why !== undefined) failures.push(`${where}: ${why}\n  result: ${JSON.stringify(r.result).slice(0, 2000)}`);
      }
      assert.deepEqual(failures, []);
    });
  }

  it('pending lookups are the txs that were sent (not just well-formed)', async () => {
    for (const h of hist.pendingTxs) {
      const tx = await call<Record<string, string>>(pool.url, 'eth_getTransactionByHash', [h]);
      assert.equal(tx.hash, h);
      assert.equal(tx.from.toLowerCase(), wallets[5]!.address.toLowerCase());
    }
    const fresh = Transaction.from(hist.freshRaw);
    const sent = await call<{ hash: string; nonce: string } | null>(pool.url, 'eth_getTransactionByHash', [keccak256(hist.freshRaw)]);
    assert.equal(sent?.nonce, toHex(fresh.nonce), 'the tx of the eth_sendRawTransaction case is in the pool');
  });
});
