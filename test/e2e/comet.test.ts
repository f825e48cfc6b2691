/**
 * Surface B against a real ferry with @cosmjs/tendermint-rpc (connectComet must pick Comet38Client):
 * every call CosmJS's Comet38 client makes, compared with what Surface A says about the same blocks
 * and transactions; and an independent check of what a light client checks — each header's hash
 * recomputed from its fields, each commit signature verified over the vote sign-bytes with
 * @noble/curves (ferry signs with node:crypto), validators_hash, and tx proofs against data_hash.
 * The encoders below are written from the CometBFT spec for this test, not taken from src/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Comet38Client, connectComet, isComet38Client, type CometClient } from '@cosmjs/tendermint-rpc';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { JsonRpcProvider, Network, Transaction, Wallet, parseEther } from 'ethers';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { CHAIN_ID, EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { verifyAccountProof } from '../helpers/proof.js';
import WebSocket from 'ws';
import { call, waitFor, waitForReceipt } from '../helpers/rpc.js';

const GWEI = 10n ** 9n;
/** init code that reverts at once: PUSH1 0 PUSH1 0 REVERT */
const REVERTING_INIT_CODE = '0x60006000fd';

// ---- an independent CometBFT v0.38 encoder (protobuf, Merkle, header hash, vote sign-bytes) ----

function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const cat = (...parts: (Uint8Array | number[])[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const key = (field: number, wire: number): number[] => varint(BigInt((field << 3) | wire));
/** varint field, omitted when zero */
const fVarint = (field: number, v: bigint): number[] => (v === 0n ? [] : [...key(field, 0), ...varint(v)]);
/** bytes/string/message field; `always` for non-nullable embedded messages */
const fBytes = (field: number, b: Uint8Array, always = false): number[] =>
  b.length === 0 && !always ? [] : [...key(field, 2), ...varint(BigInt(b.length)), ...b];
const fFixed64 = (field: number, v: bigint): number[] => {
  if (v === 0n) return [];
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v, true);
  return [...key(field, 1), ...b];
};
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const b64 = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'base64'));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function merkle(items: Uint8Array[]): Uint8Array {
  if (items.length === 0) return sha256(new Uint8Array());
  if (items.length === 1) return sha256(cat([0], items[0]!));
  let k = 1;
  while (k * 2 < items.length) k *= 2;
  return sha256(cat([1], merkle(items.slice(0, k)), merkle(items.slice(k))));
}

/** RFC3339 as CometBFT prints it → {seconds, nanos} */
function parseTime(s: string): { seconds: bigint; nanos: bigint } {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(s);
  assert.ok(m, `time ${s}`);
  return { seconds: BigInt(Date.parse(m[1] + 'Z') / 1000), nanos: BigInt((m[2] ?? '').padEnd(9, '0')) };
}
const timestampProto = (t: string): Uint8Array => {
  const { seconds, nanos } = parseTime(t);
  return cat(fVarint(1, seconds), fVarint(2, nanos));
};
const blockIdProto = (id: any): Uint8Array =>
  cat(fBytes(1, hex(id.hash)), fBytes(2, cat(fVarint(1, BigInt(id.parts.total)), fBytes(2, hex(id.parts.hash))), true));

function headerHash(h: any): Uint8Array {
  const bytesValue = (b: Uint8Array) => Uint8Array.from(fBytes(1, b));
  return merkle([
    cat(fVarint(1, BigInt(h.version.block)), fVarint(2, BigInt(h.version.app ?? '0'))),
    Uint8Array.from(fBytes(1, utf8(h.chain_id))),
    Uint8Array.from(fVarint(1, BigInt(h.height))),
    timestampProto(h.time),
    blockIdProto(h.last_block_id),
    ...[
      h.last_commit_hash,
      h.data_hash,
      h.validators_hash,
      h.next_validators_hash,
      h.consensus_hash,
      h.app_hash,
      h.last_results_hash,
      h.evidence_hash,
      h.proposer_address,
    ].map((x: string) => bytesValue(hex(x))),
  ]);
}

