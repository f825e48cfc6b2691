import { describe, it } from 'node:test';
import { DomainError } from '../../src/lib/errors.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  BLOCK_PART_SIZE_BYTES,
  BlockIDFlag,
  DEFAULT_BLOCK_PARAMS,
  ProtoWriter,
  SignedMsgType,
  ZERO_TIME,
  bftTime,
  blockProto,
  commitHash,
  commitProto,
  commitSigAbsent,
  commitSigProto,
  consensusParamsHash,
  ed25519KeyFromSeed,
  evidenceHash,
  formatTime,
  generateNodeKey,
  generateValidatorKey,
  headerHash,
  initialPrivValidatorState,
  innerHash,
  lastResultsHash,
  leafHash,
  makeBlockId,
  merkleProof,
  merkleProofRoot,
  merkleRoot,
  nodeId,
  nodeKeyJson,
  parseTime,
  partSetHeader,
  privValidatorStateJson,
  pubKeyAddress,
  readNodeKey,
  readPrivValidatorState,
  readValidatorKey,
  signCommit,
  sortValidators,
  timestampFromMillis,
  txHash,
  txProof,
  txResultProto,
  txsHash,
  uvarint,
  validatorKeyJson,
  validatorSetHash,
  verifyCommitSig,
  verifyMerkleProof,
  voteSignBytes,
  zeroBlockId,
} from '../../src/consensus/cometbft/index.js';
import type { Block, BlockID, Commit, Header, Timestamp, Validator } from '../../src/consensus/cometbft/index.js';

