/**
 * The observability keys: CometBFT's [instrumentation] (config.toml) and Evmos's json-rpc
 * metrics-address, plus Ferry's node-page (app.toml) — defaults, files, flags and refusals.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadOptions } from '../../src/config/load.js';
import { DomainError } from '../../src/lib/errors.js';
import { renderConfigToml } from '../../src/config/templates.js';
import { defaultOptions } from '../../src/config/load.js';

const homes: string[] = [];
function home(files: Record<string, string> = {}): string {
  const h = mkdtempSync(join(tmpdir(), 'ferry-metrics-config-'));
  homes.push(h);
  mkdirSync(join(h, 'config'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(h, 'config', name), text);
  return h;
}
after(() => homes.forEach((h) => rmSync(h, { recursive: true, force: true })));

describe('observability configuration', () => {
  it('defaults are CometBFT v0.38 DefaultInstrumentationConfig and Evmos json-rpc metrics-address', () => {
    const o = loadOptions(home(), {});
    assert.deepEqual(o.instrumentation, { prometheus: false, prometheusListenAddr: ':26660', namespace: 'cometbft' });
    assert.equal(o.jsonRpc.metricsAddress, '127.0.0.1:6065');
    assert.equal(o.jsonRpc.enableMetrics, false);
    assert.equal(o.jsonRpc.nodePage, true);
  });

  it('reads config.toml [instrumentation] and app.toml keys; flags win', () => {
    const h = home({
      'config.toml': '[instrumentation]\nprometheus = true\nprometheus_listen_addr = "127.0.0.1:9999"\nnamespace = "ferry"\n',
      'app.toml': '[json-rpc]\nmetrics-address = "127.0.0.1:7000"\nnode-page = false\n',
    });
    const o = loadOptions(h, { 'instrumentation.namespace': 'x_1' });
    assert.deepEqual(o.instrumentation, { prometheus: true, prometheusListenAddr: '127.0.0.1:9999', namespace: 'x_1' });
    assert.equal(o.jsonRpc.metricsAddress, '127.0.0.1:7000');
    assert.equal(o.jsonRpc.nodePage, false);
  });

  it('refuses malformed addresses and metric prefixes, naming the key', () => {
    for (const [key, value] of [
      ['instrumentation.prometheus_listen_addr', 'localhost'],
      ['instrumentation.prometheus_listen_addr', ':99999'],
      ['instrumentation.namespace', '9lives'],
      ['instrumentation.namespace', 'a-b'],
      ['json-rpc.metrics-address', ':6065'],
    ]) {
      assert.throws(() => loadOptions(home(), { [key]: value }), (e: unknown) => e instanceof DomainError && e.is('badConfig') && e.detail.key === key, `${key}=${value}`);
    }
    assert.equal(loadOptions(home(), { 'instrumentation.namespace': '' }).instrumentation.namespace, '');
  });

  it('the config.toml template has the [instrumentation] table', () => {
    const text = renderConfigToml(defaultOptions('/h'));
    assert.match(text, /\[instrumentation\]\n\n# [^\n]+\nprometheus = false\n/);
    assert.match(text, /prometheus_listen_addr = ":26660"/);
    assert.match(text, /namespace = "cometbft"/);
  });
});
