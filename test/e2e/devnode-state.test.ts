/**
 * anvil_dumpState / anvil_loadState and `--state FILE` on `ferry dev` (docs/dev-mode.md "Dump and
 * load"): a dump loads into a fresh node with the same balances, code, storage and nonces; the format
 * is Anvil's, checked against the real Anvil binary both ways; `--state` writes the plain JSON at a
 * clean exit and loads it at the next start.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { DEV_BALANCE, devAddress } from '../helpers/accounts.js';
import { freePort, startFerry, type FerryNode } from '../helpers/node.js';
import { call, sleep } from '../helpers/rpc.js';

const ANVIL = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
const word = (n: bigint): string => `0x${n.toString(16).padStart(64, '0')}`;
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const CODE = '0x60005460005260206000f3';

interface Expect {
  balance: bigint;
  nonce: number;
  code: string;
  slots: [string, string][];
}

/** The state the tests set on the source node. */
const WANT: Record<string, Expect> = {
  [A]: { balance: 10n ** 18n + 7n, nonce: 5, code: CODE, slots: [['0x0', word(42n)], ['0x' + 'ff'.repeat(32), word(1n)]] },
  [B]: { balance: 3n, nonce: 0, code: '0x', slots: [] },
};

async function setWant(url: string): Promise<void> {
  for (const [a, w] of Object.entries(WANT)) {
    await call(url, 'anvil_setBalance', [a, `0x${w.balance.toString(16)}`]);
    await call(url, 'anvil_setNonce', [a, w.nonce]);
    await call(url, 'anvil_setCode', [a, w.code]);
    for (const [s, v] of w.slots) await call(url, 'anvil_setStorageAt', [a, s, v]);
  }
}

async function checkWant(url: string, tag = 'latest'): Promise<void> {
  for (const [a, w] of Object.entries(WANT)) {
    assert.equal(BigInt(await call(url, 'eth_getBalance', [a, tag])), w.balance, `balance of ${a}`);
    assert.equal(Number(await call(url, 'eth_getTransactionCount', [a, tag])), w.nonce, `nonce of ${a}`);
    assert.equal(await call(url, 'eth_getCode', [a, tag]), w.code, `code of ${a}`);
    for (const [s, v] of w.slots) assert.equal(await call(url, 'eth_getStorageAt', [a, s, tag]), v, `slot ${s} of ${a}`);
  }
}

/** The real Anvil on a free port (stopped by the caller). */
async function startAnvil(args: string[] = []): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(ANVIL, ['--host', '127.0.0.1', '--port', String(port), '--silent', ...args], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await call(url, 'eth_blockNumber');
      return { url, proc };
    } catch {
      await sleep(100);
    }
  }
  proc.kill('SIGKILL');
  throw new Error('anvil did not start');
}

async function stopAnvil(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGINT');
  await exited;
}

describe('anvil_dumpState / anvil_loadState', () => {
  let src: FerryNode;
  let dump: string;

  before(async () => {
    src = await startFerry({ args: ['--dev'] });
    await setWant(src.url);
    // part of the state mined, part still pending: the dump holds both
    await call(src.url, 'evm_mine');
    await call(src.url, 'anvil_setStorageAt', [A, '0x0', word(42n)]);
    dump = await call<string>(src.url, 'anvil_dumpState');
  });

  after(async () => {
    if (src) assert.equal(await src.stop(), 0);
  });

  it("dumps Anvil's SerializableState, gzipped, as hex", () => {
    const state = JSON.parse(gunzipSync(Buffer.from(dump.slice(2), 'hex')).toString('utf8'));
    assert.deepEqual(Object.keys(state), ['block', 'accounts', 'best_block_number', 'blocks', 'transactions', 'historical_states']);
    assert.deepEqual(state.accounts[A], {
      nonce: 5,
      balance: `0x${WANT[A]!.balance.toString(16)}`,
      code: CODE,
      storage: { [word(0n)]: word(42n), ['0x' + 'ff'.repeat(32)]: word(1n) },
    });
    assert.equal(state.accounts[devAddress(0).toLowerCase()].balance, `0x${DEV_BALANCE.toString(16)}`);
    assert.equal(typeof state.best_block_number, 'number');
  });

  it('a fresh node loads the dump: the same balances, nonces, code and storage, then in its next block', async () => {
    const dst = await startFerry({ args: ['--dev'] });
    try {
      assert.equal(await call(dst.url, 'anvil_loadState', [dump]), true);
      await checkWant(dst.url);
      await call(dst.url, 'evm_mine');
      await checkWant(dst.url, await call(dst.url, 'eth_blockNumber'));
    } finally {
      assert.equal(await dst.stop(), 0);
    }
  });

  it("Anvil's dump loads into ferry, and ferry's into Anvil", async () => {
    const anvil = await startAnvil();
    try {
      await setWant(anvil.url);
      const fromAnvil = await call<string>(anvil.url, 'anvil_dumpState');
      const dst = await startFerry({ args: ['--dev'] });
      try {
        assert.equal(await call(dst.url, 'anvil_loadState', [fromAnvil]), true);
        await checkWant(dst.url);
      } finally {
        assert.equal(await dst.stop(), 0);
      }
    } finally {
      await stopAnvil(anvil.proc);
    }
    const fresh = await startAnvil();
    try {
      assert.equal(await call(fresh.url, 'anvil_loadState', [dump]), true);
      await checkWant(fresh.url);
    } finally {
      await stopAnvil(fresh.proc);
    }
  });
});

describe('--state FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-state-'));
  const file = join(dir, 'state.json');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the plain JSON at SIGTERM and loads it into a new home at start; Anvil reads it and ferry reads what Anvil writes', async () => {
    const first = await startFerry({ args: ['--dev', '--state', file] });
    try {
      assert.equal(existsSync(file), false);
      await setWant(first.url);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const state = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(state.accounts[A].nonce, 5);

    const second = await startFerry({ args: ['--dev', '--state', file] });
    try {
      await checkWant(second.url);
      await call(second.url, 'evm_mine');
      await checkWant(second.url, await call(second.url, 'eth_blockNumber'));
    } finally {
      assert.equal(await second.stop(), 0);
    }

    const anvil = await startAnvil(['--state', file]);
    try {
      await checkWant(anvil.url);
      await call(anvil.url, 'anvil_setBalance', [B, '0x4']);
    } finally {
      await stopAnvil(anvil.proc);
    }
    // the file Anvil wrote at its exit loads into a new ferry home
    const third = await startFerry({ args: ['--dev', '--state', file] });
    try {
      assert.equal(BigInt(await call(third.url, 'eth_getBalance', [B, 'latest'])), 4n);
      assert.equal(await call(third.url, 'eth_getStorageAt', [A, '0x0', 'latest']), word(42n));
    } finally {
      assert.equal(await third.stop(), 0);
    }
  });
});
