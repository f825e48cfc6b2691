/**
 * Block execution: a block's txs run in order on the parent state with ethereumjs' runTx, giving the
 * event loop a turn between slices (CheckTx is answered while a block runs: docs/architecture.md "One
 * block"); txs that cannot be applied are left out, not fatal. Returns the receipts' data, the bloom,
 * the ordered-trie roots and the new state root (with the flat change set the store writes).
 */
import type { StateManagerInterface } from '@ethereumjs/common';
import { Address, bigIntToAddressBytes, bigIntToBytes, setLengthLeft } from '@ethereumjs/util';
import { Bloom, encodeReceipt, runTx, type RunTxResult } from '@ethereumjs/vm';
import { yieldToEventLoop } from '../lib/slices.js';
import type { FlatChange } from '../store/flatstate.js';
import type { EvmTx } from '../types/chain.js';
import { fastTransfer, mayTransferFast } from './fasttransfer.js';
import { FlatStateManager } from './flatstate.js';
import { RevmBlockTxs } from './revmtx.js';
import { receiptRlp } from './ethrlp.js';
import { orderedTrieRoot } from './orderedtrie.js';
import type { At, BlockContext, BlockPrelude, EvmRunner } from './runner.js';
import { underRules, type DecodedTx } from './tx.js';
import { TouchCollector } from './touched.js';
import { vmErrorText } from './vmerrors.js';

export interface ExecutedTx {
  tx: EvmTx;
  status: 0 | 1;
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
  logsBloom: Uint8Array;
  createdAddress: Uint8Array | undefined;
  vmError: string | undefined;
  returnValue: Uint8Array;
  /** the addresses the tx touched (evm/touched.ts), when the runner's EVM collects them */
  touched?: Uint8Array[];
}

export interface ExecutedBlock {
  txs: ExecutedTx[];
  /** txs that could not be applied (stale nonce, funds): left out of the block */
  excluded: { tx: EvmTx; reason: string }[];
  gasUsed: bigint;
  stateRoot: Uint8Array;
  logsBloom: Uint8Array;
  transactionsRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  /** a flat runner's change set: the store writes it with the block (FlatState.write) */
  flatChange?: FlatChange;
}

/**
 * executeBlock yields to the event loop once a slice of txs has run this long (milliseconds), so
 * CheckTx (eth_sendRawTransaction's answer) waits at most about this long behind a block's execution.
 */
export const EXECUTE_SLICE_MS = 2;

/** a logs bloom's size (the yellow paper's 2048 bits) */
const BLOOM_BYTES = 256;
const EMPTY_BLOOM = new Uint8Array(BLOOM_BYTES);
const NO_LOGS: readonly never[] = [];

/**
 * EIP-2935 (Prague on): before a block's first tx, the parent's hash goes into the history contract's
 * ring buffer, slot (number - 1) mod HISTORY_SERVE_WINDOW — what the system call from the system address
 * stores (go-ethereum core/state_processor.go ProcessParentBlockHash; ethereumjs vm runBlock.ts
 * accumulateParentBlockHash). Without the contract's code (a genesis without it) nothing is written, as in geth.
 */
export async function recordParentHash<S extends StateManagerInterface>(runner: EvmRunner<S>, ctx: BlockContext): Promise<void> {
  const common = runner.common;
  if (!common.isActivatedEIP(2935) || ctx.number === 0n) return;
  const history = new Address(bigIntToAddressBytes(common.param('historyStorageAddress')));
  if ((await runner.sm.getCode(history)).length === 0) return;
  const parentHash = await runner.hashOf(ctx.number - 1n);
  const slot = setLengthLeft(bigIntToBytes((ctx.number - 1n) % common.param('historyServeWindow')), 32);
  await runner.sm.putStorage(history, slot, parentHash);
}

/**
 * How many checkpoints the state manager has open (evm/flatstate.ts openCheckpoints; ethereumjs
 * MerkleStateManager counts them in _checkpointCount). runTx reverts its own checkpoint when it throws,
 * but an error thrown deeper (a precompile that throws, e.g. 0x0a without KZG, inside @ethereumjs/evm
 * evm.ts runCall's message checkpoint) leaves one open, and the block's checkpoint could then never be
 * committed (the flat state's "commitToTrie with an open checkpoint"): executeBlock reverts down to
 * the depth it had before the tx.
 */
function openCheckpoints(sm: StateManagerInterface): number {
  const s = sm as unknown as { openCheckpoints?: number; _checkpointCount?: number };
  return s.openCheckpoints ?? s._checkpointCount ?? 0;
}

const REVM_TXS = new WeakMap<FlatStateManager, RevmBlockTxs | null>();

/** the revm executor of a flat runner's blocks (evm/revmtx.ts), when the addon is built and the runner uses it */
function revmTxsOf<S extends StateManagerInterface>(runner: EvmRunner<S>): RevmBlockTxs | undefined {
  const sm = runner.sm;
  if (!runner.revmTxs || !(sm instanceof FlatStateManager)) return undefined;
  let r = REVM_TXS.get(sm);
  if (r === undefined) {
    r = RevmBlockTxs.create(sm) ?? null;
    REVM_TXS.set(sm, r);
  }
  return r ?? undefined;
}

/**
 * Executes txs in order on `parent`. Txs that cannot be applied are excluded, not fatal.
 * `prelude` changes the state before the first tx (the dev cheats: chain/cheats.ts).
 */
