/**
 * ForkHistory's log filters over the fork's history (docs/fork-mode.md "Numbering and history"): the
 * criteria of a filter from at or below the fork block are kept until the filter service says the filter
 * is gone (not found, uninstalled) or it expires, at most MAX_FORK_HISTORY_FILTERS of them; a filter
 * above the fork block is the service's alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notFound } from '../../src/lib/errors.js';
import type { CallContext, MethodSpec, MethodTable, ParamCodec } from '../../src/jsonrpc/types.js';
import { ForkHistory, MAX_FORK_HISTORY_FILTERS, type ForkHistoryPort } from '../../src/evmrpc/forkhistory.js';

const ctx: CallContext = { transport: 'http', authenticated: true };
const any: ParamCodec = { name: 'any', optional: true, decode: (v) => v };
const FORK_BLOCK = 10n;

/** the fork's own filter service and eth_getLogs, as a table; the origin's logs as a port */
function setup(filterTimeoutMs = 0) {
  const live = new Set<string>();
  let next = 0;
  let t = 0;
  const spec = (handler: (args: unknown[]) => unknown): MethodSpec => ({ params: [any, any], handler: (args) => handler(args as unknown[]) });
  const lookup = (id: unknown) => {
    if (!live.has(String(id))) throw notFound(`filter ${String(id)} not found`);
  };
  const table: MethodTable = {
    eth_getLogs: spec(() => ['fork log']),
    eth_newFilter: spec(() => {
      const id = `0x${(++next).toString(16)}`;
      live.add(id);
      return id;
    }),
    eth_getFilterLogs: spec(([id]) => (lookup(id), ['fork log'])),
    eth_getFilterChanges: spec(([id]) => (lookup(id), [])),
    eth_uninstallFilter: spec(([id]) => live.delete(String(id))),
  };
  const asked: unknown[][] = [];
  const port = {
    forkBlock: FORK_BLOCK,
    ask: async (method: string, params: readonly unknown[]) => {
      asked.push([method, ...params]);
      return ['origin log'];
    },
  } as unknown as ForkHistoryPort;
  const wrapped = new ForkHistory(table, port, { filterTimeoutMs, now: () => t }).wrap();
  const call = (name: string, ...params: unknown[]) => Promise.resolve(wrapped[name]!.handler(params, ctx));
  return { call, live, asked, advance: (ms: number) => void (t += ms) };
}

describe('ForkHistory: log filters over the fork history', () => {
  it('eth_getFilterLogs of a filter from below the fork block merges the origin\'s logs; one above is the fork\'s', async () => {
    const s = setup();
    const low = await s.call('eth_newFilter', { fromBlock: '0x0' });
    const high = await s.call('eth_newFilter', { fromBlock: '0xb' });
    assert.deepEqual(await s.call('eth_getFilterLogs', low), ['origin log', 'fork log']);
    assert.deepEqual(s.asked, [['eth_getLogs', { fromBlock: '0x0', toBlock: '0xa' }]]);
    assert.deepEqual(await s.call('eth_getFilterLogs', high), ['fork log']);
    assert.equal(s.asked.length, 1);
  });

  it('a filter the service no longer has is forgotten: its error passes, the origin is not asked, its room is free', async () => {
    const s = setup();
    const ids: unknown[] = [];
    for (let i = 0; i < MAX_FORK_HISTORY_FILTERS; i++) ids.push(await s.call('eth_newFilter', { fromBlock: '0x1' }));
    await assert.rejects(s.call('eth_newFilter', { fromBlock: '0x1' }), /more than 1024/);
    s.live.delete(String(ids[0])); // expired in the service
    await assert.rejects(s.call('eth_getFilterLogs', ids[0]), /not found/);
    assert.equal(s.asked.length, 0);
    await s.call('eth_newFilter', { fromBlock: '0x1' });
  });

  it(`at most MAX_FORK_HISTORY_FILTERS (${MAX_FORK_HISTORY_FILTERS}); uninstalled and expired ones make room`, async () => {
    const s = setup(1000);
    const ids: unknown[] = [];
    for (let i = 0; i < MAX_FORK_HISTORY_FILTERS; i++) ids.push(await s.call('eth_newFilter', { fromBlock: '0x1' }));
    const before = s.live.size;
    await assert.rejects(s.call('eth_newFilter', { fromBlock: '0x1' }), /more than 1024 filters reach below the fork block 10/);
    assert.equal(s.live.size, before, 'a refused filter is not installed');
    // a filter above the fork block is not counted
    await s.call('eth_newFilter', { fromBlock: '0xb' });
    assert.equal(await s.call('eth_uninstallFilter', ids[0]), true);
    await s.call('eth_newFilter', { fromBlock: '0x1' });
    await assert.rejects(s.call('eth_newFilter', { fromBlock: '0x1' }), /more than 1024/);
    // polled ones stay, the rest expire after filter-timeout
    s.advance(600);
    await s.call('eth_getFilterChanges', ids[1]);
    s.advance(600);
    await s.call('eth_newFilter', { fromBlock: '0x1' });
    s.live.clear();
  });
});
