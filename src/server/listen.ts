/** Binding and graceful closing shared by the node:http listeners (Surface A HTTP, Surface B). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
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
