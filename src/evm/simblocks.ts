/**
 * eth_simulateV1's run (go-ethereum internal/ethapi/simulate.go execute/processBlock): blocks in
 * sequence on one state that is reverted at the end, each under its header (evm/simchain.ts) with
 * its state overrides (and precompile moves) applied first, each call run as a whole tx (ethereumjs
 * runTx) after geth's checks with geth's texts, its result, logs and gas recorded, and the block
 * assembled as geth's is. docs/compatibility.md "eth_simulateV1" lists where ferry differs.
 */
import type { EVM } from '@ethereumjs/evm';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, bytesToUnprefixedHex, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import { Bloom, encodeReceipt, runTx, type RunTxResult } from '@ethereumjs/vm';
import { checksumAddress } from '../lib/address.js';
import { DomainError, invalidRequest, simulateRejected, type SimulateRejectReason } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';
import type { EvmHeader, EvmLog, EvmTx } from '../types/chain.js';
import type { StateOverrides } from '../types/query.js';
import type { SimBlockResult, SimCallResult, SimulateRequest } from '../types/simulate.js';
import type { FlatStateManager } from './flatstate.js';
import { orderedTrieRoot } from './orderedtrie.js';
import { MAX_INIT_CODE_SIZE, callFees, checkFeesAndFunds, checkGasAndCode, type CallFees } from './precheck.js';
import { applyAccountOverride } from './simulate.js';
import type { BlockContext, EvmRunner, RunGate, StateRef } from './runner.js';
import { carriedFields, nextBaseFee, planBlocks, sealHeader, unsignedTx } from './simchain.js';
import { TransferTracer } from './simtransfers.js';
import { revertReason, vmErrorText } from './vmerrors.js';

/** The block a simulation starts after, as its header says. */
export interface SimBase {
  at: StateRef;
  header: EvmHeader;
}

export interface SimulationRun {
  base: SimBase;
  req: SimulateRequest;
  chainId: bigint;
  /** gas all calls together may use (the node's RPC gas cap; 0 = no cap) */
  gasCap: bigint;
  /** applied before the first block's own overrides (the pending dev cheats) */
  preOverrides?: StateOverrides;
  gate?: RunGate;
}