/** uvarint(len) || proto(CanonicalVote{type, height, round, block_id, timestamp, chain_id}); type 2 = precommit, 1 = prevote */
function precommitSignBytes(chainId: string, height: bigint, round: bigint, blockId: any, timestamp: string, type = 2n): Uint8Array {
  const m = cat(
    fVarint(1, type),
    fFixed64(2, height),
    fFixed64(3, round),
    fBytes(4, blockIdProto(blockId), true),
    fBytes(5, timestampProto(timestamp), true),
    fBytes(6, utf8(chainId)),
  );
  return cat(varint(BigInt(m.length)), m);
}

function validatorSetHash(vals: any[]): Uint8Array {
  return merkle(vals.map((v) => cat(fBytes(1, Uint8Array.from(fBytes(1, b64(v.pub_key.value))), true), fVarint(2, BigInt(v.voting_power)))));
}

/** crypto/merkle Proof.Verify: leaf hash of the item and the aunts lead to the root */
function verifyTxProof(root: Uint8Array, txBytes: Uint8Array, p: { total: string; index: string; leaf_hash: string; aunts: string[] }): boolean {
  const item = sha256(txBytes);
  const leaf = sha256(cat([0], item));
  if (toHex(leaf) !== toHex(b64(p.leaf_hash))) return false;
  const aunts = p.aunts.map(b64);
  const compute = (index: bigint, total: bigint, node: Uint8Array, rest: Uint8Array[]): Uint8Array | undefined => {
    if (total === 1n) return rest.length === 0 ? node : undefined;
    if (rest.length === 0) return undefined;
    let k = 1n;
    while (k * 2n < total) k *= 2n;
    const last = rest[rest.length - 1]!;
    const inner = rest.slice(0, -1);
    if (index < k) {
      const left = compute(index, k, node, inner);
      return left && sha256(cat([1], left, last));
    }
    const right = compute(index - k, total - k, node, inner);
    return right && sha256(cat([1], last, right));
  };
  const got = compute(BigInt(p.index), BigInt(p.total), leaf, aunts);
  return got !== undefined && toHex(got) === toHex(root);
}

// ---- helpers ---------------------------------------------------------------------------------

