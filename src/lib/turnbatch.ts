/**
 * Messages to another thread queued during one turn of the event loop and posted together at its end
 * (setImmediate): a burst costs the receiver one wake-up and each side one postMessage, not one per
 * message. `flush()` posts what is queued at once (a sender that must keep order with a message it
 * posts directly).
 */
export class TurnBatch<T> {
  private queued: T[] = [];

  constructor(private readonly post: (batch: T[]) => void) {}

  push(m: T): void {
    if (this.queued.length === 0) setImmediate(() => this.flush());
    this.queued.push(m);
  }

  flush(): void {
    if (this.queued.length === 0) return;
    const batch = this.queued;
    this.queued = [];
    this.post(batch);
  }
}
