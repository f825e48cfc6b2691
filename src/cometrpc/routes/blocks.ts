/**
 * Blocks (rpc/core/blocks.go): blockchain, block, block_by_hash, block_results, commit, header,
 * header_by_hash, block_search.
 */
import { invalidArgument, notFound } from '../../lib/errors.js';
import { compileQuery } from '../../eventquery/index.js';
import type { BlockStore, TxIndex } from '../backend.js';
import { blockMetaJson, blockResultsJson, commitJson, headerJson, resultBlockJson } from '../format.js';
import type { BlockMetaJson, BlockResultsJson, CommitJson, HeaderJson, ResultBlockJson } from '../jsontypes.js';
import { bytesParam, hexBytesParam, int64Param, intParam, stringParam } from '../params.js';
import { route, type CometRoute } from '../route.js';
import { getHeight, orderOf, pageOf } from './env.js';

/** blockchain returns at most this many block metas */
export const BLOCKCHAIN_LIMIT = 20n;

/** coretypes.ResultBlockchainInfo */
export interface BlockchainResult {
  last_height: string;
  block_metas: BlockMetaJson[];
}

/** coretypes.ResultCommit (null when the store has no such block) */
export type CommitResult = { signed_header: { header: HeaderJson; commit: CommitJson }; canonical: boolean } | null;

/** coretypes.ResultHeader */
export interface HeaderResult {
  header: HeaderJson | null;
}

/** coretypes.ResultBlockSearch */
export interface BlockSearchResult {
  blocks: ResultBlockJson[];
  total_count: string;
}

export function blockRoutes(blocks: BlockStore, txs: TxIndex) {
  const headerOf = (h: bigint | undefined): HeaderResult => {
    const rec = h === undefined ? undefined : blocks.block(h);
    return { header: rec ? headerJson(rec.block.header) : null };
  };
  return {
    blockchain: route(
      [int64Param('minHeight'), int64Param('maxHeight')],
      ([minArg, maxArg]): BlockchainResult => {
        let min = minArg ?? 0n;
        let max = maxArg ?? 0n;
        const top = blocks.latestHeight();
        if (min < 0n || max < 0n) throw invalidArgument('heights must be non-negative');
        if (min === 0n) min = 1n;
        if (max === 0n) max = top;
        if (max > top) max = top;
        const base = blocks.baseHeight();
        if (min < base) min = base;
        if (min < max - BLOCKCHAIN_LIMIT + 1n) min = max - BLOCKCHAIN_LIMIT + 1n;
        if (min > max) throw invalidArgument(`min height ${min} can't be greater than max height ${max}`);
        const metas: BlockMetaJson[] = [];
        for (let h = max; h >= min; h--) {
          const rec = blocks.block(h);
          if (rec) metas.push(blockMetaJson(rec));
        }
        return { last_height: top.toString(), block_metas: metas };
      },
      { cache: 'always' },
    ),
    block: route([int64Param('height')], ([h]): ResultBlockJson => resultBlockJson(blocks.block(getHeight(blocks, h))), { cache: 'height' }),
    block_by_hash: route(
      [bytesParam('hash')],
      ([hash]): ResultBlockJson => {
        const h = blocks.heightByHash(hash);
        return resultBlockJson(h === undefined ? undefined : blocks.block(h));
      },
      { cache: 'always' },
    ),
    block_results: route(
      [int64Param('height')],
      ([h]): BlockResultsJson => {
        const ht = getHeight(blocks, h);
        const rec = blocks.block(ht);
        if (!rec) throw notFound(`could not find results for height #${ht}`);
        return blockResultsJson(ht, rec.results);
      },
      { cache: 'height' },
    ),
    commit: route(
      [int64Param('height')],
      ([h]): CommitResult => {
        const top = blocks.latestHeight();
        const ht = getHeight(blocks, h, top);
        const rec = blocks.block(ht);
        if (!rec) return null;
        // the canonical commit of H is block H+1's last_commit; at the tip only the seen commit exists
        const next = ht < top ? blocks.block(ht + 1n) : undefined;
        const commit = next ? next.block.lastCommit : rec.commit;
        return { signed_header: { header: headerJson(rec.block.header), commit: commitJson(commit) }, canonical: next !== undefined };
      },
      { cache: 'height' },
    ),
    header: route([int64Param('height')], ([h]) => headerOf(getHeight(blocks, h)), { cache: 'height' }),
    header_by_hash: route([hexBytesParam('hash')], ([hash]) => headerOf(blocks.heightByHash(hash)), { cache: 'always' }),
    block_search: route(
      [stringParam('query'), intParam('page'), intParam('per_page'), stringParam('order_by')],
      ([query, page, per, order]): BlockSearchResult => {
        const q = compileQuery(query);
        const heights = txs.searchBlocks(q.query);
        const dir = orderOf(order, 'desc');
        heights.sort((a, b) => dir * (a - b));
        const found: ResultBlockJson[] = [];
        for (const h of pageOf(heights, page, per)) {
          const rec = blocks.block(BigInt(h));
          if (rec) found.push(resultBlockJson(rec));
        }
        return { blocks: found, total_count: String(heights.length) };
      },
    ),
  } satisfies Record<string, CometRoute>;
}

