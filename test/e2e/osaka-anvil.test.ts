/**
 * Osaka on ferry (an Osaka genesis) against the peer dev node Anvil 1.7.1 started with `--hardfork osaka
 * --enable-tx-gas-limit` (Anvil checks EIP-7825's per-tx cap only with that flag): the same fixed list of
 * transactions, signed by viem from the same account, so both nodes see the same nonces and addresses.
 * CLZ (EIP-7939) from raw bytecode (the npm solc 0.8.28 does not know the opcode), the P-256 verifier at
 * 0x100 (EIP-7951) with valid and invalid vectors (test/e2e/osaka-vectors.ts), modexp at and over
 * EIP-7823's 1024-byte bound and under EIP-7883's prices, and a tx of exactly EIP-7825's cap; a tx one gas
 * over the cap is refused by both.
 *
 * Compared: receipts (status, gasUsed, logs), eth_getCode, eth_call and eth_estimateGas of the same calls,
 * callTracer and prestateTracer output. Normalized as test/e2e/setcode-anvil.test.ts does, for the
 * reasons docs/debug-tracing.md gives: the top call's `gas` (geth reports the tx gas limit, Anvil the
 * gas left after the intrinsic cost; checked on ferry's side), and in prestates the coinbase (each node
 * has its own), the sender's balance (the nodes' base fees differ), accounts empty before the tx (geth
 * leaves them out, Anvil lists them: the precompile addresses) and geth's `codeHash` (checked, then
 * dropped).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, VIEM_CHAIN } from '../helpers/node.js';
import { call, rpc, toHex } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';
import { normAccounts, sideBySide, type SideBySide } from './debug-fixtures.js';
import { MODEXP, P256, P256_SHORT } from './osaka-vectors.js';

/** runtime: PUSH1 0, CALLDATALOAD, CLZ (0x1e), DUP1, PUSH1 0, SSTORE, PUSH1 0, MSTORE, LOG0(0, 32), RETURN(0, 32) */
const CLZ_RUNTIME = '6000351e8060005560005260206000a060206000f3';
/** init code: CODECOPY the runtime (at offset 11) to memory 0 and RETURN it */
const CLZ_INIT = `0x60${(CLZ_RUNTIME.length / 2).toString(16)}80600b6000396000f3${CLZ_RUNTIME}` as Hex;
const P256_ADDRESS: Address = '0x0000000000000000000000000000000000000100';
const MODEXP_ADDRESS: Address = '0x0000000000000000000000000000000000000005';
/** EIP-7825's per-tx gas cap (2^24) */
const TX_GAS_CAP = 16_777_216n;

const STEPS = [
  'deployClz',
  'deployProbe',
  'clzZero',
  'clzOne',
  'clzTop',
  'p256Valid',
  'p256Modified',
  'p256Zero',
  'p256Short',
  'p256ValidProbe',
  'p256ModifiedProbe',
  'modexpSmall',
  'modexpLongExponent',
  'modexpAtBound',
  'modexpOverBound',
  'modexpOverBoundDirect',
  'gasAtCap',
] as const;
type Step = (typeof STEPS)[number];
/** the steps that are calls (not creations): eth_call and eth_estimateGas are compared for them */
const CALL_STEPS = STEPS.filter((s) => !s.startsWith('deploy') && s !== 'gasAtCap');
/** the steps whose tx fails on both nodes (a precompile refusing its input at the top level) */
const FAILING: ReadonlySet<Step> = new Set(['modexpOverBoundDirect']);
const GAS = 500_000n;
const FEES = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };

const sender = privateKeyToAccount(devKeys()[0] as Hex);
const receiver = privateKeyToAccount(devKeys()[7] as Hex).address;
const probe = compileContract('PrecompileProbe.sol', 'PrecompileProbe');
const FEE_PAYERS = [sender.address.toLowerCase()];