const sha = (s: string | Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const EMPTY = new Uint8Array(0);
const EMPTY_HASH = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

describe('protobuf writer', () => {
  it('encodes varints, including 10-byte negatives', () => {
    assert.equal(hex(uvarint(0)), '00');
    assert.equal(hex(uvarint(300)), 'AC02');
    assert.equal(hex(new ProtoWriter().int(1, -1n).finish()), '08FFFFFFFFFFFFFFFFFF01');
    assert.equal(hex(new ProtoWriter().uint(1, 0xffffffffffffffffn).finish()), '08FFFFFFFFFFFFFFFFFF01');
    assert.throws(() => new ProtoWriter().uint(1, -1n), RangeError);
    assert.throws(() => new ProtoWriter().int(1, 1n << 63n), RangeError);
  });

  it('omits zero scalars and empty bytes/strings, keeps embedded messages and repeated elements', () => {
    const w = new ProtoWriter().uint(1, 0).int(2, 0n).sfixed64(3, 0n).bytes(4, EMPTY).string(5, '');
    assert.equal(w.finish().length, 0);
    assert.equal(hex(new ProtoWriter().lengthDelimited(2, EMPTY).finish()), '1200');
    assert.equal(hex(new ProtoWriter().sfixed64(2, -2n).finish()), '11FEFFFFFFFFFFFFFF');
    assert.equal(hex(new ProtoWriter().string(6, 'ab').bytes(1, Uint8Array.of(7)).finish()), '320261620A0107');
  });
});

describe('RFC-6962 merkle tree', () => {
  // Certificate Transparency reference leaves and roots (used by google/trillian and cometbft's rfc6962 test).
  const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(unhex);
  const CT_ROOTS = [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
    '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
    'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
    '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
  ];

  it('matches the CT reference roots for 0..8 items', () => {
    assert.equal(hex(merkleRoot([])), EMPTY_HASH);
    for (let n = 1; n <= 8; n++) assert.equal(hex(merkleRoot(CT_LEAVES.slice(0, n))), CT_ROOTS[n - 1]!.toUpperCase(), `n=${n}`);
  });

  it('matches crypto/merkle TestHashFromByteSlices and TestRFC6962Hasher', () => {
    assert.equal(hex(merkleRoot([Uint8Array.of(1, 2, 3)])), '054EDEC1D0211F624FED0CBCA9D4F9400B0E491C43742AF2C5B0ABEBF0C990D8');
    assert.equal(hex(merkleRoot([EMPTY])), '6E340B9CFFB37A989CA544E6BB780A2C78901D3FB33738768511A30617AFA01D');
    assert.equal(hex(merkleRoot([Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5, 6)])), '82E6CFCE00453804379B53962939EAA7906B39904BE0813FCADD31B100773C4B');
    const five = [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]].map((x) => Uint8Array.from(x));
    assert.equal(hex(merkleRoot(five)), 'F326493ECEAB4F2D9FFBC78C59432A0A005D6EA98392045C74DF5D14A113BE18');
    assert.equal(hex(leafHash(utf8('L123456'))), '395AA064AA4C29F7010ACFE3F25DB9485BBD4B91897B6AD7AD547639252B4D56');
    assert.equal(hex(innerHash(utf8('N123'), utf8('N456'))), 'AA217FE888E47007FA15EDAB33C2B492A722CB106C64667FC2B044444DE66BBB');
  });

  it('builds the CT reference inclusion path (leaf 0 of 8)', () => {
    const p = merkleProof(CT_LEAVES, 0);
    assert.deepEqual(
      p.aunts.map((a) => hex(a).toLowerCase()),
      [
        '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
      ],
    );
    assert.equal(p.total, 8n);
    assert.equal(p.index, 0n);
  });

  it('proves every item of trees of 1, 2, 3, 5 and 8 items, and rejects tampering', () => {
    for (const n of [1, 2, 3, 5, 8]) {
      const items = CT_LEAVES.slice(0, n);
      const root = merkleRoot(items);
      for (let i = 0; i < n; i++) {
        const p = merkleProof(items, i);
        assert.equal(hex(p.leafHash), hex(leafHash(items[i]!)));
        assert.ok(verifyMerkleProof(root, items[i]!, p), `n=${n} i=${i}`);
        assert.ok(!verifyMerkleProof(root, utf8('other'), p), 'wrong item');
        assert.ok(!verifyMerkleProof(sha('x'), items[i]!, p), 'wrong root');
        assert.ok(!verifyMerkleProof(root, items[i]!, { ...p, aunts: [...p.aunts, sha('x')] }), 'extra aunt');
        if (n > 1) {
          assert.ok(!verifyMerkleProof(root, items[i]!, { ...p, index: BigInt((i + 1) % n) }), 'wrong index');
          assert.ok(!verifyMerkleProof(root, items[i]!, { ...p, aunts: p.aunts.slice(1) }), 'missing aunt');
        }
      }
    }
    assert.equal(merkleProofRoot({ total: 2n, index: 2n, leafHash: sha('x'), aunts: [sha('y')] }), undefined);
    assert.throws(() => merkleProof([], 0), RangeError);
    assert.throws(() => merkleProof(CT_LEAVES, 8), RangeError);
  });

  it('builds tx proofs over the tx hashes (data_hash)', () => {
    const txs = ['a', 'bb', 'ccc'].map(utf8);
    const p = txProof(txs, 2);
    assert.equal(hex(p.rootHash), hex(txsHash(txs)));
    assert.ok(verifyMerkleProof(p.rootHash, txHash(txs[2]!), p.proof));
    assert.equal(p.proof.aunts.length, 1);
  });
});

