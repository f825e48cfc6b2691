/**
 * EIP-2935's block-hash history contract on an Osaka dev chain (docs/configuration.md "Hardforks"): the
 * system call at the start of each block stores its parent's hash at slot (number % 8191), so for every
 * block n below the head, eth_getStorageAt(history, n % 8191) and the contract's own get (eth_call with the
 * 32-byte block number as calldata) equal the hash ferry reports for block n — genesis included. The
 * contract reverts for the block it runs in (eth_call at `latest` runs in the head block's context).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFerryOn } from '../helpers/hardfork.js';
import type { FerryNode } from '../helpers/node.js';
import { call, rpc, toHex } from '../helpers/rpc.js';

const HISTORY = '0x0000F90827F1C53a10cb7A02335B175320002935';
/** EIP-2935's HISTORY_SERVE_WINDOW: the ring buffer's length */
const SERVE_WINDOW = 8191;
const BLOCKS = 6;

const word = (n: number) => '0x' + n.toString(16).padStart(64, '0');

describe('EIP-2935 history contract: slots and get() equal the block hashes ferry reports', () => {
  let node: FerryNode;
  let head: number;

  before(async () => {
    node = await startFerryOn('osaka', ['--dev']);
    for (let i = 0; i < BLOCKS; i++) await call(node.url, 'evm_mine');
    head = Number(await call<string>(node.url, 'eth_blockNumber'));
    assert.ok(head >= BLOCKS);
  });
  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('the contract is deployed', async () => {
    const code = await call<string>(node.url, 'eth_getCode', [HISTORY, 'latest']);
    assert.ok(code.length > 2);
  });

  it('every block n below the head: slot n % 8191 and get(n) are the hash of block n', async () => {
    for (let n = 0; n < head; n++) {
      const block = await call<any>(node.url, 'eth_getBlockByNumber', [toHex(n), false]);
      const slot = await call<string>(node.url, 'eth_getStorageAt', [HISTORY, toHex(n % SERVE_WINDOW), 'latest']);
      const got = await call<string>(node.url, 'eth_call', [{ to: HISTORY, data: word(n) }, 'latest']);
      assert.equal(slot, block.hash, `slot of block ${n}`);
      assert.equal(got, block.hash, `get(${n})`);
    }
  });

  it('the slot of block n is written by block n + 1 (not there at block n)', async () => {
    const n = head - 1;
    const before = await call<string>(node.url, 'eth_getStorageAt', [HISTORY, toHex(n), toHex(n)]);
    const after = await call<string>(node.url, 'eth_getStorageAt', [HISTORY, toHex(n), toHex(n + 1)]);
    assert.equal(before, word(0));
    assert.equal(after, (await call<any>(node.url, 'eth_getBlockByNumber', [toHex(n), false])).hash);
  });

  it('get(head) reverts: the contract answers only for blocks before the one it runs in', async () => {
    const res = await rpc(node.url, 'eth_call', [{ to: HISTORY, data: word(head) }, 'latest']);
    assert.ok(res.error, JSON.stringify(res));
    assert.match(res.error.message, /execution reverted/);
  });
});