async function raw(url: string, route: string): Promise<any> {
  const res = await fetch(`${url}/${route}`, { signal: AbortSignal.timeout(30_000) });
  const body = (await res.json()) as { result?: unknown; error?: { data?: string } };
  if (body.error) throw new Error(`${route}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/**
 * Disconnects a CosmJS WebSocket client for good. CosmJS 0.39's ReconnectingSocket treats its own
 * disconnect as a dropped connection and reconnects (forever), which keeps the test process alive;
 * its reconnect is switched off first.
 */
function disconnectWs(c: Comet38Client): void {
  const reconnecting = (c as unknown as { client: { socket: { socket: { reconnect(): void } } } }).client.socket;
  reconnecting.socket.reconnect = () => undefined;
  c.disconnect();
}

function collect<T>(stream: { subscribe(l: { next(v: T): void; error(e: unknown): void; complete(): void }): { unsubscribe(): void } }) {
  const items: T[] = [];
  const errors: unknown[] = [];
  const sub = stream.subscribe({ next: (v) => items.push(v), error: (e) => errors.push(e), complete: () => undefined });
  return { items, errors, stop: () => sub.unsubscribe() };
}

describe('Surface B with @cosmjs/tendermint-rpc', () => {
  let node: FerryNode;
  let client: CometClient;
  let wsClient: Comet38Client;
  let provider: JsonRpcProvider;
  let sender: Wallet;
  const recipient = devAddress(5).toLowerCase();
  const evmHashes: string[] = [];
  let nativeTx: Uint8Array;
  let nativeHash: string;
  let failedHash: string;
  let newBlocks: ReturnType<typeof collect<any>>;
  let everything: WebSocket;
  const allEvents: any[] = [];
  let newHeaders: ReturnType<typeof collect<any>>;
  let txEvents: ReturnType<typeof collect<any>>;

  before(async () => {
    node = await startFerry({ args: ['--consensus.timeout_commit', '300ms'] });
    provider = new JsonRpcProvider(node.url, Network.from(EVM_CHAIN_ID), { staticNetwork: true, pollingInterval: 100 });
    sender = devWallet(1, provider);
    client = await connectComet(node.cometUrl);
    wsClient = await Comet38Client.connect(node.cometUrl.replace(/^http/, 'ws'));
    // one socket, subscriptions made in this order: once the last one delivers an event, the server
    // has taken all three
    txEvents = collect(wsClient.subscribeTx(`ethereum_tx.recipient='${recipient}'`));
    newBlocks = collect(wsClient.subscribeNewBlock());
    newHeaders = collect(wsClient.subscribeNewBlockHeader());
    // every event of every kind, in publication order
    everything = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
    await new Promise((resolve, reject) => {
      everything.once('open', resolve);
      everything.once('error', reject);
    });
    everything.on('message', (d) => allEvents.push(JSON.parse(d.toString())));
    everything.send(JSON.stringify({ jsonrpc: '2.0', id: 'all', method: 'subscribe', params: { query: 'tm.event EXISTS' } }));
    // the subscriptions are live once each has delivered an event (a block comes every 300 ms)
    await waitFor('events on every subscription', async () =>
      newHeaders.items.length > 0 && newBlocks.items.length > 0 && allEvents.some((e) => e.result?.data !== undefined) ? true : undefined,
    );

    // 1: eth_sendRawTransaction (Surface A)
    const t1 = await sender.sendTransaction({ to: recipient, value: parseEther('1'), gasLimit: 21000n, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI });
    evmHashes.push(t1.hash);
    // 2: the same kind of tx, wrapped as a native TxRaw and sent with broadcast_tx_sync (Surface B)
    const signed = await sender.signTransaction({
      to: recipient,
      value: parseEther('2'),
      nonce: t1.nonce + 1,
      gasLimit: 21000n,
      maxFeePerGas: 10n * GWEI,
      maxPriorityFeePerGas: GWEI,
      chainId: EVM_CHAIN_ID,
      type: 2,
    });
    const rawTx = Uint8Array.from(Buffer.from(signed.slice(2), 'hex'));
    nativeTx = wrapEthereumTx(rawTx, Uint8Array.from(Buffer.from(sender.address.slice(2), 'hex')), 21000n, 10n * GWEI);
    nativeHash = toHex(sha256(nativeTx)).toUpperCase();
    const res = await client.broadcastTxSync({ tx: nativeTx });
    assert.equal(res.code, 0, res.log);
    assert.equal(toHex(res.hash).toUpperCase(), nativeHash);
    // (CometBFT sends `data` as hex, which CosmJS reads as base64; the EVM hash is the signed tx's)
    evmHashes.push(Transaction.from(signed).hash!);
    // 3: a tx that fails in execution (receipt status 0 <-> code 1)
    const t3 = await devWallet(2, provider).sendTransaction({ data: REVERTING_INIT_CODE, gasLimit: 100_000n, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI });
    failedHash = t3.hash;
    for (const h of [...evmHashes, failedHash]) await waitForReceipt(node.url, h);
    // one more block, so every commit is canonical up to the txs' blocks
    const top = Number(BigInt(await call(node.url, 'eth_blockNumber')));
    await waitFor('a block after the txs', async () => (Number(BigInt(await call(node.url, 'eth_blockNumber'))) > top ? true : null));
  });

  after(async () => {
    newBlocks?.stop();
    newHeaders?.stop();
    txEvents?.stop();
    if (wsClient) disconnectWs(wsClient);
    everything?.terminate();
    client?.disconnect();
    provider?.destroy();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('connectComet picks Comet38Client; status agrees with Surface A', async () => {
    assert.ok(isComet38Client(client), 'connectComet must choose the Comet38 client');
    const s = await client.status();
    assert.equal(s.nodeInfo.network, CHAIN_ID);
    assert.match(s.nodeInfo.version, /^0\.38\./);
    const h = s.syncInfo.latestBlockHeight;
    const block = await call(node.url, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
    assert.equal('0x' + toHex(s.syncInfo.latestBlockHash!), block.hash);
    assert.equal(s.validatorInfo.votingPower, 10n);
    assert.deepEqual(await client.health(), null);
  });

  it('block, blockResults, blockchain: same blocks and txs as Surface A; receipt status is the inverse of the code', async () => {
    for (const h of [...evmHashes, failedHash]) {
      const receipt = await call(node.url, 'eth_getTransactionReceipt', [h]);
      const height = Number(BigInt(receipt.blockNumber));
      const b = await client.block(height);
      assert.equal('0x' + toHex(b.blockId.hash), receipt.blockHash, 'EVM block hash == CometBFT header hash');
      const results = await client.blockResults(height);
      const index = Number(BigInt(receipt.transactionIndex));
      const r = results.results[index]!;
      assert.equal(r.code === 0 ? '0x1' : '0x0', receipt.status);
      const ev = r.events.find((e) => e.type === 'ethereum_tx')!;
      assert.equal(ev.attributes.find((a) => a.key === 'ethereumTxHash')!.value, h);
      // the CometBFT tx hash is sha256 of the tx bytes: looking the block's tx up by it finds it here
      const found = await client.tx({ hash: sha256(b.block.txs[index]!) });
      assert.equal(found.height, height);
      assert.equal(found.index, index);
    }
    const failedReceipt = await call(node.url, 'eth_getTransactionReceipt', [failedHash]);
    assert.equal(failedReceipt.status, '0x0');
    const top = (await client.status()).syncInfo.latestBlockHeight;
    const chain = await client.blockchain(1, top);
    const headAfter = (await client.status()).syncInfo.latestBlockHeight;
    // last_height is the store's head when answered (blocks keep coming)
    assert.ok(chain.lastHeight >= top && chain.lastHeight <= headAfter, `last height ${chain.lastHeight} within [${top}, ${headAfter}]`);
    assert.equal(chain.blockMetas.length, Math.min(20, top));
    for (const meta of chain.blockMetas) {
      const eb = await call(node.url, 'eth_getBlockByNumber', ['0x' + meta.header.height.toString(16), false]);
      assert.equal('0x' + toHex(meta.blockId.hash), eb.hash);
      assert.equal(meta.numTxs, eb.transactions.length);
    }
  });

  it('header hashes, commit signatures (verified with @noble/curves) and validators_hash check out at every height', async () => {
    const top = (await client.status()).syncInfo.latestBlockHeight;
    for (let h = 1; h <= top; h++) {
      const headBefore = (await client.status()).syncInfo.latestBlockHeight;
      const commit = await raw(node.cometUrl, `commit?height=${h}`);
      const headAfter = (await client.status()).syncInfo.latestBlockHeight;
      const header = commit.signed_header.header;
      const c = commit.signed_header.commit;
      assert.equal(toHex(headerHash(header)).toUpperCase(), c.block_id.hash, `header hash at ${h}`);
      assert.equal(c.height, String(h));
      const vals = await raw(node.cometUrl, `validators?height=${h}`);
      assert.equal(toHex(validatorSetHash(vals.validators)).toUpperCase(), header.validators_hash, `validators_hash at ${h}`);
      assert.equal(c.signatures.length, vals.validators.length);
      let signed = 0n;
      let total = 0n;
      c.signatures.forEach((sig: any, i: number) => {
        const v = vals.validators[i];
        total += BigInt(v.voting_power);
        if (sig.block_id_flag !== 2) return;
        assert.equal(sig.validator_address, v.address, 'signatures are index-aligned with the validator set');
        assert.equal(toHex(sha256(b64(v.pub_key.value)).subarray(0, 20)).toUpperCase(), v.address);
        const bytes = precommitSignBytes(header.chain_id, BigInt(c.height), BigInt(c.round), c.block_id, sig.timestamp);
        assert.ok(ed25519.verify(b64(sig.signature), bytes, b64(v.pub_key.value)), `commit signature at ${h}`);
        signed += BigInt(v.voting_power);
      });
      assert.ok(signed * 3n > total * 2n, 'more than 2/3 of the power signed');
      // the newest block's commit is the seen one (canonical false) until the next block; a block
      // may arrive at any moment, so judge against the head read around the request
      if (h < headBefore) assert.equal(commit.canonical, true, `commit at ${h} below the head ${headBefore}`);
      if (h === headAfter) assert.equal(commit.canonical, false, `commit at the head ${h}`);
      // CosmJS decodes the same answers
      const cc = await client.commit(h);
      assert.equal(toHex(cc.commit.blockId.hash).toUpperCase(), c.block_id.hash);
      const cv = await client.validators({ height: h });
      assert.equal(cv.total, vals.validators.length);
    }
  });

  it('genesis and abciInfo', async () => {
    const g = await client.genesis();
    assert.equal(g.chainId, CHAIN_ID);
    assert.equal(g.validators.length, 1);
    const info = await client.abciInfo();
    assert.ok((info.lastBlockHeight ?? 0) >= 1);
    const eb = await call(node.url, 'eth_getBlockByNumber', ['0x' + info.lastBlockHeight!.toString(16), false]);
    assert.equal('0x' + toHex(info.lastBlockAppHash!), eb.stateRoot);
  });

  it('tx by native hash with a proof that verifies against data_hash; txSearchAll by the EVM hash', async () => {
    const t = await client.tx({ hash: hex(nativeHash), prove: true });
    assert.equal(toHex(t.hash).toUpperCase(), nativeHash);
    assert.deepEqual(t.tx, nativeTx);
    assert.equal(t.result.code, 0);
    const receipt = await call(node.url, 'eth_getTransactionReceipt', [evmHashes[1]]);
    assert.equal(t.height, Number(BigInt(receipt.blockNumber)));
    assert.equal(t.index, Number(BigInt(receipt.transactionIndex)));
    // the proof, from the raw answer, against the header's data_hash
    const rawTx = await raw(node.cometUrl, `tx?hash=0x${nativeHash}&prove=true`);
    const header = (await raw(node.cometUrl, `header?height=${t.height}`)).header;
    assert.equal(rawTx.proof.root_hash, header.data_hash);
    assert.ok(verifyTxProof(hex(header.data_hash), nativeTx, rawTx.proof.proof), 'tx proof verifies against data_hash');
    assert.ok(!verifyTxProof(hex(header.data_hash), cat(nativeTx, [0]), rawTx.proof.proof), 'a different tx does not');

    for (const evmHash of evmHashes) {
      const found = await client.txSearchAll({ query: `ethereum_tx.ethereumTxHash='${evmHash}'` });
      assert.equal(found.totalCount, 1);
      const r = await call(node.url, 'eth_getTransactionReceipt', [evmHash]);
      assert.equal(found.txs[0]!.height, Number(BigInt(r.blockNumber)));
    }
    const toRecipient = await client.txSearchAll({ query: `ethereum_tx.recipient='${recipient}'` });
    assert.equal(toRecipient.totalCount, 2);
    const bySender = await client.txSearchAll({ query: `message.sender='${sender.address.toLowerCase()}' AND message.module='evm'` });
    assert.equal(bySender.totalCount, 2);
  });

  it('subscriptions: NewBlock and NewBlockHeader for every block, Tx for both transfers to the recipient', async () => {
    await waitFor('two Tx events', async () => (txEvents.items.length >= 2 ? true : null), 10_000);
    assert.deepEqual(txEvents.errors, []);
    const hashes = txEvents.items.map((e) => toHex(e.hash).toUpperCase());
    assert.ok(hashes.includes(nativeHash));
    for (const e of txEvents.items) {
      assert.equal(e.result.code, 0);
      const ev = e.result.events.find((x: any) => x.type === 'ethereum_tx');
      assert.equal(ev.attributes.find((a: any) => a.key === 'recipient').value, recipient);
    }
    assert.ok(newBlocks.items.length >= 2 && newHeaders.items.length >= 2);
    assert.deepEqual(newBlocks.errors, []);
    for (const b of newBlocks.items) {
      const eb = await call(node.url, 'eth_getBlockByNumber', ['0x' + b.header.height.toString(16), false]);
      const cb = await client.block(b.header.height);
      assert.equal(toHex(cb.blockId.hash), eb.hash.slice(2));
      assert.equal(b.txs.length, eb.transactions.length);
    }
    const heights = newHeaders.items.map((h) => h.height);
    for (let i = 1; i < heights.length; i++) assert.equal(heights[i], heights[i - 1] + 1, 'no header skipped');
  });

  it('broadcastTxSync refuses bytes that are not a native tx; nothing enters the mempool', async () => {
    const before = await client.numUnconfirmedTxs();
    const r = await client.broadcastTxSync({ tx: Uint8Array.from([1, 2, 3]) });
    assert.notEqual(r.code, 0);
    assert.match(r.log ?? '', /tx parse error|messages|Signatures|body/);
    const after = await client.numUnconfirmedTxs();
    assert.equal(after.total, before.total);
  });

  it('abciQuery: balance and nonce at a height, with an MPT proof against that block\'s stateRoot', async () => {
    const h = (await client.status()).syncInfo.latestBlockHeight - 1;
    const address = hex(sender.address.slice(2));
    const bal = await client.abciQuery({ path: '/evm/balance', data: address, height: h, prove: true });
    assert.equal(bal.code, 0);
    assert.equal(bal.height, h);
    const balance = BigInt('0x' + toHex(bal.value));
    assert.equal(balance, await provider.getBalance(sender.address, h));
    const nonce = await client.abciQuery({ path: '/evm/nonce', data: address, height: h });
    assert.equal(BigInt('0x' + toHex(nonce.value)), BigInt(await provider.getTransactionCount(sender.address, h)));
    const proofNodes = (await import('@ethereumjs/rlp')).RLP.decode(bal.proof!.ops[0]!.data) as Uint8Array[];
    const block = await call(node.url, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
    const account = await verifyAccountProof(block.stateRoot, sender.address, proofNodes.map((n) => '0x' + toHex(n)));
    assert.equal(account?.balance, balance);
    // storage and code of an account: 32 zero bytes and no code; the storage op proves the slot first
    const slot = new Uint8Array(32);
    const st = await client.abciQuery({ path: '/evm/storage', data: cat(address, slot), height: h, prove: true });
    assert.equal(st.code, 0);
    assert.deepEqual(st.value, new Uint8Array(32));
    assert.deepEqual(st.proof!.ops.map((o) => o.type), ['ferry/mpt-storage', 'ferry/mpt-account']);
    const code = await client.abciQuery({ path: '/evm/code', data: address, height: h });
    assert.equal(code.code, 0);
    assert.equal(code.value.length, 0);
    const short = await client.abciQuery({ path: '/evm/storage', data: address });
    assert.equal(short.code, 18);
    assert.match(short.log ?? '', /20-byte address followed by a 32-byte slot/);
    const future = await client.abciQuery({ path: '/evm/balance', data: address, height: h + 1000 });
    assert.equal(future.code, 26);
    const unknown = await client.abciQuery({ path: '/cosmos.bank.v1beta1.Query/Balance', data: new Uint8Array() });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.log ?? '', /unknown query path/);
  });

  it("consensus events of a height come in CometBFT's order; the votes verify (prevote and precommit)", async () => {
    assert.deepEqual(allEvents[0], { jsonrpc: '2.0', id: 'all', result: {} });
    const receipt = await call(node.url, 'eth_getTransactionReceipt', [evmHashes[1]]);
    const H = String(Number(BigInt(receipt.blockNumber)));
    const next = String(Number(H) + 1);
    const seq = allEvents
      .slice(1)
      .map((m) => m.result.data)
      .filter((d) => {
        const v = d.value;
        const height = v.height ?? v.Vote?.height ?? v.header?.height ?? v.block?.header?.height ?? v.TxResult?.height;
        return height === H || (height === next && v.step === 'RoundStepNewHeight');
      });
    const label = (d: any) => {
      const name = d.type.replace('tendermint/event/', '');
      if (name === 'RoundState') return `step:${d.value.step}`;
      if (name === 'Vote') return `Vote:${d.value.Vote.type}`;
      return name;
    };
    const labels = seq.map(label);
    const block = await raw(node.cometUrl, `block?height=${H}`);
    const nTx = block.block.data.txs.length;
    const all = allEvents.slice(1).map((m) => m.result);
    const kinds = (type: string) => all.filter((r) => r.events['tm.event'][0] === type && (r.data.value.height ?? r.data.value.Vote?.height) === H);
    assert.equal(kinds('NewRound').length, 1);
    assert.deepEqual(
      labels,
      [
        'step:RoundStepNewHeight',
        'NewRound',
        'step:RoundStepPropose',
        'CompleteProposal',
        'step:RoundStepPrevote',
        'Vote:1',
        'step:RoundStepPrevote',
        'step:RoundStepPrevote',
        'step:RoundStepPrevote',
        'step:RoundStepPrecommit',
        'Vote:2',
        'step:RoundStepCommit',
        'NewBlock',
        'NewBlockHeader',
        'NewBlockEvents',
        ...Array(nTx).fill('Tx'),
        'step:RoundStepNewHeight',
      ],
    );
    // ValidBlock, Polka and Lock are RoundState payloads: tell them apart by tm.event
    const tmEvents = allEvents
      .slice(1)
      .filter((m) => seq.includes(m.result.data))
      .map((m) => m.result.events['tm.event'][0]);
    assert.deepEqual(tmEvents.slice(5, 10), ['Vote', 'ValidBlock', 'Polka', 'Lock', 'NewRoundStep']);
    const complete = seq[3].value;
    assert.equal(complete.block_id.hash, block.block_id.hash);
    const vals = await raw(node.cometUrl, `validators?height=${H}`);
    const pub = b64(vals.validators[0].pub_key.value);
    for (const v of seq.filter((d: any) => d.type === 'tendermint/event/Vote').map((d: any) => d.value.Vote)) {
      assert.equal(v.validator_address, vals.validators[0].address);
      const bytes = precommitSignBytes(CHAIN_ID, BigInt(v.height), BigInt(v.round), v.block_id, v.timestamp, BigInt(v.type));
      assert.ok(ed25519.verify(b64(v.signature), bytes, pub), `vote ${v.type} verifies`);
    }
    const precommit = seq.find((d: any) => d.value.Vote?.type === 2).value.Vote;
    const commit = await raw(node.cometUrl, `commit?height=${H}`);
    assert.equal(precommit.signature, commit.signed_header.commit.signatures[0].signature, 'the precommit is the commit signature');
  });

  it('block_by_hash and header_by_hash name the same block as eth_getBlockByHash', async () => {
    const receipt = await call(node.url, 'eth_getTransactionReceipt', [evmHashes[0]]);
    const byHash = await client.block(Number(BigInt(receipt.blockNumber)));
    const rawBlock = await raw(node.cometUrl, `block_by_hash?hash=${receipt.blockHash}`);
    assert.equal(rawBlock.block_id.hash, receipt.blockHash.slice(2).toUpperCase());
    assert.equal(rawBlock.block.header.height, String(byHash.block.header.height));
    const rawHeader = await raw(node.cometUrl, `header_by_hash?hash=${receipt.blockHash}`);
    assert.deepEqual(rawHeader.header, rawBlock.block.header);
    const missing = await raw(node.cometUrl, `block_by_hash?hash=0x${'00'.repeat(32)}`);
    assert.deepEqual(missing, { block_id: { hash: '', parts: { total: 0, hash: '' } }, block: null });
  });

  it('broadcastTxCommit waits for the block; broadcastTxAsync returns at once; both land on Surface A', async () => {
    const w = devWallet(3, provider);
    const nonce = await provider.getTransactionCount(w.address, 'latest');
    const sign = (n: number) =>
      w.signTransaction({ to: recipient, value: 1n, nonce: n, gasLimit: 21000n, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 });
    const wrap = (signedTx: string) => wrapEthereumTx(Uint8Array.from(Buffer.from(signedTx.slice(2), 'hex')), hex(w.address.slice(2)), 21000n, 10n * GWEI);
    const first = await sign(nonce);
    const committed = await (client as Comet38Client).broadcastTxCommit({ tx: wrap(first) });
    assert.equal(committed.checkTx.code, 0);
    assert.equal(committed.txResult?.code, 0);
    const r1 = await call(node.url, 'eth_getTransactionReceipt', [Transaction.from(first).hash]);
    assert.equal(committed.height, Number(BigInt(r1.blockNumber)));
    assert.equal(toHex(committed.hash).toUpperCase(), toHex(sha256(wrap(first))).toUpperCase());
    const second = await sign(nonce + 1);
    const asyncRes = await client.broadcastTxAsync({ tx: wrap(second) });
    assert.equal(toHex(asyncRes.hash).toUpperCase(), toHex(sha256(wrap(second))).toUpperCase());
    await waitForReceipt(node.url, Transaction.from(second).hash!);
    // a tx already in the chain is the same tx to both surfaces: sending it again is refused
    const again = await client.broadcastTxSync({ tx: wrap(first) });
    assert.notEqual(again.code, 0);
  });

  it('check_tx checks without adding to the mempool; unconfirmed_txs lists the native bytes of pending txs', async () => {
    const w = devWallet(4, provider);
    const nonce = await provider.getTransactionCount(w.address, 'latest');
    const signedTx = await w.signTransaction({ to: recipient, value: 1n, nonce: nonce + 5, gasLimit: 21000n, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI, chainId: EVM_CHAIN_ID, type: 2 });
    const native = wrapEthereumTx(Uint8Array.from(Buffer.from(signedTx.slice(2), 'hex')), hex(w.address.slice(2)), 21000n, 10n * GWEI);
    const checked = await raw(node.cometUrl, `check_tx?tx=0x${toHex(native)}`);
    assert.equal(checked.code, 0);
    assert.equal('0x' + toHex(b64(checked.data)), Transaction.from(signedTx).hash);
    assert.equal(await call(node.url, 'eth_getTransactionByHash', [Transaction.from(signedTx).hash]), null, 'not in the pool');
    // now submit it: its nonce is ahead, so it waits in the pool (queued)
    const sync = await client.broadcastTxSync({ tx: native });
    assert.equal(sync.code, 0, sync.log);
    const pool = await raw(node.cometUrl, 'unconfirmed_txs?limit=100');
    assert.ok(pool.txs.includes(Buffer.from(native).toString('base64')), 'the native bytes as broadcast');
    const n = await client.numUnconfirmedTxs();
    assert.ok(n.total >= 1);
    assert.equal(Number(pool.total), n.total);
  });
});
