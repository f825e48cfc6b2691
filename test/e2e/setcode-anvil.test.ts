/**
 * EIP-7702 set-code transactions (type 4) on ferry (a Prague genesis) against the peer dev node Anvil
 * 1.7.1 started with `--hardfork prague`: the same fixed list of transactions, signed by viem
 * (`signAuthorization`, `sendTransaction({ authorizationList })`), on the same accounts. Receipts
 * (status, gasUsed, logs), eth_getCode of each authority after each tx, eth_call through the
 * delegated EOA, callTracer and prestateTracer output must be equal.
 *
 * Normalized as test/e2e/debug-anvil.test.ts does, for the reasons docs/debug-tracing.md gives: the
 * top call's `gas` (geth: the tx gas limit), the coinbase entry and the balances of the two accounts
 * that send txs (different base fees and coinbases), accounts empty before the tx and geth's
 * `codeHash` field (checked). And where ferry follows geth's prestate tracer
 * (eth/tracers/native/prestate.go OnTxStart) and Anvil does not: geth adds every authority whose
 * signature recovers, even when its tuple is then skipped (Anvil leaves out one with a wrong chain id), and looks up the
 * recipient's delegation target before the tx's own authorizations apply (so a tx that installs a
 * delegation does not list its target); those entries are checked on ferry's side and dropped.
 *
 * The explorer views of every step (docs/compatibility.md "trace namespace", "ots and erigon
 * namespaces"): trace_transaction, flatCallTracer against Anvil's trace_transaction, ots_getInternalOperations,
 * ots_traceTransaction, ots_getTransactionError and the ots_searchTransactions pages of the accounts
 * involved, through the shared normalizers of explorers-norm.ts, which drop only where a tx sits on its
 * chain (block hash, number, timestamp: each node makes its own blocks), the fee its block's base
 * fee makes (gasPrice, effectiveGasPrice), and geth's top-frame gas in flatCallTracer (docs/debug-tracing.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, encodeFunctionData, http, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, VIEM_CHAIN } from '../helpers/node.js';
import { call } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';
import { normAccounts, sideBySide, type SideBySide } from './debug-fixtures.js';
import { flatCallVsParity, searchPlaceless, searchReceiptPlaceless, tracePlaceless, walkSearch } from './explorers-norm.js';

const STEPS = ['delegate', 'callThrough', 'forward', 'selfSponsored', 'wrongChain', 'wrongNonce', 'chainZero', 'revoke', 'afterRevoke'] as const;
type Step = (typeof STEPS)[number];
const GAS = 300_000n;
const FEES = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const WRONG_CHAIN_ID = 1234;

const sponsor = privateKeyToAccount(devKeys()[0] as Hex);
const alice = privateKeyToAccount(devKeys()[5] as Hex);
const bob = privateKeyToAccount(devKeys()[6] as Hex);
const delegate = compileContract('Delegate.sol', 'Delegate');
/** the accounts that send txs: their balances depend on each node's base fee */
const FEE_PAYERS = [sponsor.address.toLowerCase(), alice.address.toLowerCase()];

interface Run {
  delegate: Address;
  txs: Record<Step, Hex>;
  receipts: Record<Step, any>;
  /** eth_getCode of alice and bob after each step */
  codes: Record<Step, [string, string]>;
  /** nonces of alice and bob at the end */
  nonces: [string, string];
  /** Delegate.codeOf(alice) after the delegation (EXTCODESIZE/HASH/COPY of a delegated EOA) */
  codeOfAlice: string;
}

