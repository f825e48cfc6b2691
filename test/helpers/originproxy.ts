/**
 * A counting, fault-injecting JSON-RPC proxy on loopback, put in front of a fork's origin (fork-mode
 * e2e tests): it counts every call by method and by method+params (a batch counts each call), and can
 * answer the next N requests with an HTTP status (429, 503), hold the next N requests without an answer
 * (the fork's timeout fires), or be "down" (every request answered 503) until told otherwise.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Call {
  method: string;
  params?: unknown[];
}

export class OriginProxy {
  readonly byMethod = new Map<string, number>();
  readonly byCall = new Map<string, number>();
  /** HTTP requests that reached the proxy (faulted ones included) */
  requests = 0;
  /** requests answered with an injected fault */
  faulted = 0;
  down = false;
  private statusNext: { n: number; status: number } = { n: 0, status: 0 };
  private holdNext = 0;
  private readonly held: ServerResponse[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** the next `n` requests get HTTP `status` */
  failNext(n: number, status: number): void {
    this.statusNext = { n, status };
  }

  /** the next `n` requests get no answer (until close) */
  hangNext(n: number): void {
    this.holdNext = n;
  }

  /** counted calls (all methods), and calls of the given methods */
  count(...methods: string[]): number {
    let n = 0;
    for (const [m, c] of this.byMethod) if (methods.length === 0 || methods.includes(m)) n += c;
    return n;
  }

  /** the most times any one call (method and params) was forwarded */
  maxRepeats(...methods: string[]): number {
    let most = 0;
    for (const [k, c] of this.byCall) if (methods.length === 0 || methods.includes(k.split(' ')[0]!)) most = Math.max(most, c);
    return most;
  }

  reset(): void {
    this.byMethod.clear();
    this.byCall.clear();
    this.requests = 0;
    this.faulted = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    this.requests++;
    if (this.down || this.statusNext.n > 0) {
      if (!this.down) this.statusNext.n--;
      this.faulted++;
      res.writeHead(this.down ? 503 : this.statusNext.status).end('injected fault');
      return;
    }
    if (this.holdNext > 0) {
      this.holdNext--;
      this.faulted++;
      this.held.push(res);
      return;
    }
    const body = Buffer.concat(chunks);
    const parsed = JSON.parse(body.toString('utf8')) as Call | Call[];
    for (const c of Array.isArray(parsed) ? parsed : [parsed]) {
      this.byMethod.set(c.method, (this.byMethod.get(c.method) ?? 0) + 1);
      const k = `${c.method} ${JSON.stringify(c.params ?? [])}`;
      this.byCall.set(k, (this.byCall.get(k) ?? 0) + 1);
    }
    const r = await fetch(this.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
  }

  async close(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
