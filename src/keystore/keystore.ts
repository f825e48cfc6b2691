/**
 * The node's key store: a directory of Web3 Secret Storage v3 files (`<home>/keystore/`), and which
 * accounts are unlocked. The account state machine (docs/accounts-and-auth.md "Account states"):
 *
 *   locked --unlock(passphrase, duration)--> unlocked   key decrypted and held in memory
 *   unlocked --lock--> locked                           key zeroed and dropped
 *   unlocked --duration elapses--> locked               duration > 0 (default 300 s)
 *   unlocked --node exits--> locked                     duration 0 = no expiry; nothing is persisted
 *   either --sign with passphrase--> unchanged          the key is decrypted for that call only
 *
 * As geth: unlocking an account that is unlocked with a timeout restarts it with the new duration;
 * one unlocked without expiry stays so. Unlock state lives only in this object (never on disk), so a
 * restart starts with every account locked.
 *
 * Files are written atomically (temporary file, fsync, rename) with mode 0600 in a 0700 directory,
 * named as geth names them (`UTC--<time>--<address>`), so other tools read the directory and files
 * other tools wrote are listed. Passphrases and keys never reach logs or error messages.
 */
import { invalidRequest, notFound } from '../lib/errors.js';
import { writeFileAtomic } from '../lib/fs.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from '../lib/log.js';
import { ADDRESS_LENGTH, checkPrivateKey, isValidPrivateKey, privateKeyToAddress, signHash, type Signature } from './crypto.js';
import { STANDARD_SCRYPT, decryptKey, encryptKey, parseKeyFile, type KeyFileJson, type ScryptParams } from './v3.js';

/** personal_unlockAccount's duration when none is given (docs/accounts-and-auth.md) */
export const DEFAULT_UNLOCK_SECONDS = 300;
/** geth: time.Duration(math.MaxInt64) / time.Second */
export const MAX_UNLOCK_SECONDS = 9_223_372_036;
/** longest single timer Node allows; longer unlocks re-arm */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** files read from the directory; more are ignored (with a warning) */
export const KEYSTORE_MAX_FILES = 10_000;
/** bigger files are not key files */
export const MAX_KEY_FILE_BYTES = 64 * 1024;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** geth's error texts */
export const KeystoreErrors = {
  locked: 'authentication needed: password or unlock',
  noMatch: 'no key for given address or file',
  unknownAccount: 'unknown account',
  exists: 'account already exists',
  durationTooLarge: 'unlock duration too large',
} as const;

export interface KeyStoreOptions {
  /** scrypt cost of new files (default: geth's standard); tests use cheaper ones */
  scrypt?: ScryptParams;
  log?: Logger;
}

export interface KeyStoreAccount {
  address: Uint8Array;
  /** absolute path of the key file */
  path: string;
}

interface Unlocked {
  key: Uint8Array;
  /** undefined: unlocked until the node exits */
  timer: NodeJS.Timeout | undefined;
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  address: Uint8Array | undefined;
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** geth's key file name: UTC--2006-01-02T15-04-05.000000000Z--<address hex> */
export function keyFileName(address: Uint8Array, at: Date = new Date()): string {
  const iso = at.toISOString(); // 2006-01-02T15:04:05.000Z
  const stamp = `${iso.slice(0, 19).replace(/:/g, '-')}.${iso.slice(20, 23)}000000Z`;
  return `UTC--${stamp}--${hex(address)}`;
}

export class KeyStore {
  readonly dir: string;
  private readonly scryptParams: ScryptParams;
  private readonly log: Logger | undefined;
  private readonly unlocked = new Map<string, Unlocked>();
  private readonly files = new Map<string, CachedFile>();
  private dirMtimeMs = -1;
  private list: KeyStoreAccount[] = [];

  constructor(dir: string, opts: KeyStoreOptions = {}) {
    this.dir = resolve(dir);
    this.scryptParams = opts.scrypt ?? STANDARD_SCRYPT;
    this.log = opts.log;
  }

  // --- accounts ------------------------------------------------------------------------------

  /** Accounts of the directory, ordered by file name (creation time for geth-named files). */
  accounts(): KeyStoreAccount[] {
    this.rescan();
    return this.list;
  }

