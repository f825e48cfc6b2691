import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invalidArgument, invalidRequest, reverted } from '../../src/lib/errors.js';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { address, bool, optional, quantity, quantityNumber } from '../../src/jsonrpc/codecs.js';
import { createDispatcher, namespaceOf, type DispatcherOptions } from '../../src/jsonrpc/core.js';
import { toJsonRpcError, UNAUTHORIZED_MESSAGE } from '../../src/jsonrpc/errors.js';
import type { CallContext, MethodTable } from '../../src/jsonrpc/types.js';

const ANON: CallContext = { transport: 'http', authenticated: false };
const AUTHED: CallContext = { transport: 'http', authenticated: true };

interface Harness {
  handle(body: unknown, ctx?: CallContext): Promise<unknown>;
  raw(body: string, ctx?: CallContext): Promise<string | undefined>;
  calls: string[];
  bugs: Array<{ err: unknown; method: string }>;
}

function harness(over: Partial<Omit<DispatcherOptions, 'errors'>> = {}): Harness {
  const calls: string[] = [];
  const bugs: Array<{ err: unknown; method: string }> = [];
  let markShortDone = () => {};
  const shortDone = new Promise<void>((r) => (markShortDone = r));
  const table: MethodTable = {
    eth_blockNumber: { params: [], handler: () => (calls.push('eth_blockNumber'), '0x10') },
    eth_add: {
      params: [quantity, optional(quantity)],
      handler: ([a, b]: [bigint, bigint | undefined]) => '0x' + (a + (b ?? 0n)).toString(16),
    },
    // a "long" call (ms > 1) finishes only after a short one has (or after ms * 250 ms if none comes, which
    // is what a dispatcher that ran batch items one by one would see): concurrency without racing timers
    eth_async: {
      params: [quantityNumber],
      handler: async ([ms]: [number]) => {
        if (ms > 1) await Promise.race([shortDone, new Promise((r) => setTimeout(r, ms * 250))]);
        calls.push(`eth_async:${ms}`);
        if (ms <= 1) markShortDone();
        return ms;
      },
    },
    // answers only after 5 s: far past the due time the timeout test gives it
    eth_never: { params: [], handler: () => new Promise((r) => setTimeout(() => r('late'), 5000)) },
    eth_echoBool: { params: [bool], handler: ([b]: [boolean]) => b },
    eth_balance: { params: [address], handler: () => '0x0' },
    eth_void: { params: [], handler: () => undefined },
    eth_big: { params: [quantityNumber], handler: ([n]: [number]) => 'x'.repeat(n) },
    eth_fail: {
      params: [],
      handler: () => {
        throw reverted('execution reverted', Uint8Array.from([0x08, 0xc3, 0x79, 0xa0]));
      },
    },
    eth_failAsync: {
      params: [],
      handler: async () => {
        throw invalidRequest('nope');
      },
    },
    eth_bug: {
      params: [],
      handler: () => {
        throw new TypeError('boom');
      },
    },
    eth_bugAsync: {
      params: [],
      handler: async () => {
        throw new Error('async boom');
      },
    },
    eth_badResult: { params: [], handler: () => ({ n: 1n }) },
    eth_ctx: { params: [], handler: (_a: unknown[], ctx: CallContext) => ctx.transport },
    net_version: { params: [], handler: () => '9000' },
    personal_listAccounts: { params: [], private: true, handler: () => (calls.push('personal_listAccounts'), []) },
  };
  const d = createDispatcher({
    table,
    enabledNamespaces: new Set(['eth', 'personal']),
    limits: { batchRequestLimit: 5, batchResponseMaxSize: 1000 },
    errors: evmErrors,
    onInternalError: (err, method) => bugs.push({ err, method }),
    ...over,
  });
  return {
    calls,
    bugs,
    raw: (body, ctx = ANON) => d.handle(body, ctx),
    async handle(body, ctx = ANON) {
      const text = await d.handle(typeof body === 'string' ? body : JSON.stringify(body), ctx);
      return text === undefined ? undefined : JSON.parse(text);
    },
  };
}

