/**
 * Surface B's error map (src/cometrpc/errors.ts) and the kinds its routes, the event bus, the
 * consensus reader and the query parser throw: each kind answers CometBFT's wire shape, a bug answers
 * "internal error" and is reported, a param error depends on the transport, and the throw sites say
 * what went wrong by kind (not by a wire number).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ConsensusBackend } from '../../src/cometrpc/backend.js';
import { BUG_ERROR, COMET_ERRORS, cometError, methodNotFoundError, paramErrorAnswer } from '../../src/cometrpc/errors.js';
import { EventBus } from '../../src/cometrpc/events.js';
import { ParamError } from '../../src/cometrpc/params.js';
import type { CometContext } from '../../src/cometrpc/route.js';
import { createCometRoutes } from '../../src/cometrpc/routes.js';
import { ConsensusReader } from '../../src/consensus/reader.js';
import { QuerySyntaxError, compileQuery, parseQuery } from '../../src/eventquery/index.js';
import { DomainError, type ErrorDetails, type ErrorKind } from '../../src/lib/errors.js';
import { EventIndex, SearchTooBroadError } from '../../src/store/eventindex.js';
import { Store } from '../../src/store/store.js';

/** one sample error of every kind (a Record over ErrorKind: a new kind must be added here too) */
const SAMPLE_DETAILS: { [K in ErrorKind]: ErrorDetails[K] } = {
  invalidArgument: undefined,
  invalidRequest: undefined,
  methodNotFound: { method: 'nope' },
  unauthorized: undefined,
  notFound: undefined,
  limitExceeded: undefined,
  resultTooLarge: undefined,
  reverted: { data: new Uint8Array([1]) },
  executionFailed: undefined,
  txRejected: { reason: 'underpriced' },
  timeout: undefined,
  notIncluded: { txHash: new Uint8Array(32) },
  cancelled: undefined,
  unavailable: undefined,
  unsupported: undefined,
  pruned: { what: 'state' },
  corrupt: undefined,
  badConfig: { key: 'rpc.laddr' },
  simulateRejected: { reason: 'blockGasLimit' },
};

/** the kind a call throws, or 'none' */
function kindOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof DomainError ? `${e.kind}: ${e.message}` : `not a DomainError: ${String(e)}`;
  }
  return 'none';
}

