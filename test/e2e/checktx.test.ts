/**
 * CheckTx over eth_sendRawTransaction on the real node: every rejection with geth's text, and a
 * rejected tx changes nothing (not in the pool, nonce unchanged). The fixed cases are the golden
 * transcripts test/golden/checktx*.json (also replayed by golden.test.ts); this file re-signs each
 * golden tx from its `tx` description, replays the file on its own node and checks the state around
 * every case. The cases that depend on time (base fee, blocks) are here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Transaction, Wallet, getAddress, keccak256, type TransactionRequest } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { GOLDEN_DIR } from '../helpers/paths.js';
import { call, rpc, waitFor, waitForBlock, waitForReceipt, type RpcResponse } from '../helpers/rpc.js';

const CHAIN_ID = 9000;
/** the `unfunded` signer of the golden files */
const UNFUNDED_KEY = '0x' + '00'.repeat(31) + '01';
const DEAD = '0x000000000000000000000000000000000000dEaD';
const GWEI = 10n ** 9n;
/** blocks a queued tx must stay unmined for */
const QUEUED_BLOCKS = 3;
const FAST_BLOCKS = ['--consensus.timeout_commit', '200ms'];

interface TxDescription extends TransactionRequest {
  /** dev account index, or "unfunded" */
  key: number | 'unfunded';
  /** legacy tx signed without EIP-155 */
  unprotected?: boolean;
}

interface CheckTxCase {
  name: string;
  tx?: TxDescription;
  request: { jsonrpc: '2.0'; id: number; method: string; params: unknown[] };
  response: RpcResponse;
}

interface CheckTxGolden {
  description: string;
  args: string[];
  cases: CheckTxCase[];
}

const GOLDEN_FILES = ['checktx.json', 'checktx-min-gas-price.json'];

function loadGolden(file: string): CheckTxGolden {
  return JSON.parse(readFileSync(join(GOLDEN_DIR, file), 'utf8')) as CheckTxGolden;
}

function walletOf(key: TxDescription['key']): Wallet {
  return new Wallet(key === 'unfunded' ? UNFUNDED_KEY : devKeys()[key]!);
}

/** Signs a golden `tx` description (deterministic: RFC 6979). */
async function signDescription(desc: TxDescription): Promise<string> {
  const { key, unprotected, ...fields } = desc;
  const wallet = walletOf(key);
  if (!unprotected) return wallet.signTransaction(fields);
  const tx = Transaction.from(fields as never);
  tx.signature = wallet.signingKey.sign(tx.unsignedHash);
  return tx.serialized;
}

async function post(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return res.json();
}

/** What a sent tx could have changed: the lookup of its hash and the sender's nonces. */
async function stateAround(url: string, hash: string, from: string): Promise<unknown> {
  return {
    lookup: await call(url, 'eth_getTransactionByHash', [hash]),
    pending: await call(url, 'eth_getTransactionCount', [from, 'pending']),
    latest: await call(url, 'eth_getTransactionCount', [from, 'latest']),
  };
}

/** Sends a raw tx and asserts the exact rejection, and that the node's view did not change. */
async function assertRejected(url: string, raw: string, message: string): Promise<void> {
  const { from } = Transaction.from(raw);
  const hash = keccak256(raw);
  const beforeState = await stateAround(url, hash, from!);
  const r = await rpc(url, 'eth_sendRawTransaction', [raw]);
  assert.deepEqual(r.error, { code: -32000, message }, `eth_sendRawTransaction answered ${JSON.stringify(r)}`);
  assert.deepEqual(await stateAround(url, hash, from!), beforeState, 'a rejected tx changes nothing');
}

async function signed(key: number, fields: TransactionRequest): Promise<string> {
  return walletOf(key).signTransaction({ chainId: CHAIN_ID, to: DEAD, value: 1n, gasLimit: 21_000n, ...fields });
}

const nodes: FerryNode[] = [];
after(async () => {
  for (const n of nodes) assert.equal(await n.stop(), 0, 'ferry exits 0 on SIGTERM');
});

async function start(args: string[]): Promise<FerryNode> {
  const n = await startFerry({ args });
  nodes.push(n);
  return n;
}

