/**
 * Browser access: under the dev preset a page served from another origin (`Origin:
 * http://localhost:3000`) gets CORS answers on JSON-RPC HTTP (preflight and POST) and may open the
 * WebSocket from any origin; without the preset neither, and `--json-rpc.enable-unsafe-cors` alone
 * turns it on. The dev namespaces are opt-in outside the preset.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import WebSocket from 'ws';
import { nodePool } from '../helpers/node.js';
import { rpc } from '../helpers/rpc.js';

const PAGE = 'http://localhost:3000';
const FAR_PAGE = 'http://dapp.example:3000';
const pool = nodePool();

after(async () => {
  for (const code of await pool.stopAll()) assert.equal(code, 0);
});

async function preflight(url: string) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
}

async function post(url: string) {
  return fetch(url, {
    method: 'POST',
    headers: { origin: PAGE, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  });
}

/** Resolves to 'open' or the HTTP status of the refused upgrade. */
function openWs(url: string, origin: string): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { origin });
    ws.once('open', () => {
      ws.close();
      resolve('open');
    });
    ws.once('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
    ws.once('error', () => undefined);
  });
}

describe('CORS and the WebSocket origin check', () => {
  it('the dev preset answers any origin on HTTP and WebSocket', async () => {
    const node = await pool.nodeFor(['--dev']);
    const pre = await preflight(node.url);
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /content-type/i);
    const res = await post(node.url);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(((await res.json()) as { result: string }).result, '0x2328');
    assert.equal(await openWs(node.wsUrl, FAR_PAGE), 'open');
  });

  it('without the preset: no CORS headers, a far origin cannot open the WebSocket, no dev namespaces', async () => {
    const node = await pool.nodeFor([]);
    const pre = await preflight(node.url);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    const res = await post(node.url);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(await openWs(node.wsUrl, FAR_PAGE), '403');
    const mine = await rpc(node.url, 'evm_mine', []);
    assert.equal(mine.error?.code, -32601);
  });

  it('--json-rpc.enable-unsafe-cors alone opens CORS', async () => {
    const node = await pool.nodeFor(['--json-rpc.enable-unsafe-cors']);
    const res = await post(node.url);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(await openWs(node.wsUrl, FAR_PAGE), 'open');
  });
});