describe('Surface B error map', () => {
  it('maps every kind: -32603 "Internal error" with the text as data (methodNotFound: -32601)', () => {
    assert.deepEqual(Object.keys(COMET_ERRORS).sort(), Object.keys(SAMPLE_DETAILS).sort());
    for (const kind of Object.keys(SAMPLE_DETAILS) as ErrorKind[]) {
      const e = new DomainError(kind, `text of ${kind}`, SAMPLE_DETAILS[kind]);
      const wire = cometError(e, () => assert.fail(`${kind} reported as a bug`));
      if (kind === 'methodNotFound') assert.deepEqual(wire, { code: -32601, message: 'Method not found', data: '' });
      else assert.deepEqual(wire, { code: -32603, message: 'Internal error', data: `text of ${kind}` }, kind);
    }
    assert.deepEqual(methodNotFoundError('x'), { code: -32601, message: 'Method not found', data: '' });
  });

  it('a thrown value that is not a DomainError is a bug: reported, answered without its text', () => {
    const bugs: unknown[] = [];
    const err = new TypeError('secret library text');
    assert.equal(cometError(err, (b) => bugs.push(b)), BUG_ERROR);
    assert.deepEqual(bugs, [err]);
    assert.deepEqual(BUG_ERROR, { code: -32603, message: 'Internal error', data: 'internal error' });
  });

  it('a param error: -32602 over HTTP and URI, -32603 over WebSocket, with the conversion prefix', () => {
    const e = new ParamError('bad');
    assert.ok(e instanceof DomainError && e.is('invalidArgument'));
    assert.deepEqual(paramErrorAnswer('json', e), { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: bad' });
    assert.deepEqual(paramErrorAnswer('uri', e), { code: -32602, message: 'Invalid params', data: 'error converting http params to arguments: bad' });
    assert.deepEqual(paramErrorAnswer('ws', e), { code: -32603, message: 'Internal error', data: 'error converting json params to arguments: bad' });
  });
});

describe('Surface B throw sites throw kinds', () => {
  it('the query language: a syntax error is an invalidArgument with CometBFT\'s text', () => {
    assert.equal(kindOf(() => compileQuery('tm.event =')), 'invalidArgument: offset 10: EOF');
    assert.ok(new QuerySyntaxError('x') instanceof DomainError);
    assert.ok(new SearchTooBroadError().is('limitExceeded'));
  });

  it('the consensus reader: a bad tx.hash is an invalidArgument', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-cometerr-'));
    const store = new Store(join(dir, 'db.sqlite'));
    after(() => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    new EventIndex(store.db, { writer: true }); // creates the index tables
    const reader = new ConsensusReader(store, { genesisValidators: [], initialHeight: 1n });
    assert.equal(
      kindOf(() => reader.searchTxs(parseQuery("tx.hash = 'zz'"))),
      "invalidArgument: error during searching for a hash in the query: encoding/hex: invalid byte: U+007A 'z'",
    );
    assert.equal(kindOf(() => reader.searchTxs(parseQuery("tx.hash = ''"))), 'invalidArgument: error while retrieving the result: transaction hash cannot be empty');
  });

  it('routes and the event bus: not found, bad arguments, limits and what ferry does not do', () => {
    const blocks = { latestHeight: () => 3n, baseHeight: () => 1n, block: () => undefined, heightByHash: () => undefined, validators: () => undefined };
    const txs = { tx: () => undefined, txAt: () => undefined, txProof: () => undefined, searchTxs: () => [], searchBlocks: () => [] };
    const backend = { blocks, txs, node: { genesisJson: '{"a":1}' } } as unknown as ConsensusBackend;
    const bus = new EventBus(blocks, { maxClients: 1, maxPerClient: 1 });
    const table = createCometRoutes(backend, bus, { unsafe: true, timeoutBroadcastTxCommitMs: 1000, timeoutCommitMs: 1000 });
    const ctx: CometContext = { transport: 'http', authenticated: false, remoteAddr: '1.2.3.4:5', requestId: 1 };
    const call = (name: string, ...args: unknown[]) => kindOf(() => table[name]!.handler(args, ctx));
    assert.equal(call('block', 0n), 'invalidArgument: height must be greater than 0, but got 0');
    assert.equal(call('block', 4n), 'notFound: height 4 must be less than or equal to the current blockchain height 3');
    assert.equal(call('block_results', 2n), 'notFound: could not find results for height #2');
    assert.equal(call('tx', new Uint8Array([0xab]), false), 'notFound: tx (AB) not found');
    assert.equal(call('tx_search', 'x'.repeat(513), false, undefined, undefined, ''), 'limitExceeded: maximum query length exceeded');
    assert.equal(call('tx_search', 'tx.height = 1', false, undefined, undefined, 'up'), 'invalidArgument: expected order_by to be either `asc` or `desc` or empty');
    assert.equal(call('validators', 2n, undefined, undefined), 'notFound: could not find validator set for height #2');
    assert.equal(call('genesis_chunked', 1n), 'notFound: there are 0 chunks, 1 is invalid');
    assert.equal(call('dial_seeds', []), 'invalidArgument: no seeds provided');
    assert.match(call('dial_peers', ['a@b:1'], false, false, false), /^unsupported: ferry runs a single node/);
    assert.match(call('unsafe_flush_mempool'), /^unsupported: /);
    assert.match(call('broadcast_evidence', { type: 'tendermint/DuplicateVoteEvidence', value: {} }), /^unsupported: failed to add evidence/);
    assert.equal(call('subscribe', "tm.event='Tx'"), 'invalidRequest: subscribe is only available over WebSocket');
    assert.equal(call('unsubscribe', 'a ='), 'invalidArgument: failed to parse query: offset 3: EOF');
    assert.equal(call('unsubscribe_all'), 'notFound: subscription not found');
    bus.prepare('1.2.3.4:5', "tm.event='Tx'");
    bus.add({ clientId: '1.2.3.4:5', text: "tm.event='Tx'", key: "tm.event = 'Tx'", query: compileQuery("tm.event='Tx'"), eventType: 'Tx', deliver: () => undefined });
    assert.equal(kindOf(() => bus.prepare('1.2.3.4:5', "tm.event='NewBlock'")), 'limitExceeded: max_subscriptions_per_client 1 reached');
    assert.equal(kindOf(() => bus.prepare('6.7.8.9:1', "tm.event='NewBlock'")), 'limitExceeded: max_subscription_clients 1 reached');
  });
});
