/**
 * A small JSON-RPC over HTTP client and a bounded load loop, the same for every node.
 * node:http with a keep-alive Agent: one socket per concurrent worker, each worker sends its next
 * request when the previous answer has been read in full.
 */
import http from 'node:http';

export const REQUEST_TIMEOUT_MS = 30_000;
/** a load run gives up after this many failed requests */
export const MAX_LOAD_ERRORS = 100;

export class RpcError extends Error {}

export interface RpcClient {
  readonly url: string;
  /** POSTs a body and resolves with the response text (throws on non-2xx or timeout). */
  postRaw(body: string): Promise<string>;
  /** One JSON-RPC call; throws RpcError on an error answer. */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  close(): void;
}

let nextId = 1;

export function makeClient(url: string, maxSockets: number): RpcClient {
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) throw new Error(`bench only targets loopback, not ${url}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const options: http.RequestOptions = {
    hostname: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    agent,
    timeout: REQUEST_TIMEOUT_MS,
  };
  const postRaw = (body: string): Promise<string> =>
    new Promise((resolvePost, reject) => {
      const req = http.request(
        { ...options, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) reject(new RpcError(`HTTP ${status}: ${text.slice(0, 200)}`));
            else resolvePost(text);
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new RpcError(`request timed out after ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
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
    close: () => agent.destroy(),
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
}

/** Bounded closed-loop load: `concurrency` workers, stops at durationMs or maxRequests. */
export async function runLoad(client: RpcClient, spec: LoadSpec): Promise<LoadResult> {
  let issued = 0;
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
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
  return { ok, errors, firstError, elapsedMs, perSecond: (ok * 1000) / elapsedMs };
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