async function runSteps(url: string): Promise<Run> {
  const transport = http(url);
  const pub = createPublicClient({ chain: VIEM_CHAIN, transport, cacheTime: 0 });
  const wallet = (account: typeof sponsor) => createWalletClient({ chain: VIEM_CHAIN, transport, account });
  const deployHash = await wallet(sponsor).deployContract({ abi: delegate.abi, bytecode: delegate.bytecode, gas: 1_000_000n, ...FEES });
  const deployed = await pub.waitForTransactionReceipt({ hash: deployHash });
  const d = deployed.contractAddress!;
  const ping = (v: bigint) => encodeFunctionData({ abi: delegate.abi, functionName: 'ping', args: [v] });
  const nonceOf = (a: Address) => pub.getTransactionCount({ address: a, blockTag: 'pending' });
  const auth = async (who: typeof sponsor, address: Address, o: { chainId?: number; nonce?: number } = {}) =>
    who.signAuthorization({ address, chainId: o.chainId ?? EVM_CHAIN_ID, nonce: o.nonce ?? (await nonceOf(who.address)) });

  const run = { delegate: d, txs: {}, receipts: {}, codes: {} } as Run;
  const send = async (step: Step, from: typeof sponsor, tx: { to: Address; data?: Hex; authorizationList?: any[] }) => {
    const hash = await wallet(from).sendTransaction({ ...tx, gas: GAS, ...FEES });
    run.txs[step] = hash;
    const r = await pub.waitForTransactionReceipt({ hash });
    run.receipts[step] = await call(url, 'eth_getTransactionReceipt', [hash]);
    assert.equal(r.status, 'success', `${step} succeeds`);
    run.codes[step] = [await call(url, 'eth_getCode', [alice.address, 'latest']), await call(url, 'eth_getCode', [bob.address, 'latest'])];
  };

  await send('delegate', sponsor, { to: alice.address, data: ping(7n), authorizationList: [await auth(alice, d)] });
  await send('callThrough', sponsor, { to: alice.address, data: ping(5n) });
  await send('forward', sponsor, { to: d, data: encodeFunctionData({ abi: delegate.abi, functionName: 'forward', args: [alice.address, 3n] }) });
  run.codeOfAlice = await call(url, 'eth_call', [{ to: d, data: encodeFunctionData({ abi: delegate.abi, functionName: 'codeOf', args: [alice.address] }) }, 'latest']);
  // alice's own tx takes her nonce first, so her authorization names the nonce after it
  const own = await nonceOf(alice.address);
  await send('selfSponsored', alice, { to: alice.address, data: ping(1n), authorizationList: [await auth(alice, d, { nonce: own + 1 })] });
  await send('wrongChain', sponsor, { to: alice.address, data: ping(2n), authorizationList: [await auth(bob, d, { chainId: WRONG_CHAIN_ID })] });
  await send('wrongNonce', sponsor, { to: alice.address, data: ping(2n), authorizationList: [await auth(bob, d, { nonce: 5 })] });
  await send('chainZero', sponsor, { to: bob.address, data: ping(4n), authorizationList: [await auth(bob, d, { chainId: 0 })] });
  await send('revoke', sponsor, { to: sponsor.address, authorizationList: [await auth(alice, zeroAddress)] });
  await send('afterRevoke', sponsor, { to: alice.address, data: ping(1n) });
  run.nonces = [await call(url, 'eth_getTransactionCount', [alice.address, 'latest']), await call(url, 'eth_getTransactionCount', [bob.address, 'latest'])];
  return run;
}

const trace = (url: string, hash: string, cfg: object) => call(url, 'debug_traceTransaction', [hash, cfg]);


const receiptPart = (r: any) => ({
  type: r.type,
  status: r.status,
  gasUsed: r.gasUsed,
  logs: r.logs.map((l: any) => ({ address: l.address, topics: l.topics, data: l.data })),
});