const req = (id: unknown, method: string, params?: unknown[]) =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
const err = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

describe('dispatcher: single requests', () => {
  it('answers a call with the exact envelope text', async () => {
    const h = harness();
    assert.equal(await h.raw('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'), '{"jsonrpc":"2.0","id":1,"result":"0x10"}');
  });
  it('echoes string, number and null ids', async () => {
    const h = harness();
    for (const id of ['abc', '', 0, 42, -7, 1.5, null]) {
      assert.deepEqual(await h.handle(req(id, 'eth_blockNumber')), { jsonrpc: '2.0', id, result: '0x10' });
    }
    assert.equal(await h.raw('{"jsonrpc":"2.0","id":"0x01","method":"eth_blockNumber"}'), '{"jsonrpc":"2.0","id":"0x01","result":"0x10"}');
  });
  it('decodes params, absent and null params mean []', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x2', '0x3'])), { jsonrpc: '2.0', id: 1, result: '0x5' });
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x2'])), { jsonrpc: '2.0', id: 1, result: '0x2' });
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x2', null])), { jsonrpc: '2.0', id: 1, result: '0x2' });
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: null }), {
      jsonrpc: '2.0',
      id: 1,
      result: '0x10',
    });
  });
  it('undefined results are sent as null', async () => {
    assert.equal(await harness().raw('{"jsonrpc":"2.0","id":1,"method":"eth_void"}'), '{"jsonrpc":"2.0","id":1,"result":null}');
  });
  it('async handlers', async () => {
    assert.deepEqual(await harness().handle(req('a', 'eth_async', ['0x1'])), { jsonrpc: '2.0', id: 'a', result: 1 });
  });
  it('passes the call context', async () => {
    assert.deepEqual(await harness().handle(req(1, 'eth_ctx'), { transport: 'ws', authenticated: false }), {
      jsonrpc: '2.0',
      id: 1,
      result: 'ws',
    });
  });
});

describe('dispatcher: envelope errors', () => {
  it('parse error', async () => {
    const h = harness();
    for (const body of ['{', '', 'nope', '{"jsonrpc":"2.0",}']) {
      assert.equal(await h.raw(body), '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
    }
  });
  it('non-object requests are invalid', async () => {
    const h = harness();
    for (const body of ['1', '"x"', 'null', 'true']) {
      assert.deepEqual(await h.handle(body), err(null, -32600, 'invalid request'));
    }
  });
  it('wrong or missing jsonrpc version, missing method: invalid request with the id', async () => {
    const h = harness();
    assert.deepEqual(await h.handle({ jsonrpc: '1.0', id: 3, method: 'eth_blockNumber' }), err(3, -32600, 'invalid request'));
    assert.deepEqual(await h.handle({ id: 'x', method: 'eth_blockNumber' }), err('x', -32600, 'invalid request'));
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 4 }), err(4, -32600, 'invalid request'));
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 4, method: 5 }), err(4, -32600, 'invalid request'));
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 4, method: '' }), err(4, -32600, 'invalid request'));
    // invalid and without id: still answered, with id null
    assert.deepEqual(await h.handle({ jsonrpc: '1.0', method: 'eth_blockNumber' }), err(null, -32600, 'invalid request'));
    assert.deepEqual(h.calls, []);
  });
  it('ids that are not string/number/null are invalid, answered with id null', async () => {
    const h = harness();
    for (const id of [{}, [1], true]) {
      assert.deepEqual(await h.handle(req(id, 'eth_blockNumber')), err(null, -32600, 'invalid request'));
    }
    assert.deepEqual(h.calls, []);
  });
});

