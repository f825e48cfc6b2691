/**
 * Fuzz and abuse (issue 10): one real ferry process with every namespace registered gets a seeded,
 * bounded set of malformed inputs for every method of Surface A (taken from the method tables in
 * src/evmrpc/, built here with inert backends only to read their names and param counts) and every
 * route of Surface B (src/cometrpc/routes.ts), over HTTP POST and WebSocket, Surface B also as URI
 * GET; plus malformed envelopes. Every answer must be a well-formed JSON-RPC response (or a
 * documented HTTP error), with an expected error code and a message free of JS internals; after the
 * run the node still serves, logged no error-level line, and the chain did not change.
 *
 * Abuse checks not covered elsewhere: forged JWTs (alg "none", signature stripped, right secret
 * but another alg) on the private namespaces, and JS tracers reaching for the host through
 * globalThis or polluting prototypes for the next trace.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet, JsonRpcProvider } from 'ethers';
import WebSocket from 'ws';
import { createAccountMethods } from '../../src/evmrpc/accounts.js';
import { createDebugMethods } from '../../src/evmrpc/debug.js';
import { createExtraEthMethods } from '../../src/evmrpc/extra.js';
import { createFilterMethods } from '../../src/evmrpc/filters.js';
import { createEvmMethods } from '../../src/evmrpc/methods.js';
import { createMinerMethods } from '../../src/evmrpc/miner.js';
import { createPersonalMethods } from '../../src/evmrpc/personal.js';
import { createRawDebugMethods } from '../../src/evmrpc/rawdebug.js';
import { createSubscriptionMethods } from '../../src/evmrpc/subscriptions.js';
import { createTxPoolMethods } from '../../src/evmrpc/txpool.js';
import { createCometRoutes } from '../../src/cometrpc/routes.js';
import { makeJwt, readJwtSecret } from '../../src/server/auth.js';
import { prng } from '../helpers/chaingen.js';
import { DEV_ACCOUNT_COUNT, devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';

const SEED = 0x5eed_f077;
const CONCURRENCY = 8;
const WS_CONNECTIONS = 4;
const REQUEST_TIMEOUT_MS = 60_000;
const DEEP = 5_000;
const LONG = 256 * 1024;

/**
 * Surface A error codes (JSON-RPC 2.0 and the -32000 server family). Not -32603: on Surface A that is
 * a handler that crashed (docs/errors.md), never a fitting answer to bad input.
 */