const U64_MAX = 2n ** 64n - 1n;
const SHA256_EMPTY = Uint8Array.from(Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex'));

/** the reason a txRejected of evm/precheck.ts stands for in eth_simulateV1 (geth txValidationError) */
const REASONS: Record<string, SimulateRejectReason> = {
  nonceTooLow: 'nonceTooLow',
  nonceTooHigh: 'nonceTooHigh',
  underpriced: 'baseFeeTooLow',
  insufficientFunds: 'insufficientFunds',
  gas: 'intrinsicGas',
};

/** geth applyMessage's wrapping of a call that could not be applied: `err: <reason> (supplied gas N)` */
function notApplied(e: unknown, gas: bigint): never {
  if (e instanceof DomainError && e.is('txRejected')) {
    throw simulateRejected(REASONS[e.detail.reason] ?? 'internal', `err: ${e.message} (supplied gas ${gas})`);
  }
  throw e;
}

type Precompiles = Map<string, never>;

/**
 * A block's precompiles after its overrides (geth's overridden map answers calls), whose `entries`
 * stay the chain rules' list: runTx warms those, as geth's access list takes ActivePrecompiles(rules).
 */
class BlockPrecompiles extends Map<string, never> {
  private rules: Precompiles | undefined;
  constructor(rules: Precompiles) {
    super(rules);
    this.rules = rules;
  }
  override entries(): MapIterator<[string, never]> {
    return (this.rules ?? this).entries();
  }
}

/** geth StateOverride.Apply with the block's precompiles: moves first checked, an overridden precompile is no longer one */
async function applyOverrides(sm: FlatStateManager, overrides: StateOverrides, precompiles: Precompiles): Promise<void> {
  const sorted = [...overrides].sort((a, b) => Buffer.compare(a.address, b.address));
  const moved = new Set<string>();
  const given = new Set(sorted.map((o) => bytesToUnprefixedHex(o.address)));
  for (const o of sorted) {
    const key = bytesToUnprefixedHex(o.address);
    if (moved.has(key)) throw gethError(`account ${checksumAddress(o.address)} has already been overridden by a precompile`);
    const p = precompiles.get(key);
    if (o.movePrecompileTo !== undefined) {
      if (p === undefined) throw gethError(`account ${checksumAddress(o.address)} is not a precompile`);
      const dest = bytesToUnprefixedHex(o.movePrecompileTo);
      if (given.has(dest)) throw gethError(`account ${checksumAddress(o.movePrecompileTo)} is already overridden`);
      precompiles.set(dest, p);
      moved.add(dest);
    }
    if (p !== undefined) precompiles.delete(key);
    await applyAccountOverride(sm, o);
  }
}

/** geth's errors without a code of their own (-32000) */
function gethError(message: string): DomainError<'invalidRequest'> {
  return invalidRequest(message);
}

/**
 * ethereumjs runTx refuses a sender with code (EIP-3607); geth's simulation skips that check. The
 * sender's account is read once for it: that one read sees no code, the run sees the real account.
 */
function skipSenderCodeCheck(sm: FlatStateManager, from: Uint8Array): () => void {
  const own = Object.getOwnPropertyDescriptor(sm, 'getAccount');
  const read = sm.getAccount.bind(sm);
  const restore = () => {
    if (own) Object.defineProperty(sm, 'getAccount', own);
    else delete (sm as { getAccount?: unknown }).getAccount;
  };
  sm.getAccount = async (a: Address) => {
    const acct = await read(a);
    if (!equalsBytes(a.bytes, from)) return acct;
    restore();
    if (acct && !equalsBytes(acct.codeHash, KECCAK256_NULL)) {
      Object.defineProperty(acct, 'codeHash', {
        configurable: true,
        get() {
          delete (acct as { codeHash?: unknown }).codeHash;
          return KECCAK256_NULL;
        },
      });
    }
    return acct;
  };
  return restore;
}

/** A call's checks before it runs, in geth's order and words (preCheck, buyGas); `err: … (supplied gas N)` as applyMessage wraps them. */
function checkCall(c: {
  from: Uint8Array;
  nonce: bigint;
  stateNonce: bigint;
  gas: bigint;
  fees: CallFees;
  baseFee: bigint;
  validation: boolean;
  value: bigint;
  balance: bigint;
}): void {
  const who = (): string => checksumAddress(c.from);
  try {
    if (c.fees.feeCap < c.fees.tip) {
      throw simulateRejected('invalidParams', `max priority fee per gas higher than max fee per gas: address ${who()}, maxPriorityFeePerGas: ${c.fees.tip}, maxFeePerGas: ${c.fees.feeCap}`);
    }
    if (c.validation) {
      if (c.nonce < c.stateNonce) throw simulateRejected('nonceTooLow', `nonce too low: address ${who()}, tx: ${c.nonce} state: ${c.stateNonce}`);
      if (c.nonce > c.stateNonce) throw simulateRejected('nonceTooHigh', `nonce too high: address ${who()}, tx: ${c.nonce} state: ${c.stateNonce}`);
      if (c.stateNonce === U64_MAX) throw simulateRejected('internal', `nonce has max value: address ${who()}, nonce: ${c.stateNonce}`);
      // with validation a call without fees is held to the base fee too (no NoBaseFee)
      if (c.fees.free && c.fees.feeCap < c.baseFee) {
        throw simulateRejected('baseFeeTooLow', `max fee per gas less than block base fee: address ${who()}, maxFeePerGas: ${c.fees.feeCap}, baseFee: ${c.baseFee}`);
      }
    }
    // the EoA check is skipped, even in validation mode (geth processBlock)
    checkFeesAndFunds({ from: c.from, gas: c.gas, value: c.value, fees: c.fees, baseFee: c.baseFee, balance: c.balance, code: new Uint8Array() });
  } catch (e) {
    if (e instanceof DomainError && e.is('simulateRejected')) throw simulateRejected(e.detail.reason, `err: ${e.message} (supplied gas ${c.gas})`);
    notApplied(e, c.gas);
  }
}

type SimLog = SimCallResult['logs'][number];

/** What a run shows (geth simCallResult): its logs in order, gas, status and error. */
function callOutcome(
  res: RunTxResult,
  at: Omit<SimLog, 'address' | 'topics' | 'data' | 'logIndex'>,
  tracer: TransferTracer | undefined,
  counter: { next: number },
  capped: boolean,
): SimCallResult {
  const failure = res.execResult.exceptionError;
  const receiptLogs = (failure ? [] : res.receipt.logs).map(([address, topics, data]) => ({ address, topics, data }));
  let ordered: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array; index: number }[];
  if (tracer) {
    let next = 0;
    const traced = tracer.logs(failure !== undefined).map((l) => (l.kind === 'log' ? { ...receiptLogs[next++]!, index: l.index } : l));
    ordered = traced.filter((l) => l.address !== undefined);
  } else {
    ordered = receiptLogs.map((l) => ({ ...l, index: counter.next++ }));
  }
  const used = res.totalGasSpent;
  const result: SimCallResult = {
    // geth ExecutionResult.Return: nothing for a failed call (a revert's data is in its error)
    returnData: failure ? new Uint8Array() : res.execResult.returnValue,
    logs: ordered.map(({ address, topics, data, index }) => ({ ...at, address, topics, data, logIndex: index })),
    gasUsed: used,
    maxUsedGas: used + (res.gasRefund ?? 0n),
    status: failure ? 0 : 1,
  };
  if (failure?.error === 'revert') {
    const data = res.execResult.returnValue;
    const reason = revertReason(data);
    result.error = { kind: 'reverted', message: reason !== undefined ? `${GethText.executionReverted}: ${reason}` : GethText.executionReverted, data };
  } else if (failure) {
    const text = vmErrorText(failure.error);
    result.error = { kind: 'vm', message: capped ? `${text} (gas limit was capped by the RPC server's global gas cap)` : text };
  }
  return result;
}

