/**
 * Simulation: a call run on a committed state and reverted afterwards — eth_call (`simulateCall`: a
 * call to an address runs as its message alone, docs/architecture.md "Scheduling of calls and traces"),
 * and eth_estimateGas, eth_createAccessList, debug_traceCall and creations (`simulate`: ethereumjs'
 * runTx). Both apply the state overrides and geth's pre-checks (evm/precheck.ts) first.
 */
import type { Block } from '@ethereumjs/block';
import type { Common, StateManagerInterface } from '@ethereumjs/common';
import type { EVM } from '@ethereumjs/evm';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, bytesToUnprefixedHex, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import { runTx, type RunTxResult, type VM } from '@ethereumjs/vm';
import type { StateOverrides } from '../types/query.js';
import { authorizationTupleBytes, type AuthorizationTuple } from './tx.js';
import { txRejected } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';
import { callFees, checkFeesAndFunds, checkGasAndCode, type CallFees } from './precheck.js';
import type { At, BlockContext, EvmRunner, RunGate } from './runner.js';

/** What an eth_call shows of a run: its return data and its VM error. */
export interface CallOutcome {
  returnValue: Uint8Array;
  exceptionError?: { error: string };
}

export interface SimCall {
  from?: Uint8Array;
  to?: Uint8Array;
  gas: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  data?: Uint8Array;
  accessList?: { address: Uint8Array; storageKeys: Uint8Array[] }[];
  /** EIP-7702 authorizations: the call runs as a set-code (type 4) tx */
  authorizationList?: AuthorizationTuple[];
}

/** runs after the overrides are applied, right before the tx (tracing takes its pre-state here) */
export type BeforeRun = (tx: TypedTransaction, block: Block) => Promise<void>;
/** sees the run's result on the state it left, before that is reverted (a tracer's end of tx) */
export type AfterRun = (res: RunTxResult) => Promise<void>;

/** A call to simulate: the state it runs on, its block, the call, the state overrides, the gate it is held to. */
export interface Simulation {
  at: At;
  ctx: BlockContext;
  call: SimCall;
  overrides?: StateOverrides;
  gate?: RunGate;
}

/**
 * Runs a message call as a whole tx (eth_estimateGas, eth_createAccessList, debug_traceCall, creations;
 * eth_call to an address goes through `simulateCall`) on `root` with an impersonated sender; every
 * state change is reverted afterwards. Returns the raw run result.
 */
export function simulate<S extends StateManagerInterface>(runner: EvmRunner<S>, sim: Simulation, beforeRun?: BeforeRun, afterRun?: AfterRun): Promise<RunTxResult> {
  return simulation(runner, sim, async (tx, block, fees) => {
    if (beforeRun) await beforeRun(tx, block);
    const res = await runWhole(runner.vm, tx, block, fees);
    if (afterRun) await afterRun(res);
    return res;
  });
}

/**
 * eth_call: as simulate, for the return data and the error only (no gas figures, no receipt). A
 * message call to an address runs as the message alone (leanCall), anything else as a whole tx.
 */
export function simulateCall<S extends StateManagerInterface>(runner: EvmRunner<S>, sim: Simulation): Promise<CallOutcome> {
  return simulation(runner, sim, async (tx, block, fees, from, intrinsic) => {
    // leanCall does not apply authorizations: a set-code call runs as a whole tx
    if (sim.call.to !== undefined && sim.call.authorizationList === undefined && leanCalls(runner.vm, runner.common)) return leanCall(runner, tx, block, from, intrinsic);
    return (await runWhole(runner.vm, tx, block, fees)).execResult;
  });
}

/** ethereumjs' runTx, with what geth's eth_call skips (nonce; balance when no fee is given) */
function runWhole(vm: VM, tx: TypedTransaction, block: Block, fees: CallFees): Promise<RunTxResult> {
  return runTx(vm, {
    tx,
    block,
    skipNonce: true,
    skipBalance: fees.free,
    skipBlockGasLimitValidation: true,
    skipHardForkValidation: true,
  });
}

/**
 * The shared part of a simulation: moves to `at`, applies the overrides, runs geth's pre-checks,
 * builds the tx and hands it to `run`; every change is reverted afterwards.
 */
