/**
 * Authentication of the private namespaces (src/server/auth.ts): HS256 JWTs with geth's ±60 s
 * issued-at window, the bearer header, the refusal to expose personal/miner without auth off
 * loopback; and the app.toml edit miner_setGasPrice makes.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { withMinimumGasPrices } from '../../src/config/keys.js';
import { DomainError } from '../../src/lib/errors.js';
import {
  JWT_IAT_WINDOW_SECONDS,
  checkPrivateExposure,
  createAuthenticator,
  formatJwtSecret,
  generateJwtSecret,
  isLoopbackHost,
  jwtProblem,
  makeJwt,
  parseJwtSecret,
} from '../../src/server/auth.js';

const secret = generateJwtSecret();
const NOW = 1_700_000_000;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A token signed by hand (not with makeJwt), so the verifier is checked against the JWT format itself. */
function handToken(header: unknown, claims: unknown, key: Uint8Array = secret): string {
  const signing = `${b64(header)}.${b64(claims)}`;
  return `${signing}.${createHmac('sha256', key).update(signing).digest('base64url')}`;
}

describe('JWT (HS256, iat within ±60 s)', () => {
  it('accepts a fresh token, made by hand or by makeJwt', () => {
    assert.equal(jwtProblem(handToken({ alg: 'HS256', typ: 'JWT' }, { iat: NOW }), secret, NOW), undefined);
    assert.equal(jwtProblem(makeJwt(secret, NOW), secret, NOW + JWT_IAT_WINDOW_SECONDS), undefined);
    assert.equal(jwtProblem(makeJwt(secret, NOW), secret, NOW - JWT_IAT_WINDOW_SECONDS), undefined);
  });

  it('refuses stale, future, expired, unsigned, wrongly signed and malformed tokens', () => {
    assert.equal(jwtProblem(makeJwt(secret, NOW - 61), secret, NOW), 'stale token');
    assert.equal(jwtProblem(makeJwt(secret, NOW + 61), secret, NOW), 'token issued in the future');
    assert.equal(jwtProblem(makeJwt(secret, NOW, { exp: NOW - 1 }), secret, NOW), 'token expired');
    assert.equal(jwtProblem(makeJwt(generateJwtSecret(), NOW), secret, NOW), 'invalid token signature');
    assert.equal(jwtProblem(handToken({ alg: 'none' }, { iat: NOW }), secret, NOW), 'token algorithm must be HS256');
    assert.equal(jwtProblem(`${b64({ alg: 'none' })}.${b64({ iat: NOW })}.`, secret, NOW), 'token algorithm must be HS256');
    assert.equal(jwtProblem(handToken({ alg: 'HS512' }, { iat: NOW }), secret, NOW), 'token algorithm must be HS256');
    assert.equal(jwtProblem(handToken({ alg: 'HS256' }, { sub: 'x' }), secret, NOW), 'missing issued-at');
    assert.equal(jwtProblem('abc', secret, NOW), 'malformed token');
    assert.equal(jwtProblem('a.b.c.d', secret, NOW), 'malformed token');
    const good = makeJwt(secret, NOW);
    assert.equal(jwtProblem(good.slice(0, -2) + (good.endsWith('AA') ? 'BA' : 'AA'), secret, NOW), 'invalid token signature');
  });

  it('the authenticate hook reads `Authorization: Bearer <token>`', () => {
    const auth = createAuthenticator(secret, () => NOW * 1000);
    const token = makeJwt(secret, NOW);
    assert.equal(auth({ authorization: `Bearer ${token}` }), true);
    assert.equal(auth({ authorization: `bearer ${token}` }), true);
    assert.equal(auth({}), false);
    assert.equal(auth({ authorization: token }), false);
    assert.equal(auth({ authorization: `Basic ${token}` }), false);
    assert.equal(auth({ authorization: `Bearer ${makeJwt(secret, NOW - 120)}` }), false);
  });

  it('secret files: 0x + 64 hex digits, whitespace tolerated', () => {
    const text = formatJwtSecret(secret);
    assert.match(text, /^0x[0-9a-f]{64}$/);
    assert.deepEqual(parseJwtSecret(`  ${text}\n`), secret);
    assert.deepEqual(parseJwtSecret(text.slice(2)), secret);
    assert.throws(() => parseJwtSecret('0x1234'), /expected 32 bytes/);
  });
});

describe('exposure of the private namespaces', () => {
  const loopback = [
    { key: 'json-rpc.address', address: '127.0.0.1:8545' },
    { key: 'json-rpc.ws-address', address: '[::1]:8546' },
  ];

  it('loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com']) assert.equal(isLoopbackHost(h), false, h);
  });

  it('without auth, personal or miner may only be served on loopback listeners', () => {
    checkPrivateExposure({ api: ['eth', 'personal', 'miner'], privateApiAuth: false, listeners: loopback });
    checkPrivateExposure({ api: ['eth', 'personal'], privateApiAuth: true, listeners: [{ key: 'json-rpc.address', address: '0.0.0.0:8545' }] });
    checkPrivateExposure({ api: ['eth', 'txpool'], privateApiAuth: false, listeners: [{ key: 'json-rpc.address', address: '0.0.0.0:8545' }] });
    assert.throws(
      () =>
        checkPrivateExposure({
          api: ['eth', 'personal'],
          privateApiAuth: false,
          listeners: [...loopback, { key: 'json-rpc.ws-address', address: '0.0.0.0:8546' }],
        }),
      (e: unknown) =>
        e instanceof DomainError && e.is('badConfig') && e.detail.key === 'json-rpc.private-api-auth' && /json-rpc\.ws-address 0\.0\.0\.0:8546/.test(e.message) && /personal/.test(e.message),
    );
  });
});

describe('miner_setGasPrice app.toml edit', () => {
  it('replaces the top-level key and keeps everything else', () => {
    const text = '# c\nminimum-gas-prices = "0aferry"\n\n[json-rpc]\n# keep\nminimum-gas-prices = "x"\n';
    assert.equal(withMinimumGasPrices(text, 7n), '# c\nminimum-gas-prices = "7aferry"\n\n[json-rpc]\n# keep\nminimum-gas-prices = "x"\n');
  });

  it('adds the key above the first table when missing', () => {
    assert.equal(withMinimumGasPrices('# c\n[json-rpc]\napi = "eth"\n', 5n), '# c\nminimum-gas-prices = "5aferry"\n\n[json-rpc]\napi = "eth"\n');
  });
});
