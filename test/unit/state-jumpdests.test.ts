import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { Simulator } from '../../src/chain/simulator.js';
import { Store } from '../../src/store/store.js';
import { chainApp, STORE_ADDR } from '../helpers/chaingen.js';

test('jump-destination analysis is done once per contract code, not once per call', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'ferry-jd-')), 'db');
  const store = new Store(path);
  await chainApp(store);
  // loaded by Simulator → executor → jumpdests; spy on what the interpreter gets back
  const sim = await Simulator.create(new Store(path, { reader: true }), { chainId: 9000n, hardfork: 'cancun', gasCap: 25_000_000n, evmTimeoutMs: 0 });
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('@ethereumjs/evm')).href.replace('/cjs/', '/esm/');
  const { Interpreter } = (await import(new URL('./interpreter.js', entry).href)) as { Interpreter: { prototype: Record<string, any> } };
  const cached = Interpreter.prototype._getValidJumpDestinations;
  const seen: unknown[] = [];
  Interpreter.prototype._getValidJumpDestinations = function (this: unknown, code: Uint8Array) {
    const r = cached.call(this, code);
    seen.push(r);
    return r;
  };
  try {
    const to = Uint8Array.from(Buffer.from(STORE_ADDR.slice(2), 'hex'));
    // PUSH1 3; JUMPDEST; PUSH1 1; SWAP1; SUB; DUP1; PUSH1 2; JUMPI; STOP — a countdown loop
    const loop = Uint8Array.from(Buffer.from('6003' + '5b' + '6001900380' + '6002' + '57' + '00', 'hex'));
    // the same code array (one override object, as the flat layer hands out one array per code hash) twice
    const overrides = [{ address: to, code: loop }];
    await sim.call({ to }, 0n, overrides);
    await sim.call({ to }, 0n, overrides);
    assert.equal(seen.length, 2, 'both calls ran code with jumps');
    assert.equal(seen[0], seen[1], 'the second call reused the first analysis');
    // another code array with the same bytes is another key: analysed afresh (never a stale analysis)
    await sim.call({ to }, 0n, [{ address: to, code: Uint8Array.from(loop) }]);
    assert.notEqual(seen[2], seen[0]);
  } finally {
    Interpreter.prototype._getValidJumpDestinations = cached;
  }
});
