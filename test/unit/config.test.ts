import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { formatHostPort, parseHostPort, parseLaddr } from '../../src/config/address.js';
import {
  DEV_ACCOUNT_BALANCE,
  addressOfPrivateKey,
  devAccounts,
} from '../../src/config/devaccounts.js';
import { checksumAddress } from '../../src/lib/address.js';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import {
  DEFAULT_CHAIN_ID,
  coinbaseOf,
  devGenesis,
  parseChainId,
  parseGenesis,
  renderGenesis,
  validatorAddress,
  type Genesis,
} from '../../src/config/genesis.js';
import { CONFIG_KEYS, parseMinimumGasPrices } from '../../src/config/keys.js';
import { defaultOptions, loadOptions } from '../../src/config/load.js';
import { DomainError } from '../../src/lib/errors.js';
import { DEFAULT_JSON_RPC, DEFAULT_RPC, type NodeOptions } from '../../src/config/options.js';
import { PREDEPLOYS } from '../../src/config/predeploys.js';
import { renderAppToml, renderConfigToml } from '../../src/config/templates.js';
import { clientVersion } from '../../src/config/version.js';
import { createLogger } from '../../src/lib/log.js';

const tmpRoot = mkdtempSync(join(tmpdir(), 'ferry-config-test-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));
let homeCount = 0;

/** A fresh home with the given config file contents. */
function home(files: { app?: string; config?: string } = {}): string {
  const dir = join(tmpRoot, `home${homeCount++}`);
  mkdirSync(join(dir, 'config'), { recursive: true });
  if (files.app !== undefined) writeFileSync(join(dir, 'config', 'app.toml'), files.app);
  if (files.config !== undefined) writeFileSync(join(dir, 'config', 'config.toml'), files.config);
  return dir;
}

/** Asserts loadOptions fails with a badConfig error naming `key` and containing `text`. */
function rejectsConfig(fn: () => unknown, key: string, text: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError && err.is('badConfig'), `not a badConfig error: ${String(err)}`);
    assert.equal(err.detail.key, key);
    assert.ok(err.message.includes(key), `message does not name ${key}: ${err.message}`);
    assert.ok(err.message.includes(text), `message lacks "${text}": ${err.message}`);
    return true;
  });
}

