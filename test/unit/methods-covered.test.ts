/**
 * Every registered method has at least one golden or e2e case: the names of both surfaces' tables
 * (Surface A: every `create*Methods` part node/ merges; Surface B: `createCometRoutes`) must each
 * appear in a test/golden/*.json transcript (as a request's `method`, or a Surface B URI path) or in
 * a test/e2e/*.test.ts source as a quoted method or route string.
 *
 * The tables are built with stand-in backends: only their names are read, no handler runs.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as accounts from '../../src/evmrpc/accounts.js';
import * as debug from '../../src/evmrpc/debug.js';
import * as devblocks from '../../src/evmrpc/devblocks.js';
import * as devmethods from '../../src/evmrpc/devmethods.js';
import * as devtokens from '../../src/evmrpc/devtokens.js';
import * as extra from '../../src/evmrpc/extra.js';
import * as filters from '../../src/evmrpc/filters.js';
import * as methods from '../../src/evmrpc/methods.js';
import * as miner from '../../src/evmrpc/miner.js';
import * as ots from '../../src/evmrpc/ots.js';
import * as personal from '../../src/evmrpc/personal.js';
import * as profiling from '../../src/evmrpc/profiling.js';
import * as rawdebug from '../../src/evmrpc/rawdebug.js';
import * as reads from '../../src/evmrpc/reads.js';
import * as ethconfig from '../../src/evmrpc/ethconfig.js';
import * as sending from '../../src/evmrpc/sending.js';
import * as simulate from '../../src/evmrpc/simulate.js';
import * as subscriptions from '../../src/evmrpc/subscriptions.js';
import * as trace from '../../src/evmrpc/trace.js';
import * as txpool from '../../src/evmrpc/txpool.js';
import { createCometRoutes } from '../../src/cometrpc/routes.js';
import { mergeTables, type MethodTable } from '../../src/jsonrpc/types.js';
import { GOLDEN_DIR, REPO_ROOT } from '../helpers/paths.js';

/** Any property, any call: a backend whose methods are never run. */
const stubHandler: ProxyHandler<object> = {
  get: (_t, key) => (key === 'then' ? undefined : stub),
  apply: () => stub,
};
const stub: never = new Proxy<object>(function () {}, stubHandler) as never;

/** every Surface A module that declares a table part */
const SURFACE_A_MODULES: Record<string, Record<string, unknown>> = {
  accounts,
  debug,
  devblocks,
  devmethods,
  devtokens,
  ethconfig,
  extra,
  filters,
  methods,
  miner,
  ots,
  personal,
  profiling,
  rawdebug,
  reads,
  sending,
  simulate,
  subscriptions,
  trace,
  txpool,
};

function surfaceA(): MethodTable {
  const core = methods.createEvmMethods(stub, stub);
  return mergeTables(
    core,
    extra.createExtraEthMethods(stub, stub, core),
    rawdebug.createRawDebugMethods(stub, stub),
    reads.createReadMethods(stub),
    ethconfig.createEthConfigMethods(stub, stub),
    sending.createSendingMethods(stub),
    simulate.createSimulateMethods(stub, stub),
    profiling.createProfilingMethods(stub),
    filters.createFilterMethods(stub, stub, { filterCap: 1, timeoutMs: 0, blockRangeCap: 0, logsCap: 0 }, stub).table,
    subscriptions.createSubscriptionMethods(stub, { maxPerConnection: 1 }, stub).table,
    accounts.createAccountMethods(stub),
    personal.createPersonalMethods(stub),
    miner.createMinerMethods(stub),
    devmethods.createDevMethods(stub, stub),
    devblocks.createDevBlockMethods(stub),
    devtokens.createDevTokenMethods(stub),
    txpool.createTxPoolMethods(stub),
    debug.createDebugMethods(stub, stub),
    trace.createTraceMethods(stub, stub),
    ots.createOtsMethods(stub, core),
  );
}

/** the factory names called above: a new table part must be added there (and so checked) */
const SURFACE_A_FACTORIES = [
  'createEvmMethods',
  'createExtraEthMethods',
  'createRawDebugMethods',
  'createReadMethods',
  'createEthConfigMethods',
  'createSendingMethods',
  'createSimulateMethods',
  'createProfilingMethods',
  'createFilterMethods',
  'createSubscriptionMethods',
  'createAccountMethods',
  'createPersonalMethods',
  'createMinerMethods',
  'createDevMethods',
  'createDevBlockMethods',
  'createDevTokenMethods',
  'createTxPoolMethods',
  'createDebugMethods',
  'createTraceMethods',
  'createOtsMethods',
];

/** Method names and Surface B route names the golden transcripts send. */
function goldenNames(): Set<string> {
  const names = new Set<string>();
  const visit = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key === 'method') names.add(v);
      // Surface B URI cases: "/block?height=1"
      if (key === 'path') names.add(v.replace(/^\//, '').replace(/\?.*$/, ''));
      // raw requests and WebSocket requests written as text
      if (key === 'rawRequest' || key === undefined) for (const m of v.matchAll(/"method"\s*:\s*"([^"]+)"/g)) names.add(m[1]!);
      return;
    }
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) visit(x, k);
  };
  for (const f of readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.json'))) visit(JSON.parse(readFileSync(join(GOLDEN_DIR, f), 'utf8')));
  return names;
}

/** the text of every e2e test source */
function e2eSources(): string {
  const dir = join(REPO_ROOT, 'test', 'e2e');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A quoted method name (`'eth_call'`, `"eth_call"`, `` `eth_call` ``) or a route path (`/status?`, `'/status'`). */
function quoted(source: string, name: string): boolean {
  return new RegExp(`(['"\`/])${escape(name)}(['"\`?])`).test(source);
}

function uncovered(names: readonly string[]): string[] {
  const golden = goldenNames();
  const source = e2eSources();
  return names.filter((n) => !golden.has(n) && !quoted(source, n));
}

describe('every registered method has a golden or e2e case', () => {
  it('the Surface A parts built here are every create*Methods factory of src/evmrpc', () => {
    const exported = Object.values(SURFACE_A_MODULES)
      .flatMap((m) => Object.keys(m))
      .filter((k) => /^create\w*Methods$/.test(k))
      .sort();
    assert.deepEqual(exported, [...SURFACE_A_FACTORIES].sort());
  });

  it('Surface A (Ethereum JSON-RPC)', () => {
    const names = Object.keys(surfaceA()).sort();
    assert.ok(names.length > 100, `only ${names.length} methods: the table was not built`);
    assert.deepEqual(uncovered(names), []);
  });

  it('Surface B (CometBFT RPC)', () => {
    const names = Object.keys(createCometRoutes(stub, stub, { unsafe: true, timeoutBroadcastTxCommitMs: 0, timeoutCommitMs: 0 })).sort();
    assert.ok(names.length > 20, `only ${names.length} routes: the table was not built`);
    assert.deepEqual(uncovered(names), []);
  });

  it('the check finds a name nowhere (a made-up method is uncovered)', () => {
    assert.deepEqual(uncovered(['eth_noSuchMethodAnywhere']), ['eth_noSuchMethodAnywhere']);
  });
});
