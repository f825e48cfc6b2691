/**
 * The local CometBFT node's RPC, as the application side needs it: `broadcast_tx_sync` for
 * eth_sendRawTransaction under CometBFT (the tx enters CometBFT's mempool, which gossips it; CometBFT
 * calls CheckTx on ferry's mempool connection and returns its answer).
 *
 * Each broadcast is one POST over node:http with kept-alive connections, not `fetch`: this runs on the
 * chain thread once per submitted tx, and undici's fetch (web streams, abort signals, a Request and a
 * Response object per call) cost that thread about as much as the rest of the tx's ingestion
 * (docs/benchmarks.md "Speed under one CometBFT").
 */
import { Agent, request } from 'node:http';
import { formatHostPort, parseLaddr } from '../config/address.js';
import { txRejected, type TxRejectReason } from '../lib/errors.js';
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

/**
 * CheckTx's answer to a broadcast; a mempool refusal throws txRejected, any other CometBFT error (or
 * none reachable) CometRpcError.
 */
export async function broadcastTxSync(url: string, tx: Uint8Array): Promise<BroadcastResult> {
  let body: { result?: { code: number; log: string; hash: string }; error?: { message: string; data?: string } };
  try {
    const payload = `{"jsonrpc":"2.0","id":1,"method":"broadcast_tx_sync","params":{"tx":"${Buffer.from(tx.buffer, tx.byteOffset, tx.byteLength).toString('base64')}"}}`;
    body = JSON.parse(await post(url, payload)) as typeof body;
  } catch (e) {
    throw new CometRpcError(`cannot reach CometBFT at ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (body.error) {
    const detail = `${body.error.data ?? ''} ${body.error.message}`;
    for (const [re, reason, text] of MEMPOOL_ERRORS) if (re.test(detail)) throw txRejected(reason, text);
    throw new CometRpcError((body.error.data ?? body.error.message).trim());
  }
  if (!body.result) throw new CometRpcError(`CometBFT at ${url} answered neither result nor error`);
  return { code: body.result.code, log: body.result.log, hash: body.result.hash };
}
