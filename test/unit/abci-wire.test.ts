/**
 * ferry's ABCI 2.0 codec against bytes produced by CometBFT v0.38's own generated protobuf types
 * (test/fixtures/abci-wire.json, written once by test/fixtures/abci-wire-gen/main.go), the socket
 * framing, and the server's per-connection answer order over TCP and a unix socket.
 */
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeRequest, encodeResponse, type AbciResponse } from '../../src/abci/wire.js';
import { FrameReader, startAbciServer } from '../../src/abci/server.js';
import { lengthPrefixed } from '../../src/lib/protobuf.js';
import { createLogger } from '../../src/lib/log.js';
import { REPO_ROOT } from '../helpers/paths.js';

const fx = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'abci-wire.json'), 'utf8')) as Record<string, string>;
const bytes = (name: string): Uint8Array => {
  assert.ok(fx[name] !== undefined, `fixture ${name}`);
  return new Uint8Array(Buffer.from(fx[name]!, 'hex'));
};
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const u8 = (...n: number[]) => new Uint8Array(n);
const TIME_MS = 1_700_000_000_123; // 1700000000 s + 123456789 ns, truncated to ms
const PUBKEY = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
const silent = createLogger({ level: 'error', destination: { write: () => undefined } });

describe('ABCI requests decode as CometBFT v0.38 encodes them', () => {
  it('echo, flush, info, commit, list_snapshots', () => {
    assert.deepEqual(decodeRequest(bytes('req_echo')), { kind: 'echo', message: 'hello' });
    assert.deepEqual(decodeRequest(bytes('req_flush')), { kind: 'flush' });
    assert.deepEqual(decodeRequest(bytes('req_info')), { kind: 'info' });
    assert.deepEqual(decodeRequest(bytes('req_commit')), { kind: 'commit' });
    assert.deepEqual(decodeRequest(bytes('req_list_snapshots')), { kind: 'listSnapshots' });
  });

  it('init_chain: time, chain id, validators, app_state_bytes, initial height', () => {
    assert.deepEqual(decodeRequest(bytes('req_init_chain')), {
      kind: 'initChain',
      timeMs: TIME_MS,
      chainId: 'ferry_9000-1',
      validators: [{ pubKey: PUBKEY, power: 10n }],
      appStateBytes: new TextEncoder().encode('{"evm":{}}'),
      initialHeight: 1n,
    });
  });

  it('check_tx new and recheck; query', () => {
    assert.deepEqual(decodeRequest(bytes('req_check_tx_new')), { kind: 'checkTx', tx: u8(0xcc), recheck: false });
    assert.deepEqual(decodeRequest(bytes('req_check_tx_recheck')), { kind: 'checkTx', tx: u8(0xaa, 0xbb), recheck: true });
    assert.deepEqual(decodeRequest(bytes('req_query')), { kind: 'query', data: u8(1, 2), path: '/evm/balance', height: 7n, prove: true });
  });

  it('prepare_proposal, process_proposal, finalize_block (commit info skipped)', () => {
    assert.deepEqual(decodeRequest(bytes('req_prepare_proposal')), { kind: 'prepareProposal', maxTxBytes: 1_048_576n, txs: [u8(1), u8(2, 3)], height: 5n, timeMs: TIME_MS });
    assert.deepEqual(decodeRequest(bytes('req_process_proposal')), { kind: 'processProposal', txs: [u8(9)], hash: new Uint8Array(32), height: 6n, timeMs: TIME_MS });
    assert.deepEqual(decodeRequest(bytes('req_finalize_block')), {
      kind: 'finalizeBlock',
      txs: [u8(1, 2, 3), new Uint8Array()],
      hash: u8(0xde, 0xad),
      height: 9n,
      timeMs: TIME_MS,
      proposerAddress: u8(0x11, 0x22),
    });
  });

  it('offer_snapshot, load_snapshot_chunk, apply_snapshot_chunk (state sync)', () => {
    const snapshot = { height: 20n, format: 1, chunks: 3, hash: u8(0xaa, 0xbb), metadata: u8(1, 2, 3) };
    assert.deepEqual(decodeRequest(bytes('req_offer_snapshot')), { kind: 'offerSnapshot', snapshot, appHash: u8(0xfe, 0xed) });
    assert.deepEqual(decodeRequest(bytes('req_load_snapshot_chunk')), { kind: 'loadSnapshotChunk', height: 20n, format: 1, chunk: 2 });
    assert.deepEqual(decodeRequest(bytes('req_apply_snapshot_chunk')), { kind: 'applySnapshotChunk', index: 2, chunk: u8(7, 8), sender: 'a5d823be9b4fe335d75c9b5c3c1e3cf2b39c697d' });
  });

  it('rejects garbage with a decode error', () => {
    assert.throws(() => decodeRequest(u8(0xff)), /varint|Request/);
    assert.throws(() => decodeRequest(u8(0x3a, 0x00)), /unknown field 7/); // reserved BeginBlock
  });
});

