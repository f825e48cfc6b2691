/**
 * A small JSON-RPC over HTTP client and a bounded load loop, the same for every node.
 * The client is undici's Pool (pinned in bench/peers/package.json, loaded from bench/.peers/):
 * measured here it drives about twice the requests of node:http's keep-alive Agent at lower
 * client CPU, so the client is less of a ceiling. One keep-alive connection per concurrent worker,
 * no pipelining: each worker sends its next request when the previous answer has been read in full.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEERS_DIR } from './setup.js';

export const REQUEST_TIMEOUT_MS = 30_000;
/** a load run gives up after this many failed requests */
export const MAX_LOAD_ERRORS = 100;
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

export class RpcError extends Error {}

/** The part of undici's Pool the bench uses. */
interface UndiciPool {
  request(opts: {
    path: string;
    method: 'POST';
    headers: Record<string, string>;
    body: string;
    headersTimeout: number;
    bodyTimeout: number;
  }): Promise<{ statusCode: number; body: { text(): Promise<string> } }>;
  destroy(): Promise<void>;
}
type PoolCtor = new (origin: string, opts: { connections: number; pipelining: number }) => UndiciPool;
let Pool: PoolCtor | undefined;

/** Loads undici from bench/.peers/ (call after ensurePeers()). */
export async function loadHttpClient(): Promise<void> {
  const entry = pathToFileURL(join(PEERS_DIR, 'node_modules', 'undici', 'index.js')).href;
  Pool = ((await import(entry)) as { Pool: PoolCtor }).Pool;
}

export interface RpcClient {
  readonly url: string;
  /** POSTs a body and resolves with the response text (throws on non-2xx or timeout). */
  postRaw(body: string): Promise<string>;
  /** One JSON-RPC call; throws RpcError on an error answer. */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  close(): void;
}

let nextId = 1;

export function makeClient(url: string, connections: number): RpcClient {
  if (!Pool) throw new Error('loadHttpClient() was not called');
  const u = new URL(url);
  if (!LOOPBACK_HOSTS.includes(u.hostname)) throw new Error(`bench only targets loopback, not ${url}`);
  const pool = new Pool(u.origin, { connections, pipelining: 1 });
  const headers = { 'content-type': 'application/json' };
  const postRaw = async (body: string): Promise<string> => {
    const res = await pool.request({
      path: u.pathname,
      method: 'POST',
      headers,
      body,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new RpcError(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    return text;
  };
  return {
    url,
    postRaw,
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const text = await postRaw(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }));
      const msg = JSON.parse(text) as { result?: T; error?: { code: number; message: string } };
      if (msg.error) throw new RpcError(`${method}: ${msg.error.code} ${msg.error.message}`);
      if (!('result' in msg)) throw new RpcError(`${method}: answer without result: ${text.slice(0, 200)}`);
      return msg.result as T;
    },
    close: () => void pool.destroy().catch(() => {}),
  };
}

export interface LoadSpec {
  concurrency: number;
  durationMs: number;
  /** hard cap on requests, whatever the duration */
  maxRequests: number;
  /** body of request number i */
  body(i: number): string;
  /** throws when the answer is wrong */
  check(text: string): void;
}

export interface LoadResult {
  ok: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  perSecond: number;
  /** CPU the bench process itself used, as a share of one core */
  clientCpu: number;
}

/** Bounded closed-loop load: `concurrency` workers, stops at durationMs or maxRequests. */
export async function runLoad(client: RpcClient, spec: LoadSpec): Promise<LoadResult> {
  let issued = 0;
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const deadline = start + spec.durationMs;
  const worker = async (): Promise<void> => {
    while (issued < spec.maxRequests && performance.now() < deadline) {
      const i = issued++;
      try {
        spec.check(await client.postRaw(spec.body(i)));
        ok++;
      } catch (e) {
        errors++;
        firstError ??= (e as Error).message;
        if (errors >= MAX_LOAD_ERRORS) return; // a failing node answers fast: do not spin on it
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  return { ok, errors, firstError, elapsedMs, perSecond: (ok * 1000) / elapsedMs, clientCpu: (cpu.user + cpu.system) / 1000 / elapsedMs };
}

/** Parses a single JSON-RPC answer and throws unless it carries a result. */
export function checkSingle(text: string): void {
  const msg = JSON.parse(text) as { result?: unknown; error?: { message: string } };
  if (msg.error) throw new RpcError(msg.error.message);
  if (msg.result === undefined) throw new RpcError(`no result: ${text.slice(0, 200)}`);
}

/** Parses a batch answer and throws unless it holds `n` results. */
export function checkBatch(n: number): (text: string) => void {
  return (text) => {
    const arr = JSON.parse(text) as Array<{ result?: unknown; error?: { message: string } }>;
    if (!Array.isArray(arr)) throw new RpcError(`batch answer is not an array: ${text.slice(0, 200)}`);
    if (arr.length !== n) throw new RpcError(`batch answer has ${arr.length} items, expected ${n}`);
    for (const m of arr) {
      if (m.error) throw new RpcError(m.error.message);
      if (m.result === undefined) throw new RpcError('batch item without result');
    }
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}
