/**
 * Hardforks by block time (docs/configuration.md "Hardforks"): a dev node started on Prague with Osaka
 * scheduled (`--hardfork prague --osaka-time`) runs CLZ (EIP-7939) as an invalid opcode before the
 * activation and as CLZ from the first block at or after it; eth_config (EIP-7910) reports the current
 * and next fork, valid against execution-apis' schema; Osaka's per-tx gas cap (EIP-7825) refuses a
 * 16,777,217-gas tx with geth's text; and a home made without chain_config (an older release's
 * Cancun genesis) keeps Cancun.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc, toHex, waitForReceipt } from '../helpers/rpc.js';
import { assertConforms } from '../helpers/schema.js';

/** init code: PUSH1 1, CLZ (0x1e), PUSH1 0, SSTORE, STOP — stores clz(1) = 255 in the new contract's slot 0 */
const CLZ_INIT = '0x6001' + '1e' + '600055' + '00';
/** far enough ahead that no block reaches it before the test moves the dev clock there */
const OSAKA_AHEAD_S = 1_000_000;

async function sendClz(node: FerryNode): Promise<any> {
  const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from: devAddress(1), data: CLZ_INIT, gas: toHex(100_000) }]);
  return waitForReceipt(node.url, hash);
}

describe('a dev chain scheduled Prague → Osaka', () => {
  let node: FerryNode;
  let osakaTime: number;

  before(async () => {
    osakaTime = Math.floor(Date.now() / 1000) + OSAKA_AHEAD_S;
    node = await startFerry({ args: ['--dev', '--hardfork', 'prague', '--osaka-time', String(osakaTime)] });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('the genesis names prague and chain_config.osaka_time', () => {
    const g = JSON.parse(readFileSync(join(node.home, 'config', 'genesis.json'), 'utf8'));
    assert.equal(g.app_state.evm.hardfork, 'prague');
    assert.deepEqual(g.app_state.evm.chain_config, { osaka_time: String(osakaTime) });
  });

  it('eth_config before the activation: current prague, next (and last) osaka, valid against execution-apis', async () => {
    const cfg = await call<any>(node.url, 'eth_config');
    assertConforms('eth_config', cfg);
    assert.equal(cfg.current.activationTime, 0);
    assert.equal(cfg.current.precompiles.P256VERIFY, undefined);
    assert.equal(cfg.current.systemContracts.HISTORY_STORAGE_ADDRESS, '0x0000f90827f1c53a10cb7a02335b175320002935');
    assert.equal(cfg.next.activationTime, osakaTime);
    assert.equal(cfg.next.precompiles.P256VERIFY, '0x0000000000000000000000000000000000000100');
    assert.deepEqual(cfg.last, cfg.next);
    assert.notEqual(cfg.current.forkId, cfg.next.forkId);
    assert.equal(cfg.current.chainId, await call<string>(node.url, 'eth_chainId'));
  });

  it('CLZ is an invalid opcode before osaka_time', async () => {
    const r = await sendClz(node);
    assert.equal(r.status, '0x0');
    assert.equal(r.gasUsed, toHex(100_000), 'an invalid opcode consumes all gas');
    const block = await call<any>(node.url, 'eth_getBlockByNumber', [r.blockNumber, false]);
    assert.ok(Number(block.timestamp) < osakaTime);
  });

  it('a 16,777,217-gas tx is fine on Prague', async () => {
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from: devAddress(2), to: devAddress(3), gas: toHex(16_777_217) }]);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
  });

  it('from the first block at osaka_time, CLZ runs; eth_config reports osaka with nothing next', async () => {
    await call(node.url, 'evm_setNextBlockTimestamp', [toHex(osakaTime)]);
    await call(node.url, 'evm_mine');
    const head = await call<any>(node.url, 'eth_getBlockByNumber', ['latest', false]);
    assert.equal(Number(head.timestamp), osakaTime);
    const r = await sendClz(node);
    assert.equal(r.status, '0x1');
    assert.equal(await call(node.url, 'eth_getStorageAt', [r.contractAddress, '0x0', 'latest']), toHex(255).replace('0x', '0x' + '0'.repeat(62)));
    const cfg = await call<any>(node.url, 'eth_config');
    assertConforms('eth_config', cfg);
    assert.equal(cfg.current.activationTime, osakaTime);
    assert.equal(cfg.next, null);
    assert.equal(cfg.last, null);
  });

  it("Osaka refuses a 16,777,217-gas tx with geth's text (EIP-7825)", async () => {
    const res = await rpc(node.url, 'eth_sendTransaction', [{ from: devAddress(2), to: devAddress(3), gas: toHex(16_777_217) }]);
    assert.ok(res.error, JSON.stringify(res));
    assert.match(res.error.message, /transaction gas limit too high \(cap: 16777216, tx: 16777217\)/);
    const ok = await call<string>(node.url, 'eth_sendTransaction', [{ from: devAddress(2), to: devAddress(3), gas: toHex(16_777_216) }]);
    assert.equal((await waitForReceipt(node.url, ok)).status, '0x1');
  });

  it("eth_estimateGas's upper bound on Osaka is EIP-7825's cap", async () => {
    // an endless loop (JUMPDEST, PUSH1 0, JUMP) needs every gas it is given
    const res = await rpc(node.url, 'eth_estimateGas', [{ from: devAddress(0), data: '0x5b600056' }]);
    assert.ok(res.error, JSON.stringify(res));
    assert.match(res.error.message, /gas required exceeds allowance \(16777216\)/);
  });

  it('eth_call at a Prague block still sees CLZ as invalid; at the head it runs', async () => {
    // a call's code: PUSH1 1, CLZ, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN (as init code of a creation call)
    const code = '0x6001' + '1e' + '600052' + '60206000f3';
    const at = await call<string>(node.url, 'eth_call', [{ from: devAddress(0), data: code }, 'latest']);
    assert.equal(BigInt(at), 255n);
    const old = await rpc(node.url, 'eth_call', [{ from: devAddress(0), data: code }, '0x1']);
    assert.ok(old.error, JSON.stringify(old));
    assert.match(old.error.message, /invalid opcode/);
  });
});