describe('ABCI responses encode byte for byte as CometBFT v0.38', () => {
  const cases: [string, AbciResponse][] = [
    ['res_exception', { kind: 'exception', error: 'boom' }],
    ['res_echo', { kind: 'echo', message: 'hello' }],
    ['res_flush', { kind: 'flush' }],
    ['res_info', { kind: 'info', data: 'ferry', version: '0.1.0', appVersion: 1n, lastBlockHeight: 42n, lastBlockAppHash: u8(0xab, 0xcd) }],
    ['res_init_chain', { kind: 'initChain', appHash: u8(1, 2, 3) }],
    ['res_check_tx', { kind: 'checkTx', code: 32, data: new Uint8Array(), log: 'nonce too low', gasWanted: 21_000n, gasUsed: 0n, events: [], codespace: 'evm' }],
    ['res_check_tx_ok', { kind: 'checkTx', code: 0, data: u8(7), log: '', gasWanted: 21_000n, gasUsed: 0n, events: [], codespace: '' }],
    ['res_commit', { kind: 'commit', retainHeight: 0n }],
    ['res_prepare_proposal', { kind: 'prepareProposal', txs: [u8(2, 3), u8(1)] }],
    ['res_process_proposal_accept', { kind: 'processProposal', accept: true }],
    ['res_process_proposal_reject', { kind: 'processProposal', accept: false }],
    ['res_extend_vote', { kind: 'extendVote' }],
    ['res_verify_vote_extension', { kind: 'verifyVoteExtension', accept: true }],
    ['res_list_snapshots', { kind: 'listSnapshots' }],
    ['res_offer_snapshot', { kind: 'offerSnapshot', result: 3 }],
    ['res_apply_snapshot_chunk', { kind: 'applySnapshotChunk', result: 2 }],
    [
      'res_list_snapshots_two',
      {
        kind: 'listSnapshots',
        snapshots: [
          { height: 20n, format: 1, chunks: 3, hash: u8(0xaa, 0xbb), metadata: u8(1, 2, 3) },
          { height: 10n, format: 1, chunks: 1, hash: u8(1), metadata: u8(2) },
        ],
      },
    ],
    ['res_load_snapshot_chunk', { kind: 'loadSnapshotChunk', chunk: u8(7, 8, 9) }],
    ['res_offer_snapshot_accept', { kind: 'offerSnapshot', result: 1 }],
    ['res_apply_snapshot_chunk_retry', { kind: 'applySnapshotChunk', result: 3, refetchChunks: [2, 300], rejectSenders: ['a5d823be9b4fe335d75c9b5c3c1e3cf2b39c697d'] }],
    [
      'res_query',
      { kind: 'query', code: 0, log: '', info: '', index: 0n, key: u8(1), value: u8(2), proofOps: [{ type: 'ferry/mpt-account', key: u8(1), data: u8(3) }], height: 7n, codespace: '' },
    ],
    [
      'res_finalize_block',
      {
        kind: 'finalizeBlock',
        events: [{ type: 'block_bloom', attributes: [{ key: 'bloom', value: '00', index: true }] }],
        txResults: [
          {
            code: 0, data: u8(1), log: '', info: '', gasWanted: 21_000n, gasUsed: 21_000n, codespace: '',
            events: [{ type: 'ethereum_tx', attributes: [{ key: 'ethereumTxHash', value: '0x01', index: true }, { key: 'txLog', value: '{}', index: false }] }],
          },
          { code: 1, data: new Uint8Array(), log: 'execution reverted', info: '', gasWanted: 50_000n, gasUsed: 30_000n, events: [], codespace: 'evm' },
        ],
        validatorUpdates: [{ pubKey: PUBKEY, power: 0n }],
        appHash: u8(0xfe, 0xed),
      },
    ],
  ];
  for (const [name, res] of cases) {
    it(name, () => assert.equal(hex(encodeResponse(res)), fx[name]));
  }
});

