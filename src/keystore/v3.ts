/**
 * Web3 Secret Storage v3 key files (https://ethereum.org/developers/docs/data-structures-and-encoding/web3-secret-storage):
 * a key derived from the passphrase (scrypt, or pbkdf2-hmac-sha256 when reading other tools' files),
 * AES-128-CTR with the first 16 bytes of it, and a MAC = keccak256(derivedKey[16..32] ‖ ciphertext).
 * Files written here use geth's standard scrypt parameters (N = 2^18, r = 8, p = 1), so geth,
 * ethers (`Wallet.fromEncryptedJson`), web3.js and clef read them.
 *
 * Key derivation runs off the event loop (node:crypto's scrypt and pbkdf2 run on the libuv pool) and
 * at most MAX_CONCURRENT_KDF at a time (a standard scrypt needs 256 MiB); at most KDF_QUEUE_MAX wait.
 *
 * Passphrases are used as their UTF-8 bytes (geth). A file another tool wrote from the NFKC form of
 * a passphrase (ethers normalises) also opens: when the MAC does not match and the NFKC form
 * differs, that form is tried too.
 */
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { concatBytes } from '../lib/bytes.js';
import { corrupt, invalidRequest, limitExceeded, unavailable, type DomainError } from '../lib/errors.js';
import { ADDRESS_LENGTH, PRIVATE_KEY_LENGTH, checkPrivateKey, isValidPrivateKey, keccak256, privateKeyToAddress } from './crypto.js';

export const KEY_FILE_VERSION = 3;
export const CIPHER = 'aes-128-ctr';
const CIPHER_KEY_LENGTH = 16;
const IV_LENGTH = 16;
const SALT_LENGTH = 32;
/** derived key: 16 bytes AES key ‖ 16 bytes MAC key */
export const DERIVED_KEY_LENGTH = 32;

export interface ScryptParams {
  /** CPU/memory cost, a power of two */
  n: number;
  r: number;
  p: number;
}

/** geth's StandardScryptN / StandardScryptP */
export const STANDARD_SCRYPT: Readonly<ScryptParams> = Object.freeze({ n: 1 << 18, r: 8, p: 1 });
/** scrypt needs 128·N·r bytes; files asking for more are refused (the standard needs 256 MiB) */
export const MAX_SCRYPT_MEMORY = 512 * 1024 * 1024;
/** bounds scrypt's CPU cost for files from elsewhere */
export const MAX_SCRYPT_P = 16;
/** bounds pbkdf2's CPU cost for files from elsewhere (geth writes 262144) */
export const MAX_PBKDF2_ITERATIONS = 1 << 24;
const PBKDF2_PRF = 'hmac-sha256';
/** key derivations running at once */
export const MAX_CONCURRENT_KDF = 1;
/** key derivations waiting; more are refused with `key store busy` */
export const KDF_QUEUE_MAX = 32;

/** geth keystore.ErrDecrypt */
export const DECRYPT_ERROR = 'could not decrypt key with given password';


export interface KeyFileJson {
  address: string;
  crypto: {
    cipher: string;
    ciphertext: string;
    cipherparams: { iv: string };
    kdf: string;
    kdfparams: Record<string, unknown>;
    mac: string;
  };
  id: string;
  version: number;
}

type Kdf = { kind: 'scrypt'; n: number; r: number; p: number; salt: Buffer } | { kind: 'pbkdf2'; c: number; salt: Buffer };

interface ParsedKeyFile {
  /** from the file's `address` field, when present */
  address: Uint8Array | undefined;
  kdf: Kdf;
  iv: Buffer;
  ciphertext: Buffer;
  mac: Buffer;
}

// --- bounded key-derivation queue ------------------------------------------------------------

let running = 0;
const waiting: (() => void)[] = [];

async function withKdfSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_KDF) {
    if (waiting.length >= KDF_QUEUE_MAX) throw limitExceeded('key store busy: too many key derivations waiting, try again');
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running++;
  }
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next(); // the slot passes on
    else running--;
  }
}

/**
 * OpenSSL enforces RFC 7914's N < 2^(16·r), which some files break (Web3 Secret Storage's own test
 * vector has r = 1, N = 2^18); geth and ethers accept them, so @noble/hashes derives those.
 */