describe('EIP-7702 set-code txs: ferry (prague genesis) vs Anvil --hardfork prague', { timeout: 240_000 }, () => {
  let n: SideBySide<Run>;

  before(async () => {
    n = await sideBySide('prague', [], runSteps, (r) => r.receipts.delegate.blockHash, ',trace,ots');
  });
  after(() => n?.stop());

  it('the delegate contract is at the same address on both nodes', () => {
    assert.equal(n.onFerry.delegate, n.onAnvil.delegate);
  });

  for (const step of STEPS) {
    it(`receipt (type, status, gasUsed, logs) and authority codes: ${step}`, () => {
      assert.deepEqual(receiptPart(n.onFerry.receipts[step]), receiptPart(n.onAnvil.receipts[step]));
      assert.deepEqual(n.onFerry.codes[step], n.onAnvil.codes[step]);
    });
  }

  it('delegation designators, revocation and skipped authorizations leave the same codes and nonces', () => {
    const designator = '0xef0100' + n.onFerry.delegate.slice(2).toLowerCase();
    assert.deepEqual(n.onFerry.codes.delegate, [designator, '0x']);
    assert.deepEqual(n.onFerry.codes.wrongNonce, [designator, '0x'], 'wrong chain id / nonce: skipped');
    assert.deepEqual(n.onFerry.codes.chainZero, [designator, designator], 'chain id 0 is valid on every chain');
    assert.deepEqual(n.onFerry.codes.revoke, ['0x', designator], 'delegating to the zero address clears the code');
    assert.deepEqual(n.onFerry.nonces, n.onAnvil.nonces);
  });

  it('EXTCODESIZE/EXTCODEHASH/EXTCODECOPY of a delegated EOA read the 23-byte designator', () => {
    assert.equal(n.onFerry.codeOfAlice, n.onAnvil.codeOfAlice);
    assert.match(n.onFerry.codeOfAlice, /^0x0{62}17/);
  });

  it('eth_getTransactionByHash shows type 0x4 and the authorizationList', async () => {
    const f = await call(n.ferry.url, 'eth_getTransactionByHash', [n.onFerry.txs.delegate]);
    const a = await call(n.anvil.url, 'eth_getTransactionByHash', [n.onAnvil.txs.delegate]);
    assert.equal(f.type, '0x4');
    assert.deepEqual(f.authorizationList, a.authorizationList);
    assert.deepEqual(Object.keys(f.authorizationList[0]), ['chainId', 'address', 'nonce', 'yParity', 'r', 's']);
  });

  for (const step of STEPS) {
    it(`callTracer with logs: ${step}`, async () => {
      const cfg = { tracer: 'callTracer', tracerConfig: { withLog: true } };
      const f = await trace(n.ferry.url, n.onFerry.txs[step], cfg);
      const a = await trace(n.anvil.url, n.onAnvil.txs[step], cfg);
      assert.equal(f.gas, '0x' + GAS.toString(16), 'top call gas is the tx gas limit (geth)');
      assert.deepEqual({ ...f, gas: undefined }, { ...a, gas: undefined });
    });

    it(`prestateTracer: ${step}`, async () => {
      const f = await trace(n.ferry.url, n.onFerry.txs[step], { tracer: 'prestateTracer' });
      const a = await trace(n.anvil.url, n.onAnvil.txs[step], { tracer: 'prestateTracer' });
      if (step === 'wrongChain') {
        const b = bob.address.toLowerCase();
        assert.ok(f[b] !== undefined && a[b] === undefined, 'geth lists the authority of a skipped tuple');
        delete f[b];
      }
      if (step === 'delegate' || step === 'chainZero') {
        const d = n.onAnvil.delegate.toLowerCase();
        assert.ok(f[d] === undefined && a[d] !== undefined, 'geth looks the delegation target up before the tx installs it');
        delete a[d];
      }
      assert.deepEqual(normAccounts(f, n.coinbase[n.ferry.url]!, false, FEE_PAYERS), normAccounts(a, n.coinbase[n.anvil.url]!, true, FEE_PAYERS));
    });
  }

  // the explorer views (docs/compatibility.md "trace" and "ots and erigon namespaces") of every step
  const both = async (m: string, step: Step) => [await call(n.ferry.url, m, [n.onFerry.txs[step]]), await call(n.anvil.url, m, [n.onAnvil.txs[step]])];
  for (const step of STEPS) {
    it(`trace_transaction: ${step}`, async () => {
      const [f, a] = await both('trace_transaction', step);
      assert.deepEqual(tracePlaceless(f), tracePlaceless(a));
    });

    it(`flatCallTracer vs Anvil trace_transaction: ${step}`, async () => {
      const [f, a] = await flatCallVsParity(n.ferry.url, n.onFerry.txs[step], n.anvil.url, n.onAnvil.txs[step]);
      assert.deepEqual(f, a);
    });

    it(`ots_getInternalOperations, ots_traceTransaction, ots_getTransactionError: ${step}`, async () => {
      for (const m of ['ots_getInternalOperations', 'ots_traceTransaction', 'ots_getTransactionError']) {
        const [f, a] = await both(m, step);
        assert.deepEqual(f, a, m);
      }
    });
  }

  it('ots_searchTransactionsBefore/After: the delegated EOAs (alice, bob), the sponsor and the delegate contract, the same pages as Anvil', async () => {
    assert.equal(n.onFerry.delegate, n.onAnvil.delegate);
    const searched = { alice: alice.address, bob: bob.address, sponsor: sponsor.address, delegate: n.onFerry.delegate };
    for (const [name, addr] of Object.entries(searched)) {
      for (const dir of ['Before', 'After'] as const) {
        const [f, a] = await Promise.all([walkSearch(n.ferry.url, dir, addr.toLowerCase()), walkSearch(n.anvil.url, dir, addr.toLowerCase())]);
        assert.equal(f.length, a.length, `${name} ${dir}: pages`);
        f.forEach((pg, i) => {
          const at = `${name} ${dir} page ${i}`;
          assert.deepEqual(pg.txs.map((t: any) => t.hash), a[i].txs.map((t: any) => t.hash), `${at}: txs`);
          assert.deepEqual([pg.firstPage, pg.lastPage], [a[i].firstPage, a[i].lastPage], `${at}: first/last page`);
          assert.deepEqual(pg.txs.map(searchPlaceless), a[i].txs.map(searchPlaceless), `${at}: tx objects`);
          assert.deepEqual(pg.receipts.map(searchReceiptPlaceless), a[i].receipts.map(searchReceiptPlaceless), `${at}: receipts`);
        });
      }
    }
    // an authority is found by the txs whose frames name it, not by the tuple it signed (Erigon indexes
    // call frames: eth/calltracer/calltracer.go; Anvil likewise): alice's revocation is the sponsor's tx
    const all = await call(n.ferry.url, 'ots_searchTransactionsBefore', [alice.address, 0, 100]);
    const found = STEPS.filter((s) => all.txs.some((t: any) => t.hash === n.onFerry.txs[s]));
    assert.deepEqual(found, ['delegate', 'callThrough', 'forward', 'selfSponsored', 'wrongChain', 'wrongNonce', 'afterRevoke']);
  });
});