const A_CODES = new Set([-32700, -32600, -32601, -32602, -32000, -32001, -32002, -32003, -32004, -32005]);
/** CometBFT's JSON-RPC codes (rpc/jsonrpc/types) */
const B_CODES = new Set([-32700, -32600, -32601, -32602, -32603]);
/** JS internals that must never reach a client */
const LEAK = /TypeError|RangeError|ReferenceError|SyntaxError: Unexpected|Cannot read|undefined is not|is not a function|ethereumjs|\bat [\w$.<>]+ \(|\bat (file|node):|\.[cm]?js:\d+:\d+/;

const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** malformed values as JSON text (so deep nesting need not be built as JS objects) */
const VALUES: readonly string[] = [
  'null',
  '0',
  '1e308',
  '18446744073709551616',
  '-1',
  '1.5',
  'true',
  'false',
  '"0x"',
  '"0x0400"',
  '"0xabc"',
  '"abcdef"',
  '"0xzz"',
  '""',
  '"-0x1"',
  JSON.stringify('0x' + 'f'.repeat(80)),
  JSON.stringify('0x' + 'g'.repeat(LONG)),
  '[]',
  '[1,"x",null]',
  '{}',
  '{"unknownField":1,"from":null,"to":[],"data":{"x":1},"blockHash":7}',
  deepArray(DEEP),
  deepObject(DEEP),
];

/** Surface A's method names and param counts, from the tables the node merges (src/node/run.ts) */
function surfaceAMethods(): [string, number][] {
  const inert = {} as never;
  const feed = { onBlock: () => () => {}, onPendingTxs: () => () => {}, onLogs: () => () => {}, onRewind: () => () => {} } as never;
  const log = { child: () => log, info() {}, warn() {}, error() {}, debug() {} } as never;
  const core = createEvmMethods(inert, { clientVersion: '', gasCap: 0n, blockRangeCap: 0, logsCap: 0, feeHistoryCap: 1, evmTimeoutMs: 0 });
  const filters = createFilterMethods(inert, feed, { filterCap: 1, timeoutMs: 1, blockRangeCap: 1, logsCap: 1 }, log);
  const tables = [
    core,
    createExtraEthMethods(inert, { gasCap: 0n, evmTimeoutMs: 0 }, core),
    createRawDebugMethods(inert, { commonAt: () => inert, traceTimeoutCapMs: 0 }),
    filters.table,
    createSubscriptionMethods(feed, { maxPerConnection: 1 }, log).table,
    createAccountMethods(inert),
    createPersonalMethods(inert),
    createMinerMethods(inert),
    createTxPoolMethods(inert),
    createDebugMethods(inert, { gasCap: 0n, traceTimeoutCapMs: 0 }),
  ];
  (filters as { close?: () => void }).close?.();
  return tables.flatMap((t) => Object.entries(t).map(([name, spec]): [string, number] => [name, spec.params.length]));
}

function surfaceBRoutes(): [string, string[], boolean][] {
  return Object.entries(createCometRoutes({} as never, {} as never, {} as never)).map(([name, r]) => [name, r.params.map((p) => p.name), r.wsOnly === true]);
}

type Surface = 'A' | 'B';
interface Answer {
  status: number;
  contentType: string;
  body: string;
}
interface Case {
  surface: Surface;
  transport: 'http' | 'ws' | 'uri';
  what: string;
  body: string;
  /** URI GET path+query (transport uri) */
  path?: string;
  contentType?: string;
  /** a batch of notifications or an empty answer is allowed to have no body */
  mayBeEmpty?: boolean;
}

let node: FerryNode;
let jwt: string;
let wsA: WsPool;
let wsB: WsPool;
const problems: string[] = [];
let sent = 0;
/** JSON-RPC error objects checked (so the run cannot pass by checking nothing) */
let errorsChecked = 0;

/**
 * WebSocket connections, each carrying one request at a time. Every message a connection receives
 * goes to the request waiting on it; one that arrives while none waits (a late answer) is kept in
 * `strays`. Each request has its own id (envelope()), and check() matches the answer's id to it, so
 * a late answer taken for the next request's shows as a wrong id.
 */
class WsPool {
  private socks: WebSocket[] = [];
  private next = 0;
  private waiting = new Map<WebSocket, (body: string) => void>();
  readonly strays: string[] = [];
  static async open(url: string, n: number, headers: Record<string, string> = {}): Promise<WsPool> {
    const pool = new WsPool();
    for (let i = 0; i < n; i++) {
      const ws = new WebSocket(url, { headers, maxPayload: 64 * 1024 * 1024 });
      await new Promise<void>((res, rej) => {
        ws.once('open', () => res());
        ws.once('error', rej);
      });
      ws.on('message', (data: WebSocket.RawData) => {
        const w = pool.waiting.get(ws);
        if (w === undefined) pool.strays.push(String(data).slice(0, 200));
        else w(String(data));
      });
      pool.socks.push(ws);
    }
    return pool;
  }
  /** one message, one answer: each connection carries one request at a time (a lock per socket) */
  private busy = new Map<WebSocket, Promise<unknown>>();
  async send(text: string, mayBeEmpty: boolean): Promise<Answer> {
    const ws = this.socks[this.next++ % this.socks.length]!;
    const prev = this.busy.get(ws) ?? Promise.resolve();
    const p = prev.then(
      () =>
        new Promise<Answer>((resolve, reject) => {
          if (ws.readyState !== WebSocket.OPEN) return reject(new Error(`websocket closed (${ws.readyState})`));
          const timer = setTimeout(
            () => {
              this.waiting.delete(ws);
              ws.off('close', onClose);
              if (mayBeEmpty) resolve({ status: 0, contentType: 'ws', body: '' });
              else reject(new Error('no answer over websocket'));
            },
            mayBeEmpty ? 1_000 : REQUEST_TIMEOUT_MS,
          );
          const onMsg = (body: string) => {
            clearTimeout(timer);
            this.waiting.delete(ws);
            ws.off('close', onClose);
            resolve({ status: 0, contentType: 'ws', body });
          };
          const onClose = (code: number) => {
            clearTimeout(timer);
            this.waiting.delete(ws);
            reject(new Error(`websocket closed by the server (${code})`));
          };
          this.waiting.set(ws, onMsg);
          ws.once('close', onClose);
          ws.send(text);
        }),
    );
    this.busy.set(ws, p.catch(() => undefined));
    return p;
  }
  /** one last request on every connection, answered after anything still owed (the stray check) */
  async drain(): Promise<void> {
    for (let i = 0; i < this.socks.length; i++) {
      const id = nextRequestId++;
      const a = await this.send(envelope('eth_chainId', '[]', String(id)), false);
      const got = (JSON.parse(a.body) as { id?: unknown }).id;
      if (got !== id) this.strays.push(`drain request ${id} answered with id ${JSON.stringify(got)}: ${a.body.slice(0, 200)}`);
    }
  }
  close(): void {
    for (const s of this.socks) s.close();
  }
}

async function send(c: Case): Promise<Answer> {
  sent++;
  if (c.transport === 'ws') return (c.surface === 'A' ? wsA : wsB).send(c.body, c.mayBeEmpty === true);
  const base = c.surface === 'A' ? node.url : node.cometUrl;
  const headers: Record<string, string> = { 'content-type': c.contentType ?? 'application/json' };
  if (c.surface === 'A') headers.authorization = `Bearer ${jwt}`;
  const res =
    c.transport === 'uri'
      ? await fetch(base + c.path, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
      : await fetch(base, { method: 'POST', headers, body: c.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
}

function checkError(c: Case, err: unknown, where: string): void {
  const codes = c.surface === 'A' ? A_CODES : B_CODES;
  errorsChecked++;
  if (typeof err !== 'object' || err === null) return void problems.push(`${where}: error is not an object`);
  const { code, message, data } = err as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof code !== 'number' || !codes.has(code)) problems.push(`${where}: unexpected error code ${String(code)}`);
  if (typeof message !== 'string' || message.length === 0) problems.push(`${where}: empty error message`);
  const text = `${String(message)} ${typeof data === 'string' ? data : JSON.stringify(data ?? '')}`;
  const leak = LEAK.exec(text);
  if (leak) problems.push(`${where}: error leaks JS internals (${leak[0]}): ${text.slice(0, 300)}`);
}

type IdOf = { kind: 'id'; id: number | string } | { kind: 'unreadable' } | { kind: 'any' };

/** The id a request's answer must carry: its own (an integer or string), null when it could not be read */
function idOf(req: unknown): IdOf {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) return { kind: 'any' };
  const id = (req as { id?: unknown }).id;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))) return { kind: 'id', id };
  return { kind: 'any' };
}

