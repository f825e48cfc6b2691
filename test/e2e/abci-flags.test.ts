/**
 * evmosd's start flags for the ABCI mode, through the real `ferry` CLI: invalid combinations stop
 * start-up with a message naming the flag; `ferry testnet` writes a network whose homes agree.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'smol-toml';
import { FERRY_BIN } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-abci-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function ferry(...args: string[]) {
  const r = spawnSync(process.execPath, [FERRY_BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('ABCI start flags and ferry testnet', () => {
  it('an unknown --transport is refused, naming the flag and the transports', () => {
    const r = ferry('start', '--home', join(dir, 'a'), '--with-cometbft=false', '--transport', 'quic');
    assert.equal(r.code, 1);
    assert.match(r.err, /error: .*transport: unknown transport "quic", want socket or grpc/);
  });

  it('--address / --transport / --cometbft-rpc with the embedded engine are refused, naming the flag', () => {
    for (const [flag, value] of [['--address', 'tcp://127.0.0.1:1'], ['--transport', 'socket'], ['--cometbft-rpc', 'tcp://127.0.0.1:2']] as const) {
      const r = ferry('start', '--home', join(dir, 'b'), flag, value);
      assert.equal(r.code, 1, r.err);
      assert.match(r.err, new RegExp(`error: ${flag} applies only with --with-cometbft=false`));
    }
  });

  it('a malformed --address is refused', () => {
    const r = ferry('start', '--home', join(dir, 'c'), '--with-cometbft=false', '--address', 'http://x:1');
    assert.equal(r.code, 1);
    assert.match(r.err, /address: malformed address "http:\/\/x:1", want tcp:\/\/host:port or unix:\/\/\/path/);
  });

  it('ferry testnet: one genesis, validators in it, peers wired, distinct ports, ferry homes matching CometBFT', () => {
    const out = join(dir, 'net');
    const r = ferry('testnet', '--validators', '3', '--full-nodes', '1', '--output', out, '--base-port', '41000');
    assert.equal(r.code, 0, r.err);
    const genesis = readFileSync(join(out, 'node0', 'cometbft', 'config', 'genesis.json'), 'utf8');
    const doc = JSON.parse(genesis) as { chain_id: string; validators: { address: string }[]; app_state: { evm: { alloc: Record<string, { code?: string }> } } };
    assert.equal(doc.chain_id, 'ferry_9000-1');
    // the predeploys (docs/configuration.md "Predeploys"): the CREATE2 deployer, EIP-2935, Multicall3
    for (const a of ['0x4e59b44847b379578588920ca78fbf26c0b4956c', '0xca11bde05977b3631167028862be2a173976ca11', '0x0000f90827f1c53a10cb7a02335b175320002935']) {
      assert.match(doc.app_state.evm.alloc[a]?.code ?? '', /^0x[0-9a-f]{2,}$/, a);
    }
    assert.equal(doc.validators.length, 3);
    const ports = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const node = join(out, `node${i}`);
      assert.equal(readFileSync(join(node, 'cometbft', 'config', 'genesis.json'), 'utf8'), genesis);
      assert.equal(readFileSync(join(node, 'ferry', 'config', 'genesis.json'), 'utf8'), genesis);
      const key = JSON.parse(readFileSync(join(node, 'cometbft', 'config', 'priv_validator_key.json'), 'utf8')) as { address: string };
      assert.equal(doc.validators.some((v) => v.address === key.address), i < 3, `node${i} validator key in genesis`);
      const cfg = parse(readFileSync(join(node, 'cometbft', 'config', 'config.toml'), 'utf8')) as Record<string, any>;
      const app = parse(readFileSync(join(node, 'ferry', 'config', 'app.toml'), 'utf8')) as Record<string, any>;
      assert.equal(app['with-cometbft'], false);
      assert.equal(app.address, cfg.proxy_app);
      assert.equal(app['cometbft-rpc'], cfg.rpc.laddr);
      assert.equal(cfg.p2p.persistent_peers.split(',').length, 3);
      for (const p of [cfg.proxy_app, cfg.rpc.laddr, cfg.p2p.laddr, app['json-rpc'].address, app['json-rpc']['ws-address']]) {
        const port = String(p).split(':').pop()!;
        assert.ok(!ports.has(port), `port ${port} used twice`);
        ports.add(port);
      }
    }
    const again = ferry('testnet', '--validators', '1', '--output', out);
    assert.equal(again.code, 1);
    assert.match(again.err, /is not empty/);
  });
});