describe('dispatcher: methods and params', () => {
  it('unknown method', async () => {
    assert.deepEqual(await harness().handle(req(1, 'eth_nope')), err(1, -32601, 'the method eth_nope does not exist/is not available'));
  });
  it('a disabled namespace answers exactly like an unknown method', async () => {
    const h = harness();
    const disabled = await h.raw('{"jsonrpc":"2.0","id":7,"method":"net_version","params":[]}');
    const unknown = await h.raw('{"jsonrpc":"2.0","id":7,"method":"net_nope","params":[]}');
    assert.equal(disabled, '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"the method net_version does not exist/is not available"}}');
    assert.equal(unknown, disabled.replace('net_version', 'net_nope'));
    // enabled when the namespace is on, or when all are (null)
    assert.deepEqual(await harness({ enabledNamespaces: null }).handle(req(7, 'net_version')), { jsonrpc: '2.0', id: 7, result: '9000' });
  });
  it('does not resolve Object.prototype names', async () => {
    const h = harness({ enabledNamespaces: null });
    for (const m of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.deepEqual(await h.handle(req(1, m)), err(1, -32601, `the method ${m} does not exist/is not available`));
    }
  });
  it('geth param texts', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'eth_add', [])), err(1, -32602, 'missing value for required argument 0'));
    assert.deepEqual(await h.handle(req(1, 'eth_add', [null])), err(1, -32602, 'missing value for required argument 0'));
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x1', '0x2', '0x3'])), err(1, -32602, 'too many arguments, want at most 2'));
    assert.deepEqual(await h.handle(req(1, 'eth_blockNumber', [1])), err(1, -32602, 'too many arguments, want at most 0'));
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 1, method: 'eth_add', params: { a: 1 } }), err(1, -32602, 'non-array args'));
    assert.deepEqual(await h.handle({ jsonrpc: '2.0', id: 1, method: 'eth_add', params: '0x1' }), err(1, -32602, 'non-array args'));
    // geth decodes in order: a bad argument before the surplus one is reported first
    assert.deepEqual(
      await h.handle(req(1, 'eth_add', ['0x01', '0x2', '0x3'])),
      err(1, -32602, 'invalid argument 0: hex number with leading zero digits'),
    );
  });
  it('codec errors are -32602 naming the argument', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x1', '0x0400'])), err(1, -32602, 'invalid argument 1: hex number with leading zero digits'));
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['0x'])), err(1, -32602, 'invalid argument 0: hex string "0x"'));
    assert.deepEqual(await h.handle(req(1, 'eth_add', ['10'])), err(1, -32602, 'invalid argument 0: hex string without 0x prefix'));
    assert.deepEqual(
      await h.handle(req(1, 'eth_balance', ['0x' + '00'.repeat(19)])),
      err(1, -32602, 'invalid argument 0: hex string has length 38, want 40 for common.Address'),
    );
    assert.deepEqual(await h.handle(req(1, 'eth_balance', ['0x123'])), err(1, -32602, 'invalid argument 0: hex string of odd length'));
    assert.deepEqual(
      await h.handle(req(1, 'eth_echoBool', ['yes'])),
      err(1, -32602, 'invalid argument 0: json: cannot unmarshal string into Go value of type bool'),
    );
  });
  it('private methods need an authenticated context and do nothing without it', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'personal_listAccounts')), err(1, -32001, UNAUTHORIZED_MESSAGE));
    assert.deepEqual(h.calls, []);
    assert.deepEqual(await h.handle(req(1, 'personal_listAccounts'), AUTHED), { jsonrpc: '2.0', id: 1, result: [] });
    assert.deepEqual(h.calls, ['personal_listAccounts']);
  });
});

