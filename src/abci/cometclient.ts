/**
 * The local CometBFT node's RPC, as the application side needs it: `broadcast_tx_sync` for
 * eth_sendRawTransaction under CometBFT (the tx enters CometBFT's mempool, which gossips it; CometBFT
 * calls CheckTx on ferry's mempool connection and returns its answer).
 */
import { formatHostPort, parseLaddr } from '../config/address.js';
import { txRejected, type TxRejectReason } from '../lib/errors.js';
import { GethText } from '../lib/gethtexts.js';

/** How long a broadcast may take before the caller gets an error. */
export const BROADCAST_TIMEOUT_MS = 10_000;

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
 * CheckTx's answer to a broadcast; a mempool refusal throws txRejected, any other CometBFT error (or
 * none reachable) CometRpcError.
 */
export async function broadcastTxSync(url: string, tx: Uint8Array): Promise<BroadcastResult> {
  let body: { result?: { code: number; log: string; hash: string }; error?: { message: string; data?: string } };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'broadcast_tx_sync', params: { tx: Buffer.from(tx).toString('base64') } }),
      signal: AbortSignal.timeout(BROADCAST_TIMEOUT_MS),
    });
    body = (await res.json()) as typeof body;
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
