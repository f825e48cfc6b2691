/**
 * The dev methods that shape the next blocks beyond evm_mine (docs/dev-mode.md "Methods"):
 *
 * - `anvil_setNextBlockPrevRandao` / `hardhat_setPrevRandao`: the next block's mixHash (PREVRANDAO),
 *   that block only (foundry crates/anvil/src/eth/api.rs anvil_set_next_block_prevrandao: a one-shot
 *   override; later blocks take their parent's hash again, as every Ferry block does);
 * - `evm_mine_detailed` / `anvil_mine_detailed`: evm_mine, answered with the mined blocks, their
 *   transactions in full, each with its `output` and, when it failed with `Error(string)`, its
 *   `revertReason` (api.rs evm_mine_detailed);
 * - `anvil_reorg [depth, [[tx, offset], …]]`: the last `depth` blocks removed and `depth` new ones
 *   mined, block `offset` (0-based) holding the txs paired with it — signed raw txs, or tx objects
 *   signed by a held key or impersonated, their nonces counted from the state `depth` blocks back
 *   (api.rs anvil_reorg). The removed logs reach `logs` subscribers and filters with `removed: true`,
 *   as anvil_rollback's do.
 */
import { invalidArgument } from '../lib/errors.js';
import { hash } from '../jsonrpc/codecs.js';
import { method, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import { revertReason } from '../evm/vmerrors.js';
import type { TraceOptions } from '../evm/tracing/types.js';
import { argumentError, jsonKind, parseData } from '../lib/hex.js';
import type { CallOrigin, EvmBlock } from '../types/chain.js';
import type { DevChannel } from '../types/dev.js';
import { sendArgs } from './accounts.js';
import type { EvmBackend } from './backend.js';
import type { CallArgs } from './codecs.js';
import type { TraceRunner } from './debug.js';
import { checkBlocks, mineOptions, numeric, PRIVATE } from './devmethods.js';
import { formatBlock, hexData, type RpcTransaction } from './format.js';
import { CALL_TRACER } from './ots.js';

/** The part of Surface A's modules (evmrpc/api.ts) these methods use. */
export interface DevBlockModules {
  reader: Pick<EvmBackend, 'latestNumber' | 'blockByNumber' | 'receipt' | 'nonce'>;
  chain: DevChannel;
  /** the top call's output of each mined tx (callTracer, top call only) */
  runs: Pick<TraceRunner, 'traceBlock'>;
  signer: {
    /** eth_accounts: a tx object without `from` is sent from the first (as Anvil) */
    accounts(): string[];
    signOrImpersonate(args: CallArgs, passphrase?: string, origin?: CallOrigin): Promise<Uint8Array>;
  };
}

/** One tx of anvil_reorg: signed bytes, or an object to sign (Anvil's untagged TransactionData). */
type ReorgTx = { raw: Uint8Array } | { args: CallArgs };

interface ReorgOptions {
  depth: bigint;
  pairs: { tx: ReorgTx; offset: bigint }[];
}

const UINT64_MAX = (1n << 64n) - 1n;
const depthCodec = numeric('depth', UINT64_MAX);
const offsetCodec = numeric('block offset', UINT64_MAX);

/** anvil_reorg's second param: `[[tx, offset], …]` (absent or null: no txs). */
const reorgPairs: ParamCodec<ReorgOptions['pairs']> = {
  name: 'transaction and block pairs',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw argumentError(i, `want an array of [transaction, block offset] pairs, got ${jsonKind(v)}`);
    return v.map((pair: unknown, k) => {
      if (!Array.isArray(pair) || pair.length !== 2) throw argumentError(i, `pair ${k}: want [transaction, block offset]`);
      const [tx, offset] = pair as [unknown, unknown];
      const decoded: ReorgTx = typeof tx === 'string' ? { raw: parseData(tx, i) } : { args: sendArgs.decode(tx, i) };
      return { tx: decoded, offset: offsetCodec.decode(offset, i) };
    });
  },
};

/** evm_mine_detailed's tracer: the top call's output is all it reads */
const TOP_CALL: TraceOptions = { ...CALL_TRACER, tracerConfig: { onlyTopCall: true } };