describe('timestamps', () => {
  it('formats like Go RFC3339Nano (UTC, trailing zeros trimmed)', () => {
    assert.equal(formatTime({ seconds: 1704067204n, nanos: 900_000_000 }), '2024-01-01T00:00:04.9Z');
    assert.equal(formatTime({ seconds: 1704067209n, nanos: 2000 }), '2024-01-01T00:00:09.000002Z');
    assert.equal(formatTime({ seconds: 1704067200n, nanos: 0 }), '2024-01-01T00:00:00Z');
    assert.equal(formatTime({ seconds: 0n, nanos: 1 }), '1970-01-01T00:00:00.000000001Z');
    assert.equal(formatTime(ZERO_TIME), '0001-01-01T00:00:00Z');
    assert.equal(formatTime({ seconds: -1n, nanos: 500_000_000 }), '1969-12-31T23:59:59.5Z');
    assert.equal(formatTime({ seconds: 253402300799n, nanos: 999_999_999 }), '9999-12-31T23:59:59.999999999Z');
    assert.throws(() => formatTime({ seconds: 253402300800n, nanos: 0 }), RangeError);
    assert.throws(() => formatTime({ seconds: 0n, nanos: 1_000_000_000 }), RangeError);
  });

  it('parses RFC3339, with offsets, to UTC', () => {
    assert.deepEqual(parseTime('2019-10-13T16:14:44Z'), { seconds: 1570983284n, nanos: 0 });
    assert.deepEqual(parseTime('2024-01-01T00:00:04.9Z'), { seconds: 1704067204n, nanos: 900_000_000 });
    assert.deepEqual(parseTime('2024-01-01T01:30:00+01:30'), parseTime('2024-01-01T00:00:00Z'));
    assert.deepEqual(parseTime('2023-12-31T23:00:00.000000001-01:00'), { seconds: 1704067200n, nanos: 1 });
    assert.deepEqual(parseTime('0001-01-01T00:00:00Z'), ZERO_TIME);
    assert.deepEqual(parseTime('2024-02-29T00:00:00Z'), { seconds: 1709164800n, nanos: 0 });
    for (const bad of ['2023-02-29T00:00:00Z', '2024-01-01 00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:00:00', '2024-01-01T00:00:00.Z', '2024-01-01T00:00:00.1234567890Z', '2024-13-01T00:00:00Z']) {
      assert.throws(() => parseTime(bad), RangeError, bad);
    }
  });

  it('agrees with Date on many instants from year 1 to 9999, and round-trips', () => {
    const MIN_MS = -62135596800000; // 0001-01-01T00:00:00Z
    const SPAN_MS = 253402300800000 - MIN_MS; // up to 9999-12-31T23:59:59.999Z
    let seed = 12345;
    for (let i = 0; i < 1000; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648; // deterministic LCG
      const ms = MIN_MS + Math.floor((seed / 2147483648) * SPAN_MS) + (i % 1000);
      const t = timestampFromMillis(ms);
      const expected = new Date(ms).toISOString().replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z');
      assert.equal(formatTime(t), expected, `ms=${ms}`);
      assert.deepEqual(parseTime(formatTime(t)), t);
    }
  });
});

// Reference vectors computed by CometBFT v0.38's hashing rules (types/block.go, types/vote.go): one validator with seed
// sha256("validator-seed"), chain "test-chain", block 1 empty, block 2 holds "name=satoshi".
const CHAIN_ID = 'test-chain';
const validatorKey = ed25519KeyFromSeed(sha('validator-seed'));
const validators: Validator[] = [{ address: validatorKey.address, pubKey: validatorKey.pubKey, votingPower: 10n }];
const emptyCommit: Commit = { height: 0n, round: 0, blockId: zeroBlockId(), signatures: [] };

function block1(): Block {
  const vh = validatorSetHash(validators);
  const header: Header = {
    version: { block: 11n, app: 0n },
    chainId: CHAIN_ID,
    height: 1n,
    time: parseTime('2024-01-01T00:00:00Z'),
    lastBlockId: zeroBlockId(),
    lastCommitHash: commitHash(emptyCommit),
    dataHash: txsHash([]),
    validatorsHash: vh,
    nextValidatorsHash: vh,
    consensusHash: consensusParamsHash(DEFAULT_BLOCK_PARAMS),
    appHash: EMPTY,
    lastResultsHash: EMPTY,
    evidenceHash: evidenceHash([]),
    proposerAddress: validatorKey.address,
  };
  return { header, data: { txs: [] }, evidence: [], lastCommit: emptyCommit };
}