async function simulation<S extends StateManagerInterface, T>(
  runner: EvmRunner<S>,
  { at, ctx, call, overrides, gate }: Simulation,
  run: (tx: TypedTransaction, block: Block, fees: CallFees, from: Address, intrinsic: bigint) => Promise<T>,
): Promise<T> {
  const sm = runner.sm;
  // the rules of the block the call runs in (evm/forks.ts)
  runner.useRulesAt(ctx.timestamp);
  await runner.setRoot(at);
  await sm.checkpoint();
  const outer = runner.gate;
  if (gate !== undefined) runner.gate = gate;
  try {
    if (overrides) await applyOverrides(sm, overrides);
    const fromBytes = call.from ?? new Uint8Array(20);
    const from = new Address(fromBytes);
    const acct = await sm.getAccount(from);
    // geth's checks first, with geth's texts (evm/precheck.ts); ethereumjs' own then always pass
    const fees = callFees(call, ctx.baseFee);
    const value = call.value ?? 0n;
    checkFeesAndFunds({
      from: fromBytes, gas: call.gas, value, fees, baseFee: ctx.baseFee, balance: acct?.balance ?? 0n,
      code: acct && !equalsBytes(acct.codeHash, KECCAK256_NULL) ? await sm.getCode(from) : new Uint8Array(),
      ...(call.authorizationList === undefined ? {} : { setCode: { authorizations: call.authorizationList.length, creation: call.to === undefined } }),
    });
    const txData: Record<string, unknown> = {
      nonce: acct?.nonce ?? 0n,
      gasLimit: call.gas,
      to: call.to ? new Address(call.to) : undefined,
      value,
      data: call.data ?? new Uint8Array(),
      accessList: call.accessList?.map((a) => [a.address, a.storageKeys]),
    };
    if (call.authorizationList !== undefined) {
      if (!runner.common.isActivatedEIP(7702)) throw txRejected('invalid', GethText.txTypeNotSupported);
      txData.type = 4;
      txData.maxFeePerGas = fees.feeCap;
      txData.maxPriorityFeePerGas = fees.tip;
      txData.authorizationList = call.authorizationList.map(authorizationTupleBytes);
    } else if (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined) {
      txData.type = 2;
      txData.maxFeePerGas = fees.feeCap;
      txData.maxPriorityFeePerGas = fees.tip;
    } else {
      txData.type = call.accessList ? 1 : 0;
      txData.gasPrice = fees.gasPrice;
    }
    // the init code limit is checked below, in geth's order and words
    // a call is not a transaction: geth's calls skip EIP-7825's per-tx cap (core/state_transition.go preCheck,
    // SkipTransactionChecks), which ethereumjs' tx constructor enforces: the tx is made under it, then given the call's gas
    const cap = runner.common.isActivatedEIP(7825) ? runner.common.param('maxTransactionGasLimit') : undefined;
    if (cap !== undefined && call.gas > cap) txData.gasLimit = cap;
    const tx = createTx(txData as never, { common: runner.common, freeze: false, allowUnlimitedInitCodeSize: true }) as TypedTransaction;
    if (txData.gasLimit !== call.gas) (tx as { gasLimit: bigint }).gasLimit = call.gas;
    const intrinsic = tx.getIntrinsicGas();
    checkGasAndCode({
      gas: call.gas, intrinsic, floor: runner.common.isActivatedEIP(7623) ? tx.getMinimumGasLimit() : 0n,
      creation: call.to === undefined, dataLength: call.data?.length ?? 0,
    });
    (tx as { getSenderAddress: () => Address }).getSenderAddress = () => from;
    // geth's eth_call skips the base-fee check when no fee is given (NoBaseFee)
    const block = runner.ethBlock(fees.free ? { ...ctx, baseFee: 0n } : ctx);
    return await run(tx, block, fees, from, intrinsic);
  } catch (e) {
    // a run thrown out of the interpreter (the deadline, a cancelled task) skipped the library's
    // end-of-tx clearing of the transient storage (EIP-1153): the next call on this EVM must not see it
    (runner.vm.evm as EVM).transientStorage.clear();
    throw e;
  } finally {
    runner.gate = outer;
    await sm.revert();
  }
}

/** per chain rules: whether none of the EIPs leanCall does not carry is active */
const leanRules = new WeakMap<Common, boolean>();

/**
 * Whether a call may run as its message alone: not while anything watches whole txs (tracers,
 * the profiler, DEBUG), nor under EIPs whose tx-level rules leanCall does not carry (EIP-8037 state
 * gas, EIP-7928 block access lists, EIP-2780 top-frame charges, stateless witnesses).
 */
function leanCalls(runnerVm: VM, common: Common): boolean {
  const vm = runnerVm as unknown as { DEBUG: boolean; _opts: { profilerOpts?: { reportAfterTx?: boolean } }; events: { listenerCount(e: string): number } };
  if (vm.DEBUG || vm._opts.profilerOpts?.reportAfterTx === true) return false;
  if (vm.events.listenerCount('beforeTx') > 0 || vm.events.listenerCount('afterTx') > 0) return false;
  let lean = leanRules.get(common);
  if (lean === undefined) {
    lean = ![8037, 7928, 2780, 7864, 6800].some((eip) => common.isActivatedEIP(eip));
    leanRules.set(common, lean);
  }
  return lean;
}

