/**
 * ABCI over gRPC (`cometbft start --abci grpc --proxy_app tcp://host:port`; evmosd's `--transport grpc`):
 * the `tendermint.abci.ABCI` service of CometBFT's proto/tendermint/abci/types.proto, one unary method
 * per request kind, served with @grpc/grpc-js on plain HTTP/2. Each method's message is the body of the
 * socket protocol's `Request`/`Response` oneof, so the codec is wire.ts's: a request body is decoded as
 * the `Request` that carries it, a response is encoded without its oneof envelope.
 *
 * CometBFT's socket client keeps four connections, each answered in order (server.ts); gRPC calls are
 * independent, so calls are queued per connection class (consensus, mempool, query, snapshot) to keep
 * that order. v0.39's application-side mempool (InsertTx, ReapTxs) reaches ferry only this way: CometBFT
 * v0.39.4's socket client does not accept their responses (docs/abci.md "CometBFT versions").
 */
import * as grpc from '@grpc/grpc-js';
import type { AbciAddress } from '../config/address.js';
import type { Logger } from '../lib/log.js';
import { ProtoWriter } from '../lib/protobuf.js';
import { MAX_ABCI_MESSAGE_BYTES, type AbciHandler, type AbciServerHandle } from './server.js';
import { AbciDecodeError, REQUEST_KINDS, decodeRequest, responseBody, type AbciRequest, type AbciResponse } from './wire.js';

const SERVICE = 'tendermint.abci.ABCI';

type ConnectionClass = 'consensus' | 'mempool' | 'query' | 'snapshot';

/** Which of CometBFT's four ABCI connections a request kind travels on (cometbft proxy/app_conn.go). */
const CONNECTION: Readonly<Record<AbciRequest['kind'], ConnectionClass>> = {
  echo: 'query', flush: 'query', info: 'query', query: 'query',
  initChain: 'consensus', prepareProposal: 'consensus', processProposal: 'consensus', extendVote: 'consensus',
  verifyVoteExtension: 'consensus', finalizeBlock: 'consensus', commit: 'consensus',
  checkTx: 'mempool', insertTx: 'mempool', reapTxs: 'mempool',
  listSnapshots: 'snapshot', offerSnapshot: 'snapshot', loadSnapshotChunk: 'snapshot', applySnapshotChunk: 'snapshot',
};

/** gRPC method name of a request kind: `finalizeBlock` → `FinalizeBlock`. */
const methodName = (kind: string): string => kind[0]!.toUpperCase() + kind.slice(1);

/** grpc-js listen address: `host:port`, or `unix:/path`. */
function bindAddress(addr: AbciAddress): string {
  if ('unix' in addr) return `unix:${addr.unix}`;
  const host = addr.tcp.host.includes(':') ? `[${addr.tcp.host}]` : addr.tcp.host;
  return `${host}:${addr.tcp.port}`;
}

/** Listens on `address` with the ABCI gRPC service and answers every call with `handle`. */
export async function startAbciGrpcServer(opts: { address: AbciAddress; handle: AbciHandler; log: Logger; maxMessageBytes?: number }): Promise<AbciServerHandle> {
  const { handle, log } = opts;
  const maxBytes = opts.maxMessageBytes ?? MAX_ABCI_MESSAGE_BYTES;
  const queues: Record<ConnectionClass, Promise<unknown>> = { consensus: Promise.resolve(), mempool: Promise.resolve(), query: Promise.resolve(), snapshot: Promise.resolve() };
  const server = new grpc.Server({ 'grpc.max_receive_message_length': maxBytes, 'grpc.max_send_message_length': maxBytes });
  const service: Record<string, grpc.MethodDefinition<AbciRequest, AbciResponse>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [field, kind] of Object.entries(REQUEST_KINDS)) {
    const name = methodName(kind);
    service[name] = {
      path: `/${SERVICE}/${name}`,
      requestStream: false,
      responseStream: false,
      // the method's message is the body of field `field` of a socket `Request`
      requestDeserialize: (body: Buffer): AbciRequest => decodeRequest(new ProtoWriter().lengthDelimited(Number(field), body).finish()),
      requestSerialize: () => {
        throw new Error('the ABCI server does not send requests');
      },
      responseSerialize: (r: AbciResponse): Buffer => Buffer.from(responseBody(r)),
      responseDeserialize: () => {
        throw new Error('the ABCI server does not read responses');
      },
    };
    handlers[name] = (call: grpc.ServerUnaryCall<AbciRequest, AbciResponse>, callback: grpc.sendUnaryData<AbciResponse>) => {
      const req = call.request;
      const cls = CONNECTION[req.kind];
      const run = queues[cls].then(() => handle(req));
      queues[cls] = run.catch(() => undefined);
      run.then(
        (res) => {
          if (res.kind === 'exception') callback({ code: grpc.status.INTERNAL, details: res.error });
          else callback(null, res);
        },
        (e: unknown) => {
          const message = e instanceof Error ? e.message : String(e);
          log.error({ method: req.kind, err: e instanceof Error ? e.stack : message }, 'abci request failed');
          callback({ code: e instanceof AbciDecodeError ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL, details: message });
        },
      );
    };
  }
  server.addService(service as grpc.ServiceDefinition, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(bindAddress(opts.address), grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const addr = opts.address;
  const address = 'unix' in addr ? `unix://${addr.unix}` : `tcp://${addr.tcp.host.includes(':') ? `[${addr.tcp.host}]` : addr.tcp.host}:${port}`;
  return {
    address,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
