/**
 * The local CometBFT node's RPC, as the application side needs it: `broadcast_tx_async` batches for the
 * forward queue of eth_sendRawTransaction under CometBFT (abci/forwarder.ts: the tx enters CometBFT's
 * mempool, which gossips it; CometBFT calls CheckTx on ferry's mempool connection) and `health`.
 *
 * Each call is one POST over node:http with kept-alive connections, not `fetch`: this runs on the
 * chain thread for every submitted tx, and undici's fetch (web streams, abort signals, a Request and a
 * Response object per call) cost that thread about as much as the rest of the tx's ingestion
 * (docs/benchmarks.md "Speed under one CometBFT").
 */
import { Agent, request } from 'node:http';
import { formatHostPort, parseLaddr } from '../config/address.js';
import { txRejected, type DomainError, type TxRejectReason } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';

/** How long a broadcast may take before the caller gets an error. */
export const BROADCAST_TIMEOUT_MS = 10_000;
/** Connections kept open to the local CometBFT's RPC (broadcasts beyond this wait for a free one). */
export const MAX_BROADCAST_CONNECTIONS = 16;
/** Largest CometBFT answer to a broadcast read (it carries a code, a log and a hash). */
export const MAX_BROADCAST_RESPONSE_BYTES = 1024 * 1024;

const agent = new Agent({ keepAlive: true, maxSockets: MAX_BROADCAST_CONNECTIONS });

export interface BroadcastResult {
  code: number;
  log: string;
  /** the native tx hash (SHA-256) CometBFT reports */
  hash: string;
}

/**
 * CometBFT mempool errors (JSON-RPC `error.data`) → why the tx was refused, in geth's text. CometBFT
 * v0.38's texts (mempool/errors.go): `tx already exists in cache`, `mempool is full: …`,
 * `Tx too large. Max size is N, but got M` (capital T: matched without case).
 */
const MEMPOOL_ERRORS: readonly [RegExp, TxRejectReason, string][] = [
  [/tx already exists in cache/i, 'known', 'already known'],
  [/mempool is full/i, 'poolFull', GethText.txpoolFull],
  [/tx too large/i, 'decode', GethText.oversizedData],
];

export class CometRpcError extends Error {}

/** No answer from CometBFT's RPC at all (connection refused or cut, timeout, not JSON): worth a retry. */
export class CometUnreachable extends CometRpcError {}

/** One broadcast of a batch: CheckTx's code and log, or CometBFT's mempool refusal in geth's text. */
export type BatchAnswer = { code: number; log: string } | { rejected: DomainError<'txRejected'> } | { error: string };

type RpcAnswer = { id?: unknown; result?: { code: number; log: string; hash: string }; error?: { message: string; data?: string } };

/** `tcp://host:port` → `http://host:port` */
export function rpcUrl(laddr: string): string {
  const a = parseLaddr(laddr);
  if (!a) throw new CometRpcError(`malformed CometBFT RPC address ${JSON.stringify(laddr)}`);
  return `http://${formatHostPort(a)}`;
}

/**
 * POSTs a JSON body to `url` and resolves to the answer's text; rejects on a network error, an
 * oversized answer, or no whole answer within BROADCAST_TIMEOUT_MS of the call (waiting for a free
 * connection included).
 */
function post(url: string, payload: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  return new Promise<string>((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BROADCAST_RESPONSE_BYTES) req.destroy(new Error(`answer larger than ${MAX_BROADCAST_RESPONSE_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    timer = setTimeout(() => req.destroy(new Error(`no answer within ${BROADCAST_TIMEOUT_MS} ms`)), BROADCAST_TIMEOUT_MS);
    req.on('error', reject);
    req.end(payload);
  }).finally(() => clearTimeout(timer));
}

/** The base64 JSON-RPC request of `method` (a broadcast) for `tx`, with id `id`. */
function broadcastRequest(id: number, tx: Uint8Array, method: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{"tx":"${Buffer.from(tx.buffer, tx.byteOffset, tx.byteLength).toString('base64')}"}}`;
}

/** POSTs `payload` and parses the answer; CometUnreachable when there is none to parse. */
async function call(url: string, payload: string): Promise<unknown> {
  try {
    return JSON.parse(await post(url, payload)) as unknown;
  } catch (e) {
    throw new CometUnreachable(`cannot reach CometBFT at ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** One broadcast's answer: CheckTx's result; a mempool refusal throws txRejected, any other error CometRpcError. */
function resultOf(url: string, body: RpcAnswer): BroadcastResult {
  if (body.error) {
    const detail = `${body.error.data ?? ''} ${body.error.message}`;
    for (const [re, reason, text] of MEMPOOL_ERRORS) if (re.test(detail)) throw txRejected(reason, text);
    throw new CometRpcError((body.error.data ?? body.error.message).trim());
  }
  if (!body.result) throw new CometRpcError(`CometBFT at ${url} answered neither result nor error`);
  return { code: body.result.code ?? 0, log: body.result.log ?? '', hash: body.result.hash };
}

/**
 * `broadcast_tx_async` of each tx, as ONE JSON-RPC batch: CometBFT runs a batch's requests one after
 * the other, in order, and answers them in that order (cometbft rpc/jsonrpc/server/http_json_handler.go
 * makeJSONRPCHandler); each queues its CheckTx on the mempool connection (rpc/core/mempool.go
 * BroadcastTxAsync), so the application's CheckTx requests come in this order, together, without one
 * round trip each. An answer carries the mempool's own refusals (cache, full, too large), not CheckTx's
 * code (docs/benchmarks.md "Local-first admission": sync broadcasts one after the other bounded the
 * rate). The answers are matched by id
 * (a batch of one is answered with a bare object, rpc/jsonrpc/server/http_server.go
 * WriteRPCResponseHTTP). Throws CometUnreachable when no answer came, CometRpcError when the batch
 * as a whole was refused (e.g. over `max_request_batch_size`).
 */
export async function broadcastTxBatch(url: string, txs: readonly Uint8Array[]): Promise<BatchAnswer[]> {
  const body = await call(url, `[${txs.map((tx, i) => broadcastRequest(i + 1, tx, 'broadcast_tx_async')).join(',')}]`);
  const list = (Array.isArray(body) ? body : [body]) as RpcAnswer[];
  const byId = new Map<unknown, RpcAnswer>(list.map((a) => [a?.id, a]));
  if (byId.size === 1 && list[0]?.error !== undefined && (list[0].id === undefined || list[0].id === null || list[0].id === -1)) {
    throw new CometRpcError(`CometBFT at ${url} refused the batch: ${(list[0].error.data ?? list[0].error.message).trim()}`);
  }
  return txs.map((_, i): BatchAnswer => {
    const a = byId.get(i + 1);
    if (a === undefined) return { error: `CometBFT at ${url} did not answer this broadcast of the batch` };
    try {
      const r = resultOf(url, a);
      return { code: r.code, log: r.log };
    } catch (e) {
      if (e instanceof CometRpcError) return { error: e.message };
      return { rejected: e as DomainError<'txRejected'> };
    }
  });
}

/** CometBFT's `health` (an empty result when it is up); CometUnreachable when it does not answer. */
export async function cometHealth(url: string): Promise<void> {
  await call(url, '{"jsonrpc":"2.0","id":1,"method":"health","params":{}}');
}