describe('hashes and encodings', () => {
  it('TestHeaderHash (types/block_test.go)', () => {
    const h: Header = {
      version: { block: 1n, app: 2n },
      chainId: 'chainId',
      height: 3n,
      time: parseTime('2019-10-13T16:14:44Z'),
      lastBlockId: { hash: new Uint8Array(32), partSetHeader: { total: 6, hash: new Uint8Array(32) } },
      lastCommitHash: sha('last_commit_hash'),
      dataHash: sha('data_hash'),
      validatorsHash: sha('validators_hash'),
      nextValidatorsHash: sha('next_validators_hash'),
      consensusHash: sha('consensus_hash'),
      appHash: sha('app_hash'),
      lastResultsHash: sha('last_results_hash'),
      evidenceHash: sha('evidence_hash'),
      proposerAddress: sha('proposer_address').subarray(0, 20),
    };
    assert.equal(hex(headerHash(h)), 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4');
    assert.notEqual(hex(headerHash({ ...h, height: 4n })), 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4');
    assert.throws(() => headerHash({ ...h, validatorsHash: EMPTY }));
  });

  it('TestVoteSignBytesTestVectors (types/vote_test.go) 0..4', () => {
    const zeroTs = '2A0B088092B8C398FEFFFFFF01';
    const one = { height: 1n, round: 1, blockId: zeroBlockId(), timestamp: ZERO_TIME };
    const cases: [string, Parameters<typeof voteSignBytes>[1], string][] = [
      ['', { type: SignedMsgType.unknown, height: 0n, round: 0, blockId: zeroBlockId(), timestamp: ZERO_TIME }, '0D' + zeroTs],
      ['', { ...one, type: SignedMsgType.precommit }, '21' + '0802' + '110100000000000000' + '190100000000000000' + zeroTs],
      ['', { ...one, type: SignedMsgType.prevote }, '21' + '0801' + '110100000000000000' + '190100000000000000' + zeroTs],
      ['', { ...one, type: SignedMsgType.unknown }, '1F' + '110100000000000000' + '190100000000000000' + zeroTs],
      ['test_chain_id', { ...one, type: SignedMsgType.unknown }, '2E' + '110100000000000000' + '190100000000000000' + zeroTs + '320D' + hex(utf8('test_chain_id'))],
    ];
    cases.forEach(([chainId, vote, want], i) => assert.equal(hex(voteSignBytes(chainId, vote)), want, `case ${i}`));
  });

  it('consensus_hash of the default params', () => {
    assert.equal(hex(consensusParamsHash(DEFAULT_BLOCK_PARAMS)), '048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F');
    assert.notEqual(hex(consensusParamsHash({ maxBytes: 22020096n, maxGas: 1n })), '048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F');
  });

  it('commit sizes match MaxCommitSigBytes (109) and MaxCommitOverheadBytes (94)', () => {
    const sig = {
      blockIdFlag: BlockIDFlag.nil,
      validatorAddress: sha('validator_address').subarray(0, 20),
      timestamp: { seconds: -1n, nanos: 999_999_999 },
      signature: new Uint8Array(64).fill(7),
    };
    assert.equal(commitSigProto(sig).length, 109);
    const commit: Commit = {
      height: (1n << 63n) - 1n,
      round: 0x7fffffff,
      blockId: { hash: sha('blockID_hash'), partSetHeader: { total: 0x7fffffff, hash: sha('blockID_part_set_header_hash') } },
      signatures: [sig],
    };
    assert.equal(commitProto(commit).length, 94 + 109 + 2);
  });

  it('last_results_hash over the deterministic result fields', () => {
    assert.equal(hex(lastResultsHash([])), EMPTY_HASH);
    const zero = { code: 0, data: EMPTY, gasWanted: 0n, gasUsed: 0n };
    assert.equal(hex(txResultProto(zero)), '');
    assert.equal(hex(lastResultsHash([zero])), '6E340B9CFFB37A989CA544E6BB780A2C78901D3FB33738768511A30617AFA01D');
    const r = { code: 1, data: Uint8Array.of(1, 2), gasWanted: 5n, gasUsed: 3n };
    assert.equal(hex(txResultProto(r)), '08011202010228053003');
    assert.equal(hex(lastResultsHash([zero, r])), hex(innerHash(leafHash(EMPTY), leafHash(unhex('08011202010228053003')))));
  });

  it('validators_hash is order-independent (canonical order: power desc, address asc)', () => {
    const k = (s: string, power: bigint): Validator => {
      const key = ed25519KeyFromSeed(sha(s));
      return { address: key.address, pubKey: key.pubKey, votingPower: power };
    };
    const a = k('a', 5n);
    const b = k('b', 5n);
    const c = k('c', 9n);
    const sorted = sortValidators([a, b, c]);
    assert.equal(sorted[0], c);
    const [lo, hi] = Buffer.compare(a.address, b.address) < 0 ? [a, b] : [b, a];
    assert.deepEqual(sorted.slice(1), [lo, hi]);
    assert.equal(hex(validatorSetHash([a, b, c])), hex(validatorSetHash([b, c, a])));
    const simple = (v: Validator) => unhex('0A220A20' + hex(v.pubKey) + '10' + v.votingPower.toString(16).padStart(2, '0'));
    assert.equal(hex(validatorSetHash([a, b, c])), hex(merkleRoot([simple(c), simple(lo), simple(hi)])));
  });

  it('part set header splits into 64 KiB parts', () => {
    const data = new Uint8Array(2 * BLOCK_PART_SIZE_BYTES + 1).map((_, i) => i & 0xff);
    const psh = partSetHeader(data);
    assert.equal(psh.total, 3);
    const parts = [data.subarray(0, 65536), data.subarray(65536, 131072), data.subarray(131072)];
    assert.equal(hex(psh.hash), hex(innerHash(innerHash(leafHash(parts[0]!), leafHash(parts[1]!)), leafHash(parts[2]!))));
    const small = partSetHeader(Uint8Array.of(1, 2, 3));
    assert.equal(small.total, 1);
    assert.equal(hex(small.hash), hex(leafHash(Uint8Array.of(1, 2, 3))));
  });

  it('block proto always carries data, evidence and last_commit', () => {
    const bytes = blockProto(block1());
    // ... Data{} (12 00), EvidenceList{} (1a 00), Commit{block_id: BlockID{part_set_header: {}}} (22 04 1a 02 12 00)
    assert.equal(hex(bytes.subarray(bytes.length - 10)), '12001A0022041A021200');
  });
});

describe('the reference two-block chain (§5, §9)', () => {
  const b1 = block1();
  const id1 = makeBlockId(b1);
  const commitTime1 = parseTime('2024-01-01T00:00:04.9Z');
  const sig1 = signCommit(CHAIN_ID, 1n, 0, id1, commitTime1, validatorKey.privKey);
  const commit1: Commit = { height: 1n, round: 0, blockId: id1, signatures: [sig1] };
  const tx = utf8('name=satoshi');
  const header2: Header = {
    ...b1.header,
    height: 2n,
    time: bftTime(commit1, validators),
    lastBlockId: id1,
    lastCommitHash: commitHash(commit1),
    dataHash: txsHash([tx]),
    appHash: new Uint8Array(8),
    lastResultsHash: lastResultsHash([]),
  };
  const b2: Block = { header: header2, data: { txs: [tx] }, evidence: [], lastCommit: commit1 };
  const id2 = makeBlockId(b2);
  const commitTime2 = parseTime('2024-01-01T00:00:09.000002Z');

  it('derives the validator identity', () => {
    assert.equal(hex(validatorKey.address), 'BB4A62DE567E5E6D46F08C25E86B4D5CA0262432');
    assert.equal(b64(validatorKey.pubKey), '9Pzu33JDYNZEgRi94eSTtmtyBnx1rAMRoc839OIHQ8Q=');
    assert.equal(hex(validatorSetHash(validators)), '639C48377E407029ED0B02428ECC1C8BABA07B5243A83F7FE4A2594BD94C9C1D');
    assert.equal(hex(pubKeyAddress(validatorKey.pubKey)), hex(sha(validatorKey.pubKey).subarray(0, 20)));
  });

  it('block 1', () => {
    assert.equal(hex(b1.header.lastCommitHash), EMPTY_HASH);
    assert.equal(hex(id1.hash), '20A29F8F61EC8BAFCD7E2D6C6D80DDF39DAEC2389708C88C61DADB0FFB9A964F');
    assert.deepEqual([id1.partSetHeader.total, hex(id1.partSetHeader.hash)], [1, '5A5384050A8BF1374CBE774A0353D3FBDA95BF1274C2C8BEE906F6A5EE243217']);
    assert.equal(b64(sig1.signature), 'XT5CoSq00AdY/Suqhz9RTksxLfyIF/OX2jwwz+P7SwD05s1LRRd5O9AbSRDHvnqAUtu6j9jWb3jp1XRmrBUrBg==');
    assert.equal(sig1.blockIdFlag, BlockIDFlag.commit);
    assert.equal(hex(sig1.validatorAddress), 'BB4A62DE567E5E6D46F08C25E86B4D5CA0262432');
  });

  it('block 2', () => {
    assert.equal(formatTime(header2.time), '2024-01-01T00:00:04.9Z');
    assert.equal(hex(header2.lastCommitHash), '94987C13F848E4689EF5E162ACFF56DF895A073B636B7BA8FCE1AD22E8E9B9C0');
    assert.equal(hex(header2.dataHash), '3B6C72BEBC4465E6C8702D56EB3F550AC642123CB8BABA21012D29023906B7CF');
    assert.equal(hex(header2.lastResultsHash), EMPTY_HASH);
    assert.equal(hex(id2.hash), '759D9B7DF263D438A7180F8C87A78A5CC84A3863710D0472DA4C9FBAA0B5A407');
    assert.deepEqual([id2.partSetHeader.total, hex(id2.partSetHeader.hash)], [1, '5A196A49189B5914381366082C40E723CBCDFB2F81C95BA79EC841D65C20E697']);
    assert.equal(hex(txHash(tx)), '57D835FBBA0DBF922D8A2EDA56922C9B24E7760927F245A7684A736C4769DB8A');
  });

  it('the 109 sign bytes of the height-2 commit and its signature', () => {
    const bytes = voteSignBytes(CHAIN_ID, { type: SignedMsgType.precommit, height: 2n, round: 0, blockId: id2, timestamp: commitTime2 });
    const want =
      '6c 08 02 11 0200000000000000 22 48 0a 20 759d9b7df263d438a7180f8c87a78a5cc84a3863710d0472da4c9fbaa0b5a407' +
      '12 24 08 01 12 20 5a196a49189b5914381366082c40e723cbcdfb2f81c95ba79ec841d65c20e697' +
      '2a 09 08 89 81 c8 ac 06 10 d0 0f 32 0a 746573742d636861696e';
    assert.equal(bytes.length, 109);
    assert.equal(hex(bytes), hex(unhex(want)));
    const sig2 = signCommit(CHAIN_ID, 2n, 0, id2, commitTime2, validatorKey.privKey);
    assert.equal(b64(sig2.signature), '14q4sDrj2mqLwl8y6mTuZq1NFy7tRgzD3ohrSKnd52XF8YI6g5IPJMF8GKKXOlpjJtmJuwktrVJInV8n0/H9Bg==');
  });

  it('verifies commit signatures and rejects tampering', () => {
    const pub = validatorKey.pubKey;
    assert.ok(verifyCommitSig(CHAIN_ID, 1n, 0, id1, sig1, pub));
    assert.ok(!verifyCommitSig('other-chain', 1n, 0, id1, sig1, pub));
    assert.ok(!verifyCommitSig(CHAIN_ID, 2n, 0, id1, sig1, pub));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 1, id1, sig1, pub));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id2, sig1, pub));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id1, { ...sig1, timestamp: commitTime2 }, pub));
    const bad = new Uint8Array(sig1.signature);
    bad[0]! ^= 1;
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id1, { ...sig1, signature: bad }, pub));
    const other = ed25519KeyFromSeed(sha('other'));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id1, sig1, other.pubKey));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id1, commitSigAbsent(), pub));
    // A nil precommit (flag 3) signs the zero BlockID.
    const nilSig = { ...signCommit(CHAIN_ID, 1n, 0, zeroBlockId(), commitTime1, validatorKey.privKey), blockIdFlag: BlockIDFlag.nil };
    assert.ok(verifyCommitSig(CHAIN_ID, 1n, 0, id1, nilSig, pub));
    assert.ok(!verifyCommitSig(CHAIN_ID, 1n, 0, id1, { ...nilSig, blockIdFlag: BlockIDFlag.commit }, pub));
  });

  it('absent CommitSig shape', () => {
    const a = commitSigAbsent();
    assert.deepEqual([a.blockIdFlag, a.validatorAddress.length, formatTime(a.timestamp), a.signature.length], [1, 0, '0001-01-01T00:00:00Z', 0]);
    assert.equal(hex(commitSigProto(a)), '08011A0B088092B8C398FEFFFFFF01');
  });
});