/**
 * The message of a call tx to an address, as ethereumjs' runTx sets it up, without what runTx does
 * after it (gas refund, fees to the coinbase, receipt, touched-account cleanup) — none of which an
 * eth_call answer shows, and all of which simulation reverts. The set-up is runTx's, in its order:
 * a clean journal, the access list and the always-warm addresses (precompiles, sender, recipient,
 * coinbase under EIP-3651), the intrinsic gas off the gas limit, the gas bought at the effective
 * price and the nonce bumped on the sender, then the call itself. The pre-checks that could fail in
 * runTx have run before (evm/precheck.ts), in geth's words.
 */
async function leanCall<S extends StateManagerInterface>(
  runner: EvmRunner<S>,
  tx: TypedTransaction,
  block: Block,
  caller: Address,
  intrinsic: bigint,
): Promise<CallOutcome> {
  const evm = runner.vm.evm;
  const journal = evm.journal;
  const common = runner.common;
  await journal.cleanup();
  await journal.checkpoint();
  try {
    if (tx.type !== 0) {
      for (const [address, keys] of (tx as { accessList: [Uint8Array, Uint8Array[]][] }).accessList) {
        const a = bytesToUnprefixedHex(address);
        journal.addAlwaysWarmAddress(a, true);
        for (const key of keys) journal.addAlwaysWarmSlot(a, bytesToUnprefixedHex(key), true);
      }
    }
    if (common.isActivatedEIP(2929)) {
      for (const [address] of (evm as unknown as { precompiles: Map<string, unknown> }).precompiles) journal.addAlwaysWarmAddress(address);
      journal.addAlwaysWarmAddress(bytesToUnprefixedHex(caller.bytes));
      journal.addAlwaysWarmAddress(bytesToUnprefixedHex(tx.to!.bytes));
      if (common.isActivatedEIP(3651)) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(block.header.coinbase.bytes));
    }
    const baseFee = block.header.baseFeePerGas ?? 0n;
    const gasPrice =
      tx.type === 2 || tx.type === 4 ? (tx as { getEffectivePriorityFee(b: bigint): bigint }).getEffectivePriorityFee(baseFee) + baseFee : (tx as { gasPrice: bigint }).gasPrice;
    const sender = (await runner.sm.getAccount(caller)) ?? new Account();
    sender.balance -= tx.gasLimit * gasPrice;
    sender.nonce += 1n;
    await journal.putAccount(caller, sender);
    (evm as unknown as { eip7928CallPostTargetOog: boolean }).eip7928CallPostTargetOog = false;
    await journal.checkpoint();
    let res;
    try {
      res = await evm.runCall({
        block,
        gasPrice,
        caller,
        gasLimit: tx.gasLimit - intrinsic,
        to: tx.to,
        value: tx.value,
        data: tx.data,
        skipNonceIncrement: true,
      });
    } catch (e) {
      await journal.revert();
      throw e;
    }
    await journal.commit();
    await journal.commit();
    return res.execResult;
  } catch (e) {
    await journal.revert();
    throw e;
  } finally {
    if (common.isActivatedEIP(2929)) journal.cleanJournal();
    runner.sm.originalStorageCache.clear();
  }
}

async function applyOverrides(sm: StateManagerInterface, overrides: StateOverrides): Promise<void> {
  for (const o of overrides) await applyAccountOverride(sm, o);
}

/** One account's override (geth OverrideAccount): nonce, balance, code, then its whole storage or single slots. */
export async function applyAccountOverride(sm: StateManagerInterface, o: StateOverrides[number]): Promise<void> {
  const addr = new Address(o.address);
  const acct = (await sm.getAccount(addr)) ?? new Account();
  if (o.balance !== undefined) acct.balance = o.balance;
  if (o.nonce !== undefined) acct.nonce = o.nonce;
  await sm.putAccount(addr, acct);
  if (o.code !== undefined) await sm.putCode(addr, o.code);
  if (o.state !== undefined) {
    await sm.clearStorage(addr);
    for (const { slot, value } of o.state) await sm.putStorage(addr, setLengthLeft(slot, 32), value);
  }
  if (o.stateDiff !== undefined) {
    for (const { slot, value } of o.stateDiff) await sm.putStorage(addr, setLengthLeft(slot, 32), value);
  }
}