for (const file of GOLDEN_FILES) {
  const golden = loadGolden(file);
  describe(`checktx: ${file}`, () => {
    let node: FerryNode;
    before(async () => {
      node = await start(golden.args);
    });

    it('each raw tx is its `tx` description, signed', async () => {
      for (const c of golden.cases) {
        if (c.tx === undefined) continue;
        assert.equal(c.request.params[0], await signDescription(c.tx), `${c.name}: the raw tx does not match its description`);
      }
    });

    for (const c of golden.cases) {
      it(c.name, async () => {
        if (c.tx === undefined) {
          assert.deepEqual(await post(node.url, c.request), c.response);
          return;
        }
        const raw = c.request.params[0] as string;
        const hash = keccak256(raw);
        const from = walletOf(c.tx.key).address;
        const beforeState = (await stateAround(node.url, hash, from)) as { lookup: unknown };
        assert.deepEqual(await post(node.url, c.request), c.response);
        const afterState = (await stateAround(node.url, hash, from)) as { lookup: { blockNumber: unknown; from: string } | null };
        if (c.response.error !== undefined) {
          assert.deepEqual(afterState, beforeState, 'a rejected tx changes nothing');
          if (c.response.error.message !== 'already known') assert.equal(beforeState.lookup, null);
        } else {
          assert.equal(c.response.result, hash);
          assert.ok(afterState.lookup !== null, 'an accepted tx is found by hash');
          assert.equal(afterState.lookup.blockNumber, null, 'and is not in a block');
          assert.equal(getAddress(afterState.lookup.from), from);
        }
      });
    }
  });
}

describe('checktx: texts that depend on the chain or on decoding', () => {
  let node: FerryNode;
  before(async () => {
    node = await start(['--consensus.timeout_commit', '1h']);
    await waitForBlock(node.url, 1);
  });

  it('a fee cap under the base fee: geth\'s `max fee per gas less than block base fee` with the next block\'s base fee', async () => {
    const fh = await call<{ baseFeePerGas: string[] }>(node.url, 'eth_feeHistory', ['0x1', 'latest', []]);
    const next = BigInt(fh.baseFeePerGas[1]!);
    assert.ok(next > 1n);
    const from = walletOf(9).address; // geth prints the checksummed address (common.Address.Hex)
    const text = (cap: bigint) => `max fee per gas less than block base fee: address ${from}, maxFeePerGas: ${cap}, baseFee: ${next}`;
    await assertRejected(node.url, await signed(9, { type: 2, nonce: 0, maxFeePerGas: next - 1n, maxPriorityFeePerGas: 1n }), text(next - 1n));
    await assertRejected(node.url, await signed(9, { type: 0, nonce: 0, gasPrice: 1n }), text(1n));
  });

  it('an envelope of an unknown type (0x7f is typed, as in geth): transaction type not supported', async () => {
    for (const raw of ['0x7fc0', '0x7f' + (await signed(9, { type: 2, nonce: 0, maxFeePerGas: 100n * GWEI })).slice(4)]) {
      const r = await rpc(node.url, 'eth_sendRawTransaction', [raw]);
      assert.deepEqual(r.error, { code: -32000, message: 'transaction type not supported' }, raw.slice(0, 10));
    }
  });

  it('an empty or one-byte typed envelope: typed transaction too short', async () => {
    for (const raw of ['0x', '0x01', '0x02']) {
      const r = await rpc(node.url, 'eth_sendRawTransaction', [raw]);
      assert.deepEqual(r.error, { code: -32000, message: 'typed transaction too short' }, raw);
    }
  });

  it('malformed RLP is an `rlp: …` error and changes nothing', async () => {
    const good = await signed(9, { type: 2, nonce: 0, maxFeePerGas: 100n * GWEI });
    const legacy = await signed(9, { type: 0, nonce: 0, gasPrice: 100n * GWEI });
    const malformed = [
      '0xc0', // empty legacy list
      '0xf86901', // list header longer than the input
      '0xdeadbeef',
      '0x02c0', // empty dynamic-fee list
      good.slice(0, -2), // truncated by one byte
      good + '00', // trailing byte
      legacy.slice(0, -2),
    ];
    const from = walletOf(9).address;
    const before = await call(node.url, 'eth_getTransactionCount', [from, 'pending']);
    for (const raw of malformed) {
      const r = await rpc(node.url, 'eth_sendRawTransaction', [raw]);
      assert.equal(r.error?.code, -32000, `${raw.slice(0, 12)}: ${JSON.stringify(r)}`);
      assert.match(r.error!.message, /^rlp: /, raw.slice(0, 12));
      assert.equal(await call(node.url, 'eth_getTransactionByHash', [keccak256(raw)]), null);
    }
    assert.equal(await call(node.url, 'eth_getTransactionCount', [from, 'pending']), before);
    // the well-formed tx still goes in afterwards
    assert.equal((await rpc(node.url, 'eth_sendRawTransaction', [good])).result, keccak256(good));
  });
});