export function createDevBlockMethods({ reader, chain, runs, signer }: DevBlockModules): MethodTable {
  const setPrevRandao = (answer: null | true) =>
    method([hash], async ([value]) => {
      await chain.dev({ op: 'setNextPrevRandao', value });
      return answer;
    }, PRIVATE);

  /** A mined block as eth_getBlockByNumber answers it with full txs, each with Anvil's `output` (and `revertReason`). */
  const detailed = async (block: EvmBlock, origin: CallOrigin | undefined) => {
    const rpc = formatBlock(block, true);
    if (block.transactions.length === 0) return rpc;
    const traces = await runs.traceBlock(block.header.number, TOP_CALL, origin);
    const txs = (rpc.transactions as RpcTransaction[]).map((tx, i) => {
      const receipt = reader.receipt(block.transactions[i]!.hash);
      if (receipt?.status === 0) {
        const data = receipt.revertData ?? new Uint8Array();
        const reason = revertReason(data);
        return { ...tx, ...(reason !== undefined && { revertReason: reason }), output: hexData(data) };
      }
      const output = (traces[i]?.result as { output?: unknown } | undefined)?.output;
      return { ...tx, output: typeof output === 'string' ? output : '0x' };
    });
    return { ...rpc, transactions: txs };
  };

  const mineDetailed = method([mineOptions], async ([o], ctx) => {
    const blocks = checkBlocks(o.blocks ?? 1n);
    const before = reader.latestNumber();
    await chain.dev({ op: 'mine', blocks, timestamp: o.timestamp });
    const out: unknown[] = [];
    for (let n = before + 1n; n <= before + blocks; n++) {
      const block = reader.blockByNumber(n);
      if (block !== undefined) out.push(await detailed(block, ctx));
    }
    return out;
  }, PRIVATE);

  /** The signed bytes of each new block's txs: objects signed in offset order, nonces from the common block on. */
  const reorgBlocks = async ({ depth, pairs }: ReorgOptions, origin: CallOrigin | undefined): Promise<Uint8Array[][]> => {
    const head = reader.latestNumber();
    if (depth > head) throw invalidArgument(`Reorg depth must not exceed current chain height: current height ${head}, depth ${depth}`);
    checkBlocks(depth);
    const late = pairs.find((p) => p.offset >= depth);
    if (late) {
      throw invalidArgument(`Block number for reorg tx will exceed the reorged chain height. Block number ${late.offset} must not exceed (depth-1) ${depth - 1n}`);
    }
    const common = head - depth;
    const nonces = new Map<string, bigint>();
    const blocks: Uint8Array[][] = Array.from({ length: Number(depth) }, () => []);
    for (const { tx, offset } of [...pairs].sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))) {
      if ('raw' in tx) {
        blocks[Number(offset)]!.push(tx.raw);
        continue;
      }
      const fromHex = tx.args.from !== undefined ? hexData(tx.args.from) : signer.accounts()[0];
      if (fromHex === undefined) throw invalidArgument('No Signer available');
      const from = Uint8Array.from(Buffer.from(fromHex.slice(2), 'hex'));
      const nonce = tx.args.nonce ?? nonces.get(fromHex) ?? (await reader.nonce(from, common));
      nonces.set(fromHex, nonce + 1n);
      blocks[Number(offset)]!.push(await signer.signOrImpersonate({ ...tx.args, from, nonce }, undefined, origin));
    }
    return blocks;
  };

  return {
    anvil_setNextBlockPrevRandao: setPrevRandao(null),
    // Hardhat's name (hardhat-network-helpers setPrevRandao sends a 32-byte word); Hardhat answers true
    hardhat_setPrevRandao: setPrevRandao(true),
    evm_mine_detailed: mineDetailed,
    anvil_mine_detailed: mineDetailed,
    anvil_reorg: method([depthCodec, reorgPairs], async ([depth, pairs], ctx) => {
      const blocks = await reorgBlocks({ depth, pairs }, ctx);
      await chain.dev({ op: 'reorg', depth, blocks });
      return null;
    }, PRIVATE),
  };
}
