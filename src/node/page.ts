/**
 * GET routes of the JSON-RPC HTTP listener besides JSON-RPC itself:
 *
 * - `/health`: readiness for load balancers — 200 `{"status":"ok",...}` while the chain thread runs
 *   and a block was committed recently, 503 `{"status":"unavailable",...}` otherwise (see
 *   NodeObservability.health and docs/observability.md). Always served.
 * - `/explorer` (with `json-rpc.node-page = true`): the node page, a static bundle built by
 *   `npm run build` into dist/web/ (web/ holds its source). It talks to this listener's JSON-RPC and to
 *   the WebSocket listener; `/explorer/config.json` tells it where that is, `/explorer/api/stats` the
 *   number of JSON-RPC calls served (its RPC-rate plot), and
 *   `/explorer/api/tx?hash=0x…` gives a transaction's native (CometBFT) identity next to its EVM one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { hexToBytes } from '../lib/hex.js';
import type { Store } from '../store/store.js';
import type { HealthReport } from './observe.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** dist/web/, next to dist/src/ (this file is dist/src/node/page.js once built) */
export const PAGE_DIR = fileURLToPath(new URL('../../web/', import.meta.url));
const PAGE_FILES: ReadonlyArray<[path: string, file: string, type: string]> = [
  ['/explorer', 'index.html', 'text/html; charset=utf-8'],
  ['/explorer/app.js', 'app.js', 'text/javascript; charset=utf-8'],
  ['/explorer/app.css', 'app.css', 'text/css; charset=utf-8'],
];
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export interface PageDeps {
  page: boolean;
  health(): HealthReport;
  /** what the page needs to know: the WebSocket endpoint and Surface B's address */
  config(): { wsPort?: number; cometUrl?: string; chainId: string; evmChainId: number };
  /** JSON-RPC calls served since start, for the page's RPC-rate plot (null: not counted) */
  rpcRequests(): number | null;
  store: Store;
}

function sendJson(res: ServerResponse, status: number, value: unknown, head: boolean): void {
  const text = JSON.stringify(value);
  res
    .writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' })
    .end(head ? undefined : text);
}

export function nodePageRoutes(deps: PageDeps): Map<string, Route> {
  const routes = new Map<string, Route>();
  routes.set('/health', (req, res) => {
    const h = deps.health();
    sendJson(res, h.status === 'ok' ? 200 : 503, h, req.method === 'HEAD');
  });
  if (!deps.page) return routes;
  for (const [path, file, type] of PAGE_FILES) {
    const full = PAGE_DIR + file;
    // read once, at the first request (the bundle does not change while the node runs)
    let body: Buffer | undefined;
    routes.set(path, (req, res) => {
      if (body === undefined && existsSync(full)) body = readFileSync(full);
      if (body === undefined) {
        const text = 'the node page is not built: run `npm run build`\n';
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text);
        return;
      }
      res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length }).end(req.method === 'HEAD' ? undefined : body);
    });
  }
  routes.set('/explorer/config.json', (req, res) => sendJson(res, 200, deps.config(), req.method === 'HEAD'));
  routes.set('/explorer/api/stats', (req, res) => sendJson(res, 200, { rpcRequests: deps.rpcRequests() }, req.method === 'HEAD'));
  routes.set('/explorer/api/tx', (req, res) => {
    const hash = new URL(req.url ?? '/', 'http://x').searchParams.get('hash') ?? '';
    if (!TX_HASH.test(hash)) return sendJson(res, 400, { error: 'want ?hash=0x followed by 64 hex digits' }, req.method === 'HEAD');
    const loc = deps.store.txLocation(hexToBytes(hash));
    const native = loc === undefined ? undefined : deps.store.comet.get(loc.height)?.block.data.txs[loc.index];
    if (loc === undefined || native === undefined) return sendJson(res, 404, { error: 'transaction not found' }, req.method === 'HEAD');
    sendJson(
      res,
      200,
      {
        evmHash: hash.toLowerCase(),
        nativeHash: '0x' + createHash('sha256').update(native).digest('hex').toUpperCase(),
        height: loc.height.toString(),
        index: loc.index,
      },
      req.method === 'HEAD',
    );
  });
  return routes;
}
