/**
 * An abandoned trace does not hold up the next one (src/chain/trace.ts): a job whose client went
 * away while the trace worker was still starting never reaches the worker, and a running job that is
 * abandoned is interrupted by the worker itself — in neither case is the worker restarted (a restart
 * made the next trace wait for the cancel grace and a second start: 2.2 s in the field).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TraceService, TRACE_CANCELLED_MESSAGE } from '../../src/chain/trace.js';
import { DomainError } from '../../src/lib/errors.js';
import { Store } from '../../src/store/store.js';
import { chainApp, chainGenesis } from '../helpers/chaingen.js';

/** JUMPDEST PUSH1 0 JUMP: loops until the gas runs out */
const LOOP_CODE = Uint8Array.from([0x5b, 0x60, 0x00, 0x56]);
const LOOP = new Uint8Array(20).fill(0xee);
const IDENTITY = Uint8Array.from([...new Uint8Array(19), 4]);
const OPTS = { timeoutMs: 60_000, disableStack: false, disableStorage: false, enableMemory: false, enableReturnData: false, limit: 0 };
/** a JS tracer whose every step costs a thousand additions: the loop would run for minutes */
const SLOW_TRACER = '{n: 0, step: function () { for (var i = 0; i < 1000; i++) this.n++ }, fault: function () {}, result: function () { return this.n }}';

describe('trace service: abandoned traces', () => {
  let dir: string;
  let dbPath: string;
  /** the trace worker is unref'd (a node's listeners keep the process alive): so is this test */
  let keepAlive: NodeJS.Timeout;

  before(async () => {
    keepAlive = setInterval(() => undefined, 1000);
    dir = mkdtempSync(join(tmpdir(), 'ferry-trace-abandon-'));
    dbPath = join(dir, 'chain.db');
    const store = new Store(dbPath);
    await chainApp(store);
    store.close();
  });

  after(() => {
    clearInterval(keepAlive);
    rmSync(dir, { recursive: true, force: true });
  });

  const service = (cancelGraceMs?: number) => new TraceService({ dbPath, chainId: chainGenesis().evmChainId, hardfork: chainGenesis().evm.hardfork, maxResultSize: 0 }, cancelGraceMs);
  const loop = (svc: TraceService, signal: AbortSignal) =>
    svc.traceCall({ to: LOOP, gas: 30_000_000n }, 0n, [{ address: LOOP, code: LOOP_CODE }], { ...OPTS, tracer: SLOW_TRACER }, { signal });
  const identity = (svc: TraceService) => svc.traceCall({ to: IDENTITY, gas: 100_000n, data: Uint8Array.from([0xde, 0xad]) }, 0n, undefined, { ...OPTS, tracer: 'callTracer' });
  const isCancelled = (e: unknown) => e instanceof DomainError && e.kind === 'cancelled' && e.message === TRACE_CANCELLED_MESSAGE;

  /** a loop trace abandoned by its client (after `started`), then a trivial trace: answered, no restart */
  async function abandonThenTrace(svc: TraceService, why: string, started: () => void = () => undefined): Promise<void> {
    try {
      const ac = new AbortController();
      const abandoned = loop(svc, ac.signal);
      started();
      ac.abort();
      await assert.rejects(abandoned, isCancelled);
      assert.equal(((await identity(svc)) as { output: string }).output, '0xdead');
      assert.equal(svc.restarts(), 0, why);
    } finally {
      await svc.close();
    }
  }

  it('a job abandoned while the worker starts never runs; the worker is not restarted', async () => {
    // no grace at all: a job handed to a worker that cannot stop it at once would restart the worker
    await abandonThenTrace(service(0), 'the abandoned job was never handed to the starting worker');
  });

  it('a running job abandoned is interrupted by the worker, which then takes the next job', async () => {
    const svc = service();
    await identity(svc); // the worker is up
    // the loop job is handed over at once (the worker is idle): nothing waits in the queue
    await abandonThenTrace(svc, 'the worker stopped the abandoned run itself', () => assert.equal(svc.queued(), 0));
  });
});