describe('fork choice of a new and an existing home', () => {
  it('a dev home made with --hardfork osaka has P-256 and nothing next; the existing home refuses another --hardfork', async () => {
    const node = await startFerry({ args: ['--dev', '--hardfork', 'osaka'] });
    try {
      const cfg = await call<any>(node.url, 'eth_config');
      assertConforms('eth_config', cfg);
      assert.equal(cfg.current.precompiles.P256VERIFY, '0x0000000000000000000000000000000000000100');
      assert.equal(cfg.next, null);
    } finally {
      assert.equal(await node.stop(), 0);
    }
    await assert.rejects(startFerry({ home: node.home, args: ['--dev', '--hardfork', 'cancun'] }), /runs osaka; --hardfork and --<fork>-time apply only when a home is created/);
  });

  it('a Cancun home without chain_config: eth_config reports cancun and no next fork', async () => {
    const node = await startFerry({ args: ['--dev'] }); // the test helper's fresh homes are Cancun
    try {
      const g = JSON.parse(readFileSync(join(node.home, 'config', 'genesis.json'), 'utf8'));
      assert.equal(g.app_state.evm.hardfork, 'cancun');
      assert.equal(g.app_state.evm.chain_config, undefined);
      const cfg = await call<any>(node.url, 'eth_config');
      assertConforms('eth_config', cfg);
      assert.equal(cfg.current.blobSchedule.max, 6);
      assert.deepEqual(Object.keys(cfg.current.systemContracts), ['BEACON_ROOTS_ADDRESS']);
      assert.equal(cfg.next, null);
      const r = await sendClz(node);
      assert.equal(r.status, '0x0');
    } finally {
      assert.equal(await node.stop(), 0);
    }
  });
});
