/**
 * The JSON-RPC client a fork uses to ask its origin (docs/fork-mode.md): bounded concurrency, a timeout
 * per request, retries with exponential backoff on 429, 5xx, timeouts and refused connections, and an
 * optional request rate (Anvil's --fork-compute-units-per-second, one unit per call here). Every failure
 * is an Error whose message names the origin: a fork never answers from an origin it could not reach.
 */
import { DomainError, badConfig, unavailable } from '../lib/errors.js';

/** Origin HTTP requests one thread's client has open at once. */
export const MAX_ORIGIN_IN_FLIGHT = 4;
/** The first retry waits this long; each further retry doubles it. */
export const ORIGIN_BACKOFF_MS = 100;
/** No retry waits longer than this. */
export const MAX_ORIGIN_BACKOFF_MS = 5_000;
/** Bytes of one origin answer the client reads (a bigger answer is an error). */
export const MAX_ORIGIN_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Anvil's defaults: --fork-retries 5, --fork-timeout 45 s. */
export const DEFAULT_FORK_RETRIES = 5;
export const DEFAULT_FORK_TIMEOUT_MS = 45_000;

export interface OriginOptions {
  url: string;
  retries?: number;
  timeoutMs?: number;
  /** calls per second at most (undefined or 0: no limit) */
  computeUnitsPerSecond?: number;
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** counters of one client (Prometheus: docs/fork-mode.md "Metrics") */
export interface OriginStats {
  requests: number;
  calls: number;
  retries: number;
  errors: number;
  inFlight: number;
}

/** An origin failure: DomainError `unavailable` (each surface maps it once, lib/errors.ts) naming the origin. */
export class OriginError extends DomainError<'unavailable'> {
  constructor(
    readonly origin: string,
    detail: string,
    /** worth another try (429, 5xx, timeout, connection) */
    readonly transient = false,
  ) {
    super('unavailable', `fork origin ${origin}: ${detail}`, undefined);
  }
}

/** The URL without credentials (user:pass@) or query, for messages and logs. */
export function originLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** A quantity in an origin's answer; anything else is an `unavailable` error naming the origin. */
export function originQuantity(v: unknown, what: string, label: string): bigint {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]+$/.test(v)) throw unavailable(`fork origin ${label}: ${what}: expected a quantity, got ${JSON.stringify(v)}`);
  return BigInt(v);
}

/** Hex data in an origin's answer. */
export function originData(v: unknown, what: string, label: string): Uint8Array {
  if (typeof v !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(v)) throw unavailable(`fork origin ${label}: ${what}: expected hex data, got ${JSON.stringify(v)}`);
  return Uint8Array.from(Buffer.from(v.slice(2), 'hex'));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class OriginClient {
  readonly label: string;
  readonly stats: OriginStats = { requests: 0, calls: 0, retries: 0, errors: 0, inFlight: 0 };
  private readonly waiting: (() => void)[] = [];
  private nextSlotAt = 0;
  private id = 0;

  constructor(readonly opts: OriginOptions) {
    const u = URL.canParse(opts.url) ? new URL(opts.url) : undefined;
    if (u?.protocol !== 'http:' && u?.protocol !== 'https:') throw badConfig('fork-url', `--fork-url: expected an http(s) URL, got ${JSON.stringify(opts.url)}`);
    this.label = originLabel(opts.url);
  }

  /** One call; a JSON-RPC error answer is an OriginError carrying the origin's message. */
  async call<T = unknown>(method: string, params: unknown[]): Promise<T> {
    const [r] = await this.batch([{ method, params }]);
    return r as T;
  }

  /** Calls sent as one JSON-RPC batch; the results in call order. */
  async batch(calls: RpcCall[]): Promise<unknown[]> {
    const body = calls.map((c) => ({ jsonrpc: '2.0', id: ++this.id, method: c.method, params: c.params }));
    const answer = await this.send(calls.length === 1 ? body[0] : body, calls.length);
    const list = Array.isArray(answer) ? answer : [answer];
    const byId = new Map<unknown, { result?: unknown; error?: { code?: number; message?: string } }>();
    for (const a of list) if (a && typeof a === 'object') byId.set((a as { id?: unknown }).id, a as never);
    return body.map((b, i) => {
      const a = byId.get(b.id);
      if (a === undefined) throw this.fail(`no answer to ${calls[i]!.method}`);
      if (a.error !== undefined) throw this.fail(`${calls[i]!.method} failed: ${a.error.message ?? JSON.stringify(a.error)} (code ${a.error.code})`);
      return a.result;
    });
  }

  private fail(detail: string, transient = false): OriginError {
    this.stats.errors++;
    return new OriginError(this.label, detail, transient);
  }

  private async acquire(): Promise<void> {
    if (this.stats.inFlight >= MAX_ORIGIN_IN_FLIGHT) await new Promise<void>((r) => this.waiting.push(r));
    this.stats.inFlight++;
    const rate = this.opts.computeUnitsPerSecond ?? 0;
    if (rate > 0) {
      const now = Date.now();
      const at = Math.max(now, this.nextSlotAt);
      this.nextSlotAt = at + 1000 / rate;
      if (at > now) await sleep(at - now);
    }
  }

  private release(): void {
    this.stats.inFlight--;
    this.waiting.shift()?.();
  }

  private async send(body: unknown, calls: number): Promise<unknown> {
    const retries = this.opts.retries ?? DEFAULT_FORK_RETRIES;
    let last: OriginError | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) {
        this.stats.retries++;
        await sleep(Math.min(MAX_ORIGIN_BACKOFF_MS, ORIGIN_BACKOFF_MS * 2 ** (attempt - 1)));
      }
      await this.acquire();
      try {
        this.stats.requests++;
        this.stats.calls += calls;
        return await this.once(body);
      } catch (e) {
        last = e instanceof OriginError ? e : new OriginError(this.label, (e as Error).message, true);
        if (!last.transient) {
          this.stats.errors++;
          throw last;
        }
      } finally {
        this.release();
      }
    }
    this.stats.errors++;
    throw new OriginError(this.label, `${last!.message.replace(`fork origin ${this.label}: `, '')} (gave up after ${retries + 1} attempts)`);
  }

  private async once(body: unknown): Promise<unknown> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_FORK_TIMEOUT_MS;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    let res: Response;
    try {
      res = await fetch(this.opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: ac.signal,
      });
    } catch (e) {
      clearTimeout(timer);
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      const what = ac.signal.aborted ? `no answer within ${timeoutMs} ms` : `unreachable (${cause ?? (e as Error).message})`;
      throw new OriginError(this.label, what, true);
    }
    try {
      if (res.status === 429 || res.status >= 500) throw new OriginError(this.label, `HTTP ${res.status}`, true);
      if (res.status !== 200) throw new OriginError(this.label, `HTTP ${res.status}`);
      const text = await res.text();
      if (text.length > MAX_ORIGIN_RESPONSE_BYTES) throw new OriginError(this.label, `answer larger than ${MAX_ORIGIN_RESPONSE_BYTES} bytes`);
      try {
        return JSON.parse(text);
      } catch {
        throw new OriginError(this.label, 'answer is not JSON');
      }
    } catch (e) {
      if (e instanceof OriginError) throw e;
      throw new OriginError(this.label, ac.signal.aborted ? `no answer within ${timeoutMs} ms` : (e as Error).message, true);
    } finally {
      clearTimeout(timer);
    }
  }
}
