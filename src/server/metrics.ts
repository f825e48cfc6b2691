/**
 * A Prometheus scrape listener: GET on one of `paths` answers the text a `collect` function returns
 * (text format 0.0.4); any other path is 404, any other verb 405. `paths` empty: every path serves the
 * metrics, as CometBFT's promhttp handler on prometheus_listen_addr does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../lib/log.js';
import { closeGracefully, listen } from './listen.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** the longest a scrape may take to answer */
const SCRAPE_TIMEOUT_MS = 10_000;

export interface MetricsServerOptions {
  host: string;
  port: number;
  /** served paths; empty = every path */
  paths: readonly string[];
  collect(): Promise<string>;
  log: Logger;
}

export interface MetricsServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

export function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServerHandle> {
  const paths = new Set(opts.paths);
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (paths.size > 0 && !paths.has(path)) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    opts.collect().then(
      (text) => res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        opts.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'collecting metrics failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('collecting metrics failed\n');
      },
    );
  };
  const server = createServer(onRequest);
  server.requestTimeout = SCRAPE_TIMEOUT_MS;
  return listen(server, opts.host, opts.port, (err) => opts.log.error({ err }, 'metrics server error')).then((port) => ({
    port,
    close: () => closeGracefully(server),
  }));
}
