/**
 * The chain-thread client (src/node/chainclient.ts) against a stand-in worker thread that speaks the
 * protocol of src/node/protocol.ts: answers are matched to their requests by id, dev controls resolve
 * to their results or to the client's error, the pending map is bounded (the request past
 * MAX_PENDING_CHAIN_REQUESTS is refused, the others still get their answers), and close stops the thread.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ChainClient, MAX_PENDING_CHAIN_REQUESTS } from '../../src/node/chainclient.js';
import { DomainError } from '../../src/lib/errors.js';
import { silentLogger } from '../../src/lib/log.js';
import type { FromChain } from '../../src/node/protocol.js';
import { quietListener } from '../helpers/chainlistener.js';

/**
 * Answers a submit whose first byte is 1 at once (accepted, hash = the raw bytes) and one whose first
 * byte is 2 with a typed refusal (nonce too high); holds the others until `stop`, then accepts them
 * and reports `stopped`. A native tx gets a refused CheckTx response with its typed refusal. Dev controls: `status` answers a status,
 * `setNextTimestamp` answers the backwards-time error, `received` what the messages so far held (and
 * forgets it), anything else an internal error.
 */
const STAND_IN = `
const { parentPort } = require('node:worker_threads');
const held = [];
// what each message held, in arrival order: its type, or a batch's inner types
const received = [];
parentPort.postMessage({ type: 'ready', height: 7n });
parentPort.on('message', (m) => {
  received.push(m.type === 'batch' ? m.messages.map((x) => x.type) : m.type);
  if (m.type === 'batch') m.messages.forEach(handle);
  else handle(m);
});
function handle(m) {
  if (m.type === 'submit') {
    if (m.raw[0] === 1) parentPort.postMessage({ type: 'checked', id: m.id, hash: m.raw });
    else if (m.raw[0] === 2) parentPort.postMessage({ type: 'checked', id: m.id, refused: { kind: 'txRejected', message: 'nonce too high', detail: { reason: 'nonceTooHigh' } } });
    else held.push(m.id);
  } else if (m.type === 'submitNative') {
    const refused = { kind: 'txRejected', message: 'insufficient funds for gas * price + value', detail: { reason: 'insufficientFunds' } };
    const check = { code: 5, log: refused.message, codespace: 'evm', gasWanted: 0n, gasUsed: 0n, data: new Uint8Array(), events: [] };
    parentPort.postMessage({ type: 'checked', id: m.id, refused, check });
  } else if (m.type === 'dev') {
    if (m.op.op === 'status') parentPort.postMessage({ type: 'devReply', id: m.id, result: { automine: true, intervalMs: 0, blockGasLimit: 30n, nextBaseFee: 1n } });
    else if (m.op.op === 'received') parentPort.postMessage({ type: 'devReply', id: m.id, result: received.splice(0) });
    else if (m.op.op === 'setNextTimestamp') parentPort.postMessage({ type: 'devReply', id: m.id, error: { kind: 'domain', error: { kind: 'invalidArgument', message: 'timestamp is in the past', detail: undefined } } });
    else parentPort.postMessage({ type: 'devReply', id: m.id, error: { kind: 'internal', message: 'no engine' } });
  } else if (m.type === 'stop') {
    for (const id of held) parentPort.postMessage({ type: 'checked', id, hash: Uint8Array.of(7) });
    parentPort.postMessage({ type: 'stopped' });
  }
}
`;

async function standIn(seen: FromChain[] = []) {
  const worker = new Worker(STAND_IN, { eval: true });
  return ChainClient.attach(
    worker,
    quietListener(seen),
    silentLogger,
  );
}