function opensslAccepts(n: number, r: number): boolean {
  return 16 * r >= 32 || n < 2 ** (16 * r);
}

function deriveKey(passphrase: Buffer, kdf: Kdf): Promise<Buffer> {
  return withKdfSlot(async () => {
    if (kdf.kind === 'scrypt' && !opensslAccepts(kdf.n, kdf.r)) {
      const maxmem = 128 * kdf.r * (kdf.n + kdf.p + 2);
      return Buffer.from(await scryptAsync(passphrase, kdf.salt, { N: kdf.n, r: kdf.r, p: kdf.p, dkLen: DERIVED_KEY_LENGTH, maxmem }));
    }
    return new Promise<Buffer>((resolve, reject) => {
      const done = (err: Error | null, key: Buffer) => (err ? reject(unavailable(`key derivation failed: ${err.message}`)) : resolve(key));
      try {
        if (kdf.kind === 'scrypt') {
          const maxmem = 128 * kdf.r * (kdf.n + kdf.p + 2) + 1024 * 1024;
          scrypt(passphrase, kdf.salt, DERIVED_KEY_LENGTH, { N: kdf.n, r: kdf.r, p: kdf.p, maxmem }, done);
        } else {
          pbkdf2(passphrase, kdf.salt, kdf.c, DERIVED_KEY_LENGTH, 'sha256', done);
        }
      } catch (e) {
        reject(unavailable(`key derivation failed: ${(e as Error).message}`));
      }
    });
  });
}

function macOf(derived: Buffer, ciphertext: Buffer): Buffer {
  return Buffer.from(keccak256(concatBytes(derived.subarray(CIPHER_KEY_LENGTH, DERIVED_KEY_LENGTH), ciphertext)));
}

// --- writing ----------------------------------------------------------------------------------

/** Encrypts a private key with a passphrase into a v3 key file (geth's field names and order). */
export async function encryptKey(privateKey: Uint8Array, passphrase: string, params: ScryptParams = STANDARD_SCRYPT): Promise<KeyFileJson> {
  checkPrivateKey(privateKey);
  const salt = randomBytes(SALT_LENGTH);
  const iv = randomBytes(IV_LENGTH);
  const derived = await deriveKey(Buffer.from(passphrase, 'utf8'), { kind: 'scrypt', ...params, salt });
  const cipher = createCipheriv(CIPHER, derived.subarray(0, CIPHER_KEY_LENGTH), iv);
  const ciphertext = Buffer.concat([cipher.update(privateKey), cipher.final()]);
  const mac = macOf(derived, ciphertext);
  derived.fill(0);
  return {
    address: Buffer.from(privateKeyToAddress(privateKey)).toString('hex'),
    crypto: {
      cipher: CIPHER,
      ciphertext: ciphertext.toString('hex'),
      cipherparams: { iv: iv.toString('hex') },
      kdf: 'scrypt',
      kdfparams: { dklen: DERIVED_KEY_LENGTH, n: params.n, p: params.p, r: params.r, salt: salt.toString('hex') },
      mac: mac.toString('hex'),
    },
    id: randomUUID(),
    version: KEY_FILE_VERSION,
  };
}

// --- reading ----------------------------------------------------------------------------------