describe('ABCI socket framing and server', () => {
  it('FrameReader: frames split across chunks, several in one chunk, an oversized length refused', () => {
    const a = lengthPrefixed(bytes('req_echo'));
    const b = lengthPrefixed(bytes('req_flush'));
    const r = new FrameReader(1024);
    const all = Buffer.concat([a, b]);
    assert.deepEqual(r.push(all.subarray(0, 3)), []);
    assert.deepEqual(r.push(all.subarray(3)).map(hex), [fx.req_echo, fx.req_flush]);
    assert.throws(() => new FrameReader(10).push(Buffer.from(lengthPrefixed(new Uint8Array(11)))), /exceeds the limit of 10/);
  });

  async function roundTrip(address: Parameters<typeof startAbciServer>[0]['address'], connectTo: (s: string) => ReturnType<typeof connect>) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const server = await startAbciServer({
      address,
      log: silent,
      // the first (slow) echo must still be answered before the flush behind it
      handle: async (req) => {
        if (req.kind === 'echo' && req.message === 'slow') await gate;
        return req.kind === 'echo' ? { kind: 'echo', message: req.message } : { kind: 'flush' };
      },
    });
    try {
      const sock = connectTo(server.address);
      const got: Buffer[] = [];
      const frames = new FrameReader(1 << 20);
      const answers: Uint8Array[] = [];
      const done = new Promise<void>((resolve) =>
        sock.on('data', (c: Buffer) => {
          got.push(c);
          answers.push(...frames.push(c));
          if (answers.length === 3) resolve();
        }),
      );
      const echo = (m: string) => new Uint8Array(Buffer.from('0a' + (m.length + 2).toString(16).padStart(2, '0') + '0a' + m.length.toString(16).padStart(2, '0') + Buffer.from(m).toString('hex'), 'hex'));
      sock.write(Buffer.concat([lengthPrefixed(echo('slow')), lengthPrefixed(echo('fast')), lengthPrefixed(bytes('req_flush'))]));
      setImmediate(release);
      await done;
      sock.destroy();
      assert.deepEqual(answers.map(hex), [
        hex(encodeResponse({ kind: 'echo', message: 'slow' })),
        hex(encodeResponse({ kind: 'echo', message: 'fast' })),
        fx.res_flush,
      ]);
    } finally {
      await server.close();
    }
  }

  it('answers in request order over tcp://', async () => {
    await roundTrip({ tcp: { host: '127.0.0.1', port: 0 } }, (addr) => {
      const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
      return connect(port, '127.0.0.1');
    });
  });

  it('answers in request order over unix://', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-abci-'));
    try {
      await roundTrip({ unix: join(dir, 'app.sock') }, (addr) => connect(addr.slice('unix://'.length)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a malformed frame gets an exception and the connection is closed; the server keeps serving', async () => {
    const server = await startAbciServer({ address: { tcp: { host: '127.0.0.1', port: 0 } }, log: silent, handle: async () => ({ kind: 'flush' }) });
    try {
      const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
      const bad = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      bad.on('data', (c: Buffer) => chunks.push(c));
      await new Promise<void>((resolve) => {
        bad.on('close', () => resolve());
        bad.write(lengthPrefixed(new Uint8Array([0x3a, 0x00])));
      });
      const [frame] = new FrameReader(1 << 20).push(Buffer.concat(chunks));
      assert.match(Buffer.from(frame!).toString('latin1'), /unknown field 7/);
      const good = connect(port, '127.0.0.1');
      const reply = await new Promise<Buffer>((resolve) => {
        good.on('data', resolve);
        good.write(lengthPrefixed(bytes('req_flush')));
      });
      good.destroy();
      assert.equal(hex(reply), '02' + fx.res_flush);
    } finally {
      await server.close();
    }
  });
});
