/**
 * Automine answers (docs/dev-mode.md "Automine"): with automine on, eth_sendRawTransaction answers once
 * the block that includes the tx is committed, as Anvil and Hardhat do, so a client that asks for the
 * receipt, the block number or the nonce right after the hash sees the tx mined. (Answering at admission
 * let a block land while viem's waitForTransactionReceipt was still looking at the block before it;
 * viem then waited for a later block that an idle automine node never makes.)
 *
 * A submission is held only while its tx is executable (the sender's next nonces and the base fee); it
 * is answered after the first committed block that no longer has it in the pool (mined, or dropped
 * from it), when the node goes idle with the tx still pooled (a full block left it behind and nothing
 * else is executable), when automine is turned off, when the chain thread stops, or after
 * `AUTOMINE_ANSWER_MAX_BLOCKS` blocks or `AUTOMINE_ANSWER_TIMEOUT_MS` — whichever comes first; the
 * answer is the hash in every case (the tx was admitted).
 */

/** submissions held for their block at once; past it a submission is answered at admission */
export const MAX_AUTOMINE_WAITERS = 4096;
/** blocks a held submission waits through before it is answered anyway (a burst larger than a block) */
export const AUTOMINE_ANSWER_MAX_BLOCKS = 8;
/** how long a held submission waits for its block before it is answered anyway */
export const AUTOMINE_ANSWER_TIMEOUT_MS = 30_000;

interface Waiter {
  hash: Uint8Array;
  blocks: number;
  release(): void;
}

export class MinedAnswers {
  private readonly waiters = new Set<Waiter>();

  /** `pooled`: whether the pool still holds the tx of `hash`. */
  constructor(private readonly pooled: (hash: Uint8Array) => boolean) {}

  get size(): number {
    return this.waiters.size;
  }

  /** Resolves once the tx of `hash` is mined or the hold ends (see the file comment); at once when MAX_AUTOMINE_WAITERS are held. */
  hold(hash: Uint8Array): Promise<void> {
    if (this.waiters.size >= MAX_AUTOMINE_WAITERS) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => w.release(), AUTOMINE_ANSWER_TIMEOUT_MS);
      const w: Waiter = {
        hash,
        blocks: 0,
        release: () => {
          clearTimeout(timer);
          this.waiters.delete(w);
          resolve();
        },
      };
      this.waiters.add(w);
    });
  }

  /**
   * After a committed block: answers the submissions whose tx left the pool; all of them when `idle` (no
   * further block is coming). Returns how many it answered.
   */
  afterBlock(idle: boolean): number {
    let answered = 0;
    for (const w of [...this.waiters]) {
      w.blocks++;
      if (idle || !this.pooled(w.hash) || w.blocks >= AUTOMINE_ANSWER_MAX_BLOCKS) {
        w.release();
        answered++;
      }
    }
    return answered;
  }

  /** After a dev operation: answers the submissions whose tx left the pool without a block (dropped, reset); all when `all` (automine off). */
  afterDevOp(all: boolean): void {
    for (const w of [...this.waiters]) if (all || !this.pooled(w.hash)) w.release();
  }

  /** Answers every held submission (the chain thread stopping). */
  releaseAll(): void {
    for (const w of [...this.waiters]) w.release();
  }
}
