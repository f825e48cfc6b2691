/**
 * In-process checks of the filter service (src/evmrpc/filters.ts) with a scripted chain and clock,
 * for what takes too long or cannot be timed against the real process: a client that never polls
 * fills its filter's bounded buffer and the filter is uninstalled (the next poll says so, nothing
 * is silently dropped), expiry exactly at filter-timeout, expired filters not counting against
 * filter-cap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvmBackend } from '../../src/evmrpc/backend.js';
import { EvmFeed, MAX_CATCH_UP_BLOCKS, type EvmEventSource, type FeedBackend, type PoolChange } from '../../src/evmrpc/feed.js';
import { FILTER_BUFFER_MAX, createFilterMethods } from '../../src/evmrpc/filters.js';
import type { CallContext } from '../../src/jsonrpc/types.js';
import { DomainError } from '../../src/lib/errors.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { toJsonRpcError } from '../../src/jsonrpc/errors.js';
import { silentLogger } from '../../src/lib/log.js';
import type { EvmBlock, EvmReceipt } from '../../src/types/chain.js';

const HTTP: CallContext = { transport: 'http', authenticated: false };

/** Blocks made on demand, no logs. */
class Chain implements FeedBackend, EvmEventSource {
  private latest = 0n;
  private readonly listeners = new Set<(h: bigint) => void>();
  /** blocks the feed read */
  reads = 0;
  latestNumber = (): bigint => this.latest;
  blockByNumber = (n: bigint): EvmBlock | undefined => {
    this.reads++;
    if (n > this.latest) return undefined;
    const hash = new Uint8Array(32);
    new DataView(hash.buffer).setBigUint64(24, n);
    return { header: { number: n, hash } as EvmBlock['header'], transactions: [] };
  };
  blockReceipts = (): EvmReceipt[] => [];
  onBlock(l: (h: bigint) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  onPool(_l: (c: PoolChange) => void): () => void {
    return () => {};
  }
  /** commits `count` blocks, reported in steps the feed takes whole */
  commit(count: number): void {
    for (let left = count; left > 0; ) {
      const step = Math.min(left, MAX_CATCH_UP_BLOCKS);
      this.latest += BigInt(step);
      left -= step;
      for (const l of this.listeners) l(this.latest);
    }
  }
}

function setup(opts: { filterCap: number; timeoutMs: number }) {
  const chain = new Chain();
  const feed = new EvmFeed(chain, chain, silentLogger);
  let t = 1_000_000;
  const svc = createFilterMethods({} as EvmBackend, feed, { ...opts, blockRangeCap: 0, logsCap: 0, now: () => t }, silentLogger);
  const callM = (method: string, ...args: unknown[]) => svc.table[method]!.handler(args, HTTP);
  const error = (method: string, ...args: unknown[]): string => {
    try {
      callM(method, ...args);
    } catch (e) {
      assert.ok(e instanceof DomainError);
      const wire = toJsonRpcError(e, undefined, evmErrors);
      return `${wire.code} ${wire.message}`;
    }
    assert.fail(`${method} did not fail`);
  };
  return { chain, svc, call: callM, error, tick: (ms: number) => (t += ms), close: () => (svc.close(), feed.close()) };
}

describe('filter service', () => {
  it(`a filter that is never polled is uninstalled when its buffer passes ${FILTER_BUFFER_MAX} entries`, () => {
    const s = setup({ filterCap: 10, timeoutMs: 0 });
    const idle = s.call('eth_newBlockFilter') as string;
    const busy = s.call('eth_newBlockFilter') as string;
    s.chain.commit(FILTER_BUFFER_MAX);
    assert.equal((s.call('eth_getFilterChanges', busy) as string[]).length, FILTER_BUFFER_MAX);
    assert.equal(s.svc.size(), 2, 'a full buffer is still kept');
    s.chain.commit(1);
    assert.equal(s.error('eth_getFilterChanges', idle), `-32000 filter ${idle} not found`);
    assert.equal(s.call('eth_uninstallFilter', idle), false);
    assert.deepEqual((s.call('eth_getFilterChanges', busy) as string[]).length, 1);
    assert.equal(s.svc.size(), 1);
    s.close();
  });

  it('expires exactly after filter-timeout without a poll; each poll restarts the clock', () => {
    const s = setup({ filterCap: 10, timeoutMs: 1_000 });
    const a = s.call('eth_newBlockFilter') as string;
    const b = s.call('eth_newFilter', {}) as string;
    s.tick(1_000);
    s.call('eth_getFilterChanges', a);
    s.call('eth_getFilterChanges', b);
    s.tick(1_000);
    s.call('eth_getFilterChanges', a);
    s.tick(1_001);
    assert.equal(s.error('eth_getFilterChanges', a), `-32000 filter ${a} not found`);
    assert.equal(s.error('eth_getFilterChanges', b), `-32000 filter ${b} not found`);
    assert.equal(s.call('eth_uninstallFilter', b), false);
    s.close();
  });

  it('expired filters do not count against filter-cap', () => {
    const s = setup({ filterCap: 2, timeoutMs: 1_000 });
    s.call('eth_newBlockFilter');
    s.call('eth_newPendingTransactionFilter');
    assert.equal(s.error('eth_newBlockFilter'), '-32000 error creating block filter: max limit reached');
    s.tick(1_001);
    assert.match(s.call('eth_newBlockFilter') as string, /^0x[1-9a-f][0-9a-f]{31}$/);
    assert.equal(s.svc.size(), 1);
    s.close();
  });

  it('filter-cap 0 disables polling filters', () => {
    const s = setup({ filterCap: 0, timeoutMs: 1_000 });
    assert.equal(s.error('eth_newFilter', {}), '-32000 error creating filter: max limit reached');
    s.close();
  });

  it('ids are matched case-insensitively', () => {
    const s = setup({ filterCap: 2, timeoutMs: 0 });
    const id = s.call('eth_newBlockFilter') as string;
    s.chain.commit(2);
    assert.equal((s.call('eth_getFilterChanges', id.toUpperCase().replace('0X', '0x')) as string[]).length, 2);
    assert.equal(s.call('eth_uninstallFilter', id.toUpperCase()), true);
    s.close();
  });

  it('a committed block is read only when a filter wants it (docs/benchmarks.md "The fixed cost of a block, part 2")', () => {
    const s = setup({ filterCap: 2, timeoutMs: 0 });
    s.call('eth_newPendingTransactionFilter');
    s.chain.commit(5);
    assert.equal(s.chain.reads, 0, 'no block or log filter: no block read');
    const id = s.call('eth_newBlockFilter') as string;
    s.chain.commit(2);
    assert.equal(s.chain.reads, 2, 'each new block read once');
    const hashes = s.call('eth_getFilterChanges', id) as string[];
    assert.deepEqual(hashes.map((h) => BigInt(h)), [6n, 7n], 'the blocks after the filter, in order');
    s.close();
  });
});
