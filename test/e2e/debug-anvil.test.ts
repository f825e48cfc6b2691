/**
 * debug_traceTransaction on ferry against the peer dev node Anvil (pinned devDependency, started
 * with --steps-tracing, ferry's mnemonic and chain id, Cancun): the same fixed transactions on the
 * same state, compared field by field for the struct logger, callTracer (withLog) and
 * prestateTracer (plain and diffMode).
 *
 * Normalized, each for a stated reason (docs/debug-tracing.md lists them):
 * - block context: the coinbase account and the sender's balance differ (different coinbase,
 *   base fee, hence fees), so the coinbase entry is dropped and sender balances are not compared;
 * - geth's omitempty fields Anvil always prints: struct log `memory: []`, `refund: 0`,
 *   `returnData: "0x"`; prestate accounts that are empty before the tx (geth drops them);
 * - geth ≥1.14 fields Anvil lacks: prestate `codeHash` (checked to be keccak(code) instead);
 * - geth semantics where Anvil differs: the top call's `gas` is the tx gas limit (Anvil: the gas
 *   left after intrinsic gas), and a CREATE/CREATE2 step's `gasCost` excludes the gas handed to
 *   the new contract (Anvil includes it, as it does for CALL).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call } from '../helpers/rpc.js';
import { SCENARIOS, normAccounts, runFixture, startAnvil, type AnvilNode, type FixtureRun, type Scenario } from './debug-fixtures.js';

const SENDER = devAddress(0).toLowerCase();
const CREATE_OPS = new Set(['CREATE', 'CREATE2']);

let ferry: FerryNode;
let anvil: AnvilNode;
let onFerry: FixtureRun;
let onAnvil: FixtureRun;
let ferryCoinbase: string;
let anvilCoinbase: string;

async function coinbaseOf(url: string, txHash: string): Promise<string> {
  const r = await call(url, 'eth_getTransactionReceipt', [txHash]);
  const b = await call(url, 'eth_getBlockByHash', [r.blockHash, false]);
  return b.miner.toLowerCase();
}

const trace = (url: string, hash: string, cfg: object) => call(url, 'debug_traceTransaction', [hash, cfg]);

function normStructLogs(r: any): any {
  for (const e of r.structLogs) {
    if (Array.isArray(e.memory) && e.memory.length === 0) delete e.memory;
    if (e.refund === 0) delete e.refund;
    if (e.returnData === '0x') delete e.returnData;
  }
  return r;
}


describe('debug tracing: ferry vs Anvil on the same transactions', { timeout: 180_000 }, () => {
  before(async () => {
    anvil = await startAnvil();
    ferry = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.api', 'eth,net,web3,debug'] });
    [onAnvil, onFerry] = await Promise.all([runFixture(anvil.url), runFixture(ferry.url)]);
    ferryCoinbase = await coinbaseOf(ferry.url, onFerry.txs.transfer);
    anvilCoinbase = await coinbaseOf(anvil.url, onAnvil.txs.transfer);
  });
  after(async () => {
    await Promise.all([anvil?.stop(), ferry?.stop()]);
  });

  it('deploys to the same addresses on both nodes', () => {
    assert.deepEqual(onFerry.deployed, onAnvil.deployed);
  });

  const each = (what: string, fn: (s: Scenario) => Promise<void>) => {
    for (const s of SCENARIOS) it(`${what}: ${s}`, () => fn(s));
  };

  each('struct logger (memory, return data, storage)', async (s) => {
    const cfg = { enableMemory: true, enableReturnData: true };
    const f = normStructLogs(await trace(ferry.url, onFerry.txs[s], cfg));
    const a = normStructLogs(await trace(anvil.url, onAnvil.txs[s], cfg));
    assert.equal(f.structLogs.length, a.structLogs.length, 'step count');
    for (let i = 0; i < a.structLogs.length; i++) {
      const fe = f.structLogs[i];
      const ae = a.structLogs[i];
      if (CREATE_OPS.has(ae.op) && ae.depth >= 1) {
        assert.ok(fe.gasCost < ae.gasCost, `step ${i}: CREATE cost without the forwarded gas`);
        fe.gasCost = ae.gasCost;
      }
      assert.deepEqual(fe, ae, `step ${i} (${ae.op})`);
    }
    assert.deepEqual({ ...f, structLogs: [] }, { ...a, structLogs: [] });
  });

  each('struct logger defaults (stack, storage)', async (s) => {
    const f = normStructLogs(await trace(ferry.url, onFerry.txs[s], {}));
    const a = normStructLogs(await trace(anvil.url, onAnvil.txs[s], {}));
    for (const [i, e] of a.structLogs.entries()) if (CREATE_OPS.has(e.op)) f.structLogs[i].gasCost = e.gasCost;
    assert.deepEqual(f, a);
  });

  each('callTracer with logs', async (s) => {
    const cfg = { tracer: 'callTracer', tracerConfig: { withLog: true } };
    const f = await trace(ferry.url, onFerry.txs[s], cfg);
    const a = await trace(anvil.url, onAnvil.txs[s], cfg);
    const tx = await call(ferry.url, 'eth_getTransactionByHash', [onFerry.txs[s]]);
    assert.equal(f.gas, tx.gas, 'top call gas is the tx gas limit (geth)');
    assert.deepEqual({ ...f, gas: undefined }, { ...a, gas: undefined });
  });

  each('prestateTracer', async (s) => {
    const cfg = { tracer: 'prestateTracer' };
    const f = await trace(ferry.url, onFerry.txs[s], cfg);
    const a = await trace(anvil.url, onAnvil.txs[s], cfg);
    assert.ok(f[ferryCoinbase] !== undefined, 'coinbase is in the prestate');
    assert.deepEqual(normAccounts(f, ferryCoinbase, false, [SENDER]), normAccounts(a, anvilCoinbase, true, [SENDER]));
  });

  each('prestateTracer diffMode', async (s) => {
    const cfg = { tracer: 'prestateTracer', tracerConfig: { diffMode: true } };
    const f = await trace(ferry.url, onFerry.txs[s], cfg);
    const a = await trace(anvil.url, onAnvil.txs[s], cfg);
    assert.deepEqual(normAccounts(f.pre, ferryCoinbase, false, [SENDER]), normAccounts(a.pre, anvilCoinbase, true, [SENDER]));
    assert.deepEqual(normAccounts(f.post, ferryCoinbase, false, [SENDER]), normAccounts(a.post, anvilCoinbase, false, [SENDER]));
  });
});
