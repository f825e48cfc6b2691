/**
 * Surface B without a node: CometBFT's JSON encodings (against the reference examples), the URI and
 * JSON-RPC param rules, the envelope's quirks, the kv indexer's search semantics over the real
 * SQLite index, and the event bus — matching, the begin_block/end_block key forms, and cancelling a
 * subscriber that stops reading.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { CometBlockRecord, ConsensusBackend, Header } from '../../src/cometrpc/backend.js';
import { CometEnvelope } from '../../src/cometrpc/envelope.js';
import { EMPTY_EXEC_TX_RESULT, formatTime, headerJson, execTxResultJson, eventJson, resultTxJson, blockResultsJson } from '../../src/cometrpc/format.js';
import { ParamError, boolParam, bytesParam, goJsonError, hexBytesParam, int64Param, intParam, stringParam } from '../../src/cometrpc/params.js';
import type { CometRoute } from '../../src/cometrpc/routes.js';
import { notFound } from '../../src/lib/errors.js';
import { CometService, OUT_OF_CAPACITY } from '../../src/cometrpc/service.js';
import { ConsensusReader } from '../../src/consensus/reader.js';
import { parseQuery } from '../../src/eventquery/index.js';
import { EventIndex } from '../../src/store/eventindex.js';
import { Store } from '../../src/store/store.js';

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const E3 = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

describe('cometrpc format (CometBFT JSON encodings)', () => {
  it('times: RFC3339Nano in UTC, trailing zeros trimmed', () => {
    assert.equal(formatTime({ seconds: 1704067204n, nanos: 900_000_000 }), '2024-01-01T00:00:04.9Z');
    assert.equal(formatTime({ seconds: 1704067209n, nanos: 2000 }), '2024-01-01T00:00:09.000002Z');
    assert.equal(formatTime({ seconds: 1704067200n, nanos: 0 }), '2024-01-01T00:00:00Z');
    assert.equal(formatTime({ seconds: -62135596800n, nanos: 0 }), '0001-01-01T00:00:00Z');
  });

  it('a header exactly as the reference example (field order, upper hex, int64 as strings)', () => {
    const h: Header = {
      version: { block: 11n, app: 0n },
      chainId: 'test-chain',
      height: 2n,
      time: { seconds: 1704067204n, nanos: 900_000_000 },
      lastBlockId: { hash: hex('20A29F8F61EC8BAFCD7E2D6C6D80DDF39DAEC2389708C88C61DADB0FFB9A964F'), partSetHeader: { total: 1, hash: hex('5A5384050A8BF1374CBE774A0353D3FBDA95BF1274C2C8BEE906F6A5EE243217') } },
      lastCommitHash: hex('94987C13F848E4689EF5E162ACFF56DF895A073B636B7BA8FCE1AD22E8E9B9C0'),
      dataHash: hex('3B6C72BEBC4465E6C8702D56EB3F550AC642123CB8BABA21012D29023906B7CF'),
      validatorsHash: hex('639C48377E407029ED0B02428ECC1C8BABA07B5243A83F7FE4A2594BD94C9C1D'),
      nextValidatorsHash: hex('639C48377E407029ED0B02428ECC1C8BABA07B5243A83F7FE4A2594BD94C9C1D'),
      consensusHash: hex('048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F'),
      appHash: hex('0000000000000000'),
      lastResultsHash: hex(E3),
      evidenceHash: hex(E3),
      proposerAddress: hex('BB4A62DE567E5E6D46F08C25E86B4D5CA0262432'),
    };
    const want =
      '{"version":{"block":"11"},"chain_id":"test-chain","height":"2","time":"2024-01-01T00:00:04.9Z",' +
      '"last_block_id":{"hash":"20A29F8F61EC8BAFCD7E2D6C6D80DDF39DAEC2389708C88C61DADB0FFB9A964F","parts":{"total":1,"hash":"5A5384050A8BF1374CBE774A0353D3FBDA95BF1274C2C8BEE906F6A5EE243217"}},' +
      '"last_commit_hash":"94987C13F848E4689EF5E162ACFF56DF895A073B636B7BA8FCE1AD22E8E9B9C0","data_hash":"3B6C72BEBC4465E6C8702D56EB3F550AC642123CB8BABA21012D29023906B7CF",' +
      '"validators_hash":"639C48377E407029ED0B02428ECC1C8BABA07B5243A83F7FE4A2594BD94C9C1D","next_validators_hash":"639C48377E407029ED0B02428ECC1C8BABA07B5243A83F7FE4A2594BD94C9C1D",' +
      '"consensus_hash":"048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F","app_hash":"0000000000000000",' +
      `"last_results_hash":"${E3}","evidence_hash":"${E3}","proposer_address":"BB4A62DE567E5E6D46F08C25E86B4D5CA0262432"}`;
    assert.equal(JSON.stringify(headerJson(h)), want);
  });

  const result = {
    ...EMPTY_EXEC_TX_RESULT,
    events: [{ type: 'app', attributes: [{ key: 'creator', value: 'Cosmoshi Netowoko', index: true }, { key: 'noindex_key', value: 'x', index: false }] }],
  };

  it('ExecTxResult is jsonpb: every field, data null when empty, gas as strings', () => {
    assert.equal(
      JSON.stringify(execTxResultJson(result)),
      '{"code":0,"data":null,"log":"","info":"","gas_wanted":"0","gas_used":"0","events":[{"type":"app","attributes":[{"key":"creator","value":"Cosmoshi Netowoko","index":true},{"key":"noindex_key","value":"x","index":false}]}],"codespace":""}',
    );
    assert.deepEqual(eventJson({ type: '', attributes: [] }), {});
  });

  it('ResultTx: index a number, proof omitted without prove; block_results nulls', () => {
    const t = resultTxJson({ hash: hex('57D835FBBA0DBF922D8A2EDA56922C9B24E7760927F245A7684A736C4769DB8A'), height: 2n, index: 0, tx: Buffer.from('name=satoshi'), result }, undefined);
    assert.deepEqual(Object.keys(t), ['hash', 'height', 'index', 'tx_result', 'tx']);
    assert.equal(t.index, 0);
    assert.equal(t.tx, 'bmFtZT1zYXRvc2hp');
    assert.deepEqual(blockResultsJson(3n, { events: [], txResults: [], appHash: hex('0000000000000000') }), {
      height: '3',
      txs_results: null,
      finalize_block_events: null,
      validator_updates: null,
      consensus_param_updates: null,
      app_hash: 'AAAAAAAAAAA=',
    });
  });
});

describe('cometrpc params (libs/json and the URI rules)', () => {
  const err = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      assert.ok(e instanceof ParamError, String(e));
      return e.message;
    }
    return 'no error';
  };

  it('int64: strings (and bare numbers) in JSON; bare, quoted, never hex in URIs', () => {
    const p = int64Param('height');
    assert.equal(p.decode('5', 0), 5n);
    assert.equal(p.decode(5, 0), 5n);
    assert.equal(p.decode(undefined, 0), undefined);
    assert.equal(p.decode(null, 0), undefined);
    assert.equal(p.fromUri('5'), 5n);
    assert.equal(p.fromUri('"5"'), 5n);
    assert.equal(err(() => p.decode(true, 0)), 'invalid 64-bit integer encoding "true", expected string');
    assert.equal(err(() => p.decode('5.5', 0)), 'json: cannot unmarshal number 5.5 into Go value of type int64');
    assert.equal(err(() => p.decode('99999999999999999999', 0)), 'json: cannot unmarshal number 99999999999999999999 into Go value of type int64');
    assert.equal(err(() => p.fromUri('0x10')), "got a hex string arg, but expected 'int64'");
    assert.equal(err(() => p.fromUri('abc')), "invalid character 'a' looking for beginning of value");
    assert.equal(intParam('page').fromUri('3'), 3);
  });

  it('strings must be quoted in URIs; 0x is hex of the text', () => {
    const p = stringParam('query');
    assert.equal(p.fromUri('"tx.height=5"'), 'tx.height=5');
    assert.equal(p.fromUri('0x6869'), 'hi');
    assert.equal(err(() => p.fromUri('tx.height=5')), "invalid character 'x' in literal true (expecting 'r')");
    assert.equal(err(() => p.decode(5, 0)), 'json: cannot unmarshal number into Go value of type string');
  });

  it('bytes: base64 in JSON; 0x hex or a quoted string in URIs; HexBytes is hex in JSON', () => {
    assert.deepEqual(bytesParam('tx').decode('AQID', 0), Uint8Array.from([1, 2, 3]));
    assert.deepEqual(bytesParam('tx').fromUri('0x010203'), Uint8Array.from([1, 2, 3]));
    assert.deepEqual(bytesParam('tx').fromUri('"hi"'), Uint8Array.from([0x68, 0x69]));
    assert.equal(err(() => bytesParam('tx').decode('A', 0)), 'illegal base64 data at input byte 0');
    assert.deepEqual(hexBytesParam('data').decode('0a0B', 0), Uint8Array.from([10, 11]));
    assert.equal(err(() => hexBytesParam('data').decode('0x0a', 0)), "encoding/hex: invalid byte: U+0078 'x'");
    assert.equal(err(() => hexBytesParam('data').fromUri('AQID')), 'invalid hex string: AQID');
    assert.equal(boolParam('prove').fromUri('true'), true);
    assert.equal(err(() => boolParam('prove').fromUri('1')), 'json: cannot unmarshal number into Go value of type bool');
  });

  it("Go's texts for text that is not JSON", () => {
    assert.equal(goJsonError('{"a":'), 'unexpected end of JSON input');
    assert.equal(goJsonError('5x'), "invalid character 'x' after top-level value");
    assert.equal(goJsonError('nul'), 'unexpected end of JSON input');
    assert.equal(goJsonError('{}'), undefined);
  });
});

describe('cometrpc envelope', () => {
  const table: Record<string, CometRoute> = {
    echo: { params: [int64Param('height'), stringParam('query')], handler: ([h, q]) => ({ h: String(h), q: q as string }) },
    fail: { params: [], handler: () => { throw notFound('it failed'); } },
    bug: { params: [], handler: () => { throw new TypeError('boom'); } },
    subscribe: { params: [stringParam('query')], wsOnly: true, handler: () => ({}) },
  };
  const bugs: unknown[] = [];
  const env = new CometEnvelope(table, { maxBatch: 3, onInternalError: (e) => bugs.push(e) });
  const ctx = { transport: 'http' as const, authenticated: false, remoteAddr: '127.0.0.1:1' };
  const body = async (b: unknown) => (await env.httpJson(JSON.stringify(b), ctx)).body;

  it('params by name or position; a single-answer batch is an object; notifications get nothing', async () => {
    assert.equal(await body({ jsonrpc: '2.0', id: 1, method: 'echo', params: { height: '5', query: 'q' } }), '{"jsonrpc":"2.0","id":1,"result":{"h":"5","q":"q"}}');
    assert.equal(await body({ jsonrpc: '2.0', id: 'a', method: 'echo', params: ['6', 'r'] }), '{"jsonrpc":"2.0","id":"a","result":{"h":"6","q":"r"}}');
    assert.equal(await body([{ jsonrpc: '2.0', id: 2, method: 'echo', params: {} }, { jsonrpc: '2.0', method: 'echo' }]), '{"jsonrpc":"2.0","id":2,"result":{"h":"undefined","q":""}}');
    assert.equal(await body({ jsonrpc: '2.0', method: 'echo' }), undefined);
    assert.equal(await body([]), undefined);
  });

  it('errors: route -32603 with data, bug -32603 logged, ws-only and unknown -32601, batch limit', async () => {
    assert.equal(await body({ jsonrpc: '2.0', id: 1, method: 'fail' }), '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"it failed"}}');
    assert.equal(await body({ jsonrpc: '2.0', id: 1, method: 'bug' }), '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"internal error"}}');
    assert.equal(bugs.length, 1);
    assert.equal(await body({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: {} }), '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}');
    const many = [1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'echo' }));
    assert.equal(await body(many), '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"batch request exceeds maximum (3) allowed number of requests"}}');
    const ws = await env.ws('{"jsonrpc":"2.0","id":9,"method":"echo","params":{"height":"x"}}', { ...ctx, transport: 'ws' });
    assert.equal(ws, '{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"Internal error","data":"error converting json params to arguments: invalid character \'x\' looking for beginning of value"}}');
    const uri = await env.uri('echo', (n) => (n === 'height' ? '0x1' : undefined), ctx);
    assert.equal(uri?.status, 500);
    assert.equal(uri?.body, '{"jsonrpc":"2.0","id":-1,"error":{"code":-32602,"message":"Invalid params","data":"error converting http params to arguments: got a hex string arg, but expected \'int64\'"}}');
    assert.equal(await env.uri('nope', () => undefined, ctx), undefined);
  });
});

// ---- the index and its search semantics -------------------------------------------------------

const attr = (key: string, value: string, index = true) => ({ key, value, index });
const ev = (type: string, ...attributes: ReturnType<typeof attr>[]) => ({ type, attributes });
const execResult = (events: ReturnType<typeof ev>[], code = 0) => ({ code, data: new Uint8Array(), log: '', info: '', gasWanted: 0n, gasUsed: 0n, events, codespace: '' });

describe('event index: the kv indexer semantics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-index-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(join(dir, 'db.sqlite'));
  const index = new EventIndex(store.db, { writer: true });
  const txHash = (n: number) => Uint8Array.from(Buffer.alloc(32, n));
  // height 1: two txs; height 2: one tx; height 3: none
  const blocks: [number, ReturnType<typeof execResult>[], ReturnType<typeof ev>[]][] = [
    [
      1,
      [
        execResult([ev('account', attr('number', '1'), attr('owner', 'Ivan')), ev('transfer', attr('amount', '100stake'))]),
        execResult([ev('account', attr('number', '2')), ev('account', attr('owner', '/Ivan/')), ev('note', attr('secret', 'x', false))]),
      ],
      [ev('evm_fee_market', attr('base_fee', '1000'), attr('mode', 'BeginBlock')), ev('block_bloom', attr('bloom', '00'), attr('mode', 'EndBlock'))],
    ],
    [2, [execResult([ev('account', attr('number', '3'), attr('owner', 'Olga')), ev('amount', attr('value', '7.5'))])], [ev('evm_fee_market', attr('base_fee', '900'), attr('mode', 'BeginBlock'))]],
    [3, [], [ev('evm_fee_market', attr('base_fee', '800'), attr('mode', 'BeginBlock'))]],
  ];
  store.transaction(() => {
    for (const [h, results, events] of blocks) {
      const txs = results.map((_, i) => Uint8Array.from([h, i]));
      index.indexBlock(BigInt(h), txs.map((_, i) => txHash(h * 10 + i)), txs, results, events);
      store.comet.put(BigInt(h), record(BigInt(h), txs.length));
    }
  });
  const reader = new ConsensusReader(store, { genesisValidators: [], initialHeight: 1n });
  const txs = (q: string) =>
    reader
      .searchTxs(parseQuery(q))
      .map((p) => `${p.height}/${p.idx}`)
      .sort();
  const heights = (q: string) => reader.searchBlocks(parseQuery(q)).sort((a, b) => a - b);

  it('conditions must hold within one event (upstream TestBigInt)', () => {
    assert.deepEqual(txs("account.number >= 1 AND account.owner = 'Ivan'"), ['1/0']);
    assert.deepEqual(txs("account.number >= 2 AND account.owner = '/Ivan/'"), [], 'same tx, different events');
    assert.deepEqual(txs("account.owner = '/Ivan/'"), ['1/1']);
  });

  it('= is textual, ranges numeric (whole numbers only), CONTAINS, EXISTS; only index:true attributes', () => {
    assert.deepEqual(txs('account.number = 2'), ['1/1']);
    assert.deepEqual(txs('account.number > 1 AND account.number < 3'), ['1/1']);
    assert.deepEqual(txs('transfer.amount > 7'), [], "the kv index does not read '100stake' as a number");
    assert.deepEqual(txs('amount.value >= 7.5'), ['2/0']);
    assert.deepEqual(txs("account.owner CONTAINS 'Iv'"), ['1/0', '1/1']);
    assert.deepEqual(txs('account.owner EXISTS'), ['1/0', '1/1', '2/0']);
    assert.deepEqual(txs('transfer EXISTS'), ['1/0'], 'an event type EXISTS');
    assert.deepEqual(txs('note EXISTS'), [], 'only index:true attributes');
    assert.deepEqual(txs("note.secret = 'x'"), []);
    assert.deepEqual(txs('account.number > DATE 2020-01-01'), [], 'date ranges match nothing');
  });

  it('tx.height filters; tx.hash short-circuits every other condition', () => {
    assert.deepEqual(txs('tx.height = 1'), ['1/0', '1/1']);
    assert.deepEqual(txs('tx.height >= 2'), ['2/0']);
    assert.deepEqual(txs('tx.height > 1.5'), ['2/0']);
    assert.deepEqual(txs('account.owner EXISTS AND tx.height < 2'), ['1/0', '1/1']);
    assert.deepEqual(txs('tx.height = 1 AND tx.height > 1'), ['2/0'], 'a range wins over =');
    const h = Buffer.from(txHash(20)).toString('hex');
    assert.deepEqual(txs(`tx.hash = '${h}' AND account.owner = 'nobody'`), ['2/0']);
    assert.throws(() => txs("tx.hash = 'zz'"), /error during searching for a hash in the query: encoding\/hex: invalid byte: U\+007A 'z'/);
  });

  it('blocks: block.height and block events, with the begin_block/end_block key forms', () => {
    assert.deepEqual(heights('block.height = 2'), [2]);
    assert.deepEqual(heights('block.height = 9'), []);
    assert.deepEqual(heights('block.height > 1'), [2, 3]);
    assert.deepEqual(heights('evm_fee_market.base_fee < 1000'), [2, 3]);
    assert.deepEqual(heights('begin_block.evm_fee_market.base_fee < 1000 AND block.height <= 2'), [2]);
    assert.deepEqual(heights('end_block.block_bloom EXISTS'), [1], 'an event type EXISTS: any of its attributes');
    assert.deepEqual(heights('begin_block.evm_fee_market EXISTS AND block.height >= 2'), [2, 3]);
    assert.deepEqual(heights('begin_block.block_bloom EXISTS'), []);
    assert.deepEqual(heights('evm_fee_market.base EXISTS'), [], 'a key prefix is not an event type');
    assert.deepEqual(heights("end_block.block_bloom.bloom = '00'"), [1]);
    assert.deepEqual(heights("begin_block.block_bloom.bloom = '00'"), [], 'block_bloom is an EndBlock event');
  });

  it('tx records round-trip with their results', () => {
    const t = reader.tx(txHash(10))!;
    assert.equal(t.height, 1n);
    assert.equal(t.index, 0);
    assert.deepEqual(t.tx, Uint8Array.from([1, 0]));
    assert.equal(t.result.events[0]!.attributes[1]!.value, 'Ivan');
  });
});

// ---- the event bus and slow subscribers -------------------------------------------------------

function fakeBackend(recs: Map<bigint, CometBlockRecord>): ConsensusBackend {
  let latest = 0n;
  return {
    blocks: { latestHeight: () => latest, block: (h: bigint) => recs.get(h) },
    set: (h: bigint) => (latest = h),
  } as unknown as ConsensusBackend & { set(h: bigint): void };
}

function record(h: bigint, txs: number): CometBlockRecord {
  const z = (n: number) => new Uint8Array(n);
  const id = { hash: z(32), partSetHeader: { total: 1, hash: z(32) } };
  const header: Header = {
    version: { block: 11n, app: 1n }, chainId: 'c', height: h, time: { seconds: 0n, nanos: 0 }, lastBlockId: id,
    lastCommitHash: z(32), dataHash: z(32), validatorsHash: z(32), nextValidatorsHash: z(32), consensusHash: z(32),
    appHash: z(32), lastResultsHash: z(32), evidenceHash: z(32), proposerAddress: z(20),
  };
  return {
    block: { header, data: { txs: Array.from({ length: txs }, (_, i) => Uint8Array.from([i])) }, evidence: [], lastCommit: { height: h - 1n, round: 0, blockId: id, signatures: [] } },
    blockId: id,
    commit: { height: h, round: 0, blockId: id, signatures: [] },
    results: {
      events: [ev('evm_fee_market', attr('base_fee', '7'), attr('mode', 'BeginBlock'))],
      txResults: Array.from({ length: txs }, (_, i) => execResult([ev('ethereum_tx', attr('recipient', i % 2 ? '0xbb' : '0xaa'))])),
      appHash: z(32),
    },
    size: 100,
  };
}

describe('event bus and WebSocket sessions', () => {
  const opts = {
    unsafe: false,
    maxRequestBatchSize: 10,
    maxSubscriptionClients: 2,
    maxSubscriptionsPerClient: 5,
    subscriptionBufferSize: 3,
    websocketWriteBufferSize: 200,
    closeOnSlowClient: false,
    timeoutBroadcastTxCommitMs: 1000,
    timeoutCommitMs: 1000,
  };
  const silent = { error: () => undefined, info: () => undefined, debug: () => undefined };

  function peer(remoteAddr: string, autoFlush: boolean) {
    const sent: any[] = [];
    const pending: (() => void)[] = [];
    return {
      sent,
      flush: () => pending.splice(0).forEach((f) => f()),
      peer: {
        remoteAddr,
        send(text: string, done?: (err?: Error) => void) {
          sent.push(JSON.parse(text));
          if (autoFlush) done?.();
          else pending.push(() => done?.());
        },
        close: () => undefined,
      },
    };
  }
  const settle = () => new Promise((r) => setTimeout(r, 5));

  it('publishes Tx events matching the query (with its id and query), in block order', async () => {
    const recs = new Map([[1n, record(1n, 4)]]);
    const backend = fakeBackend(recs) as ConsensusBackend & { set(h: bigint): void };
    const svc = new CometService(backend, opts, silent);
    const p = peer('1.1.1.1:1', true);
    const s = svc.websocket(p.peer);
    s.message(JSON.stringify({ jsonrpc: '2.0', id: 'tx', method: 'subscribe', params: { query: "tm.event='Tx' AND ethereum_tx.recipient='0xbb'" } }));
    s.message(JSON.stringify({ jsonrpc: '2.0', id: 'bb', method: 'subscribe', params: { query: 'begin_block.evm_fee_market.base_fee = 7' } }));
    await settle();
    backend.set(1n);
    svc.bus.onCommitted(1n);
    const events = p.sent.slice(2);
    // the begin_block query matches NewBlock and NewBlockEvents (block events), not the Tx events
    assert.deepEqual(
      events.map((e) => [e.id, e.result.data.type]),
      [
        ['bb', 'tendermint/event/NewBlock'],
        ['bb', 'tendermint/event/NewBlockEvents'],
        ['tx', 'tendermint/event/Tx'],
        ['tx', 'tendermint/event/Tx'],
      ],
    );
    const tx = events[2].result;
    assert.equal(tx.query, "tm.event='Tx' AND ethereum_tx.recipient='0xbb'");
    assert.equal(tx.data.value.TxResult.index, 1);
    assert.deepEqual(tx.events['ethereum_tx.recipient'], ['0xbb']);
    assert.deepEqual(Object.keys(tx.events).slice(0, 3), ['tm.event', 'tx.hash', 'tx.height']);
    assert.equal(events[0].result.events['begin_block.evm_fee_market.base_fee'], undefined, 'key forms match but are not sent');
    s.closed();
    assert.equal(svc.bus.numClients(), 0);
  });

  it('reads no committed block while no subscription wants block events, and publishes the next one once one does', async () => {
    const recs = new Map<bigint, CometBlockRecord>();
    const backend = fakeBackend(recs) as ConsensusBackend & { set(h: bigint): void };
    const reads: bigint[] = [];
    const blocks = (backend as unknown as { blocks: { block(h: bigint): CometBlockRecord | undefined } }).blocks;
    const read = blocks.block;
    blocks.block = (h) => (reads.push(h), read(h));
    const svc = new CometService(backend, opts, silent);
    for (let h = 1n; h <= 3n; h++) {
      recs.set(h, record(h, 1));
      backend.set(h);
      svc.bus.onCommitted(h);
    }
    assert.deepEqual(reads, []);
    const p = peer('6.6.6.6:6', true);
    svc.websocket(p.peer).message(JSON.stringify({ jsonrpc: '2.0', id: 'h', method: 'subscribe', params: { query: "tm.event='NewBlockHeader'" } }));
    await settle();
    recs.set(4n, record(4n, 1));
    backend.set(4n);
    svc.bus.onCommitted(4n);
    assert.deepEqual(reads, [4n]);
    assert.deepEqual(p.sent.slice(1).map((e) => e.result.data.value.header.height), ['4']);
  });

  it('a subscriber that stops reading is cancelled with CometBFT\'s error; others are not slowed', async () => {
    const recs = new Map<bigint, CometBlockRecord>();
    const backend = fakeBackend(recs) as ConsensusBackend & { set(h: bigint): void };
    const svc = new CometService(backend, opts, silent);
    const slow = peer('2.2.2.2:2', false);
    const fast = peer('3.3.3.3:3', true);
    const ss = svc.websocket(slow.peer);
    const fs = svc.websocket(fast.peer);
    for (const s of [ss, fs]) s.message(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'subscribe', params: ['tm.event=\'NewBlockHeader\''] }));
    await settle();
    slow.flush(); // the subscribe reply was written
    for (let h = 1n; h <= 5n; h++) {
      recs.set(h, record(h, 0));
      backend.set(h);
      svc.bus.onCommitted(h);
    }
    const slowGot = slow.sent.slice(1);
    assert.equal(slowGot.length, opts.subscriptionBufferSize + 1, 'three notifications, then the cancellation');
    assert.deepEqual(slowGot[3], { jsonrpc: '2.0', id: 5, error: { code: -32000, message: 'Server error', data: `subscription was canceled (reason: ${OUT_OF_CAPACITY})` } });
    assert.equal(fast.sent.length, 1 + 5, 'the fast client got every header');
    assert.equal(svc.bus.numClientSubscriptions('2.2.2.2:2'), 0);
    assert.equal(svc.bus.numClientSubscriptions('3.3.3.3:3'), 1);
    // limits: max_subscription_clients 2 — the cancelled client no longer counts; a third is refused
    const second = peer('4.4.4.4:4', true);
    const third = peer('5.5.5.5:5', true);
    for (const p of [second, third]) svc.websocket(p.peer).message(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { query: "tm.event='Tx'" } }));
    await settle();
    assert.deepEqual(second.sent[0], { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(third.sent[0].error.data, 'max_subscription_clients 2 reached');
  });
});
