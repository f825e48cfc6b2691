/**
 * The ABCI 2.0 socket server real CometBFT v0.38 connects to (`cometbft start --proxy_app
 * tcp://host:port` or `unix:///path`). CometBFT opens four connections (consensus, mempool, query,
 * snapshot); on each, every message is a varint-length-prefixed `Request`, answered in request order
 * by a `Response` (`Flush` is answered after everything before it). Requests of one connection are
 * handled one at a time; connections run concurrently.
 */
import { existsSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AbciAddress } from '../config/address.js';
import type { Logger } from '../lib/log.js';
import { lengthPrefixed } from '../lib/protobuf.js';
import { AbciDecodeError, decodeRequest, encodeResponse, type AbciRequest, type AbciResponse } from './wire.js';

/** Largest request accepted (a block of the largest `max_bytes` CometBFT allows, 100 MiB, plus framing). */
export const MAX_ABCI_MESSAGE_BYTES = 128 * 1024 * 1024;
/** Requests read ahead on one connection before reading pauses (CometBFT's socket client queues 256). */
export const MAX_PENDING_REQUESTS = 1024;

export type AbciHandler = (req: AbciRequest) => Promise<AbciResponse>;

export interface AbciServerHandle {
  /** the address listened on (`tcp://host:port` with the bound port, or `unix://path`) */
  address: string;
  close(): Promise<void>;
}

/** Splits a byte stream into varint-length-prefixed frames; throws AbciDecodeError on a bad prefix. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): Uint8Array[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Uint8Array[] = [];
    for (;;) {
      let len = 0;
      let mul = 1;
      let i = 0;
      for (;;) {
        if (i >= this.buf.length) return out;
        const b = this.buf[i++]!;
        len += (b & 0x7f) * mul;
        if ((b & 0x80) === 0) break;
        mul *= 128;
        if (i >= 10) throw new AbciDecodeError('message length: varint too long');
      }
      if (len > this.maxBytes) throw new AbciDecodeError(`message of ${len} bytes exceeds the limit of ${this.maxBytes}`);
      if (this.buf.length < i + len) return out;
      out.push(new Uint8Array(this.buf.subarray(i, i + len)));
      this.buf = this.buf.subarray(i + len);
    }
  }
}

/** Listens on `address` and answers every connection with `handle`. */
export async function startAbciServer(opts: { address: AbciAddress; handle: AbciHandler; log: Logger; maxMessageBytes?: number }): Promise<AbciServerHandle> {
  const { handle, log } = opts;
  const maxBytes = opts.maxMessageBytes ?? MAX_ABCI_MESSAGE_BYTES;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const frames = new FrameReader(maxBytes);
    let queue: Promise<void> = Promise.resolve();
    let pending = 0;
    let broken = false;
    // the responses written in one run of the microtask queue go out in one write (socket.cork): under
    // load CometBFT's mempool connection has many CheckTx answers ready at once, and each write is a syscall
    let corked = false;
    const uncork = () => {
      corked = false;
      socket.uncork();
    };
    const write = (bytes: Uint8Array) => {
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      socket.write(bytes);
    };
    const fail = (message: string) => {
      if (broken) return;
      broken = true;
      log.error({ remote: socket.remoteAddress ?? 'unix' }, `abci connection closed: ${message}`);
      socket.end(lengthPrefixed(encodeResponse({ kind: 'exception', error: message })));
    };
    socket.on('data', (chunk: Buffer) => {
      if (broken) return;
      let msgs: Uint8Array[];
      try {
        msgs = frames.push(chunk);
      } catch (e) {
        return fail(e instanceof Error ? e.message : String(e));
      }
      for (const bytes of msgs) {
        let req: AbciRequest;
        try {
          req = decodeRequest(bytes);
        } catch (e) {
          if (e instanceof AbciDecodeError) return fail(`bad request: ${e.message}`);
          throw e;
        }
        pending++;
        if (pending >= MAX_PENDING_REQUESTS) socket.pause();
        queue = queue.then(async () => {
          let res: AbciResponse;
          try {
            res = await handle(req);
          } catch (e) {
            log.error({ method: req.kind, err: e instanceof Error ? e.stack : String(e) }, 'abci request failed');
            res = { kind: 'exception', error: e instanceof Error ? e.message : String(e) };
          }
          pending--;
          if (pending < MAX_PENDING_REQUESTS && socket.isPaused()) socket.resume();
          if (!socket.destroyed && !broken) write(lengthPrefixed(encodeResponse(res)));
        });
      }
    });
    socket.on('error', (e) => log.debug({ err: e.message }, 'abci connection error'));
    socket.on('close', () => sockets.delete(socket));
  });
  const addr = opts.address;
  if ('unix' in addr && existsSync(addr.unix)) unlinkSync(addr.unix);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('unix' in addr) server.listen(addr.unix, resolve);
    else server.listen(addr.tcp.port, addr.tcp.host, resolve);
  });
  const bound = server.address();
  const address =
    'unix' in addr ? `unix://${addr.unix}` : `tcp://${addr.tcp.host.includes(':') ? `[${addr.tcp.host}]` : addr.tcp.host}:${typeof bound === 'object' && bound ? bound.port : addr.tcp.port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