/**
 * Matches answer ids to request ids: a single request's answer carries its id (or null when the body
 * was not JSON); every id in a batch answer is one of the batch's. Not for URI GETs (CometBFT answers -1).
 */
function checkIds(c: Case, v: unknown, where: string): void {
  let req: unknown;
  try {
    // (a BOM makes the body unreadable JSON for both surfaces, as for Go's encoding/json)
    req = JSON.parse(c.body);
  } catch {
    req = undefined;
  }
  const idIn = (x: unknown): unknown => (typeof x === 'object' && x !== null ? (x as { id?: unknown }).id : undefined);
  if (Array.isArray(req)) {
    const sent = new Set(req.map(idOf).flatMap((i) => (i.kind === 'id' ? [i.id] : [])));
    const got = (Array.isArray(v) ? v : [v]).map(idIn);
    for (const id of got) if (id !== null && id !== undefined && !sent.has(id as never)) problems.push(`${where}: batch answer with id ${JSON.stringify(id)}, not one of the batch's`);
    for (const id of sent) if (!got.includes(id)) problems.push(`${where}: no answer for batch id ${JSON.stringify(id)}`);
    return;
  }
  if (Array.isArray(v)) return void problems.push(`${where}: a batch answer to a single request`);
  const got = idIn(v);
  if (req === undefined) {
    if (got !== null && got !== undefined) problems.push(`${where}: answer id ${JSON.stringify(got)} to a body that is not JSON`);
    return;
  }
  const want = idOf(req);
  // CometBFT decodes the request as one typed struct (rpc/jsonrpc/types RPCRequest): a method that is
  // there but not a string fails the whole decode, and the answer has no id
  const method = want.kind === 'id' ? (req as { method?: unknown }).method : undefined;
  if (c.surface === 'B' && method !== undefined && typeof method !== 'string') {
    if (got !== undefined) problems.push(`${where}: answer id ${JSON.stringify(got)} to a request CometBFT cannot decode`);
    return;
  }
  if (want.kind === 'id' && got !== want.id) problems.push(`${where}: answer id ${JSON.stringify(got)} for request id ${JSON.stringify(want.id)}`);
}