interface Run {
  clz: Address;
  probe: Address;
  txs: Record<Step, Hex>;
  receipts: Record<Step, any>;
  /** the answer (result or error) to the tx one gas over EIP-7825's cap */
  overCap: any;
  /** step → what eth_call / eth_estimateGas answered for its call */
  calls: Record<string, any>;
  estimates: Record<string, any>;
  codes: string[];
}

const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

/** the CLZ steps: the word each passes to the CLZ contract */
const CLZ_INPUTS: Partial<Record<Step, bigint>> = { clzZero: 0n, clzOne: 1n, clzTop: 1n << 255n };
/** the precompile steps: [precompile, input, through the probe contract (else a tx straight to it)] */
const PRECOMPILE_CALLS: Partial<Record<Step, [Address, Hex, boolean]>> = {
  p256Valid: [P256_ADDRESS, P256.valid, false],
  p256Modified: [P256_ADDRESS, P256.modified, false],
  p256Zero: [P256_ADDRESS, P256.zero, false],
  p256Short: [P256_ADDRESS, P256_SHORT, false],
  p256ValidProbe: [P256_ADDRESS, P256.valid, true],
  p256ModifiedProbe: [P256_ADDRESS, P256.modified, true],
  modexpSmall: [MODEXP_ADDRESS, MODEXP.small, true],
  modexpLongExponent: [MODEXP_ADDRESS, MODEXP.longExponent, true],
  modexpAtBound: [MODEXP_ADDRESS, MODEXP.atBound, true],
  modexpOverBound: [MODEXP_ADDRESS, MODEXP.overBound, true],
  modexpOverBoundDirect: [MODEXP_ADDRESS, MODEXP.overBound, false],
};

/** step → the call it makes (to, data, gas), once the contracts are deployed */
function callOf(step: Step, r: Pick<Run, 'clz' | 'probe'>): { to: Address; data?: Hex; gas?: bigint } {
  if (step === 'gasAtCap') return { to: receiver, gas: TX_GAS_CAP };
  const clz = CLZ_INPUTS[step];
  if (clz !== undefined) return { to: r.clz, data: word(clz) };
  const pc = PRECOMPILE_CALLS[step];
  if (pc === undefined) throw new Error(`${step} is a deployment`);
  const [target, input, viaProbe] = pc;
  if (!viaProbe) return { to: target, data: input };
  return { to: r.probe, data: encodeFunctionData({ abi: probe.abi, functionName: 'probe', args: [target, input] }) };
}

async function runSteps(url: string): Promise<Run> {
  const transport = http(url);
  const pub = createPublicClient({ chain: VIEM_CHAIN, transport, cacheTime: 0 });
  const wallet = createWalletClient({ chain: VIEM_CHAIN, transport, account: sender });
  const run = { txs: {}, receipts: {}, calls: {}, estimates: {} } as Run;
  const record = async (step: Step, hash: Hex) => {
    run.txs[step] = hash;
    await pub.waitForTransactionReceipt({ hash });
    run.receipts[step] = await call(url, 'eth_getTransactionReceipt', [hash]);
    assert.equal(run.receipts[step].status, FAILING.has(step) ? '0x0' : '0x1', `${step}: status`);
  };

  await record('deployClz', await wallet.sendTransaction({ data: CLZ_INIT, gas: GAS, ...FEES }));
  run.clz = run.receipts.deployClz.contractAddress;
  await record('deployProbe', await wallet.deployContract({ abi: probe.abi, bytecode: probe.bytecode, gas: GAS * 2n, ...FEES }));
  run.probe = run.receipts.deployProbe.contractAddress;

  for (const step of STEPS.slice(2)) {
    const c = callOf(step, run);
    await record(step, await wallet.sendTransaction({ ...c, gas: c.gas ?? GAS, ...FEES }));
  }

  // one gas over the cap: signed here and sent raw, so neither node's own defaults touch it
  const nonce = await pub.getTransactionCount({ address: sender.address, blockTag: 'pending' });
  const raw = await sender.signTransaction({ chainId: EVM_CHAIN_ID, type: 'eip1559', to: receiver, nonce, gas: TX_GAS_CAP + 1n, ...FEES });
  run.overCap = await rpc(url, 'eth_sendRawTransaction', [raw]);

  for (const step of CALL_STEPS) {
    const c = callOf(step, run);
    const req = { from: sender.address, to: c.to, data: c.data };
    run.calls[step] = await answer(url, 'eth_call', [{ ...req, gas: toHex(GAS) }, 'latest']);
    run.estimates[step] = await answer(url, 'eth_estimateGas', [req, 'latest']);
  }
  run.codes = [];
  for (const a of [run.clz, run.probe, P256_ADDRESS, MODEXP_ADDRESS]) run.codes.push(await call(url, 'eth_getCode', [a, 'latest']));
  return run;
}

