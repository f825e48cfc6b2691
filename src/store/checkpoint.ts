/**
 * WAL checkpoints off the chain thread. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses its threshold, on the writer's thread: it copied every page of the WAL back into the
 * database file and synced it, about a third of the chain thread's store time per block. With the
 * checkpointer, a worker thread with its own connection runs PASSIVE checkpoints (they never block
 * the writer or the readers) at most every WAL_CHECKPOINT_INTERVAL_MS while blocks are committed, and
 * the writer's own automatic checkpoint moves up to WAL_WRITER_CHECKPOINT_PAGES: the bound on the WAL
 * that still holds should the worker fall behind or be gone. Durability is SQLite's: a checkpoint
 * only copies committed pages, and the worker's connection syncs as the writer's does.
 */
import Database from 'better-sqlite3';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * Least time between two checkpoints of the checkpoint worker, while blocks are being committed. A
 * busy dev node writes ~27,000 WAL frames a second; the shorter the interval, the smaller the WAL the
 * writer starts over, and the less its COMMITs and reads pay for a long one (250 → 100 ms: the chain
 * thread −40 µs per ERC-20 transfer, ~+5 % tx/s: docs/benchmarks.md "A dev block's cycle, and a smaller
 * WAL"). A node making a block a second checkpoints once a block either way.
 */
export const WAL_CHECKPOINT_INTERVAL_MS = 100;
/**
 * WAL pages at which the writer checkpoints by itself (SQLite's wal_autocheckpoint) when the
 * checkpointer runs: the WAL's bound if the worker falls behind. Without a checkpointer the writer
 * keeps SQLite's default, 1,000 pages.
 */
export const WAL_WRITER_CHECKPOINT_PAGES = 10_000;

/** SQLite's answer to `PRAGMA wal_checkpoint`: busy (1: could not run), frames in the WAL, frames copied into the database */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

interface CheckpointWorkerData {
  ferryWalCheckpoint: { path: string; commits: Int32Array };
}

/** The writer's handle on its checkpoint worker. */
export class WalCheckpointer {
  private readonly worker: Worker;
  /** [0]: transactions the writer committed (the worker checkpoints when it moved) */
  private readonly commits = new Int32Array(new SharedArrayBuffer(4));
  private failed = false;
  /** checkpoints the worker ran, and the last one's answer (tests, diagnostics) */
  checkpoints = 0;
  last: CheckpointResult | undefined;
  /** called with each checkpoint's answer */
  onCheckpoint: ((r: CheckpointResult) => void) | undefined;

  /** `onFailure`: the worker stopped (its error); the writer's own automatic checkpoint remains */
  constructor(path: string, onFailure: (e: Error) => void) {
    const data: CheckpointWorkerData = { ferryWalCheckpoint: { path, commits: this.commits } };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.worker.on('message', (m: CheckpointResult) => {
      this.checkpoints++;
      this.last = m;
      this.onCheckpoint?.(m);
    });
    const fail = (e: Error) => {
      if (this.failed) return;
      this.failed = true;
      onFailure(e);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`WAL checkpoint worker exited (code ${code})`)));
    this.worker.unref();
  }

  /** The writer committed a transaction. */
  committed(): void {
    Atomics.add(this.commits, 0, 1);
  }

  /** Stops the worker (it finishes a checkpoint under way, then closes its connection). */
  close(): void {
    this.failed = true;
    this.worker.postMessage('close');
  }
}

function runWorker({ path, commits }: CheckpointWorkerData['ferryWalCheckpoint']): void {
  const db = new Database(path, { fileMustExist: true });
  db.pragma('synchronous = FULL');
  // the first round checkpoints whatever the WAL holds (commits before the worker started, a WAL left by an earlier run)
  let seen = -1;
  const timer = setInterval(() => {
    const now = Atomics.load(commits, 0);
    if (now === seen) return;
    seen = now;
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
    parentPort!.postMessage(r);
  }, WAL_CHECKPOINT_INTERVAL_MS);
  parentPort!.on('message', () => {
    clearInterval(timer);
    db.close();
    parentPort!.close();
  });
}

if (!isMainThread && (workerData as Partial<CheckpointWorkerData> | undefined)?.ferryWalCheckpoint) {
  runWorker((workerData as CheckpointWorkerData).ferryWalCheckpoint);
}
