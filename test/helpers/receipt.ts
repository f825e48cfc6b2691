/**
 * A transaction's receipt, asked for with eth_getTransactionReceipt every `pollMs` until it is there.
 *
 * Not viem's waitForTransactionReceipt: that one asks for the receipt only when it sees the block
 * number change, and it drops a change it sees while it is still looking in an earlier block for a
 * replacement of the tx (viem 2.45 src/actions/public/waitForTransactionReceipt.ts: `if (retrying)
 * return` in onBlockNumber). A dev node in automine (docs/dev-mode.md) makes the tx's block a few
 * milliseconds after answering eth_sendRawTransaction and then no block until the next tx, so when
 * that block lands during the replacement check, no later block comes and the wait hangs until its
 * timeout, with the tx mined: the "stalled dev chain" seen in test/e2e/fork-swap.test.ts.
 */
import { TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';

export interface ReceiptWait {
  /** between two asks, ms */
  pollMs?: number;
  /** gives up (rejects) after this long, ms */
  timeoutMs?: number;
}

export async function receiptOf(pub: Pick<PublicClient, 'getTransactionReceipt'>, hash: Hex, { pollMs = 20, timeoutMs = 120_000 }: ReceiptWait = {}): Promise<TransactionReceipt> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await pub.getTransactionReceipt({ hash });
    } catch (e) {
      if (!(e instanceof TransactionReceiptNotFoundError)) throw e;
    }
    if (Date.now() >= deadline) throw new Error(`no receipt for ${hash} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