  find(address: Uint8Array): KeyStoreAccount | undefined {
    const want = hex(address);
    return this.accounts().find((a) => hex(a.address) === want);
  }

  /** Re-reads the directory listing when it changed (a file added, removed or renamed). */
  private rescan(): void {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.dir).mtimeMs;
    } catch {
      this.list = [];
      this.files.clear();
      this.dirMtimeMs = -1;
      return;
    }
    if (mtimeMs === this.dirMtimeMs) return;
    this.dirMtimeMs = mtimeMs;
    let names = readdirSync(this.dir).filter((n) => !n.startsWith('.') && !n.endsWith('~')).sort();
    if (names.length > KEYSTORE_MAX_FILES) {
      this.log?.warn({ dir: this.dir, files: names.length, max: KEYSTORE_MAX_FILES }, 'key store: too many files, reading the first ones');
      names = names.slice(0, KEYSTORE_MAX_FILES);
    }
    const seen = new Set<string>();
    const list: KeyStoreAccount[] = [];
    const present = new Set(names);
    for (const name of this.files.keys()) if (!present.has(name)) this.files.delete(name);
    for (const name of names) {
      const path = join(this.dir, name);
      const address = this.addressOf(name, path);
      if (address === undefined) continue;
      const k = hex(address);
      if (seen.has(k)) {
        this.log?.warn({ path, address: '0x' + k }, 'key store: a second file for the same address is ignored');
        continue;
      }
      seen.add(k);
      list.push({ address, path });
    }
    this.list = list;
  }

  /** The address a key file declares, cached per (mtime, size); undefined for what is not a key file. */
  private addressOf(name: string, path: string): Uint8Array | undefined {
    let st;
    try {
      st = statSync(path);
    } catch {
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const cached = this.files.get(name);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return cached.address;
    let address: Uint8Array | undefined;
    if (st.size <= MAX_KEY_FILE_BYTES) {
      try {
        address = parseKeyFile(JSON.parse(readFileSync(path, 'utf8'))).address;
      } catch {
        address = undefined;
      }
    }
    if (address === undefined) this.log?.debug({ path }, 'key store: not a key file with an address, ignored');
    this.files.set(name, { mtimeMs: st.mtimeMs, size: st.size, address });
    return address;
  }

  private readKeyFile(account: KeyStoreAccount): unknown {
    try {
      return JSON.parse(readFileSync(account.path, 'utf8'));
    } catch {
      throw notFound(KeystoreErrors.noMatch);
    }
  }

  /** Writes a new key file atomically; refuses an address the store already has. */
  private writeKeyFile(json: KeyFileJson, address: Uint8Array): string {
    if (this.find(address)) throw invalidRequest(KeystoreErrors.exists);
    mkdirSync(this.dir, { recursive: true, mode: DIR_MODE });
    const name = keyFileName(address);
    const path = join(this.dir, name);
    writeFileAtomic(path, JSON.stringify(json), FILE_MODE);
    this.dirMtimeMs = -1;
    this.log?.info({ address: '0x' + hex(address), path }, 'key store: account added');
    return path;
  }

  /** personal_newAccount: a new random key, stored encrypted with the passphrase. */
  async newAccount(passphrase: string): Promise<Uint8Array> {
    let key: Uint8Array;
    do key = new Uint8Array(randomBytes(32));
    while (!isValidPrivateKey(key));
    try {
      return await this.importKey(key, passphrase);
    } finally {
      key.fill(0);
    }
  }

  /** personal_importRawKey: stores `key` encrypted with the passphrase. */
  async importKey(key: Uint8Array, passphrase: string): Promise<Uint8Array> {
    checkPrivateKey(key);
    const address = privateKeyToAddress(key);
    if (this.find(address)) throw invalidRequest(KeystoreErrors.exists);
    const json = await encryptKey(key, passphrase, this.scryptParams);
    this.writeKeyFile(json, address);
    return address;
  }

  /**
   * Imports a v3 key file another tool wrote (ethers, geth, MyEtherWallet), keeping its encryption.
   * With a passphrase the file is decrypted first to prove it opens; a file without an `address`
   * field needs the passphrase (its address comes from the key).
   */
  async importKeyFile(text: string, passphrase?: string): Promise<Uint8Array> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw invalidRequest('invalid key file: not JSON');
    }
    const parsed = parseKeyFile(json);
    let address = parsed.address;
    if (passphrase !== undefined) {
      const key = await decryptKey(json, passphrase);
      address = privateKeyToAddress(key);
      key.fill(0);
    }
    if (address === undefined) throw invalidRequest('invalid key file: it has no address; give its passphrase to import it');
    const out = { ...(json as KeyFileJson), address: hex(address) };
    this.writeKeyFile(out, address);
    return address;
  }

  // --- unlock state --------------------------------------------------------------------------

  isUnlocked(address: Uint8Array): boolean {
    return this.unlocked.has(hex(address));
  }

  /**
   * personal_unlockAccount: decrypts the key and holds it for `seconds` (0 = until the node exits).
   * A wrong passphrase throws and unlocks nothing.
   */
  async unlock(address: Uint8Array, passphrase: string, seconds: number): Promise<void> {
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw invalidRequest('invalid unlock duration');
    if (seconds > MAX_UNLOCK_SECONDS) throw invalidRequest(KeystoreErrors.durationTooLarge);
    const account = this.find(address);
    if (!account) throw notFound(KeystoreErrors.noMatch);
    const key = await decryptKey(this.readKeyFile(account), passphrase);
    const k = hex(address);
    const current = this.unlocked.get(k);
    if (current) {
      if (current.timer === undefined) {
        // unlocked without expiry: a timed unlock would be confusing (geth keeps it)
        key.fill(0);
        return;
      }
      clearTimeout(current.timer);
      current.key.fill(0);
    }
    const entry: Unlocked = { key, timer: undefined };
    this.unlocked.set(k, entry);
    if (seconds > 0) this.expireAt(k, entry, Date.now() + seconds * 1000);
    this.log?.info({ address: '0x' + k, seconds }, 'key store: account unlocked');
  }

  private expireAt(k: string, entry: Unlocked, deadline: number): void {
    const wait = Math.min(Math.max(deadline - Date.now(), 0), MAX_TIMER_MS);
    entry.timer = setTimeout(() => {
      if (this.unlocked.get(k) !== entry) return;
      if (Date.now() < deadline) return this.expireAt(k, entry, deadline);
      this.drop(k, entry);
      this.log?.info({ address: '0x' + k }, 'key store: unlock expired, account locked');
    }, wait);
    entry.timer.unref();
  }

  private drop(k: string, entry: Unlocked): void {
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.key.fill(0);
    this.unlocked.delete(k);
  }

  /** personal_lockAccount: forgets the decrypted key (no-op when locked or unknown). */
  lock(address: Uint8Array): void {
    const k = hex(address);
    const entry = this.unlocked.get(k);
    if (!entry) return;
    this.drop(k, entry);
    this.log?.info({ address: '0x' + k }, 'key store: account locked');
  }

  /** Locks every account (node shutdown). */
  close(): void {
    for (const [k, entry] of [...this.unlocked]) this.drop(k, entry);
  }

  // --- signing -------------------------------------------------------------------------------

  /**
   * Signs a 32-byte hash with the account's key: with `passphrase`, decrypted for this call only
   * (the unlock state does not change); without, the account must be unlocked.
   */
  async sign(address: Uint8Array, hash: Uint8Array, passphrase?: string): Promise<Signature> {
    if (address.length !== ADDRESS_LENGTH) throw notFound(KeystoreErrors.unknownAccount);
    const account = this.find(address);
    if (passphrase === undefined) {
      const entry = this.unlocked.get(hex(address));
      if (entry) return signHash(hash, entry.key);
      if (!account) throw notFound(KeystoreErrors.unknownAccount);
      throw invalidRequest(KeystoreErrors.locked);
    }
    if (!account) throw notFound(KeystoreErrors.unknownAccount);
    const key = await decryptKey(this.readKeyFile(account), passphrase);
    try {
      return signHash(hash, key);
    } finally {
      key.fill(0);
    }
  }
}
