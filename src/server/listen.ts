/** Binding and graceful closing shared by the node:http listeners (Surface A HTTP, Surface B). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * After close(), running requests and open connections of every listener (Surface A's HTTP and
 * WebSocket, Surface B's HTTP and WebSocket, the metrics listeners) get this long before they are cut.
 */
export const CLOSE_GRACE_MS = 3_000;

/** Listens on host:port (0 = any free port); later server errors go to `onError`. Resolves to the bound port. */
export function listen(server: Server, host: string, port: number, onError: (err: Error) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, closes idle keep-alive connections, and cuts the rest after `graceMs`. */
export function closeGracefully(server: Server, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
