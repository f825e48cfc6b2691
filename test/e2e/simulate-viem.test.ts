/**
 * eth_simulateV1 as clients use it: viem's `simulateCalls` and `simulateBlocks` against `ferry dev`, and
 * the same raw requests sent to ferry and to the Anvil 1.7.1 binary, whose calls must answer alike
 * (return data, gas, status, logs; hashes aside, as ferry's block hashes are its own: docs/compatibility.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, http, parseEther, type Hex } from 'viem';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';
import { assertConforms } from '../helpers/schema.js';
import { startAnvil, type AnvilNode } from './debug-fixtures.js';

/** returns 42 as a word: PUSH1 42 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN */
const RETURNS_42: Hex = '0x602a60005260206000f3';
/** emits LOG1(topic 0x01) with no data, then returns nothing: PUSH1 1 PUSH1 0 PUSH1 0 LOG1 STOP */
const LOGS_ONE: Hex = '0x600160006000a100';
/** reverts with 4 bytes 0xdeadbeef: PUSH4 deadbeef PUSH1 0 MSTORE PUSH1 4 PUSH1 28 REVERT */
const REVERTS: Hex = '0x63deadbeef6000526004601cfd';
const CONTRACT = '0x00000000000000000000000000000000000c0de1';
const LOGGER = '0x00000000000000000000000000000000000c0de2';
const REVERTER = '0x00000000000000000000000000000000000c0de3';
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

describe('eth_simulateV1 with viem, and beside Anvil', () => {
  let node: FerryNode;
  let anvil: AnvilNode;
  let pub: ReturnType<typeof createPublicClient>;

  before(async () => {
    [node, anvil] = await Promise.all([startFerry({ args: ['--dev'] }), startAnvil()]);
    pub = createPublicClient({ chain: VIEM_CHAIN, transport: http(node.url), cacheTime: 0 });
  });

  after(async () => {
    await anvil?.stop();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('viem simulateCalls: a transfer, a call to overridden code, a revert; state carries between calls', async () => {
    const from = devAddress(0) as Hex;
    const { results } = await pub.simulateCalls({
      account: from,
      calls: [
        { to: devAddress(1) as Hex, value: parseEther('1') },
        { to: CONTRACT, data: '0x' },
        { to: REVERTER, data: '0x' },
      ],
      stateOverrides: [
        { address: CONTRACT, code: RETURNS_42 },
        { address: REVERTER, code: REVERTS },
      ],
    });
    assert.equal(results.length, 3);
    assert.equal(results[0]!.status, 'success');
    assert.equal(results[0]!.gasUsed, 21000n);
    assert.equal(results[1]!.status, 'success');
    assert.equal(BigInt(results[1]!.data), 42n);
    assert.equal(results[2]!.status, 'failure');
    // nothing was committed
    assert.equal(await pub.getCode({ address: CONTRACT }), undefined);
  });

  it('viem simulateBlocks: two blocks with overrides, traceTransfers logs, full transactions', async () => {
    const head = await pub.getBlock();
    const from = devAddress(0) as Hex;
    const blocks = await pub.simulateBlocks({
      blocks: [
        {
          // no gap: geth (and ferry) answer the blocks filling a gap too, which viem does not expect
          blockOverrides: { number: head.number + 1n, time: head.timestamp + 100n },
          stateOverrides: [{ address: LOGGER, code: LOGS_ONE }],
          calls: [
            { account: from, to: devAddress(2) as Hex, value: 7n },
            { account: from, to: LOGGER, data: '0x' },
          ],
        },
        { calls: [{ account: from, to: devAddress(3) as Hex, value: 1n }] },
      ],
      traceTransfers: true,
      returnFullTransactions: true,
    });
    assert.equal(blocks.length, 2);
    const [b1, b2] = blocks;
    assert.equal(b1!.number, head.number + 1n);
    assert.equal(b1!.timestamp, head.timestamp + 100n);
    assert.equal(b2!.number, head.number + 2n);
    assert.equal(b2!.timestamp, head.timestamp + 112n);
    assert.equal(b2!.parentHash, b1!.hash);
    assert.equal(b1!.calls[0]!.logs![0]!.topics[0], TRANSFER_TOPIC);
    assert.equal(b1!.calls[0]!.logs![0]!.address.toLowerCase(), '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee');
    assert.equal(b1!.calls[1]!.logs!.length, 1);
    assert.equal(b1!.calls[1]!.logs![0]!.address.toLowerCase(), LOGGER);
    const tx = b1!.transactions[0] as { from: string; nonce: number };
    assert.equal(tx.from.toLowerCase(), from.toLowerCase());
    // the second block's call sees the first block's nonce bumps
    assert.equal((b2!.transactions[0] as { nonce: number }).nonce, tx.nonce + 2);
  });

  it('a request past the bounds, and blocks out of order, get geth\'s codes', async () => {
    const tooMany = await rpc(node.url, 'eth_simulateV1', [{ blockStateCalls: Array.from({ length: 257 }, () => ({})) }, 'latest']);
    assert.deepEqual(tooMany.error, { code: -38026, message: 'too many blocks' });
    const head = Number(await call<string>(node.url, 'eth_blockNumber'));
    const order = await rpc(node.url, 'eth_simulateV1', [{ blockStateCalls: [{ blockOverrides: { number: `0x${(head + 2).toString(16)}` } }, { blockOverrides: { number: `0x${(head + 1).toString(16)}` } }] }, 'latest']);
    assert.deepEqual(order.error, { code: -38020, message: `block numbers must be in order: ${head + 1} <= ${head + 2}` });
  });

  it('the same requests to ferry and Anvil: equal calls (return data, gas, status, logs)', async () => {
    const from = devAddress(0);
    const requests = [
      {
        blockStateCalls: [
          {
            stateOverrides: { [CONTRACT]: { code: RETURNS_42 }, [LOGGER]: { code: LOGS_ONE }, [REVERTER]: { code: REVERTS } },
            calls: [
              { from, to: devAddress(1), value: '0x1' },
              { from, to: CONTRACT },
              { from, to: LOGGER },
              { from, to: REVERTER },
            ],
          },
        ],
      },
      {
        blockStateCalls: [
          { stateOverrides: { [LOGGER]: { code: LOGS_ONE } }, calls: [{ from, to: LOGGER, value: '0x5' }] },
          { calls: [{ from, to: devAddress(4), value: '0x3' }] },
        ],
        traceTransfers: true,
      },
    ];
    const norm = (blocks: { calls: { returnData: string; gasUsed: string; status: string; logs: { address: string; topics: string[]; data: string }[] }[] }[]) =>
      blocks.map((b) =>
        b.calls.map((c) => ({
          // a failed call: geth (and ferry) answer no return data (its revert data is in `error`), Anvil the revert data
          returnData: c.status === '0x1' ? c.returnData : undefined,
          gasUsed: c.gasUsed,
          status: c.status,
          logs: c.logs.map((l) => ({ address: l.address.toLowerCase(), topics: l.topics, data: l.data })),
        })),
      );
    for (const req of requests) {
      const [ours, theirs] = await Promise.all([call(node.url, 'eth_simulateV1', [req, 'latest']), call(anvil.url, 'eth_simulateV1', [req, 'latest'])]);
      // ferry's answer also validates against the execution-apis result schema (src/eth/execute.yaml)
      assertConforms('eth_simulateV1', ours);
      assert.deepEqual(norm(ours), norm(theirs), JSON.stringify(req));
    }
  });
});
