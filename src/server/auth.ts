/**
 * Authentication of the private namespaces (personal, miner): a JWT bearer token, HS256 with the
 * 32-byte secret in `<home>/config/jwt.hex`, as geth's authenticated RPC does it.
 *
 * - HTTP: `Authorization: Bearer <token>` on every request. WebSocket: the same header on the
 *   handshake, which authenticates the whole connection.
 * - The token's `iat` (issued-at, seconds) must be within ±JWT_IAT_WINDOW_SECONDS of the node's
 *   clock (geth's rule: tokens are made fresh per request and cannot be replayed later); an `exp`,
 *   when present, must not have passed. The header's `alg` must be HS256.
 * - A request without a valid token still reaches the public namespaces; a private method answers
 *   -32001 unauthorized (src/jsonrpc/errors.ts) and does nothing.
 *
 * The secret file holds `0x` + 64 hex digits (geth's format; whitespace and a missing `0x` are
 * accepted when reading). `ferry auth token` prints a fresh token for scripts.
 */
import { badConfig } from '../lib/errors.js';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';

export const JWT_SECRET_FILE = 'jwt.hex';
export const JWT_SECRET_LENGTH = 32;
/** geth's jwtExpiryTimeout */
export const JWT_IAT_WINDOW_SECONDS = 60;
/** longer Authorization values are not looked at */
export const MAX_TOKEN_LENGTH = 4096;
/** the config key that turns token checks off (loopback listeners only) */
export const PRIVATE_AUTH_KEY = 'json-rpc.private-api-auth';
/** namespaces that need a token */
export const PRIVATE_NAMESPACES: readonly string[] = ['personal', 'miner', 'evm', 'anvil', 'hardhat'];

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export function generateJwtSecret(): Uint8Array {
  return new Uint8Array(randomBytes(JWT_SECRET_LENGTH));
}

/** The file text of a secret: `0x` + hex, as geth writes it. */
export function formatJwtSecret(secret: Uint8Array): string {
  return '0x' + Buffer.from(secret).toString('hex');
}

/** Parses a secret file's text; throws Error with the reason. */
export function parseJwtSecret(text: string): Uint8Array {
  const t = text.trim();
  const digits = t.startsWith('0x') || t.startsWith('0X') ? t.slice(2) : t;
  if (!/^[0-9a-fA-F]*$/.test(digits) || digits.length !== JWT_SECRET_LENGTH * 2) {
    throw new Error(`expected ${JWT_SECRET_LENGTH} bytes as hex (0x + ${JWT_SECRET_LENGTH * 2} digits)`);
  }
  return new Uint8Array(Buffer.from(digits, 'hex'));
}

/** Reads `<home>/config/jwt.hex`; a missing or malformed file is a badConfig error naming it. */
export function readJwtSecret(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw badConfig(JWT_SECRET_FILE, `cannot read the JWT secret ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return parseJwtSecret(text);
  } catch (e) {
    throw badConfig(JWT_SECRET_FILE, `malformed JWT secret ${path}: ${(e as Error).message}`);
  }
}

const b64url = (b: Uint8Array | string): string => Buffer.from(b).toString('base64url');

function hmac(secret: Uint8Array, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest();
}

/** An HS256 token with `iat` = `iatSeconds` (default: now) and any extra claims. */
export function makeJwt(secret: Uint8Array, iatSeconds = Math.floor(Date.now() / 1000), claims: Record<string, unknown> = {}): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ iat: iatSeconds, ...claims }));
  return `${head}.${body}.${b64url(hmac(secret, `${head}.${body}`))}`;
}

function parseJsonPart(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a token is not valid, or undefined when it is. */
export function jwtProblem(token: string, secret: Uint8Array, nowSeconds: number): string | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return 'token too long';
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) return 'malformed token';
  const [head, body, sig] = parts as [string, string, string];
  const header = parseJsonPart(head);
  if (header === undefined) return 'malformed token header';
  if (header.alg !== 'HS256') return 'token algorithm must be HS256';
  const given = Buffer.from(sig, 'base64url');
  const want = hmac(secret, `${head}.${body}`);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return 'invalid token signature';
  const claims = parseJsonPart(body);
  if (claims === undefined) return 'malformed token claims';
  const iat = claims.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'missing issued-at';
  if (iat > nowSeconds + JWT_IAT_WINDOW_SECONDS) return 'token issued in the future';
  if (iat < nowSeconds - JWT_IAT_WINDOW_SECONDS) return 'stale token';
  if (claims.exp !== undefined && (typeof claims.exp !== 'number' || claims.exp <= nowSeconds)) return 'token expired';
  return undefined;
}

/** The bearer token of an Authorization header value, if any. */
function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (typeof h !== 'string' || h.length > MAX_TOKEN_LENGTH + 16) return undefined;
  return BEARER.exec(h)?.[1];
}

/** The transports' `authenticate(headers)` hook: true when the request carries a valid token. */
export function createAuthenticator(secret: Uint8Array, now: () => number = Date.now): (headers: IncomingHttpHeaders) => boolean {
  return (headers) => {
    const token = bearerToken(headers);
    return token !== undefined && jwtProblem(token, secret, Math.floor(now() / 1000)) === undefined;
  };
}

/** The transports' hook when token checks are off: every request counts as authenticated. */
export const allowAll = (): boolean => true;

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * Refuses to start a node that would serve personal or miner without tokens on a listener other
 * machines can reach. `listeners` are the JSON-RPC addresses (host:port) with their config keys.
 */
export function checkPrivateExposure(o: {
  api: readonly string[];
  privateApiAuth: boolean;
  listeners: readonly { key: string; address: string }[];
}): void {
  if (o.privateApiAuth) return;
  const exposed = o.api.filter((ns) => PRIVATE_NAMESPACES.includes(ns));
  if (exposed.length === 0) return;
  for (const l of o.listeners) {
    const host = l.address.slice(0, l.address.lastIndexOf(':'));
    if (!isLoopbackHost(host)) {
      throw badConfig(
        PRIVATE_AUTH_KEY,
        `refusing to serve ${exposed.join(' and ')} without authentication on ${l.key} ${l.address}, which is not a loopback address: ` +
          `set ${PRIVATE_AUTH_KEY} = true (clients then send a JWT, see \`ferry auth token\`) or bind ${l.key} to 127.0.0.1`,
      );
    }
  }
}