function invalid(reason: string): DomainError<'corrupt'> {
  return corrupt(`invalid key file: ${reason}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field by exact name, else case-insensitively (MyEtherWallet writes `Crypto`). */
function field(obj: Record<string, unknown>, name: string): unknown {
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

function hexField(obj: Record<string, unknown>, name: string, length?: number): Buffer {
  const v = field(obj, name);
  if (typeof v !== 'string') throw invalid(`${name} is missing`);
  const digits = v.startsWith('0x') ? v.slice(2) : v;
  if (digits.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(digits)) throw invalid(`${name} is not hex`);
  const b = Buffer.from(digits, 'hex');
  if (length !== undefined && b.length !== length) throw invalid(`${name} must be ${length} bytes`);
  return b;
}

function intField(obj: Record<string, unknown>, name: string, min: number, max: number): number {
  const v = field(obj, name);
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw invalid(`kdfparams.${name} must be an integer`);
  if (v < min || v > max) throw invalid(`kdfparams.${name} ${v} is out of range (${min}..${max})`);
  return v;
}

function parseKdf(name: unknown, params: unknown): Kdf {
  if (!isObject(params)) throw invalid('kdfparams is missing');
  intField(params, 'dklen', DERIVED_KEY_LENGTH, DERIVED_KEY_LENGTH);
  const salt = hexField(params, 'salt');
  if (name === 'scrypt') {
    const n = intField(params, 'n', 2, MAX_SCRYPT_MEMORY / 128);
    if ((n & (n - 1)) !== 0) throw invalid('kdfparams.n must be a power of two');
    const r = intField(params, 'r', 1, MAX_SCRYPT_MEMORY / 128 / n);
    const p = intField(params, 'p', 1, MAX_SCRYPT_P);
    return { kind: 'scrypt', n, r, p, salt };
  }
  if (name === 'pbkdf2') {
    if (field(params, 'prf') !== PBKDF2_PRF) throw invalid(`pbkdf2 prf must be ${PBKDF2_PRF}`);
    return { kind: 'pbkdf2', c: intField(params, 'c', 1, MAX_PBKDF2_ITERATIONS), salt };
  }
  throw invalid(`unsupported kdf ${JSON.stringify(name)}`);
}

/** Checks the shape of a v3 key file (no passphrase needed). Throws corrupt naming what is wrong. */
export function parseKeyFile(json: unknown): ParsedKeyFile {
  if (!isObject(json)) throw invalid('not a JSON object');
  const version = field(json, 'version');
  if (version !== KEY_FILE_VERSION && version !== String(KEY_FILE_VERSION)) throw invalid(`version must be ${KEY_FILE_VERSION}`);
  const c = field(json, 'crypto');
  if (!isObject(c)) throw invalid('crypto is missing');
  if (field(c, 'cipher') !== CIPHER) throw invalid(`cipher must be ${CIPHER}`);
  const cipherparams = field(c, 'cipherparams');
  if (!isObject(cipherparams)) throw invalid('cipherparams is missing');
  const rawAddress = field(json, 'address');
  let address: Uint8Array | undefined;
  if (rawAddress !== undefined && rawAddress !== null && rawAddress !== '') {
    address = new Uint8Array(hexField(json, 'address', ADDRESS_LENGTH));
  }
  return {
    address,
    kdf: parseKdf(field(c, 'kdf'), field(c, 'kdfparams')),
    iv: hexField(cipherparams, 'iv', IV_LENGTH),
    ciphertext: hexField(c, 'ciphertext', PRIVATE_KEY_LENGTH),
    mac: hexField(c, 'mac', 32),
  };
}

/**
 * Decrypts a v3 key file with a passphrase; returns the private key (the caller zeroes it when done).
 * A wrong passphrase throws DECRYPT_ERROR; a file whose address does not match its key is refused.
 */
export async function decryptKey(json: unknown, passphrase: string): Promise<Uint8Array> {
  const f = parseKeyFile(json);
  const candidates = [passphrase];
  const nfkc = passphrase.normalize('NFKC');
  if (nfkc !== passphrase) candidates.push(nfkc);
  for (const candidate of candidates) {
    const derived = await deriveKey(Buffer.from(candidate, 'utf8'), f.kdf);
    if (!timingSafeEqual(macOf(derived, f.ciphertext), f.mac)) {
      derived.fill(0);
      continue;
    }
    const decipher = createDecipheriv(CIPHER, derived.subarray(0, CIPHER_KEY_LENGTH), f.iv);
    const key = new Uint8Array(Buffer.concat([decipher.update(f.ciphertext), decipher.final()]));
    derived.fill(0);
    if (!isValidPrivateKey(key)) throw invalid('the decrypted key is not a valid secp256k1 key');
    if (f.address !== undefined && Buffer.compare(privateKeyToAddress(key), f.address) !== 0) {
      key.fill(0);
      throw invalid('key content mismatch: the key does not belong to the file address');
    }
    return key;
  }
  throw invalidRequest(DECRYPT_ERROR);
}