describe('loadOptions: defaults and precedence', () => {
  it('an empty home gives the defaults', () => {
    const h = home();
    const o = loadOptions(h, {});
    assert.deepEqual(o, defaultOptions(h));
    assert.equal(o.jsonRpc.address, '127.0.0.1:8545');
    assert.equal(o.jsonRpc.wsAddress, '0.0.0.0:8546');
    assert.deepEqual(o.jsonRpc.api, ['eth', 'net', 'web3']);
    assert.equal(o.jsonRpc.gasCap, 25_000_000n);
    assert.equal(o.jsonRpc.httpIdleTimeoutMs, 120_000);
    assert.equal(o.jsonRpc.httpBodyLimit, 5 * 1024 * 1024);
    assert.equal(o.rpc.laddr, 'tcp://127.0.0.1:26657');
    assert.equal(o.consensus.timeoutCommitMs, 1000);
    assert.equal(o.consensus.blockOnTx, false);
    assert.equal(o.logLevel, 'info');
    assert.equal(o.minimumGasPrice, 0n);
    assert.equal(o.minimumGasPriceFromFlag, false);
  });

  it('flag > file > default', () => {
    const h = home({
      app: '[json-rpc]\nlogs-cap = 50\napi = "eth,debug"\nevm-timeout = "1m30s"\n',
      config: '[consensus]\ntimeout_commit = "500ms"\n[rpc]\nmax_body_bytes = 2000\n',
    });
    const fileOnly = loadOptions(h, {});
    assert.equal(fileOnly.jsonRpc.logsCap, 50);
    assert.deepEqual(fileOnly.jsonRpc.api, ['eth', 'debug']);
    assert.equal(fileOnly.jsonRpc.evmTimeoutMs, 90_000);
    assert.equal(fileOnly.consensus.timeoutCommitMs, 500);
    assert.equal(fileOnly.rpc.maxBodyBytes, 2000);
    assert.equal(fileOnly.jsonRpc.filterCap, DEFAULT_JSON_RPC.filterCap);

    const flagged = loadOptions(h, {
      'json-rpc.logs-cap': '60',
      'json-rpc.api': 'eth,txpool,net',
      'consensus.timeout_commit': '2s',
      'consensus.block_on_tx': true,
      'json-rpc.enable': 'false',
      'log_level': 'debug',
      'json-rpc.filter-cap': undefined,
    });
    assert.equal(flagged.jsonRpc.logsCap, 60);
    assert.deepEqual(flagged.jsonRpc.api, ['eth', 'txpool', 'net']);
    assert.equal(flagged.consensus.timeoutCommitMs, 2000);
    assert.equal(flagged.consensus.blockOnTx, true);
    assert.equal(flagged.jsonRpc.enable, false);
    assert.equal(flagged.logLevel, 'debug');
    assert.equal(flagged.jsonRpc.evmTimeoutMs, 90_000, 'file value kept when no flag');
    assert.equal(flagged.jsonRpc.filterCap, DEFAULT_JSON_RPC.filterCap, 'undefined flag is skipped');
  });

  it('api accepts a TOML array too', () => {
    const o = loadOptions(home({ app: '[json-rpc]\napi = ["eth", "personal"]\n' }), {});
    assert.deepEqual(o.jsonRpc.api, ['eth', 'personal']);
  });

  it('minimum-gas-prices: file and flag, and minimumGasPriceFromFlag', () => {
    const h = home({ app: 'minimum-gas-prices = "7aferry"\n' });
    const file = loadOptions(h, {});
    assert.equal(file.minimumGasPrice, 7n);
    assert.equal(file.minimumGasPriceFromFlag, false);
    const flag = loadOptions(h, { 'minimum-gas-prices': '1000000000aferry' });
    assert.equal(flag.minimumGasPrice, 1_000_000_000n);
    assert.equal(flag.minimumGasPriceFromFlag, true);
    assert.equal(parseMinimumGasPrices('0aferry'), 0n);
    assert.equal(parseMinimumGasPrices(''), 0n);
    assert.equal(parseMinimumGasPrices('25.000aferry'), 25n);
    rejectsConfig(() => loadOptions(h, { 'minimum-gas-prices': '1uatom' }), 'minimum-gas-prices', 'unknown denom "uatom"');
    rejectsConfig(() => loadOptions(h, { 'minimum-gas-prices': '0.5aferry' }), 'minimum-gas-prices', 'whole number');
    rejectsConfig(() => loadOptions(h, { 'minimum-gas-prices': 'aferry' }), 'minimum-gas-prices', 'malformed');
    assert.equal(parseMinimumGasPrices(`${(2n ** 256n - 1n) / 21_000n}aferry`), (2n ** 256n - 1n) / 21_000n);
    rejectsConfig(() => loadOptions(h, { 'minimum-gas-prices': `${2n ** 256n - 1n}aferry` }), 'minimum-gas-prices', 'is above the maximum');
  });
});

