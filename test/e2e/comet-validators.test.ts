/**
 * Validator set changes (docs/cometbft-rpc.md): a change scheduled in genesis
 * (`app_state.validator_schedule`) is returned by FinalizeBlock of its height H, published as a
 * ValidatorSetUpdates event with CometBFT's payload, shows in header H+1's next_validators_hash, and
 * `validators` reports the new set from H+2 — CometBFT's rule. A validator ferry has no key for
 * appears in every commit as an absent signature, index-aligned with the canonical set.
 *
 * The node runs with `create_empty_blocks = false` (docs/configuration.md): after the first block a
 * height waits for a transaction, so the chain stays below the scheduled heights until the test has
 * subscribed and sends one transaction per block — nothing depends on how fast the node starts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { FERRY_BIN } from '../helpers/paths.js';
import { call, waitFor } from '../helpers/rpc.js';

/** the schedule: ferry's own validator 10 → 20 and a keyless one added at CHANGE; removed at REMOVE */
const CHANGE = 8;
const REMOVE = 12;

const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const upperHex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();
const addressOf = (pub: Uint8Array): string => upperHex(sha256(pub).subarray(0, 20));

/** blocks wait for a transaction (after the first): the test makes each height it needs */
const NODE_ARGS = ['--consensus.timeout_commit', '400ms', '--consensus.create_empty_blocks', 'false'];

const height = async (node: FerryNode): Promise<number> => Number((await result(node.cometUrl, 'status')).sync_info.latest_block_height);

/** One transfer per block until the chain is at `target` (each tx makes the next height). */
async function mineTo(node: FerryNode, target: number): Promise<void> {
  const sender = new Wallet(devKeys()[1]!);
  for (let h = await height(node); h < target; h = await height(node)) {
    const nonce = Number(await call<string>(node.url, 'eth_getTransactionCount', [sender.address, 'pending']));
    const raw = await sender.signTransaction({ type: 2, chainId: EVM_CHAIN_ID, nonce, to: '0x' + '42'.repeat(20), value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 1n });
    await call(node.url, 'eth_sendRawTransaction', [raw]);
    await waitFor(`height ${h + 1}`, async () => ((await height(node)) > h ? true : null), 30_000);
  }
}

