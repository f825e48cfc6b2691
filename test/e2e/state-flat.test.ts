/**
 * The flat state layer through the real `ferry` process: `ferry state verify` agrees with the stored
 * root on a live chain and exits non-zero once a flat row is corrupted; a home without the flat tables
 * (written before the layer existed) gets them rebuilt at start, answering every past height as before.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ContractFactory, Interface } from 'ethers';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry } from '../helpers/node.js';
import { FERRY_BIN } from '../helpers/paths.js';
import { blockNumber, call, toHex, waitForReceipt } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

const ARGS = ['--consensus.timeout_commit', '200ms'];
const GWEI = 10n ** 9n;

function verify(home: string, ...extra: string[]) {
  const r = spawnSync(process.execPath, [FERRY_BIN, 'state', 'verify', '--home', home, ...extra], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** balances, nonces, token balances, code and a storage slot at every height */
async function history(url: string, height: number, token: string): Promise<unknown[]> {
  const iface = new Interface(compileToken().abi);
  const out: unknown[] = [];
  for (let h = 0; h <= height; h++) {
    for (const i of [0, 1, 5]) {
      const a = devAddress(i);
      out.push(await call(url, 'eth_getBalance', [a, toHex(h)]), await call(url, 'eth_getTransactionCount', [a, toHex(h)]));
      out.push(await call(url, 'eth_call', [{ to: token, data: iface.encodeFunctionData('balanceOf', [a]) }, toHex(h)]).catch((e: Error) => e.message));
    }
    out.push(await call(url, 'eth_getCode', [token, toHex(h)]), await call(url, 'eth_getStorageAt', [token, '0x2', toHex(h)]));
  }
  return out;
}

describe('flat state layer', () => {
  it('state verify matches the stored root, detects a corrupted row, and an old home is rebuilt at start', async () => {
    const node = await startFerry({ args: ARGS });
    const compiled = compileToken();
    const owner = devWallet(0);
    const send = async (nonce: number, tx: Record<string, unknown>) =>
      waitForReceipt(node.url, await call<string>(node.url, 'eth_sendRawTransaction', [
        await owner.signTransaction({ chainId: EVM_CHAIN_ID, nonce, gasLimit: 2_000_000n, type: 2, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, ...tx }),
      ]));
    const deploy = await new ContractFactory(compiled.abi, compiled.bytecode).getDeployTransaction('Flat', 'FLT', 10n ** 24n);
    const token = (await send(0, deploy)).contractAddress as string;
    const iface = new Interface(compiled.abi);
    for (let i = 1; i <= 3; i++) await send(i, { to: token, data: iface.encodeFunctionData('transfer', [devAddress(5), BigInt(i) * 10n ** 18n]) });
    await send(4, { to: devAddress(1), value: 12345n });
    const height = await blockNumber(node.url);
    const before = await history(node.url, height, token);
    assert.equal(await node.stop(), 0);

    // the operator's check on the stopped home: latest and an older height
    const ok = verify(node.home);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /OK: the flat state matches/);
    const old = verify(node.home, '--height', '1');
    assert.equal(old.code, 0, old.out);
    assert.match(old.out, /^height 1:/m);

    const dbPath = join(node.home, 'data', 'ferry.db');
    const top = height;
    // corrupt one account row at the top height: verify must fail with exit code 2
    {
      const db = new Database(dbPath);
      const row = db.prepare('SELECT addr, height, v FROM state_accounts WHERE height <= ? ORDER BY height DESC LIMIT 1').get(top) as { addr: Buffer; height: number; v: Buffer };
      db.prepare('UPDATE state_accounts SET v = ? WHERE addr = ? AND height = ?').run(Buffer.concat([row.v.subarray(0, row.v.length - 1), Buffer.from([row.v.at(-1)! ^ 1])]), row.addr, row.height);
      db.close();
    }
    const bad = verify(node.home);
    assert.equal(bad.code, 2, bad.out);
    assert.match(bad.out, /MISMATCH/);

    // an older home: no flat tables at all. Start rebuilds them from the stored blocks.
    {
      const db = new Database(dbPath);
      db.exec('DROP TABLE state_accounts; DROP TABLE state_slots; DROP TABLE state_changes;');
      db.close();
    }
    const none = verify(node.home);
    assert.equal(none.code, 1, none.out);
    assert.match(none.out, /no flat state layer/);
    const again = await startFerry({ home: node.home, args: ARGS });
    try {
      assert.match(again.logTail(400), /flat state layer built/);
      assert.deepEqual(await history(again.url, height, token), before, 'every past height reads as before the rebuild');
    } finally {
      assert.equal(await again.stop(), 0);
    }
    const rebuilt = verify(node.home);
    assert.equal(rebuilt.code, 0, rebuilt.out);
  });
});
