/**
 * A node that cannot start (its JSON-RPC port is taken) exits at once with code 1 and says why,
 * instead of staying up half-started with its chain thread running and no listener.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { freePort } from '../helpers/node.js';
import { FERRY_BIN } from '../helpers/paths.js';

const home = mkdtempSync(join(tmpdir(), 'ferry-startfail-'));
let blocker: Server | undefined;

after(() => {
  blocker?.close();
  rmSync(home, { recursive: true, force: true });
});

it('exits with code 1 naming EADDRINUSE when the JSON-RPC address is in use', async () => {
  blocker = createServer();
  const port = await new Promise<number>((resolve) => blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)));
  const [ws, comet] = [await freePort(), await freePort()];
  const proc = spawn(process.execPath, [
    FERRY_BIN, 'start', '--home', home,
    '--json-rpc.address', `127.0.0.1:${port}`, '--json-rpc.ws-address', `127.0.0.1:${ws}`, '--rpc.laddr', `tcp://127.0.0.1:${comet}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => (output += String(d)));
  proc.stderr.on('data', (d) => (output += String(d)));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
  assert.equal(code, 1, output);
  assert.match(output, /EADDRINUSE/);
});