describe('ChainClient', () => {
  it('resolves start with the ready height and matches each reply to its request', async () => {
    const seen: FromChain[] = [];
    const { chain, height } = await standIn(seen);
    assert.equal(height, 7n);
    const [a, b] = await Promise.all([chain.submitEvm(Uint8Array.of(1, 2)), chain.submitEvm(Uint8Array.of(1, 3))]);
    assert.deepEqual([[...a], [...b]], [
      [1, 2],
      [1, 3],
    ]);
    // a refusal comes back as the domain error the chain thread threw, its reason kept
    await assert.rejects(chain.submitEvm(Uint8Array.of(2)), (e: unknown) => {
      assert.ok(e instanceof DomainError && e.is('txRejected'));
      assert.deepEqual([e.detail.reason, e.message], ['nonceTooHigh', 'nonce too high']);
      return true;
    });
    // a native tx: the CheckTx response, refusal included (Surface B answers its code and log)
    const check = await chain.checkNative(Uint8Array.of(9), true);
    assert.deepEqual({ code: check.code, log: check.log, codespace: check.codespace }, { code: 5, log: 'insufficient funds for gas * price + value', codespace: 'evm' });
    assert.ok(seen.some((m) => m.type === 'ready'));
    assert.equal(chain.pending(), 0);
    await chain.close();
  });

  it('resolves dev controls to their typed result, and a backwards time to its domain error (invalid argument)', async () => {
    const { chain } = await standIn();
    assert.deepEqual(await chain.dev({ op: 'status' }), { automine: true, intervalMs: 0, blockGasLimit: 30n, nextBaseFee: 1n });
    await assert.rejects(chain.dev({ op: 'setNextTimestamp', seconds: 1n }), (e: unknown) => e instanceof DomainError && e.kind === 'invalidArgument' && /in the past/.test(e.message));
    await assert.rejects(chain.dev({ op: 'setAutomine', enabled: true }), /dev control setAutomine failed: no engine/);
    await chain.close();
  });

  it('sends the CheckTx requests of one turn as one batch, and any other request after them, in order', async () => {
    const { chain } = await standIn();
    const received = () => chain.dev({ op: 'received' } as never) as Promise<unknown>;
    await received();
    const sends = [chain.submitEvm(Uint8Array.of(1, 1)), chain.submitEvm(Uint8Array.of(1, 2)), chain.checkNative(Uint8Array.of(9), true)];
    // a dev control made in the same turn goes after them, in the same message, not before
    const seen = await received();
    await Promise.all(sends);
    assert.deepEqual(seen, [['submit', 'submit', 'submitNative', 'dev']]);
    // one request alone goes as itself
    await chain.submitEvm(Uint8Array.of(1, 3));
    assert.deepEqual(await received(), ['submit', 'dev']);
    await chain.close();
  });

  it('refuses the request past MAX_PENDING_CHAIN_REQUESTS; the waiting ones are still answered', async () => {
    const { chain } = await standIn();
    const held = Array.from({ length: MAX_PENDING_CHAIN_REQUESTS }, () => chain.submitEvm(Uint8Array.of(0)));
    assert.equal(chain.pending(), MAX_PENDING_CHAIN_REQUESTS);
    await assert.rejects(chain.submitEvm(Uint8Array.of(1)), (e: unknown) => e instanceof DomainError && e.kind === 'unavailable' && /busy/.test(e.message));
    await assert.rejects(chain.dev({ op: 'status' }), (e: unknown) => e instanceof DomainError && e.kind === 'unavailable');
    assert.equal(chain.pending(), MAX_PENDING_CHAIN_REQUESTS);
    // stopping answers the held requests before `stopped`
    await chain.close();
    const answers = await Promise.all(held);
    assert.equal(answers.length, MAX_PENDING_CHAIN_REQUESTS);
    assert.ok(answers.every((hash) => hash.length === 1 && hash[0] === 7));
    assert.equal(chain.pending(), 0);
    // after close, a request is refused at once
    await assert.rejects(chain.submitEvm(Uint8Array.of(1)), (e: unknown) => e instanceof DomainError && e.kind === 'unavailable');
  });
});
