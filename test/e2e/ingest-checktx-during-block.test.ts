/**
 * Ingestion while a block executes, on the real node: eth_sendRawTransaction is answered between the
 * txs of a block that is still running (the chain thread gives CheckTx a turn every few
 * milliseconds of execution), not only after the whole block is written. The block here holds a few
 * txs that each loop until their gas runs out (hundreds of milliseconds of execution together), so
 * "answered while the block runs" shows as: right after the answer, the chain is still below the
 * block's height, and evm_mine (which answers once its block is committed) has not answered yet.
 * The dev node mines only on request here (automine off); the block's start is seen on Surface B's
 * NewRound event.
 *
 * How long the block runs is not a margin the test relies on: when the probe's answer comes only after
 * the block was committed (execution outran the probe's round trip), the attempt proves nothing either
 * way and is repeated with twice the burners, up to the block gas limit. A build that serves CheckTx
 * only between blocks never answers in time and fails at the limit; a faster EVM only costs an attempt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { Wallet } from 'ethers';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { blockNumber, call, waitForReceipt } from '../helpers/rpc.js';

const GWEI = 10n ** 9n;
/** init code JUMPDEST PUSH1 0 JUMP: loops until the tx's gas is spent (the creation fails, the tx is mined) */
const BURNER_INIT = '0x5b600056';
/** burners in the first attempt (doubled per attempt while they fit the block gas limit) */
const FIRST_BURNERS = 6;
const BURNER_GAS = 1_500_000n;

const sign = (key: string, nonce: number, fields: { to?: string; data?: string; gasLimit: bigint; value?: bigint }): Promise<string> =>
  new Wallet(key).signTransaction({
    type: 2,
    chainId: EVM_CHAIN_ID,
    nonce,
    maxFeePerGas: 100n * GWEI,
    maxPriorityFeePerGas: GWEI,
    ...fields,
  });

describe('ingestion: CheckTx is served while a block executes', () => {
  let node: FerryNode;
  let ws: WebSocket;
  const newRounds: number[] = [];
  let onNewRound: ((height: number) => void) | undefined;

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    assert.equal(await call(node.url, 'evm_setAutomine', [false]), null);
    ws = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const subscribed = new Promise((resolve) => {
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString());
        if (m.id === 'rounds' && m.result && m.result.data === undefined) return resolve(undefined);
        const h = m.result?.data?.value?.height;
        if (h === undefined) return;
        newRounds.push(Number(h));
        onNewRound?.(Number(h));
      });
    });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'rounds', method: 'subscribe', params: { query: "tm.event='NewRound'" } }));
    await subscribed;
  });

  after(async () => {
    ws?.close();
    await node?.stop();
  });

  it('a tx sent after a long block started is answered before that block is committed, and is mined next', async () => {
    const keys = devKeys();
    const gasLimit = BigInt((await call<{ gasLimit: string }>(node.url, 'eth_getBlockByNumber', ['latest', false])).gasLimit);
    const maxBurners = Number(gasLimit / BURNER_GAS);
    let burnerNonce = 0;
    let probeNonce = 0;
    for (let burnerCount = FIRST_BURNERS; ; burnerCount = Math.min(burnerCount * 2, maxBurners)) {
      const height = (await blockNumber(node.url)) + 1;
      const started = new Promise<void>((resolve) => {
        onNewRound = (h) => {
          if (h === height) resolve();
        };
      });
      const burners: string[] = [];
      for (let i = 0; i < burnerCount; i++) {
        burners.push(await call<string>(node.url, 'eth_sendRawTransaction', [await sign(keys[1]!, burnerNonce++, { data: BURNER_INIT, gasLimit: BURNER_GAS })]));
      }
      // signed before the block starts: nothing but the round trip lies between NewRound and the answer
      const probe = await sign(keys[2]!, probeNonce++, { to: '0x' + '42'.repeat(20), value: 1n, gasLimit: 21_000n });
      const events: string[] = [];
      const mining = call(node.url, 'evm_mine', []).then(() => events.push('mined'));
      await started;
      // the block of the burners is running: a transfer from another account now
      const hash = await call<string>(node.url, 'eth_sendRawTransaction', [probe]);
      events.push('answered');
      const atAnswer = await blockNumber(node.url);
      await mining;
      const block = await call<{ transactions: string[] }>(node.url, 'eth_getBlockByNumber', ['0x' + height.toString(16), false]);
      assert.deepEqual(block.transactions, burners, 'the block holds the burners only');
      const burnt = await call<{ status: string }>(node.url, 'eth_getTransactionReceipt', [burners[0]]);
      assert.equal(burnt.status, '0x0', 'a burner runs out of gas');
      // the probe waited in the pool: the next block has it
      await call(node.url, 'evm_mine', []);
      const mined = await waitForReceipt(node.url, hash);
      assert.equal(mined.status, '0x1');
      assert.equal(Number(BigInt(mined.blockNumber)), height + 1);
      if (atAnswer === height - 1) {
        assert.deepEqual(events, ['answered', 'mined'], "the answer came while the burners' block was still executing");
        return;
      }
      // answered after the commit: the block was shorter than the probe's round trip, or CheckTx waited for it
      assert.ok(burnerCount < maxBurners, `with ${burnerCount} burners (the block gas limit) the probe was still answered only after its block was committed`);
    }
  });
});