async function result(url: string, route: string): Promise<any> {
  const body = (await (await fetch(`${url}/${route}`)).json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${route}: ${JSON.stringify(body.error)}`);
  return body.result;
}

describe('validator set changes scheduled in genesis', () => {
  let node: FerryNode;
  let home: string;
  let ws: WebSocket;
  const notifications: any[] = [];
  const otherPub = ed25519.getPublicKey(ed25519.utils.randomSecretKey());
  let ownPub: Uint8Array;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'ferry-valset-'));
    const init = spawnSync(process.execPath, [FERRY_BIN, 'init', '--home', home], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(init.status, 0, init.stderr);
    const genesisPath = join(home, 'config', 'genesis.json');
    const genesis = JSON.parse(readFileSync(genesisPath, 'utf8'));
    const ownKey = genesis.validators[0].pub_key;
    ownPub = Uint8Array.from(Buffer.from(ownKey.value, 'base64'));
    const other = { type: 'tendermint/PubKeyEd25519', value: b64(otherPub) };
    genesis.app_state.validator_schedule = [
      { height: String(CHANGE), pub_key: ownKey, power: '20' },
      { height: String(CHANGE), pub_key: other, power: '1' },
      { height: String(REMOVE), pub_key: other, power: '0' },
    ];
    writeFileSync(genesisPath, JSON.stringify(genesis, null, 2));
    node = await startFerry({ home, args: NODE_ARGS });
    ws = new WebSocket(node.cometUrl.replace(/^http/, 'ws') + '/websocket');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (d) => notifications.push(JSON.parse(d.toString())));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'vals', method: 'subscribe', params: { query: "tm.event='ValidatorSetUpdates'" } }));
    await waitFor('the subscribe reply', async () => (notifications.length > 0 ? true : null));
    const h = await height(node);
    assert.ok(h < CHANGE, `subscribed at height ${h}, before ${CHANGE}`);
    await mineTo(node, REMOVE + 2);
  });

  after(async () => {
    ws?.terminate();
    if (node) assert.equal(await node.stop(), 0);
  });

  it('ValidatorSetUpdates fires at the scheduled heights with CometBFT\'s payload', () => {
    assert.deepEqual(notifications[0], { jsonrpc: '2.0', id: 'vals', result: {} });
    const events = notifications.slice(1);
    assert.equal(events.length, 2, JSON.stringify(events));
    const [change, removal] = events;
    assert.deepEqual(change, {
      jsonrpc: '2.0',
      id: 'vals',
      result: {
        query: "tm.event='ValidatorSetUpdates'",
        data: {
          type: 'tendermint/event/ValidatorSetUpdates',
          value: {
            validator_updates: [
              { address: addressOf(ownPub), pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(ownPub) }, voting_power: '20', proposer_priority: '0' },
              { address: addressOf(otherPub), pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(otherPub) }, voting_power: '1', proposer_priority: '0' },
            ],
          },
        },
        events: { 'tm.event': ['ValidatorSetUpdates'] },
      },
    });
    assert.equal(removal.result.data.value.validator_updates[0].voting_power, '0');
  });

  it('block_results of the height carries the updates (CosmJS decodes them)', async () => {
    const r = await result(node.cometUrl, `block_results?height=${CHANGE}`);
    assert.deepEqual(r.validator_updates, [
      { pub_key: { Sum: { type: 'tendermint.crypto.PublicKey_Ed25519', value: { ed25519: b64(ownPub) } } }, power: '20' },
      { pub_key: { Sum: { type: 'tendermint.crypto.PublicKey_Ed25519', value: { ed25519: b64(otherPub) } } }, power: '1' },
    ]);
    assert.equal((await result(node.cometUrl, `block_results?height=${CHANGE - 1}`)).validator_updates, null);
    const client = await Comet38Client.connect(node.cometUrl);
    try {
      const br = await client.blockResults(CHANGE);
      assert.equal(br.validatorUpdates.length, 2);
      assert.equal(br.validatorUpdates[0]!.votingPower, 20n);
      const vals = await client.validators({ height: CHANGE + 2 });
      assert.equal(vals.total, 2);
    } finally {
      client.disconnect();
    }
  });

  it('validators reports the new set from H+2; header H+1 announces it in next_validators_hash', async () => {
    const at = async (h: number) => (await result(node.cometUrl, `validators?height=${h}`)).validators;
    assert.deepEqual((await at(CHANGE + 1)).map((v: any) => v.voting_power), ['10']);
    assert.deepEqual((await at(CHANGE)).map((v: any) => v.voting_power), ['10']);
    const after2 = await at(CHANGE + 2);
    assert.deepEqual(
      after2.map((v: any) => [v.address, v.voting_power]),
      [
        [addressOf(ownPub), '20'],
        [addressOf(otherPub), '1'],
      ],
      'canonical order: power descending',
    );
    assert.deepEqual((await at(REMOVE + 2)).map((v: any) => [v.address, v.voting_power]), [[addressOf(ownPub), '20']]);
    const h1 = (await result(node.cometUrl, `header?height=${CHANGE + 1}`)).header;
    const h2 = (await result(node.cometUrl, `header?height=${CHANGE + 2}`)).header;
    const h0 = (await result(node.cometUrl, `header?height=${CHANGE}`)).header;
    assert.equal(h0.next_validators_hash, h0.validators_hash);
    assert.notEqual(h1.next_validators_hash, h1.validators_hash);
    assert.equal(h2.validators_hash, h1.next_validators_hash);
  });

  it('commits are index-aligned with the set: ferry signs, the keyless validator is absent', async () => {
    const c = (await result(node.cometUrl, `commit?height=${CHANGE + 2}`)).signed_header.commit;
    assert.equal(c.signatures.length, 2);
    assert.equal(c.signatures[0].block_id_flag, 2);
    assert.equal(c.signatures[0].validator_address, addressOf(ownPub));
    assert.deepEqual(c.signatures[1], { block_id_flag: 1, validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: null });
    const before = (await result(node.cometUrl, `commit?height=${CHANGE + 1}`)).signed_header.commit;
    assert.equal(before.signatures.length, 1, 'H+1 is still signed by the old set');
    const status = await result(node.cometUrl, 'status');
    assert.equal(status.validator_info.voting_power, '20');
  });

  it('a restart keeps the sets, the index and the next heights signed by the current set', async () => {
    const before = await result(node.cometUrl, `validators?height=${CHANGE + 2}`);
    const tip = Number((await result(node.cometUrl, 'status')).sync_info.latest_block_height);
    ws.terminate();
    assert.equal(await node.stop(), 0);
    node = await startFerry({ home, args: NODE_ARGS });
    assert.deepEqual(await result(node.cometUrl, `validators?height=${CHANGE + 2}`), before);
    await mineTo(node, tip + 2);
    const c = (await result(node.cometUrl, `commit?height=${tip + 1}`)).signed_header.commit;
    assert.equal(c.signatures.length, 1);
    assert.equal(c.signatures[0].validator_address, addressOf(ownPub));
    const found = await result(node.cometUrl, `block_search?query="block.height=${CHANGE}"`);
    assert.equal(found.total_count, '1');
  });
});
