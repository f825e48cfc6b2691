/** Raw JSON-RPC over HTTP for tests: exact bodies in, parsed bodies out, plus small wait helpers. */

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcResponse<T = any> {
  jsonrpc: string;
  id: unknown;
  result?: T;
  error?: RpcError;
}

const REQUEST_TIMEOUT_MS = 30_000;
let nextId = 1;

/** POSTs a JSON-RPC request and returns the whole response object (result or error). */
export async function rpc<T = any>(url: string, method: string, params: unknown[] = []): Promise<RpcResponse<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  try {
    return JSON.parse(text) as RpcResponse<T>;
  } catch {
    throw new Error(`${method}: HTTP ${res.status}, body is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Like rpc() but returns the result and throws when the answer is an error. */
export async function call<T = any>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const r = await rpc<T>(url, method, params);
  if (r.error) {
    const e = new Error(`${method} failed: ${r.error.code} ${r.error.message}`) as Error & { rpc: RpcError };
    e.rpc = r.error;
    throw e;
  }
  return r.result as T;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a value other than null/undefined; throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined>,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export async function blockNumber(url: string): Promise<number> {
  return Number(BigInt(await call<string>(url, 'eth_blockNumber')));
}

/** Waits until the chain is at least at height n; returns the height seen. */
export async function waitForBlock(url: string, n: number, timeoutMs = 30_000): Promise<number> {
  return waitFor(`block ${n}`, async () => {
    const h = await blockNumber(url);
    return h >= n ? h : null;
  }, timeoutMs);
}

export async function waitForReceipt(url: string, hash: string, timeoutMs = 30_000): Promise<any> {
  return waitFor(`receipt of ${hash}`, () => call(url, 'eth_getTransactionReceipt', [hash]), timeoutMs);
}

export const toHex = (n: number | bigint): string => `0x${n.toString(16)}`;

const STILL_POLL_MS = 200;

/**
 * Watches the head for `forMs` and throws as soon as it is not `height`: for a chain that must stand
 * still (interval mining stopped). Only the block number is asserted; the time is how long to look.
 */
export async function assertStill(url: string, height: number, forMs: number, what: string): Promise<void> {
  const until = Date.now() + forMs;
  for (;;) {
    const h = await blockNumber(url);
    if (h !== height) throw new Error(`${what}: the head moved from ${height} to ${h}`);
    if (Date.now() >= until) return;
    await sleep(STILL_POLL_MS);
  }
}
