/**
 * The switches an in-place re-fork turns (src/node/switch.ts, docs/fork-mode.md "Reset"): while paused, a
 * request waits and is answered by the dispatcher (or CometBFT RPC handler) the re-fork resumes with; at
 * most MAX_REFORK_WAITING wait, the next is answered at once ("node is re-forking"); Surface B's
 * WebSocket clients are closed when the re-fork begins, and one connecting meanwhile is closed at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dispatcher } from '../../src/jsonrpc/core.js';
import type { CometHttpRequest, CometHttpResponse, CometRpcHandler, CometWsPeer } from '../../src/jsonrpc/transport.js';
import type { CallContext } from '../../src/jsonrpc/types.js';
import { MAX_REFORK_WAITING, REFORKING_MESSAGE, SwitchCometHandler, SwitchDispatcher } from '../../src/node/switch.js';

const ctx: CallContext = { transport: 'http', authenticated: false };
const answering = (name: string): Dispatcher => ({ handle: async () => name });
const tick = () => new Promise((r) => setImmediate(r));

function comet(name: string): CometRpcHandler {
  return {
    http: async (): Promise<CometHttpResponse> => ({ status: 200, contentType: 'text/plain', body: name, cacheable: false }),
    websocket: () => ({ message: () => {}, closed: () => {} }),
  };
}

function peer(): CometWsPeer & { closedByServer: boolean } {
  return {
    remoteAddr: '127.0.0.1:1',
    closedByServer: false,
    send: () => {},
    close() {
      this.closedByServer = true;
    },
  };
}

describe('SwitchDispatcher', () => {
  it('answers from the current dispatcher; while paused, requests wait and the resumed one answers them', async () => {
    const sw = new SwitchDispatcher(answering('old'));
    assert.equal(await sw.handle('{}', ctx), 'old');
    sw.pause();
    let answer: string | undefined;
    const waiting = sw.handle('{}', ctx).then((a) => (answer = a));
    await tick();
    assert.equal(answer, undefined, 'waits while the re-fork runs');
    sw.resume(answering('new'));
    await waiting;
    assert.equal(answer, 'new');
    assert.equal(await sw.handle('{}', ctx), 'new');
  });

  it(`at most MAX_REFORK_WAITING (${MAX_REFORK_WAITING}) wait; the next is answered -32000 at once`, async () => {
    const sw = new SwitchDispatcher(answering('old'));
    sw.pause();
    const waiting = Array.from({ length: MAX_REFORK_WAITING }, () => sw.handle('{}', ctx));
    await tick();
    const refused = JSON.parse((await sw.handle('{}', ctx))!) as { error: { code: number; message: string } };
    assert.deepEqual(refused.error, { code: -32000, message: REFORKING_MESSAGE });
    sw.resume(answering('new'));
    assert.deepEqual(new Set(await Promise.all(waiting)), new Set(['new']));
  });
});

describe('SwitchCometHandler', () => {
  it('HTTP requests wait while paused (503 past the bound); WebSocket clients are closed at the pause and while it lasts', async () => {
    const sw = new SwitchCometHandler(comet('old'));
    const req = {} as CometHttpRequest;
    assert.equal((await sw.http(req)).body, 'old');
    const before = peer();
    sw.websocket(before);
    sw.pause();
    assert.equal(before.closedByServer, true);
    const during = peer();
    sw.websocket(during);
    assert.equal(during.closedByServer, true);
    const waiting = Array.from({ length: MAX_REFORK_WAITING }, () => sw.http(req));
    await tick();
    assert.equal((await sw.http(req)).status, 503);
    sw.resume(comet('new'));
    assert.deepEqual(new Set((await Promise.all(waiting)).map((r) => r.body)), new Set(['new']));
    const after = peer();
    sw.websocket(after);
    assert.equal(after.closedByServer, false);
  });
});