describe('dispatcher: error mapping', () => {
  it('a DomainError is answered through the surface map (sync and async)', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'eth_fail')), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: 3, message: 'execution reverted', data: '0x08c379a0' },
    });
    assert.equal(await h.raw('{"jsonrpc":"2.0","id":2,"method":"eth_failAsync"}'), '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"nope"}}');
    assert.equal(h.bugs.length, 0);
  });
  it('anything else is -32603 internal error, reported with its stack, and the core keeps serving', async () => {
    const h = harness();
    assert.deepEqual(await h.handle(req(1, 'eth_bug')), err(1, -32603, 'internal error'));
    assert.deepEqual(await h.handle(req(2, 'eth_bugAsync')), err(2, -32603, 'internal error'));
    assert.deepEqual(await h.handle(req(3, 'eth_badResult')), err(3, -32603, 'internal error'));
    assert.deepEqual(
      h.bugs.map((b) => [b.method, (b.err as Error).message]),
      [
        ['eth_bug', 'boom'],
        ['eth_bugAsync', 'async boom'],
        ['eth_badResult', 'Do not know how to serialize a BigInt'],
      ],
    );
    assert.ok(typeof (h.bugs[0]!.err as Error).stack === 'string');
    assert.deepEqual(await h.handle(req(4, 'eth_blockNumber')), { jsonrpc: '2.0', id: 4, result: '0x10' });
  });
  it('bugs inside notifications are still reported', async () => {
    const h = harness();
    assert.equal(await h.raw('{"jsonrpc":"2.0","method":"eth_bug"}'), undefined);
    assert.equal(h.bugs.length, 1);
  });
  it('toJsonRpcError', () => {
    assert.deepEqual(toJsonRpcError(invalidRequest('x'), undefined, evmErrors), { code: -32000, message: 'x' });
    assert.deepEqual(toJsonRpcError(invalidArgument('x'), undefined, evmErrors), { code: -32602, message: 'x' });
    let seen: unknown;
    assert.deepEqual(toJsonRpcError('str', (e) => (seen = e), evmErrors), { code: -32603, message: 'internal error' });
    assert.equal(seen, 'str');
  });
});

describe('dispatcher: answers due by http-timeout', () => {
  it("a handler still working when its answer is due gets geth's timeout answer (-32002), others in the batch theirs", async () => {
    const h = harness();
    const ctx: CallContext = { ...ANON, answerBy: Date.now() + 50 };
    assert.deepEqual(await h.handle([req(1, 'eth_never'), req(2, 'eth_blockNumber')], ctx), [
      err(1, -32002, 'request timed out'),
      { jsonrpc: '2.0', id: 2, result: '0x10' },
    ]);
    // without a due time (WebSocket) nothing is cut: a finished handler answers as usual
    assert.deepEqual(await h.handle(req(3, 'eth_async', ['0x1'])), { jsonrpc: '2.0', id: 3, result: 1 });
  });
});

describe('dispatcher: notifications', () => {
  it('run and send nothing', async () => {
    const h = harness();
    assert.equal(await h.raw('{"jsonrpc":"2.0","method":"eth_blockNumber"}'), undefined);
    assert.deepEqual(h.calls, ['eth_blockNumber']);
    // errors of notifications are not sent either
    assert.equal(await h.raw('{"jsonrpc":"2.0","method":"eth_nope"}'), undefined);
    assert.equal(await h.raw('{"jsonrpc":"2.0","method":"eth_add","params":["0x"]}'), undefined);
  });
  it('a batch of only notifications sends nothing', async () => {
    const h = harness();
    assert.equal(await h.raw(JSON.stringify([{ jsonrpc: '2.0', method: 'eth_blockNumber' }, { jsonrpc: '2.0', method: 'eth_blockNumber' }])), undefined);
    assert.deepEqual(h.calls, ['eth_blockNumber', 'eth_blockNumber']);
  });
});