describe('BFT time', () => {
  const keys = ['v1', 'v2', 'v3'].map((s) => ed25519KeyFromSeed(sha(s)));
  const vals: Validator[] = keys.map((k, i) => ({ address: k.address, pubKey: k.pubKey, votingPower: [10n, 20n, 40n][i]! }));
  const blockId: BlockID = { hash: sha('b'), partSetHeader: { total: 1, hash: sha('p') } };
  const at = (s: number): Timestamp => ({ seconds: BigInt(s), nanos: 0 });
  const commitOf = (times: (number | undefined)[]): Commit => ({
    height: 5n,
    round: 0,
    blockId,
    signatures: times.map((t, i) => (t === undefined ? commitSigAbsent() : signCommit('c', 5n, 0, blockId, at(t), keys[i]!.privKey))),
  });

  it('is the weighted median of the non-absent timestamps', () => {
    // total 70, median weight 35: sorted 100(40) → the 40-power vote covers it.
    assert.deepEqual(bftTime(commitOf([300, 200, 100]), vals), at(100));
    // sorted 100(10),200(20),300(40): 35-10=25 > 20, 25-20=5 ≤ 40 → 300.
    assert.deepEqual(bftTime(commitOf([100, 200, 300]), vals), at(300));
    // without the 40-power vote: total 30, median 15: 100(10) → 5 ≤ 20 → 200.
    assert.deepEqual(bftTime(commitOf([100, 200, undefined]), vals), at(200));
    assert.deepEqual(bftTime(commitOf([7, undefined, undefined]), vals), at(7));
  });

  it('rejects a signer outside the validator set', () => {
    assert.throws(() => bftTime(commitOf([1, 2, 3]), vals.slice(1)), /not found/);
  });
});

