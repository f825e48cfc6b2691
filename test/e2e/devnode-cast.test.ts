/**
 * Foundry's cast against `ferry dev`: `cast send --unlocked --from <dev account>` (eth_sendTransaction
 * with a node-held dev key, mined at once), `cast rpc anvil_*` / `evm_*` with their effects on the
 * blocks, and the manual mode keeping a `cast send` pending until `cast rpc evm_mine`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { blockNumber, call } from '../helpers/rpc.js';

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');

describe('cast against ferry start --dev', () => {
  let node: FerryNode;
  const cast = async (...args: string[]) => (await promisify(execFile)(CAST, [...args, '--rpc-url', node.url])).stdout.trim();

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('cast send --unlocked --from a dev account is mined in the next block', async () => {
    const start = await blockNumber(node.url);
    const out = JSON.parse(await cast('send', '--unlocked', '--from', devAddress(4), devAddress(5), '--value', '12345', '--json'));
    assert.equal(out.status, '0x1');
    assert.equal(out.from.toLowerCase(), devAddress(4).toLowerCase());
    assert.equal(Number(out.blockNumber), start + 1);
  });

  it('cast rpc anvil_mine, evm_increaseTime, anvil_getAutomine', async () => {
    const start = await blockNumber(node.url);
    assert.equal(await cast('rpc', 'anvil_mine', '0x2', '0x5'), 'null');
    assert.equal(await blockNumber(node.url), start + 2);
    const a = await call<any>(node.url, 'eth_getBlockByNumber', [`0x${(start + 1).toString(16)}`, false]);
    const b = await call<any>(node.url, 'eth_getBlockByNumber', [`0x${(start + 2).toString(16)}`, false]);
    assert.equal(Number(b.timestamp) - Number(a.timestamp), 5);
    assert.equal(await cast('rpc', 'evm_increaseTime', '60'), '60');
    assert.equal(await cast('rpc', 'anvil_getAutomine'), 'true');
  });

  it('manual mode: cast send stays pending until cast rpc evm_mine', async () => {
    assert.equal(await cast('rpc', 'evm_setAutomine', 'false'), 'null');
    const start = await blockNumber(node.url);
    const hash = await cast('send', '--unlocked', '--from', devAddress(6), devAddress(7), '--value', '1', '--async');
    assert.equal((await call<any>(node.url, 'eth_getTransactionByHash', [hash])).blockNumber, null);
    assert.equal(await blockNumber(node.url), start);
    assert.equal(await cast('rpc', 'evm_mine'), '"0x0"');
    const receipt = await call<any>(node.url, 'eth_getTransactionReceipt', [hash]);
    assert.equal(Number(receipt.blockNumber), start + 1);
    await cast('rpc', 'evm_setAutomine', 'true');
  });
});