describe('dispatcher: batches', () => {
  it('answers in request order, skipping notifications', async () => {
    const h = harness({ limits: { batchRequestLimit: 10, batchResponseMaxSize: 0 } });
    const out = await h.handle([
      req(1, 'eth_async', ['0x14']),
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      req('b', 'eth_async', ['0x1']),
      req(3, 'eth_nope'),
      5,
      req(null, 'eth_add', ['0x1', '0x1']),
    ]);
    assert.deepEqual(out, [
      { jsonrpc: '2.0', id: 1, result: 20 },
      { jsonrpc: '2.0', id: 'b', result: 1 },
      err(3, -32601, 'the method eth_nope does not exist/is not available'),
      err(null, -32600, 'invalid request'),
      { jsonrpc: '2.0', id: null, result: '0x2' },
    ]);
    // items run concurrently: the short call finished before the long one
    assert.deepEqual(h.calls, ['eth_blockNumber', 'eth_async:1', 'eth_async:20']);
  });
  it('empty batch is one error object', async () => {
    assert.equal(await harness().raw('[]'), '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}');
  });
  it('batch over the item limit: one error carrying the first call id, nothing runs', async () => {
    const h = harness();
    const items = [{ jsonrpc: '2.0', method: 'eth_blockNumber' }, ...[7, 8, 9, 10, 11].map((id) => req(id, 'eth_blockNumber'))];
    assert.deepEqual(await h.handle(items), [err(7, -32600, 'batch too large')]);
    assert.deepEqual(await h.handle(items.slice(0, 5)), [{ jsonrpc: '2.0', id: 7, result: '0x10' }, ...[8, 9, 10].map((id) => ({ jsonrpc: '2.0', id, result: '0x10' }))]);
    assert.equal(h.calls.length, 5);
    const onlyNotifications = Array.from({ length: 6 }, () => ({ jsonrpc: '2.0', method: 'eth_blockNumber' }));
    assert.deepEqual(await h.handle(onlyNotifications), [err(null, -32600, 'batch too large')]);
    // limit 0 = unlimited
    const unlimited = harness({ limits: { batchRequestLimit: 0, batchResponseMaxSize: 0 } });
    const many = Array.from({ length: 50 }, (_, i) => req(i, 'eth_blockNumber'));
    assert.equal(((await unlimited.handle(many)) as unknown[]).length, 50);
  });
  it('batch response over the size limit: the crossing item is kept, later calls get -32003', async () => {
    const h = harness({ limits: { batchRequestLimit: 10, batchResponseMaxSize: 1000 } });
    const out = (await h.handle([
      req(1, 'eth_big', ['0x12c']), // ~340 chars
      req(2, 'eth_big', ['0x12c']), // ~680
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      req(3, 'eth_big', ['0x12c']), // ~1020: crosses 1000, kept
      req(4, 'eth_blockNumber'),
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      req('five', 'eth_async', ['0x1']),
    ])) as Array<Record<string, unknown>>;
    assert.equal(out.length, 5);
    assert.deepEqual(out.slice(0, 3).map((r) => [r.id, (r.result as string).length]), [
      [1, 300],
      [2, 300],
      [3, 300],
    ]);
    assert.deepEqual(out.slice(3), [err(4, -32003, 'response too large'), err('five', -32003, 'response too large')]);
  });
  it('stops starting items once known responses are over the size limit', async () => {
    const h = harness({ limits: { batchRequestLimit: 0, batchResponseMaxSize: 100 } });
    const out = (await h.handle([req(1, 'eth_big', ['0xc8']), req(2, 'eth_blockNumber'), req(3, 'eth_blockNumber')])) as unknown[];
    assert.deepEqual(out.slice(1), [err(2, -32003, 'response too large'), err(3, -32003, 'response too large')]);
    assert.deepEqual(h.calls, []);
  });
});

describe('namespaceOf', () => {
  it('is the text before the first underscore', () => {
    assert.equal(namespaceOf('eth_getBalance'), 'eth');
    assert.equal(namespaceOf('debug_trace_call'), 'debug');
    assert.equal(namespaceOf('subscribe'), 'subscribe');
    assert.equal(namespaceOf('_x'), '');
  });
});