describe('loadOptions: every validation error names the key', () => {
  const h = home();
  const cases: [string, unknown, string][] = [
    ['json-rpc.api', 'eth,foo', 'unknown namespace "foo"'],
    ['json-rpc.api', 'eth,net,eth', 'repeated API namespace "eth"'],
    ['json-rpc.api', '', 'cannot enable JSON-RPC without defining any API namespace'],
    ['json-rpc.address', 'x', 'malformed address "x"'],
    ['json-rpc.address', '127.0.0.1:70000', 'malformed address'],
    ['json-rpc.address', ':8545', 'malformed address'],
    ['json-rpc.ws-address', '256.0.0.1:1', 'malformed address'],
    ['rpc.laddr', '127.0.0.1:26657', 'malformed address'],
    ['rpc.laddr', 'unix:///tmp/x.sock', 'malformed address'],
    ['json-rpc.gas-cap', '-1', 'cannot be negative'],
    ['json-rpc.gas-cap', '18446744073709551616', 'too large'],
    ['json-rpc.filter-cap', '-1', 'cannot be negative'],
    ['json-rpc.feehistory-cap', '0', 'cannot be negative or 0'],
    ['json-rpc.logs-cap', '-1', 'cannot be negative'],
    ['json-rpc.block-range-cap', '-5', 'cannot be negative'],
    ['json-rpc.max-open-connections', '-1', 'cannot be negative'],
    ['json-rpc.batch-request-limit', '-1', 'cannot be negative'],
    ['json-rpc.batch-response-max-size', '-1', 'cannot be negative'],
    ['json-rpc.http-body-limit', '0', 'cannot be negative or 0'],
    ['json-rpc.logs-cap', '1.5', 'expected an integer'],
    ['json-rpc.evm-timeout', '-1s', 'cannot be negative'],
    ['json-rpc.http-timeout', '30', 'invalid duration'],
    ['json-rpc.http-idle-timeout', '2x', 'unknown unit "x"'],
    ['json-rpc.enable', 'yes', 'expected true or false'],
    ['consensus.timeout_commit', 'soon', 'invalid duration'],
    ['consensus.block_on_tx', 'maybe', 'expected true or false'],
    ['rpc.max_body_bytes', '0', 'cannot be negative or 0'],
    ['mempool.size', '-3', 'cannot be negative'],
    ['log_level', 'trace', 'unknown level "trace"'],
    ['json-rpc.client-version-prefix', 'anvil v1', 'is not a client name'],
    ['json-rpc.client-version-prefix', 'a'.repeat(33), 'at most 32'],
  ];
  for (const [key, value, text] of cases) {
    it(`--${key}=${String(value)}`, () => rejectsConfig(() => loadOptions(h, { [key]: value }), key, text));
  }

  it('json-rpc.client-version-prefix puts a name before web3_clientVersion', () => {
    assert.equal(loadOptions(h, {}).jsonRpc.clientVersionPrefix, '');
    assert.equal(loadOptions(h, { 'json-rpc.client-version-prefix': 'anvil' }).jsonRpc.clientVersionPrefix, 'anvil');
    assert.equal(clientVersion('anvil'), `anvil/${clientVersion()}`);
  });

  it('the json-rpc messages carry Evmos prefix', () => {
    assert.throws(
      () => loadOptions(h, { 'json-rpc.logs-cap': -1 }),
      { message: 'invalid json-rpc config value: json-rpc.logs-cap cannot be negative' },
    );
  });

  it('bad file values name the key', () => {
    rejectsConfig(() => loadOptions(home({ app: '[json-rpc]\nlogs-cap = -2\n' }), {}), 'json-rpc.logs-cap', 'cannot be negative');
    rejectsConfig(() => loadOptions(home({ app: '[json-rpc]\nfilter-cap = "many"\n' }), {}), 'json-rpc.filter-cap', 'expected an integer');
    rejectsConfig(() => loadOptions(home({ app: '[json-rpc]\nevm-timeout = 5\n' }), {}), 'json-rpc.evm-timeout', 'expected a duration');
    rejectsConfig(() => loadOptions(home({ config: '[rpc]\nladdr = "x"\n' }), {}), 'rpc.laddr', 'malformed address');
    rejectsConfig(() => loadOptions(home({ app: '[json-rpc]\nlogz-cap = 1\n' }), {}), 'json-rpc.logz-cap', 'unknown key');
    rejectsConfig(() => loadOptions(home({ config: 'moniker = "x"\n' }), {}), 'moniker', 'unknown key');
    rejectsConfig(() => loadOptions(home({ app: 'json-rpc = 3\n' }), {}), 'json-rpc', 'must be a table');
    rejectsConfig(() => loadOptions(home({ app: '[json-rpc\n' }), {}), 'app.toml', 'cannot read');
  });

  it('an unknown flag is an error', () => {
    rejectsConfig(() => loadOptions(h, { 'json-rpc.bogus': '1' }), 'json-rpc.bogus', 'unknown flag');
  });
});

describe('templates', () => {
  it('the rendered defaults load back as the defaults', () => {
    const defaults = defaultOptions('/unused');
    const h = home({ app: renderAppToml(defaults), config: renderConfigToml(defaults) });
    assert.deepEqual(loadOptions(h, {}), defaultOptions(h));
  });

  it('non-default values survive render → load', () => {
    const o: NodeOptions = defaultOptions('/unused');
    o.minimumGasPrice = 123n;
    o.logLevel = 'warn';
    o.jsonRpc = { ...o.jsonRpc, enable: false, api: ['eth', 'debug', 'txpool'], gasCap: 0n, evmTimeoutMs: 1500, httpIdleTimeoutMs: 3_723_000, logsCap: 7 };
    o.rpc = { ...o.rpc, corsAllowedOrigins: ['*', 'http://a.example'], timeoutBroadcastTxCommitMs: 250, unsafe: true };
    o.consensus = { timeoutCommitMs: 200, createEmptyBlocks: false, blockOnTx: true };
    o.mempool = { size: 5, maxTxBytes: 999, priceBumpPercent: 12, accountQueue: 3 };
    const h = home({ app: renderAppToml(o), config: renderConfigToml(o) });
    assert.deepEqual(loadOptions(h, {}), { ...o, home: h });
  });

  it('every key is in a template with a comment', () => {
    const defaults = defaultOptions('/unused');
    const app = renderAppToml(defaults);
    const cfg = renderConfigToml(defaults);
    for (const k of CONFIG_KEYS) {
      const text = k.file === 'app.toml' ? app : cfg;
      assert.ok(text.includes(`# ${k.help}\n${k.key} = `), `${k.name} missing`);
    }
    assert.ok(app.includes('[json-rpc]\n'));
    assert.ok(cfg.includes('max_subscriptions_per_client = 5\n'));
    assert.ok(cfg.includes('timeout_broadcast_tx_commit = "10s"\n'));
    assert.equal(DEFAULT_RPC.maxRequestBatchSize, 10);
  });
});