describe('checktx: with blocks', () => {
  let node: FerryNode;
  before(async () => {
    node = await start(FAST_BLOCKS);
  });

  it('a nonce already used by a mined tx: nonce too low', async () => {
    const first = await signed(0, { type: 2, nonce: 0, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI });
    const hash = await call<string>(node.url, 'eth_sendRawTransaction', [first]);
    const receipt = await waitForReceipt(node.url, hash);
    assert.equal(receipt.status, '0x1');
    assert.equal(await call(node.url, 'eth_getTransactionCount', [walletOf(0).address, 'latest']), '0x1');
    // the same nonce, any price, any type
    await assertRejected(node.url, await signed(0, { type: 2, nonce: 0, value: 2n, maxFeePerGas: 200n * GWEI, maxPriorityFeePerGas: 2n * GWEI }), 'nonce too low');
    await assertRejected(node.url, await signed(0, { type: 0, nonce: 0, gasPrice: 100n * GWEI }), 'nonce too low');
    // resending the mined tx itself: it is no longer in the pool, so geth also says nonce too low
    await assertRejected(node.url, first, 'nonce too low');
  });

  it('a queued tx (nonce gap) is not mined until the gap is filled; then both are, in nonce order', async () => {
    const from = walletOf(1).address;
    const late = await signed(1, { type: 2, nonce: 1, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 5n * GWEI });
    const lateHash = await call<string>(node.url, 'eth_sendRawTransaction', [late]);
    const sentAt = Number(BigInt(await call<string>(node.url, 'eth_blockNumber')));
    await waitForBlock(node.url, sentAt + QUEUED_BLOCKS);
    assert.equal(await call(node.url, 'eth_getTransactionReceipt', [lateHash]), null, 'the queued tx is not mined');
    assert.equal(await call(node.url, 'eth_getTransactionCount', [from, 'latest']), '0x0');
    assert.equal(await call(node.url, 'eth_getTransactionCount', [from, 'pending']), '0x0', 'a gap does not advance the pending nonce');
    const pooled = await call<{ hash: string; blockNumber: unknown } | null>(node.url, 'eth_getTransactionByHash', [lateHash]);
    assert.equal(pooled?.hash, lateHash, 'the queued tx is found by hash');
    assert.equal(pooled?.blockNumber, null);

    // a lower tip for the gap-filler: it still goes first
    const early = await signed(1, { type: 2, nonce: 0, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI });
    const earlyHash = await call<string>(node.url, 'eth_sendRawTransaction', [early]);
    const [r0, r1] = [await waitForReceipt(node.url, earlyHash), await waitForReceipt(node.url, lateHash)];
    assert.equal(r0.status, '0x1');
    assert.equal(r1.status, '0x1');
    const at = (r: { blockNumber: string; transactionIndex: string }) => [BigInt(r.blockNumber), BigInt(r.transactionIndex)] as const;
    const [b0, i0] = at(r0);
    const [b1, i1] = at(r1);
    assert.ok(b0 < b1 || (b0 === b1 && i0 < i1), `nonce 0 (block ${b0} #${i0}) is mined before nonce 1 (block ${b1} #${i1})`);
    await waitFor('nonce 2', async () => ((await call(node.url, 'eth_getTransactionCount', [from, 'latest'])) === '0x2' ? true : null));
  });
});
