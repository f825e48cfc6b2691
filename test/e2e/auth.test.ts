/**
 * Authentication of the private namespaces against the real ferry process: over HTTP per request and
 * over WebSocket at the handshake — no token, a bad one, an expired one, a valid one; public
 * namespaces never need one; `ferry auth token`; the start-up refusal to serve personal without auth
 * on a non-loopback listener.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { generateJwtSecret, makeJwt, readJwtSecret } from '../../src/server/auth.js';
import { freePort, startFerry, type FerryNode } from '../helpers/node.js';
import { FERRY_BIN } from '../helpers/paths.js';
import { call, rpc, type RpcResponse } from '../helpers/rpc.js';

const run = promisify(execFile);
const ARGS = ['--json-rpc.api', 'eth,net,web3,personal,miner'];
const UNAUTHORIZED = { code: -32001, message: 'unauthorized: this method requires a valid auth token' };

let node: FerryNode;

const secret = () => readJwtSecret(join(node.home, 'config', 'jwt.hex'));
const now = () => Math.floor(Date.now() / 1000);

async function withHeader(authorization: string | undefined, method: string, params: unknown[] = []): Promise<RpcResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const res = await fetch(node.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as RpcResponse;
}

/** One request over a WebSocket opened with `headers`; closes it. */
function wsCall(headers: Record<string, string>, method: string, params: unknown[] = []): Promise<RpcResponse> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(node.wsUrl, { headers });
    ws.on('error', reject);
    ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params })));
    ws.on('message', (data) => {
      ws.close();
      resolve(JSON.parse(String(data)) as RpcResponse);
    });
  });
}

before(async () => {
  node = await startFerry({ args: ARGS });
});

after(async () => {
  assert.equal(await node.stop(), 0);
});

describe('HTTP: a bearer token per request', () => {
  const cases: [string, () => string | undefined][] = [
    ['no token', () => undefined],
    ['a token signed with another secret', () => `Bearer ${makeJwt(generateJwtSecret())}`],
    ['an expired token (issued 2 minutes ago)', () => `Bearer ${makeJwt(secret(), now() - 120)}`],
    ['a token issued 2 minutes in the future', () => `Bearer ${makeJwt(secret(), now() + 120)}`],
    ['a token whose exp has passed', () => `Bearer ${makeJwt(secret(), now(), { exp: now() - 1 })}`],
    ['garbage', () => 'Bearer not.a.token'],
    ['the token without the Bearer scheme', () => makeJwt(secret())],
  ];

  for (const [what, header] of cases) {
    it(`${what}: private methods answer unauthorized and do nothing; public ones answer`, async () => {
      const h = header();
      assert.deepEqual((await withHeader(h, 'personal_newAccount', ['pw'])).error, UNAUTHORIZED);
      assert.deepEqual((await withHeader(h, 'miner_setEtherbase', ['0x00000000000000000000000000000000000000aa'])).error, UNAUTHORIZED);
      assert.deepEqual((await withHeader(h, 'miner_getHashrate')).error, UNAUTHORIZED);
      assert.equal((await withHeader(h, 'eth_chainId')).result, '0x2328');
    });
  }

  it('nothing was changed by the refused calls', async () => {
    assert.deepEqual(await call(node.url, 'eth_accounts'), []);
    assert.notEqual(await call(node.url, 'eth_coinbase'), '0x00000000000000000000000000000000000000aa');
  });

  it('a valid token (and one from `ferry auth token`) is accepted', async () => {
    const r = await withHeader(`Bearer ${makeJwt(secret())}`, 'personal_listAccounts');
    assert.deepEqual(r, { jsonrpc: '2.0', id: 1, result: [] });
    const { stdout } = await run(process.execPath, [FERRY_BIN, 'auth', 'token', '--home', node.home]);
    const token = stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal((await withHeader(`Bearer ${token}`, 'miner_getHashrate')).result, 0);
  });

  it('a batch mixes public and private calls: only the private ones are refused', async () => {
    const res = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: 2, method: 'personal_listAccounts', params: [] },
      ]),
    });
    assert.deepEqual(await res.json(), [
      { jsonrpc: '2.0', id: 1, result: '0x2328' },
      { jsonrpc: '2.0', id: 2, error: UNAUTHORIZED },
    ]);
  });
});

describe('WebSocket: the token at the handshake', () => {
  it('no token, a bad one, an expired one: private methods refused, public ones answer', async () => {
    const variants: Record<string, string>[] = [
      {},
      { Authorization: `Bearer ${makeJwt(generateJwtSecret())}` },
      { Authorization: `Bearer ${makeJwt(secret(), now() - 120)}` },
    ];
    for (const headers of variants) {
      assert.deepEqual((await wsCall(headers, 'personal_listAccounts')).error, UNAUTHORIZED, JSON.stringify(headers));
      assert.deepEqual((await wsCall(headers, 'miner_getHashrate')).error, UNAUTHORIZED);
      assert.equal((await wsCall(headers, 'eth_chainId')).result, '0x2328');
    }
  });

  it('a valid token authenticates the connection', async () => {
    const headers = { Authorization: `Bearer ${makeJwt(secret())}` };
    assert.deepEqual((await wsCall(headers, 'personal_listAccounts')).result, []);
    assert.equal((await wsCall(headers, 'miner_getHashrate')).result, 0);
  });
});

describe('start-up rules', () => {
  it('a home without config/jwt.hex gets a new secret (0600) at start; old tokens stop working', async () => {
    const file = join(node.home, 'config', 'jwt.hex');
    const old = readFileSync(file, 'utf8');
    const oldToken = makeJwt(secret());
    assert.equal(await node.stop(), 0);
    rmSync(file);
    node = await startFerry({ home: node.home, args: ARGS });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.notEqual(readFileSync(file, 'utf8'), old);
    assert.match(readFileSync(file, 'utf8'), /^0x[0-9a-f]{64}\n$/);
    assert.deepEqual((await withHeader(`Bearer ${oldToken}`, 'personal_listAccounts')).error, UNAUTHORIZED);
    assert.deepEqual((await withHeader(`Bearer ${makeJwt(secret())}`, 'personal_listAccounts')).result, []);
  });

  it('personal without auth on a non-loopback listener is refused, naming the key', async () => {
    const wsPort = await freePort();
    const err = await startFerry({
      args: ['--json-rpc.api', 'eth,personal', '--json-rpc.private-api-auth', 'false', '--json-rpc.ws-address', `0.0.0.0:${wsPort}`],
    }).then(
      (n) => n.stop().then(() => undefined),
      (e: Error) => e,
    );
    assert.ok(err, 'ferry started');
    assert.match(err.message, /exited with code [1-9]/);
    assert.match(err.message, /json-rpc\.private-api-auth/);
    assert.match(err.message, /json-rpc\.ws-address 0\.0\.0\.0:/);
  });

  it('without auth on loopback listeners, private methods need no token', async () => {
    const open = await startFerry({ args: ['--json-rpc.api', 'eth,personal,miner', '--json-rpc.private-api-auth', 'false'] });
    try {
      assert.deepEqual((await rpc(open.url, 'personal_listAccounts')).result, []);
      assert.equal((await rpc(open.url, 'miner_getHashrate')).result, 0);
    } finally {
      assert.equal(await open.stop(), 0);
    }
  });
});