describe('key files', () => {
  it('priv_validator_key.json in CometBFT format, round trip', () => {
    const json = validatorKeyJson(validatorKey);
    const privB64 = b64(new Uint8Array([...sha('validator-seed'), ...validatorKey.pubKey]));
    assert.equal(
      json,
      '{\n  "address": "BB4A62DE567E5E6D46F08C25E86B4D5CA0262432",\n  "pub_key": {\n    "type": "tendermint/PubKeyEd25519",\n' +
        '    "value": "9Pzu33JDYNZEgRi94eSTtmtyBnx1rAMRoc839OIHQ8Q="\n  },\n  "priv_key": {\n    "type": "tendermint/PrivKeyEd25519",\n' +
        `    "value": "${privB64}"\n  }\n}`,
    );
    assert.deepEqual(readValidatorKey(json), validatorKey);
    const fresh = generateValidatorKey();
    assert.deepEqual(readValidatorKey(validatorKeyJson(fresh)), fresh);
    assert.equal(fresh.privKey.length, 64);
    assert.equal(hex(fresh.address), hex(sha(fresh.pubKey).subarray(0, 20)));
    // lower-case address is accepted (HexBytes decoding is case-insensitive)
    const lower = JSON.parse(json) as { address: string };
    lower.address = lower.address.toLowerCase();
    assert.deepEqual(readValidatorKey(JSON.stringify(lower)), validatorKey);
  });

  it('names the offending field', () => {
    const good = JSON.parse(validatorKeyJson(validatorKey)) as Record<string, any>;
    const variant = (f: (o: Record<string, any>) => void): string => {
      const o = structuredClone(good);
      f(o);
      return JSON.stringify(o);
    };
    const other = ed25519KeyFromSeed(sha('other'));
    const cases: [string, RegExp][] = [
      ['not json', /priv_validator_key\.json: \(file\): not valid JSON/],
      [variant((o) => delete o['address']), /priv_validator_key\.json: address: missing/],
      [variant((o) => (o['address'] = 'XYZ')), /: address: expected 20 bytes of hex/],
      [variant((o) => (o['address'] = hex(other.address))), /: address: does not match pub_key/],
      [variant((o) => (o['pub_key'].type = 'tendermint/PubKeySecp256k1')), /: pub_key\.type: expected "tendermint\/PubKeyEd25519"/],
      [variant((o) => (o['pub_key'].value = 'AAA')), /: pub_key\.value: expected a base64 string/],
      [variant((o) => (o['pub_key'].value = b64(new Uint8Array(33)))), /: pub_key\.value: expected 32 bytes, got 33/],
      [variant((o) => (o['pub_key'].value = b64(other.pubKey))), /: pub_key\.value: does not match priv_key/],
      [variant((o) => delete o['priv_key'].value), /: priv_key\.value: missing/],
      [variant((o) => (o['priv_key'].value = b64(new Uint8Array([...sha('validator-seed'), ...other.pubKey])))), /: priv_key\.value: the last 32 bytes/],
    ];
    for (const [json, re] of cases) {
      assert.throws(() => readValidatorKey(json), (e: unknown) => e instanceof DomainError && e.is('corrupt') && re.test(e.message), json);
    }
  });

  it('node_key.json and node id', () => {
    const key = generateNodeKey();
    const json = nodeKeyJson(key);
    assert.match(json, /^\{\n  "priv_key": \{\n    "type": "tendermint\/PrivKeyEd25519",\n    "value": "[A-Za-z0-9+/]{86}=="\n  \}\n\}$/);
    const back = readNodeKey(json);
    assert.deepEqual(back, key);
    assert.match(nodeId(back), /^[0-9a-f]{40}$/);
    assert.equal(nodeId(back), Buffer.from(sha(key.pubKey).subarray(0, 20)).toString('hex'));
    assert.equal(nodeId(validatorKey), 'bb4a62de567e5e6d46f08c25e86b4d5ca0262432');
    assert.throws(() => readNodeKey('{}'), /node_key\.json: priv_key: missing/);
  });

  it('priv_validator_state.json', () => {
    const json = privValidatorStateJson(initialPrivValidatorState());
    assert.equal(json, '{\n  "height": "0",\n  "round": 0,\n  "step": 0\n}');
    assert.deepEqual(readPrivValidatorState(json), { height: 0n, round: 0, step: 0 });
    const signed = { height: 12n, round: 1, step: 3, signature: Uint8Array.of(1, 2), signBytes: Uint8Array.of(0xab) };
    const j2 = privValidatorStateJson(signed);
    assert.match(j2, /"signature": "AQI=",\n  "signbytes": "AB"/);
    assert.deepEqual(readPrivValidatorState(j2), signed);
    assert.throws(() => readPrivValidatorState('{"height":0,"round":0,"step":0}'), /priv_validator_state\.json: height:/);
    assert.throws(() => readPrivValidatorState('{"height":"1","round":0,"step":9}'), /priv_validator_state\.json: step:/);
  });
});
