/**
 * Surface A's `debug` methods on consensus encodings: debug_getRawHeader, debug_getRawBlock,
 * debug_getRawReceipts, debug_getRawTransaction (geth's DebugAPI) and debug_traceBlock (geth's
 * tracers API: a block's RLP, traced on its parent's state like debug_traceBlockByNumber).
 *
 * Encodings (evm/ethrlp.ts): the header and block as eth_getBlockByNumber describes them, so
 * len(debug_getRawBlock) == `size` and the receipts' trie root is `receiptsRoot`; but keccak of the
 * raw header is not ferry's block hash (the CometBFT header hash) — except at genesis
 * (docs/compatibility.md). Not-found answers as geth: by number null; by hash an error for the
 * header and block, an empty list for the receipts.
 */
import type { Common } from '@ethereumjs/common';
import { decodeBlock, encodeBlock, encodeHeader, encodeReceipt, type DecodedBlock } from '../evm/ethrlp.js';
import { keccak256 } from '../evm/common.js';
import { equalBytes } from '../lib/bytes.js';
import { invalidRequest, notFound } from '../lib/errors.js';
import { data, hash } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable } from '../jsonrpc/types.js';
import type { CallOrigin, EvmBlock, Hash } from '../types/chain.js';
import type { TraceOptions } from '../evm/tracing/types.js';
import type { BlockSelector, EvmBackend } from './backend.js';
import { blockNumberOrTagOrHash } from './codecs.js';
import { blockTraceJson, traceConfig, traceOptions, type BlockTraceEntry } from './debug.js';
import { hexData } from './format.js';
import { GethText } from '../lib/gethtexts.js';

/** A client's block to replay: the committed parent, the block's context, its txs. */
export interface ReplayRequest {
  parent: bigint;
  ctx: { number: bigint; timestamp: bigint; coinbase: Uint8Array; gasLimit: bigint; baseFee: bigint; mixHash: Uint8Array };
  hash: Hash;
  rawTxs: Uint8Array[];
}

/** Where debug_traceBlock's replay runs (node/: the trace worker). */
export interface ReplayRunner {
  traceReplay(block: ReplayRequest, opts: TraceOptions, origin?: CallOrigin): Promise<BlockTraceEntry[]>;
}

/** The part of Surface A's modules (evmrpc/api.ts) these methods use. */
export interface RawDebugModules {
  reader: Pick<EvmBackend, 'resolveBlock' | 'blockByNumber' | 'blockByHash' | 'blockReceipts' | 'transactionByHash'>;
  runs: ReplayRunner;
}

export interface RawDebugInfo {
  /** the chain's rules (which header fields the hardfork has) */
  /** the rules of a block time (which header fields a block of that time has: evm/forks.ts) */
  commonAt(timestamp: bigint): Common;
  /** the longest timeout a trace may ask for, ms */
  traceTimeoutCapMs: number;
}

/** Go's %d of a [32]byte (geth's `header #%d not found` prints the hash so): `[1 2 3 …]` */
function goBytes(b: Uint8Array): string {
  return `[${Array.from(b).join(' ')}]`;
}

export function createRawDebugMethods({ reader, runs }: RawDebugModules, info: RawDebugInfo): MethodTable {
  const { commonAt } = info;

  /**
   * geth's lookup: a hash selects by hash (`what #[…] not found` when unknown); a number or tag
   * selects the canonical block, null when there is none.
   */
  function find(sel: BlockSelector, what: string): EvmBlock | null {
    if (sel.kind === 'hash') {
      const b = reader.blockByHash(sel.hash);
      if (b === undefined) throw notFound(`${what} #${goBytes(sel.hash)} not found`);
      return b;
    }
    const n = reader.resolveBlock(sel);
    return (n === undefined ? undefined : reader.blockByNumber(n)) ?? null;
  }

  /** the hash tracers see: the committed block's when the given header is that block's, else keccak(header) */
  function replayHash(b: DecodedBlock): Hash {
    const committed = reader.blockByNumber(b.number);
    if (committed !== undefined && equalBytes(encodeHeader(commonAt(committed.header.timestamp), committed.header), b.headerRlp)) return committed.header.hash;
    return keccak256(b.headerRlp);
  }

  const table: Record<string, MethodSpec> = {
    debug_getRawHeader: method([blockNumberOrTagOrHash], ([sel]) => {
      const b = find(sel, 'header');
      return b === null ? null : hexData(encodeHeader(commonAt(b.header.timestamp), b.header));
    }),
    debug_getRawBlock: method([blockNumberOrTagOrHash], ([sel]) => {
      const b = find(sel, 'block');
      return b === null ? null : hexData(encodeBlock(commonAt(b.header.timestamp), b.header, b.transactions.map((t) => t.raw)));
    }),
    debug_getRawReceipts: method([blockNumberOrTagOrHash], ([sel]) => {
      let n: bigint | undefined;
      if (sel.kind === 'hash') {
        // geth: receipts of an unknown hash are an empty list
        n = reader.blockByHash(sel.hash)?.header.number;
        if (n === undefined) return [];
      } else {
        n = reader.resolveBlock(sel);
        if (n === undefined) return null;
      }
      return (reader.blockReceipts(n) ?? []).map((r) => hexData(encodeReceipt(r)));
    }),
    debug_getRawTransaction: method([hash], ([h]) => {
      const found = reader.transactionByHash(h);
      return found === undefined ? null : hexData(found.tx.raw);
    }),
    debug_traceBlock: method([data, traceConfig], async ([raw, c], ctx) => {
      let b: DecodedBlock;
      try {
        b = decodeBlock(raw);
      } catch (e) {
        throw invalidRequest(`could not decode block: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (b.number === 0n) throw invalidRequest(GethText.genesisNotTraceable);
      const parent = reader.blockByHash(b.parentHash);
      if (parent === undefined) throw notFound(`block ${hexData(b.parentHash)} not found`);
      const opts = traceOptions(c, info.traceTimeoutCapMs);
      const entries = await runs.traceReplay(
        {
          parent: parent.header.number,
          ctx: { number: b.number, timestamp: b.timestamp, coinbase: b.coinbase, gasLimit: b.gasLimit, baseFee: b.baseFeePerGas, mixHash: b.mixHash },
          hash: replayHash(b),
          rawTxs: b.rawTxs,
        },
        opts,
        ctx,
      );
      return blockTraceJson(entries);
    }),
  };
  return Object.freeze(table);
}