/** Runs a simulation; every state change is reverted afterwards. */
export async function simulateBlocks(runner: EvmRunner<FlatStateManager>, run: SimulationRun): Promise<SimBlockResult[]> {
  const { base, req } = run;
  const plan = planBlocks(base.header.number, base.header.timestamp, req.blocks);
  const sm = runner.sm;
  const evm = runner.vm.evm as EVM & { _precompiles: Precompiles };
  const ownPrecompiles = evm._precompiles;
  const blockchain = (runner.vm as unknown as { blockchain: { getBlock(n: number): Promise<{ hash(): Uint8Array }> } }).blockchain;
  const chainBlock = blockchain.getBlock;
  const simulated = new Map<bigint, Uint8Array>();
  // BLOCKHASH of a simulated block answers its simulated hash (geth simBackend.HeaderByNumber)
  blockchain.getBlock = async (n: number) => {
    const h = simulated.get(BigInt(n));
    return h ? { hash: () => h } : chainBlock.call(blockchain, n);
  };
  await runner.setRoot(base.at);
  await sm.checkpoint();
  const outerGate = runner.gate;
  if (run.gate !== undefined) runner.gate = run.gate;
  let budget = run.gasCap > 0n ? run.gasCap : U64_MAX;
  const results: SimBlockResult[] = [];
  try {
    if (run.preOverrides) await applyOverrides(sm, run.preOverrides, new Map(ownPrecompiles));
    let parent = base.header;
    for (const planned of plan) {
      const o = planned.input.block;
      const { coinbase, gasLimit } = carriedFields(o, { coinbase: parent.miner, gasLimit: parent.gasLimit });
      const baseFee = o?.baseFeePerGas ?? (req.validation ? nextBaseFee({ gasLimit: parent.gasLimit, gasUsed: parent.gasUsed, baseFee: parent.baseFeePerGas }) : 0n);
      const ctx: BlockContext = {
        number: planned.number,
        timestamp: planned.time,
        coinbase,
        gasLimit,
        baseFee,
        mixHash: o?.prevRandao ?? new Uint8Array(32),
        overridden: true,
        ...(o?.blobBaseFee !== undefined ? { blobBaseFee: o.blobBaseFee } : {}),
      };
      const precompiles = new BlockPrecompiles(ownPrecompiles);
      evm._precompiles = precompiles;
      if (planned.input.state) await applyOverrides(sm, planned.input.state, precompiles);
      const txs: EvmTx[] = [];
      const calls: SimCallResult[] = [];
      const receipts: Uint8Array[] = [];
      const bloom = new Bloom(undefined, runner.common);
      const logs: EvmLog[][] = [];
      let gasUsed = 0n;
      // geth's log tracer numbers every log it sees in the block, those of failed frames too
      const counter = { next: 0 };
      for (const [i, call] of planned.input.calls.entries()) {
        const from = call.from ?? new Uint8Array(20);
        const fromAddr = new Address(from);
        const acct = await sm.getAccount(fromAddr);
        const stateNonce = acct?.nonce ?? 0n;
        // geth's nonces are uint64: one bumped past 2^64 - 1 (no validation) reads back as 0
        const nonce = call.nonce ?? stateNonce % (U64_MAX + 1n);
        const remaining = gasLimit - gasUsed;
        let gas = call.gas ?? remaining;
        if (remaining < gas) throw simulateRejected('blockGasLimit', `block gas limit reached: remaining: ${remaining}, required: ${gas}`);
        const capped = budget < gas;
        if (capped) gas = budget;
        const tx = unsignedTx({ ...call, gas, nonce }, from, run.chainId);
        txs.push(tx);
        const fees = callFees(call, baseFee);
        checkCall({ from, nonce, stateNonce, gas, fees, baseFee, validation: req.validation, value: call.value ?? 0n, balance: acct?.balance ?? 0n });
        if (call.to === undefined && (call.data?.length ?? 0) > MAX_INIT_CODE_SIZE) {
          throw simulateRejected('initCodeSize', `err: max initcode size exceeded: code size ${call.data!.length} limit ${MAX_INIT_CODE_SIZE} (supplied gas ${gas})`);
        }
        const txData: Record<string, unknown> = {
          // the nonce was checked above (runTx skips it): a nonce of 2^64 - 1 must still run, as in geth
          nonce: 0n,
          gasLimit: gas,
          to: call.to ? new Address(call.to) : undefined,
          value: call.value ?? 0n,
          data: call.data ?? new Uint8Array(),
          accessList: call.accessList?.map((a) => [a.address, a.storageKeys]) ?? [],
        };
        if (tx.type === 0) {
          txData.type = call.accessList ? 1 : 0;
          txData.gasPrice = call.gasPrice;
        } else {
          txData.type = 2;
          txData.maxFeePerGas = fees.feeCap;
          txData.maxPriorityFeePerGas = fees.tip;
        }
        const ejsTx = createTx(txData as never, { common: runner.common, freeze: false, allowUnlimitedInitCodeSize: true }) as TypedTransaction;
        try {
          const floor = runner.common.isActivatedEIP(7623) ? ejsTx.getMinimumGasLimit() : 0n;
          checkGasAndCode({ gas, intrinsic: ejsTx.getIntrinsicGas(), floor, creation: call.to === undefined, dataLength: call.data?.length ?? 0 });
        } catch (e) {
          notApplied(e, gas);
        }
        (ejsTx as { getSenderAddress: () => Address }).getSenderAddress = () => fromAddr;
        // geth's NoBaseFee outside validation: a call without fees runs as if the base fee were 0
        const block = runner.ethBlock(fees.free && !req.validation ? { ...ctx, baseFee: 0n } : ctx);
        const tracer = req.traceTransfers ? new TransferTracer(evm, counter) : undefined;
        tracer?.attach();
        const restoreSender = skipSenderCodeCheck(sm, from);
        let res;
        try {
          res = await runTx(runner.vm, {
            tx: ejsTx,
            block,
            skipNonce: true,
            skipBalance: true,
            skipBlockGasLimitValidation: true,
            skipHardForkValidation: true,
            blockGasUsed: gasUsed,
          });
        } finally {
          restoreSender();
          tracer?.detach();
        }
        const used = res.totalGasSpent;
        if (used > budget) throw gethError(`RPC gas cap exhausted: need ${used}, remaining ${budget}`);
        budget -= used;
        gasUsed += used;
        bloom.or(res.bloom);
        receipts.push(encodeReceipt(res.receipt, tx.type));
        const at = { blockNumber: planned.number, blockHash: new Uint8Array(32), transactionHash: tx.hash, transactionIndex: i, blockTimestamp: planned.time };
        const result = callOutcome(res, at, tracer, counter, capped);
        logs.push(result.logs);
        calls.push(result);
      }
      const header = sealHeader(
        runner.common,
        {
          number: planned.number,
          parentHash: parent.hash,
          stateRoot: base.header.stateRoot,
          transactionsRoot: orderedTrieRoot(txs.map((t) => t.raw)),
          receiptsRoot: orderedTrieRoot(receipts),
          logsBloom: bloom.bitvector,
          miner: coinbase,
          gasLimit,
          gasUsed,
          timestamp: planned.time,
          extraData: new Uint8Array(),
          baseFeePerGas: baseFee,
          mixHash: ctx.mixHash,
        },
        txs.map((t) => t.raw),
      );
      simulated.set(planned.number, header.hash);
      for (const list of logs) for (const l of list) l.blockHash = header.hash;
      results.push({ block: { header, transactions: txs }, calls, requestsHash: runner.common.isActivatedEIP(7685) ? SHA256_EMPTY : undefined });
      parent = header;
    }
    return results;
  } catch (e) {
    (runner.vm.evm as EVM).transientStorage.clear();
    throw e;
  } finally {
    evm._precompiles = ownPrecompiles;
    blockchain.getBlock = chainBlock;
    runner.gate = outerGate;
    await sm.revert();
  }
}