describe('durations', () => {
  it('parses Go duration strings to milliseconds', () => {
    const cases: [string, number][] = [
      ['5s', 5000], ['2m0s', 120_000], ['1m30s', 90_000], ['500ms', 500], ['0', 0], ['0s', 0],
      ['1h', 3_600_000], ['1.5s', 1500], ['.5s', 500], ['1h2m3s4ms', 3_723_004], ['100us', 0.1],
      ['100µs', 0.1], ['2000000ns', 2], ['-1s', -1000], ['+2s', 2000],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });
  it('rejects malformed durations', () => {
    for (const text of ['', '5', '5x', 's', '1.2.3s', ' 5s', '5s ', '--1s', '1d']) {
      assert.throws(() => parseDuration(text), Error, text);
    }
  });
  it('formats like Go Duration.String()', () => {
    const cases: [number, string][] = [
      [0, '0s'], [500, '500ms'], [5000, '5s'], [120_000, '2m0s'], [90_500, '1m30.5s'], [3_600_000, '1h0m0s'],
      [0.5, '500µs'], [-1000, '-1s'],
    ];
    for (const [ms, text] of cases) {
      assert.equal(formatDuration(ms), text);
      assert.equal(parseDuration(text), ms);
    }
  });
});

describe('addresses', () => {
  it('host:port and tcp://host:port', () => {
    assert.deepEqual(parseHostPort('127.0.0.1:8545'), { host: '127.0.0.1', port: 8545 });
    assert.deepEqual(parseHostPort('localhost:0'), { host: 'localhost', port: 0 });
    assert.deepEqual(parseHostPort('[::1]:8546'), { host: '::1', port: 8546 });
    assert.equal(formatHostPort({ host: '::1', port: 1 }), '[::1]:1');
    assert.deepEqual(parseLaddr('tcp://0.0.0.0:26657'), { host: '0.0.0.0', port: 26657 });
    for (const bad of ['8545', 'host:', 'host:port', '::1:80', 'a b:1', '1.2.3.4:65536', 'http://x:1']) {
      assert.equal(parseHostPort(bad), undefined, bad);
    }
    assert.equal(parseLaddr('127.0.0.1:26657'), undefined);
  });
});

describe('chain id', () => {
  it('takes the EVM chain id from {name}_{id}-{epoch}', () => {
    assert.equal(parseChainId('ferry_9000-1'), 9000n);
    assert.equal(parseChainId('evmos_9001-2'), 9001n);
    assert.equal(parseChainId(DEFAULT_CHAIN_ID), 9000n);
  });
  it('rejects anything else, naming the chain id', () => {
    for (const bad of ['ferry-1', 'ferry_9000', 'Ferry_9000-1', 'ferry_0-1', 'ferry_09-1', 'ferry_9000-0', 'ferry_9000-1 ', '_1-1', 'a'.repeat(48) + '_1-1']) {
      assert.throws(() => parseChainId(bad), (e: unknown) => e instanceof DomainError && e.is('badConfig') && e.message.includes(JSON.stringify(bad)), bad);
    }
  });
});

describe('dev accounts', () => {
  it('account 0 and 1 are the Hardhat/Anvil accounts', () => {
    const [a0, a1] = devAccounts(2);
    assert.equal(checksumAddress(a0!.address), '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    assert.equal(Buffer.from(a0!.privateKey).toString('hex'), 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
    assert.equal(checksumAddress(a1!.address), '0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });
  it('ten distinct accounts, address derived from the key', () => {
    const accounts = devAccounts();
    assert.equal(accounts.length, 10);
    assert.equal(checksumAddress(accounts[9]!.address), '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
    assert.equal(new Set(accounts.map((a) => checksumAddress(a.address))).size, 10);
    for (const a of accounts) assert.deepEqual(addressOfPrivateKey(a.privateKey), a.address);
  });
});

describe('genesis', () => {
  const pubKey = new Uint8Array(32).map((_, i) => i + 1);

  function sample(): Genesis {
    const g = devGenesis({ chainId: 'ferry_777-1', validatorPubKey: pubKey, genesisTime: '2024-05-01T12:00:00.123456789Z' });
    g.evm.alloc.set('0x' + 'ab'.repeat(20), {
      balance: 5n,
      nonce: 3n,
      code: new Uint8Array([0x60, 0x00]),
      storage: new Map([['0x' + '00'.repeat(31) + '01', new Uint8Array(32).fill(9)]]),
    });
    return g;
  }

  it('the dev genesis: 10 funded accounts, the predeploys, one validator, derived coinbase', () => {
    const g = devGenesis({ validatorPubKey: pubKey });
    assert.equal(g.chainId, 'ferry_9000-1');
    assert.equal(g.evmChainId, 9000n);
    assert.equal(g.evm.alloc.size, 10 + PREDEPLOYS.length);
    for (const p of PREDEPLOYS) {
      const a = g.evm.alloc.get(p.address.toLowerCase());
      assert.equal(Buffer.from(a?.code ?? []).toString('hex'), p.code, p.name);
      assert.equal(a?.balance, 0n);
      assert.equal(a?.nonce, p.nonce);
    }
    assert.equal(g.evm.alloc.get('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')?.balance, DEV_ACCOUNT_BALANCE);
    assert.equal(DEV_ACCOUNT_BALANCE, 10_000n * 10n ** 18n);
    assert.equal(g.validators.length, 1);
    assert.deepEqual(g.validators[0]!.address, validatorAddress(pubKey));
    assert.deepEqual(g.evm.coinbase, keccak_256(pubKey).subarray(12));
    assert.deepEqual(coinbaseOf(pubKey), g.evm.coinbase);
    assert.equal(g.evm.hardfork, 'cancun');
    assert.equal(g.maxGas, 60_000_000n);
  });

  it('round trip: render → parse → render', () => {
    const g = sample();
    const text = renderGenesis(g);
    const parsed = parseGenesis(text);
    assert.deepEqual(parsed, g);
    assert.equal(renderGenesis(parsed), text);
    const doc = JSON.parse(text);
    assert.equal(doc.initial_height, '1');
    assert.equal(doc.consensus_params.block.max_gas, '60000000');
    assert.equal(doc.validators[0].address, Buffer.from(validatorAddress(pubKey)).toString('hex').toUpperCase());
    assert.equal(doc.validators[0].pub_key.type, 'tendermint/PubKeyEd25519');
    assert.equal(doc.validators[0].power, '10');
    assert.equal(doc.app_state.evm.base_fee_per_gas, '1000000000');
    assert.equal(doc.app_state.evm.alloc['0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'].balance, '0x21e19e0c9bab2400000');
    assert.deepEqual(doc.app_state.evm.alloc['0x' + 'ab'.repeat(20)], {
      balance: '0x5', nonce: '0x3', code: '0x6000', storage: { ['0x' + '00'.repeat(31) + '01']: '0x' + '09'.repeat(32) },
    });
  });

  it('accepts geth-style decimal balances and checksummed addresses, fills optional fields', () => {
    const doc = JSON.parse(renderGenesis(sample()));
    delete doc.app_state.evm.hardfork;
    delete doc.app_state.evm.coinbase;
    delete doc.consensus_params.evidence;
    doc.app_state.evm.alloc = { '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266': { balance: '1000' } };
    const g = parseGenesis(doc);
    assert.equal(g.evm.hardfork, 'cancun');
    assert.deepEqual(g.evm.coinbase, coinbaseOf(pubKey));
    assert.deepEqual([...g.evm.alloc.keys()], ['0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266']);
    assert.equal(g.evm.alloc.get('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')!.balance, 1000n);
  });

  it('errors name the field', () => {
    const base = (): Record<string, any> => JSON.parse(renderGenesis(sample()));
    const cases: [(d: Record<string, any>) => void, string][] = [
      [(d) => delete d.chain_id, 'chain_id'],
      [(d) => (d.chain_id = 'ferry'), 'chain_id'],
      [(d) => (d.genesis_time = 'yesterday'), 'genesis_time'],
      [(d) => (d.initial_height = 1), 'initial_height'],
      [(d) => (d.initial_height = '0'), 'initial_height'],
      [(d) => (d.consensus_params.block.max_gas = '-1'), 'consensus_params.block.max_gas'],
      [(d) => (d.consensus_params.block.max_bytes = '104857601'), 'consensus_params.block.max_bytes'],
      [(d) => (d.consensus_params.validator.pub_key_types = ['secp256k1']), 'consensus_params.validator'],
      [(d) => (d.validators = []), 'validators'],
      [(d) => (d.validators[0].address = '00'.repeat(20)), 'validators[0].address'],
      [(d) => (d.validators[0].pub_key.value = 'AAAA'), 'validators[0].pub_key.value'],
      [(d) => (d.validators[0].power = '0'), 'validators[0].power'],
      [(d) => (d.app_hash = 'AB'), 'app_hash'],
      [(d) => (d.extra = 1), 'extra'],
      [(d) => (d.app_state.bank = {}), 'app_state.bank'],
      [(d) => (d.app_state.evm.hardfork = 'london'), 'app_state.evm.hardfork'],
      [(d) => (d.app_state.evm.coinbase = '0x12'), 'app_state.evm.coinbase'],
      [(d) => (d.app_state.evm.base_fee_per_gas = 'lots'), 'app_state.evm.base_fee_per_gas'],
      [(d) => (d.app_state.evm.alloc = { '0x12': { balance: '0x1' } }), 'app_state.evm.alloc.0x12'],
      [(d) => (d.app_state.evm.alloc = { ['0x' + 'ab'.repeat(20)]: { balance: '0xzz' } }), `app_state.evm.alloc.0x${'ab'.repeat(20)}.balance`],
      [(d) => (d.app_state.evm.alloc = { ['0x' + 'ab'.repeat(20)]: { balance: '0x1', code: '0x123' } }), `app_state.evm.alloc.0x${'ab'.repeat(20)}.code`],
      [(d) => (d.app_state.evm.alloc = { ['0x' + 'ab'.repeat(20)]: { balance: '0x1', storage: { '0x01': '0x' + '00'.repeat(32) } } }), `app_state.evm.alloc.0x${'ab'.repeat(20)}.storage.0x01`],
      [(d) => (d.app_state.evm.alloc = { ['0x' + 'ab'.repeat(20)]: { balance: '0x1' }, ['0x' + 'AB'.repeat(20)]: { balance: '0x1' } }), `app_state.evm.alloc.0x${'AB'.repeat(20)}`],
    ];
    for (const [mutate, field] of cases) {
      const d = base();
      mutate(d);
      assert.throws(
        () => parseGenesis(JSON.stringify(d)),
        (e: unknown) => e instanceof DomainError && e.is('badConfig') && e.detail.key === field && e.message.includes(`${field}:`),
        field,
      );
    }
    assert.throws(() => parseGenesis('{'), { kind: 'badConfig' });
  });

  it('renderGenesis refuses an evmChainId that does not match the chain id', () => {
    const g = sample();
    g.evmChainId = 1n;
    assert.throws(() => renderGenesis(g), { kind: 'badConfig' });
  });
});

describe('version', () => {
  it('clientVersion is ferry/<version>+<commit>/<os>-<arch>/node<version>', () => {
    const v = clientVersion();
    assert.match(v, /^ferry\/\d+\.\d+\.\d+\+([0-9a-f]{4,40}|unknown)\/[a-z0-9]+-[a-z0-9]+\/node\d+\.\d+\.\d+$/);
    assert.ok(v.endsWith(`/${process.platform}-${process.arch}/node${process.versions.node}`));
  });
});

describe('logger', () => {
  it('writes JSON lines at or above the level, with bindings, redacting key material', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (l) => void lines.push(l) } });
    log.debug('hidden');
    log.info({ privateKey: 'ac09', nested: { mnemonic: 'test test' }, n: 1 }, 'hello');
    log.child({ module: 'x' }).warn('careful');
    assert.equal(lines.length, 2);
    const first = JSON.parse(lines[0]!);
    assert.equal(first.msg, 'hello');
    assert.equal(first.level, 'info');
    assert.equal(first.privateKey, '[redacted]');
    assert.equal(first.nested.mnemonic, '[redacted]');
    assert.equal(first.n, 1);
    assert.ok(!lines[0]!.includes('ac09'));
    const second = JSON.parse(lines[1]!);
    assert.equal(second.module, 'x');
    assert.equal(second.level, 'warn');
  });
});