function checkResponse(c: Case, v: unknown, where: string): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return void problems.push(`${where}: answer is not a JSON-RPC object`);
  const r = v as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') problems.push(`${where}: jsonrpc is ${String(r.jsonrpc)}`);
  // CometBFT leaves the id out when the request had none it could read (`id,omitempty`)
  if (!('id' in r) && c.surface === 'A') problems.push(`${where}: no id`);
  const hasResult = 'result' in r;
  const hasError = 'error' in r && r.error !== undefined;
  if (hasResult === hasError) problems.push(`${where}: needs exactly one of result and error`);
  if (hasError) checkError(c, r.error, where);
}

function check(c: Case, a: Answer): void {
  const where = `${c.surface}/${c.transport} ${c.what}`;
  if (a.body === '') {
    if (!c.mayBeEmpty) problems.push(`${where}: empty answer (HTTP ${a.status})`);
    return;
  }
  if (c.transport !== 'ws' && !(a.status === 200 || [400, 404, 405, 413, 415, 500].includes(a.status))) {
    problems.push(`${where}: HTTP ${a.status}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(a.body);
  } catch {
    // documented HTTP errors with a plain-text body: 404, 405, 413, 415
    if (c.transport === 'ws' || ![404, 405, 413, 415].includes(a.status)) problems.push(`${where}: HTTP ${a.status}, body is not JSON: ${a.body.slice(0, 200)}`);
    else if (LEAK.test(a.body)) problems.push(`${where}: HTTP ${a.status} text leaks JS internals: ${a.body.slice(0, 200)}`);
    return;
  }
  if (c.transport !== 'uri') checkIds(c, v, where);
  if (Array.isArray(v)) {
    if (v.length === 0) problems.push(`${where}: empty JSON array answer`);
    v.forEach((x, i) => checkResponse(c, x, `${where} [${i}]`));
  } else {
    checkResponse(c, v, where);
  }
}

/** every request built here gets an id of its own, so an answer can be matched to its request */
let nextRequestId = 1;
function envelope(method: string, params: string, id = String(nextRequestId++)): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${params}}`;
}

/** params array with `value` at position `pos` (earlier positions null) */
function paramsAt(value: string, pos: number): string {
  return '[' + [...Array(pos).fill('null'), value].join(',') + ']';
}

function buildCases(): Case[] {
  const rand = prng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const cases: Case[] = [];
  let rr = 0;
  const transport = (): 'http' | 'ws' => (rr++ % 2 === 0 ? 'http' : 'ws');

  for (const [method, n] of surfaceAMethods()) {
    for (const v of VALUES) {
      const pos = Math.floor(rand() * Math.max(n, 1));
      cases.push({ surface: 'A', transport: transport(), what: `${method} param ${pos} = ${v.slice(0, 40)}`, body: envelope(method, paramsAt(v, pos)) });
    }
    const shapes: [string, string][] = [
      ['too many params', '[' + Array(n + 3).fill('"0x1"').join(',') + ']'],
      ['no params', '[]'],
      ['params as object', '{"a":1,"b":"0x"}'],
      ['params as string', '"0x1"'],
      ['params as number', '7'],
    ];
    for (const [what, p] of shapes) cases.push({ surface: 'A', transport: transport(), what: `${method} ${what}`, body: envelope(method, p) });
  }

  for (const [route, names, wsOnly] of surfaceBRoutes()) {
    for (const v of VALUES) {
      const name = names.length === 0 ? 'bogus' : pick(names);
      const named = `{${JSON.stringify(name)}:${v},"unknownArg":1}`;
      const positional = paramsAt(v, Math.floor(rand() * Math.max(names.length, 1)));
      const t = wsOnly ? 'ws' : transport();
      cases.push({ surface: 'B', transport: t, what: `${route} ${name} = ${v.slice(0, 40)}`, body: envelope(route, rand() < 0.5 ? named : positional) });
      if (!wsOnly && v.length < 4096) {
        const raw = JSON.parse(v) as unknown;
        const arg = typeof raw === 'string' ? pick([raw, JSON.stringify(raw)]) : JSON.stringify(raw);
        cases.push({ surface: 'B', transport: 'uri', what: `GET /${route}?${name}=${v.slice(0, 40)}`, body: '', path: `/${route}?${encodeURIComponent(name)}=${encodeURIComponent(arg)}&bogus=%zz` });
      }
    }
    const shapes: [string, string][] = [
      ['too many params', '[' + Array(names.length + 3).fill('"1"').join(',') + ']'],
      ['params as string', '"1"'],
      ['params as number', '7'],
    ];
    for (const [what, p] of shapes) cases.push({ surface: 'B', transport: wsOnly ? 'ws' : transport(), what: `${route} ${what}`, body: envelope(route, p) });
  }

  // malformed envelopes, on both surfaces and both transports
  const garbage: [string, string, boolean?][] = [
    ['no jsonrpc', '{"id":1,"method":"eth_blockNumber","params":[]}'],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":1,"method":"eth_blockNumber","params":[]}'],
    ['id object', envelope('eth_blockNumber', '[]', '{"a":1}')],
    ['id array', envelope('eth_blockNumber', '[]', '[1]')],
    ['id float', envelope('eth_blockNumber', '[]', '1.5')],
    ['id huge', envelope('eth_blockNumber', '[]', '1e400')],
    ['id true', envelope('eth_blockNumber', '[]', 'true')],
    ['method number', '{"jsonrpc":"2.0","id":1,"method":5,"params":[]}'],
    ['method missing', '{"jsonrpc":"2.0","id":1,"params":[]}'],
    ['method empty', envelope('', '[]')],
    ['method __proto__', envelope('__proto__', '[]')],
    ['method constructor', envelope('constructor', '[]')],
    ['method toString', envelope('toString', '[]')],
    ['batch of garbage', '[1,"x",null,[],{},{"jsonrpc":"2.0"}]'],
    ['empty batch', '[]'],
    ['batch of notifications', '[{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}]', true],
    ['not JSON', 'this is not json'],
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":"eth_block'],
    ['trailing garbage', envelope('eth_blockNumber', '[]') + ' }}garbage'],
    ['two objects', envelope('eth_blockNumber', '[]') + envelope('eth_chainId', '[]')],
    ['a bare string', '"eth_blockNumber"'],
    ['a bare number', '42'],
    ['null', 'null'],
    ['deep array body', deepArray(DEEP)],
    // on B an object without an id is a notification (CometBFT answers nothing)
    ['deep object body', deepObject(DEEP)],
    ['BOM', '\ufeff' + envelope('eth_blockNumber', '[]')],
    ['NUL bytes', envelope('eth_blockNumber\u0000', '[]')],
    ['lone surrogate', envelope('eth_\ud800', '[]')],
  ];
  for (const surface of ['A', 'B'] as const) {
    for (const [what, body, mayBeEmpty] of garbage) {
      for (const t of ['http', 'ws'] as const) cases.push({ surface, transport: t, what: `envelope: ${what}`, body, mayBeEmpty: mayBeEmpty === true || what === 'empty batch' || (surface === 'B' && what === 'deep object body') });
    }
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      cases.push({ surface, transport: 'http', what: `content type ${ct}`, body: envelope('eth_blockNumber', '[]'), contentType: ct });
    }
  }
  for (const path of ['/status?x=%zz', '/block?height=-1', '/block?height=99999999999999999999999', '/block?height="abc"', '/tx?hash=zz', '/tx?hash=0x', '/tx_search?query=%22%27&page=-1', '/abci_query?data=0xzz', '/validators?per_page=1e400', '/unknown_route', '/broadcast_tx_sync?tx=0xzz', '/broadcast_tx_sync?tx=%22notbase64%22']) {
    cases.push({ surface: 'B', transport: 'uri', what: `GET ${path}`, body: '', path });
  }
  return cases;
}

async function runBounded(cases: Case[]): Promise<void> {
  let i = 0;
  const worker = async () => {
    while (i < cases.length) {
      const c = cases[i++]!;
      try {
        check(c, await send(c));
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        problems.push(`${c.surface}/${c.transport} ${c.what}: ${(err as Error).message}${cause === undefined ? '' : ` (${String(cause)})`}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

interface ChainView {
  nonces: string[];
  balances: string[];
  pool: unknown;
  unconfirmed: string;
}

async function chainView(): Promise<ChainView> {
  const addrs = Array.from({ length: DEV_ACCOUNT_COUNT }, (_, i) => devAddress(i));
  const authed = (method: string) => fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    body: envelope(method, '[]'),
  }).then(async (r) => ((await r.json()) as { result: unknown }).result);
  const comet = (await (await fetch(`${node.cometUrl}/num_unconfirmed_txs`)).json()) as { result: { total: string } };
  return {
    nonces: await Promise.all(addrs.map((a) => call<string>(node.url, 'eth_getTransactionCount', [a, 'latest']))),
    balances: await Promise.all(addrs.map((a) => call<string>(node.url, 'eth_getBalance', [a, 'latest']))),
    pool: await authed('txpool_status'),
    unconfirmed: comet.result.total,
  };
}

let txHash: string;
let before0: ChainView;
let startHeight: number;

before(async () => {
  node = await startFerry({ args: ['--json-rpc.api', 'eth,net,web3,txpool,debug,personal,miner'] });
  jwt = makeJwt(readJwtSecret(join(node.home, 'config', 'jwt.hex')));
  // one transaction of our own, before the baseline, for the tracer checks
  const wallet = new Wallet(devKeys()[1]!, new JsonRpcProvider(node.url, undefined, { staticNetwork: true }));
  const tx = await wallet.sendTransaction({ to: devAddress(2), value: 1n });
  txHash = tx.hash;
  await tx.wait();
  wallet.provider?.destroy();
  wsA = await WsPool.open(node.wsUrl, WS_CONNECTIONS, { authorization: `Bearer ${jwt}` });
  wsB = await WsPool.open(node.cometUrl.replace(/^http/, 'ws') + '/websocket', WS_CONNECTIONS);
  before0 = await chainView();
  startHeight = Number(await call<string>(node.url, 'eth_blockNumber'));
});

after(async () => {
  wsA?.close();
  wsB?.close();
  if (node) assert.equal(await node.stop(), 0);
});

describe('fuzz: malformed input on both surfaces', { timeout: 600_000 }, () => {
  it('every answer is well formed, with an expected code and a clean message', async () => {
    const cases = buildCases();
    assert.ok(cases.length > 2_000 && cases.length < 6_000, `bounded: ${cases.length} cases`);
    await runBounded(cases);
    await wsA.drain();
    await wsB.drain();
    assert.deepEqual([...wsA.strays, ...wsB.strays], [], 'every WebSocket answer belongs to the request it came for');
    assert.equal(sent, cases.length);
    assert.ok(errorsChecked > cases.length * 0.8, `${errorsChecked} error answers checked of ${cases.length}`);
    assert.deepEqual(problems.slice(0, 40), [], `${problems.length} problems in ${cases.length} requests`);
  });

  it('afterwards the node serves, logged no error, and the chain did not change', async () => {
    assert.equal(node.proc.exitCode, null, 'the process is still running');
    assert.match(await call(node.url, 'eth_blockNumber'), /^0x[0-9a-f]+$/);
    const status = (await (await fetch(`${node.cometUrl}/status`)).json()) as { result: { sync_info: { latest_block_height: string } } };
    assert.match(status.result.sync_info.latest_block_height, /^\d+$/);
    assert.deepEqual(await chainView(), before0);
    const end = Number(await call<string>(node.url, 'eth_blockNumber'));
    for (let h = startHeight + 1; h <= end; h++) {
      assert.equal(await call(node.url, 'eth_getBlockTransactionCountByNumber', ['0x' + h.toString(16)]), '0x0', `block ${h} has no transaction`);
    }
    const lines = readFileSync(node.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l) as { level?: unknown; msg?: string };
        } catch {
          return {};
        }
      });
    assert.ok(lines.some((l) => l.level === 'info'), 'the log is read as the logger writes it (JSON lines, level by name)');
    const errors = lines
      // the logger writes the level's name (src/lib/log.ts); pino's numbers (error 50, fatal 60) are covered too
      .filter((l) => l.level === 'error' || l.level === 'fatal' || (typeof l.level === 'number' && l.level >= 50));
    assert.deepEqual(errors, [], 'no error-level log line');
  });
});

describe('abuse: forged tokens and hostile tracers', { timeout: 120_000 }, () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = () => Math.floor(Date.now() / 1000);
  const forged: [string, () => string][] = [
    ['alg none, no signature', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iat: now() })}.`],
    ['a valid token with its signature stripped', () => jwt.split('.').slice(0, 2).join('.') + '.'],
    ['a valid signature on a header that says HS512', () => `${b64({ alg: 'HS512', typ: 'JWT' })}.${jwt.split('.')[1]}.${jwt.split('.')[2]}`],
    ['claims swapped under a valid signature', () => `${jwt.split('.')[0]}.${b64({ iat: now(), admin: true })}.${jwt.split('.')[2]}`],
  ];
  const UNAUTHORIZED = { code: -32001, message: 'unauthorized: this method requires a valid auth token' };

  for (const [what, token] of forged) {
    it(`${what}: personal_* and miner_* refused over HTTP and WebSocket, nothing changes`, async () => {
      const t = token();
      const before = await chainView();
      const coinbase = await call(node.url, 'eth_coinbase');
      const accounts = await call(node.url, 'eth_accounts');
      const attempts: [string, unknown[]][] = [
        ['personal_newAccount', ['pw']],
        ['personal_importRawKey', [devKeys()[3]!.slice(2), 'pw']],
        ['miner_setEtherbase', ['0x00000000000000000000000000000000000000aa']],
        ['miner_setGasPrice', ['0x1']],
      ];
      for (const [method, params] of attempts) {
        const res = await fetch(node.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        assert.equal(res.status, 200);
        assert.deepEqual(((await res.json()) as { error: unknown }).error, UNAUTHORIZED, method);
      }
      const pool = await WsPool.open(node.wsUrl, 1, { authorization: `Bearer ${t}` });
      try {
        for (const [method, params] of attempts) {
          const a = await pool.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }), false);
          assert.deepEqual((JSON.parse(a.body) as { error: unknown }).error, UNAUTHORIZED, `ws ${method}`);
        }
      } finally {
        pool.close();
      }
      assert.equal(await call(node.url, 'eth_coinbase'), coinbase);
      assert.deepEqual(await call(node.url, 'eth_accounts'), accounts);
      assert.deepEqual(await chainView(), before);
    });
  }

  const trace = (tracer: string) => rpc(node.url, 'debug_traceTransaction', [txHash, { tracer, timeout: '5s' }]);

  it('a tracer reaching for process through globalThis.constructor.constructor gets an error; the node stays up', async () => {
    const escapes = [
      '{fault: function () {}, result: function () { return globalThis.constructor.constructor("return process")().exit(1) }}',
      '{fault: function () {}, result: function () { return globalThis.constructor.constructor("return require")()("child_process").execSync("id") }}',
      '{fault: function () {}, result: function () { return Object.getPrototypeOf(async function(){}).constructor("return process")() }}',
      '{fault: function () {}, result: function () { var e = new Error(); return e.constructor.constructor("return this.process.mainModule")() }}',
    ];
    for (const tracer of escapes) {
      const r = await trace(tracer);
      if (r.error === undefined) {
        // a result is acceptable only when nothing of the host was reached (a sandbox Promise is {})
        assert.doesNotMatch(JSON.stringify(r.result ?? null), /pid|env|versions|uid|execPath/, `tracer result: ${JSON.stringify(r.result)}`);
      } else {
        assert.equal(r.error.code, -32000);
        assert.ok(r.error.message.length > 0);
        assert.doesNotMatch(r.error.message, /ethereumjs|\.js:\d+:\d+/);
      }
      assert.equal(node.proc.exitCode, null);
      assert.match(await call(node.url, 'eth_blockNumber'), /^0x[0-9a-f]+$/);
    }
  });

  it('prototypes a tracer pollutes do not leak into the next trace', async () => {
    const polluter = `{fault: function () {}, result: function () {
      Object.prototype.polluted = 'yes'; Array.prototype.push = function () { throw new Error('hijacked') };
      JSON.stringify = function () { return '"hijacked"' }; return 1 }}`;
    // (the hijacked JSON.stringify may well shape the polluter's own result; only the next trace matters)
    assert.equal((await trace(polluter)).error, undefined);
    const probe = `{fault: function () {}, result: function () { var a = []; a.push(1); return [typeof ({}).polluted, a.length, JSON.stringify({x: 1})].join(',') }}`;
    assert.equal((await trace(probe)).result, 'undefined,1,{"x":1}');
    const builtIn = (await trace('callTracer')).result as { type?: string };
    assert.equal(builtIn.type, 'CALL');
  });
});