export async function executeBlock<S extends StateManagerInterface>(
  runner: EvmRunner<S>,
  parent: At,
  ctx: BlockContext,
  txs: DecodedTx[],
  prelude?: BlockPrelude,
): Promise<ExecutedBlock> {
  const sm = runner.sm;
  await runner.state.beginBlock(parent);
  const block = runner.ethBlock(ctx);
  // the address index's touched sets (store/addrindex.ts), where the executor collects them (chain/app.ts)
  const touch = TouchCollector.of(runner.vm.evm);
  const out: ExecutedTx[] = [];
  const excluded: ExecutedBlock['excluded'] = [];
  const included: Uint8Array[] = [];
  const receiptsEnc: Uint8Array[] = [];
  const bloom = new Bloom(undefined, runner.common);
  let cumulative = 0n;
  // plain value transfers skip the EVM where nothing watches them (evm/fasttransfer.ts)
  const watched = runner.fastTransfers || runner.revmTxs ? mayTransferFast(runner.vm, runner.common) : undefined;
  // other txs run on revm where it is built and nothing else watches them (evm/revmtx.ts)
  const revm = watched && revmTxsOf(runner);
  // One checkpoint around the whole block: the state manager then flushes its caches into the trie
  // once at the end instead of after every tx (which hashed and stored every intermediate state).
  // (runTx itself resets the per-tx "original storage" of EIP-2200 net gas metering at each tx.)
  await sm.checkpoint();
  try {
    if (prelude) await prelude(sm);
    await recordParentHash(runner, ctx);
    let sliceStart = performance.now();
    for (const original of txs) {
      // let the chain thread answer CheckTx between slices of a long block
      if (performance.now() - sliceStart >= EXECUTE_SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
      // each tx runs under the rules of this block's time (a pool tx may have been checked under the fork before)
      let d: DecodedTx;
      try {
        d = underRules(original, runner.common);
      } catch (e) {
        excluded.push({ tx: original.evm, reason: e instanceof Error ? e.message : String(e) });
        continue;
      }
      if (cumulative + d.tx.gasLimit > ctx.gasLimit) {
        excluded.push({ tx: d.evm, reason: 'block gas limit reached' });
        continue;
      }
      touch?.begin();
      const fast = watched && runner.fastTransfers && (await fastTransfer(runner.vm, watched, sm, d.tx, d.evm.from, block));
      if (fast) {
        cumulative += fast.gasUsed;
        touch?.transfer(d.evm.from, d.tx.to!.bytes);
        receiptsEnc.push(receiptRlp(d.tx.type, 1, cumulative, EMPTY_BLOOM, NO_LOGS));
        included.push(d.evm.raw);
        out.push({
          tx: d.evm,
          status: 1,
          gasUsed: fast.gasUsed,
          cumulativeGasUsed: cumulative,
          logs: [],
          logsBloom: new Uint8Array(BLOOM_BYTES),
          createdAddress: undefined,
          vmError: undefined,
          returnValue: new Uint8Array(0),
          touched: touch?.end(),
        });
        continue;
      }
      const viaRevm = revm && (await revm.run(runner.common, watched, d.tx, d.evm.from, block, touch !== undefined));
      if (viaRevm) {
        touch?.end();
        cumulative += viaRevm.gasUsed;
        receiptsEnc.push(receiptRlp(d.tx.type, viaRevm.status, cumulative, viaRevm.bloom.bitvector, viaRevm.logs.map((l) => [l.address, l.topics, l.data])));
        bloom.or(viaRevm.bloom);
        included.push(d.evm.raw);
        out.push({
          tx: d.evm,
          status: viaRevm.status,
          gasUsed: viaRevm.gasUsed,
          cumulativeGasUsed: cumulative,
          logs: viaRevm.logs,
          logsBloom: viaRevm.bloom.bitvector,
          createdAddress: viaRevm.createdAddress,
          vmError: viaRevm.vmError,
          returnValue: viaRevm.returnValue,
          touched: viaRevm.touched,
        });
        continue;
      }
      let res: RunTxResult;
      const depth = openCheckpoints(sm);
      try {
        res = await runTx(runner.vm, { tx: d.tx, block, blockGasUsed: cumulative, skipHardForkValidation: true });
      } catch (e) {
        touch?.end();
        while (openCheckpoints(sm) > depth) await sm.revert();
        excluded.push({ tx: d.evm, reason: e instanceof Error ? e.message.split(' (')[0]! : String(e) });
        continue;
      }
      cumulative += res.totalGasSpent;
      const logs = res.receipt.logs.map(([address, topics, data]) => ({ address, topics, data }));
      const err = res.execResult.exceptionError;
      const rc = res.receipt;
      receiptsEnc.push('status' in rc ? receiptRlp(d.tx.type, rc.status, rc.cumulativeBlockGasUsed, rc.bitvector, rc.logs) : encodeReceipt(rc, d.tx.type));
      bloom.or(res.bloom);
      included.push(d.evm.raw);
      out.push({
        tx: d.evm,
        status: err ? 0 : 1,
        gasUsed: res.totalGasSpent,
        cumulativeGasUsed: cumulative,
        logs,
        logsBloom: res.bloom.bitvector,
        createdAddress: res.createdAddress?.bytes,
        vmError: err ? vmErrorText(err.error) : undefined,
        returnValue: res.execResult.returnValue,
        touched: touch?.end(),
      });
    }
  } catch (e) {
    await sm.revert();
    throw e;
  }
  // the CheckTx requests of the last slice are answered before the state root is computed
  await yieldToEventLoop();
  await sm.commit();
  const { root: stateRoot, change: flatChange } = await runner.state.endBlock(parent);
  return {
    flatChange,
    txs: out,
    excluded,
    gasUsed: cumulative,
    stateRoot,
    logsBloom: bloom.bitvector,
    transactionsRoot: orderedTrieRoot(included),
    receiptsRoot: orderedTrieRoot(receiptsEnc),
  };
}