/** a result, or an error's code (messages are each node's own; the tests look at them where they matter) */
async function answer(url: string, method: string, params: unknown[]): Promise<any> {
  const r = await rpc(url, method, params);
  return r.error ? { error: r.error.code, message: r.error.message } : { result: r.result };
}

const receiptPart = (r: any) => ({
  type: r.type,
  status: r.status,
  gasUsed: r.gasUsed,
  contractAddress: r.contractAddress ?? null,
  logs: r.logs.map((l: any) => ({ address: l.address, topics: l.topics, data: l.data })),
});

const trace = (url: string, hash: string, cfg: object) => call(url, 'debug_traceTransaction', [hash, cfg]);

describe('Osaka: ferry (osaka genesis) vs Anvil --hardfork osaka', { timeout: 300_000 }, () => {
  let n: SideBySide<Run>;

  before(async () => {
    n = await sideBySide('osaka', ['--enable-tx-gas-limit'], runSteps, (r) => r.receipts.clzOne.blockHash);
  });
  after(() => n?.stop());

  it('the contracts are at the same addresses, with the same code; the precompiles have none', () => {
    assert.equal(n.onFerry.clz, n.onAnvil.clz);
    assert.equal(n.onFerry.probe, n.onAnvil.probe);
    assert.deepEqual(n.onFerry.codes, n.onAnvil.codes);
    assert.equal(n.onFerry.codes[0], `0x${CLZ_RUNTIME}`);
    assert.deepEqual(n.onFerry.codes.slice(2), ['0x', '0x']);
  });

  for (const step of STEPS) {
    it(`receipt (type, status, gasUsed, logs): ${step}`, () => {
      assert.deepEqual(receiptPart(n.onFerry.receipts[step]), receiptPart(n.onAnvil.receipts[step]));
    });
  }

  it('CLZ counts leading zero bits (256 for zero) and P-256 accepts only the valid vector', () => {
    const logged = (s: Step) => n.onFerry.receipts[s].logs[0].data;
    assert.deepEqual([logged('clzZero'), logged('clzOne'), logged('clzTop')], [word(256n), word(255n), word(0n)]);
    assert.equal(n.onFerry.calls.p256Valid.result, word(1n));
    for (const s of ['p256Modified', 'p256Zero', 'p256Short'] as const) assert.equal(n.onFerry.calls[s].result, '0x', s);
  });

  it("modexp over EIP-7823's 1024-byte bound fails; at the bound it answers", () => {
    const decode = (s: Step) => n.onFerry.receipts[s].logs[0].data.slice(2, 66);
    assert.equal(BigInt('0x' + decode('modexpAtBound')), 1n, 'ok at 1024 bytes');
    assert.equal(BigInt('0x' + decode('modexpOverBound')), 0n, 'not ok at 1025 bytes');
  });

  it("a tx one gas over EIP-7825's cap is refused by both; ferry gives geth's text", () => {
    assert.ok(n.onFerry.overCap.error && n.onAnvil.overCap.error, JSON.stringify([n.onFerry.overCap, n.onAnvil.overCap]));
    assert.equal(n.onFerry.overCap.error.code, n.onAnvil.overCap.error.code);
    assert.equal(n.onFerry.overCap.error.message, `transaction gas limit too high (cap: ${TX_GAS_CAP}, tx: ${TX_GAS_CAP + 1n})`);
    assert.match(n.onAnvil.overCap.error.message, /gas_limit > .*tx_gas_limit_cap/);
  });

  for (const step of CALL_STEPS) {
    it(`eth_call and eth_estimateGas: ${step}`, () => {
      const [fc, ac] = [n.onFerry.calls[step], n.onAnvil.calls[step]];
      const [fe, ae] = [n.onFerry.estimates[step], n.onAnvil.estimates[step]];
      if (FAILING.has(step)) {
        // a precompile refusing its input fails the call on both; the texts differ three ways: ethereumjs
        // reports any failed precompile as out of gas, geth says `base length is too large`
        // (core/vm/contracts.go bigModExp.Run), Anvil `EVM error PrecompileError` with -32603
        assert.ok(ac.error !== undefined && ae.error !== undefined, JSON.stringify([ac, ae]));
        assert.deepEqual([fc, fe.error], [{ error: -32000, message: 'out of gas' }, -32000]);
        return;
      }
      assert.deepEqual(fc, ac);
      assert.ok(fe.result !== undefined && ae.result !== undefined, JSON.stringify([fe, ae]));
      const [f, a] = [BigInt(fe.result), BigInt(ae.result)];
      if (step === 'modexpOverBound') {
        // the probe survives its failed inner call with any gas, and that call burns all it is given: geth
        // takes the gas used at the cap as its lower bound (eth/gasestimator/gasestimator.go), so its
        // answer is near the cap, where Anvil's bisection finds the least gas that succeeds
        assert.ok(f > a && f <= TX_GAS_CAP, `${f} vs ${a}`);
        return;
      }
      // geth's estimator stops when its bracket is within 1.5% (eth/gasestimator/gasestimator.go
      // errorRatio); Anvil bisects to the least gas that succeeds
      assert.ok(f >= a && Number(f - a) / Number(f) < 0.015, `ferry ${f} vs Anvil ${a}`);
    });
  }

  for (const step of STEPS) {
    it(`callTracer with logs: ${step}`, async () => {
      const cfg = { tracer: 'callTracer', tracerConfig: { withLog: true } };
      const f = await trace(n.ferry.url, n.onFerry.txs[step], cfg);
      const a = await trace(n.anvil.url, n.onAnvil.txs[step], cfg);
      const limit = step === 'gasAtCap' ? TX_GAS_CAP : step === 'deployProbe' ? GAS * 2n : GAS;
      assert.equal(f.gas, toHex(limit), 'top call gas is the tx gas limit (geth)');
      const [fTop, aTop] = [{ ...f, gas: undefined }, { ...a, gas: undefined }];
      if (step === 'modexpOverBound' || step === 'modexpOverBoundDirect') {
        // the refused modexp frame's error: see the eth_call test above for the three texts
        const [ff, af] = step === 'modexpOverBound' ? [fTop.calls[0], aTop.calls[0]] : [fTop, aTop];
        assert.deepEqual([ff.error, af.error], ['out of gas', 'precompiled failed']);
        delete ff.error;
        delete af.error;
      }
      assert.deepEqual(fTop, aTop);
    });

    it(`prestateTracer: ${step}`, async () => {
      const f = await trace(n.ferry.url, n.onFerry.txs[step], { tracer: 'prestateTracer' });
      const a = await trace(n.anvil.url, n.onAnvil.txs[step], { tracer: 'prestateTracer' });
      assert.deepEqual(normAccounts(f, n.coinbase[n.ferry.url]!, false, FEE_PAYERS), normAccounts(a, n.coinbase[n.anvil.url]!, true, FEE_PAYERS));
    });
  }
});
