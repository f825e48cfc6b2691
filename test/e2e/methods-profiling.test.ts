/**
 * The debug profiling methods: the file writers only with `--json-rpc.enable-profiling` (else they do not exist:
 * -32601, as geth answers a method it does not serve); files only under `<home>/profiles/`, never
 * where a client's path points; a CPU profile that parses as V8's `.cpuprofile` JSON, a heap
 * snapshot that parses as one; geth's errors for a second start and a stop without a start.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';

const PROFILING = ['--json-rpc.api', 'eth,net,web3,debug', '--json-rpc.enable-profiling'];

/** files under the node's profiles folder (none when it does not exist) */
function profiles(n: FerryNode): string[] {
  const dir = join(n.home, 'profiles');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

let node: FerryNode;
let off: FerryNode;

before(async () => {
  [node, off] = await Promise.all([
    startFerry({ args: PROFILING }),
    startFerry({ args: ['--json-rpc.api', 'eth,net,web3,debug'] }),
  ]);
});

after(async () => {
  await Promise.all([node?.stop(), off?.stop()]);
});

describe('debug profiling', () => {
  it('a CPU profile started with an escaping path is written under <home>/profiles/ by its base name, as a .cpuprofile', async () => {
    const escaping = '../../etc/x.cpuprofile';
    assert.equal(await call(node.url, 'debug_startCPUProfile', [escaping]), null);
    const again = await rpc(node.url, 'debug_startCPUProfile', ['y.cpuprofile']);
    assert.deepEqual(again.error, { code: -32000, message: 'CPU profiling already in progress' });
    // some work to profile
    for (let i = 0; i < 20; i++) await call(node.url, 'eth_getBlockByNumber', ['latest', true]);
    assert.equal(await call(node.url, 'debug_stopCPUProfile'), null);
    const written = join(node.home, 'profiles', 'x.cpuprofile');
    const profile = JSON.parse(readFileSync(written, 'utf8'));
    assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0);
    assert.equal(typeof profile.startTime, 'number');
    assert.ok(profile.endTime >= profile.startTime);
    assert.ok(profile.nodes.every((n: any) => typeof n.id === 'number' && typeof n.callFrame?.functionName === 'string'));
    assert.equal(existsSync(resolve(node.home, 'profiles', escaping)), false);
    assert.equal(existsSync(join(node.home, 'profiles', 'y.cpuprofile')), false);
    const stopped = await rpc(node.url, 'debug_stopCPUProfile');
    assert.deepEqual(stopped.error, { code: -32000, message: 'CPU profiling not in progress' });
  });

  it('debug_cpuProfile profiles for the given seconds', async () => {
    assert.equal(await call(node.url, 'debug_cpuProfile', ['timed.cpuprofile', 1]), null);
    const profile = JSON.parse(readFileSync(join(node.home, 'profiles', 'timed.cpuprofile'), 'utf8'));
    assert.ok(profile.endTime - profile.startTime >= 1_000_000, 'at least a second, in microseconds');
    const tooLong = await rpc(node.url, 'debug_cpuProfile', ['t.cpuprofile', 100_000]);
    assert.equal(tooLong.error?.code, -32602);
  });

  it('debug_writeMemProfile writes a V8 heap snapshot under the home', async () => {
    assert.equal(await call(node.url, 'debug_writeMemProfile', ['/tmp/../heap.heapsnapshot']), null);
    const snapshot = JSON.parse(readFileSync(join(node.home, 'profiles', 'heap.heapsnapshot'), 'utf8'));
    assert.ok(Array.isArray(snapshot.snapshot.meta.node_fields));
    assert.ok(snapshot.snapshot.node_count > 0);
  });

  it('refuses names that are no file name, writing nothing', async () => {
    const before = profiles(node);
    for (const bad of ['', '..', 'a b', 'x/..', 'sub/']) {
      const r = await rpc(node.url, 'debug_writeMemProfile', [bad]);
      assert.equal(r.error?.code, -32000, JSON.stringify(bad));
      assert.match(r.error!.message, /^invalid profile file name /);
    }
    assert.deepEqual(profiles(node), before);
  });

  it('debug_memStats, debug_gcStats and debug_stacks report the RPC thread', async () => {
    const mem = await call(node.url, 'debug_memStats');
    assert.ok(mem.heapUsed > 0 && mem.rss >= mem.heapUsed);
    assert.ok(mem.heap.total_heap_size >= mem.heap.used_heap_size);
    const gc = await call(node.url, 'debug_gcStats');
    assert.equal(typeof gc.NumGC, 'number');
    assert.equal(gc.Pause.length, Math.min(gc.NumGC, 256));
    assert.ok(!Number.isNaN(Date.parse(gc.LastGC)));
    const stacks = await call<string>(node.url, 'debug_stacks');
    assert.match(stacks, /^thread main: /);
  });

  it('without --json-rpc.enable-profiling the methods that write files do not exist', async () => {
    for (const m of ['debug_startCPUProfile', 'debug_stopCPUProfile', 'debug_cpuProfile', 'debug_writeMemProfile']) {
      const r = await rpc(off.url, m, []);
      assert.deepEqual(r.error, { code: -32601, message: `the method ${m} does not exist/is not available` }, m);
    }
    assert.equal(existsSync(join(off.home, 'profiles')), false);
  });
  it('the runtime reports write no file, so they follow `debug` alone, as in geth', async () => {
    const mem = await rpc<Record<string, unknown>>(off.url, 'debug_memStats', []);
    assert.equal(typeof mem.result?.heapUsed, 'number');
    const gc = await rpc<Record<string, unknown>>(off.url, 'debug_gcStats', []);
    assert.equal(typeof gc.result?.NumGC, 'number');
    const stacks = await rpc<string>(off.url, 'debug_stacks', []);
    assert.match(stacks.result ?? '', /^thread main: /);
    assert.equal(existsSync(join(off.home, 'profiles')), false);
  });
});
