/**
 * The key store: Web3 Secret Storage v3 files (checked against the format's published vector and
 * against ethers, an independent implementation), the account state machine of docs/accounts-and-auth.md (unlock,
 * lock, expiry, passphrase-per-call, restart), and the signing helpers (EIP-191, EIP-712, txs).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Transaction, TypedDataEncoder, Wallet, decryptKeystoreJson, encryptKeystoreJson, verifyMessage, verifyTypedData } from 'ethers';
import {
  DECRYPT_ERROR,
  KeyStore,
  KeystoreErrors,
  decryptKey,
  encodeSignature,
  encryptKey,
  keyFileName,
  parseTypedData,
  personalMessageHash,
  privateKeyToAddress,
  recoverAddress,
  signHash,
  signTransaction,
  typedDataHash,
  type ScryptParams,
} from '../../src/keystore/index.js';

/** cheap scrypt for tests (the node uses geth's standard N = 2^18) */
const FAST: ScryptParams = { n: 1 << 12, r: 8, p: 1 };
const KEY_HEX = 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const KEY_ADDRESS = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ferry-ks-'));
  dirs.push(d);
  return join(d, 'keystore');
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// Web3 Secret Storage Definition, "Test Vectors" (PBKDF2-SHA-256); password "testpassword"
const PBKDF2_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
    ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46',
    kdf: 'pbkdf2',
    kdfparams: { c: 262144, dklen: 32, prf: 'hmac-sha256', salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd' },
    mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
// the same key, scrypt variant of the test vectors
const SCRYPT_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '83dbcc02d8ccb40e466191a123791e0e' },
    ciphertext: 'd172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c',
    kdf: 'scrypt',
    kdfparams: { dklen: 32, n: 262144, p: 8, r: 1, salt: 'ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19' },
    mac: '2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const VECTOR_KEY = '0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d';

describe('v3 key files', () => {
  it('decrypts the published PBKDF2 test vector, and refuses a wrong password', async () => {
    assert.equal(hex(await decryptKey(PBKDF2_VECTOR, 'testpassword')), VECTOR_KEY);
    await assert.rejects(decryptKey(PBKDF2_VECTOR, 'testpassword!'), { message: DECRYPT_ERROR });
  });

  it('writes files ethers decrypts (geth field layout)', async () => {
    const json = await encryptKey(bytes(KEY_HEX), 'pässword', FAST);
    assert.equal(json.version, 3);
    assert.equal(json.address, KEY_ADDRESS.slice(2));
    assert.equal(json.crypto.cipher, 'aes-128-ctr');
    assert.equal(json.crypto.kdf, 'scrypt');
    assert.deepEqual(Object.keys(json.crypto.kdfparams), ['dklen', 'n', 'p', 'r', 'salt']);
    const account = await decryptKeystoreJson(JSON.stringify(json), 'pässword');
    assert.equal(account.privateKey, '0x' + KEY_HEX);
    assert.equal(account.address.toLowerCase(), KEY_ADDRESS);
  });

  it('reads files ethers wrote', async () => {
    const wallet = new Wallet('0x' + KEY_HEX);
    const text = await encryptKeystoreJson({ address: wallet.address, privateKey: wallet.privateKey }, 'pw', { scrypt: { N: 1 << 12, r: 8, p: 1 } });
    assert.equal(hex(await decryptKey(JSON.parse(text), 'pw')), '0x' + KEY_HEX);
  });

  it('decrypts the published scrypt test vector (r = 1, N = 2^18: parameters OpenSSL refuses, geth accepts)', async () => {
    assert.equal(hex(await decryptKey(SCRYPT_VECTOR, 'testpassword')), VECTOR_KEY);
  });

  it('refuses a tampered ciphertext, a wrong address and malformed files with a reason', async () => {
    const json = await encryptKey(bytes(KEY_HEX), 'pw', FAST);
    const flipped = structuredClone(json);
    flipped.crypto.ciphertext = (flipped.crypto.ciphertext[0] === '0' ? '1' : '0') + flipped.crypto.ciphertext.slice(1);
    await assert.rejects(decryptKey(flipped, 'pw'), { message: DECRYPT_ERROR });
    const otherAddress = { ...json, address: '00'.repeat(20) };
    await assert.rejects(decryptKey(otherAddress, 'pw'), /key content mismatch/);
    await assert.rejects(decryptKey({ ...json, version: 1 }, 'pw'), { message: 'invalid key file: version must be 3' });
    await assert.rejects(decryptKey({ ...json, crypto: { ...json.crypto, cipher: 'aes-256-cbc' } }, 'pw'), /cipher must be aes-128-ctr/);
    const huge = { ...json, crypto: { ...json.crypto, kdfparams: { ...json.crypto.kdfparams, n: 1 << 24 } } };
    await assert.rejects(decryptKey(huge, 'pw'), /kdfparams\.n .* out of range/);
  });

  it('never puts the passphrase or the key in an error message', async () => {
    const json = await encryptKey(bytes(KEY_HEX), 'hunter2-secret', FAST);
    for (const bad of ['wrong', 'hunter2-secret-x']) {
      const err = await decryptKey(json, bad).then(() => undefined, (e: Error) => e);
      assert.ok(err);
      assert.doesNotMatch(err.message, /hunter2|wrong/);
      assert.doesNotMatch(err.message, new RegExp(KEY_HEX));
    }
  });
});

describe('KeyStore: files', () => {
  it('creates accounts as geth-named files, 0600 in a 0700 directory, listed in order', async () => {
    const dir = tempDir();
    const ks = new KeyStore(dir, { scrypt: FAST });
    assert.deepEqual(ks.accounts(), []);
    const a = await ks.newAccount('one');
    const b = await ks.importKey(bytes(KEY_HEX), 'two');
    assert.equal(hex(b), KEY_ADDRESS);
    assert.deepEqual(ks.accounts().map((x) => hex(x.address)), [hex(a), hex(b)]);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    for (const name of readdirSync(dir)) {
      assert.match(name, /^UTC--\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{9}Z--[0-9a-f]{40}$/);
      assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600);
    }
    // another KeyStore on the same directory (a restart, or the CLI) sees them
    assert.equal(new KeyStore(dir).accounts().length, 2);
  });

  it('refuses an address it already has, and an invalid key', async () => {
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    await ks.importKey(bytes(KEY_HEX), 'x');
    await assert.rejects(ks.importKey(bytes(KEY_HEX), 'y'), { message: KeystoreErrors.exists });
    await assert.rejects(ks.importKey(new Uint8Array(32), 'y'), { message: 'invalid private key' });
  });

  it('imports a file ethers encrypted, as it is; lists files another process adds', async () => {
    const dir = tempDir();
    const ks = new KeyStore(dir, { scrypt: FAST });
    await ks.newAccount('first'); // creates the directory
    const wallet = Wallet.createRandom();
    const text = await encryptKeystoreJson({ address: wallet.address, privateKey: wallet.privateKey }, 'ethers pw', { scrypt: { N: 1 << 12, r: 8, p: 1 } });
    await assert.rejects(ks.importKeyFile(text, 'not it'), { message: DECRYPT_ERROR });
    const addr = await ks.importKeyFile(text, 'ethers pw');
    assert.equal(hex(addr), wallet.address.toLowerCase());
    // the stored file still opens with ethers' passphrase, in ethers
    const stored = readFileSync(ks.find(addr)!.path, 'utf8');
    assert.equal((await Wallet.fromEncryptedJson(stored, 'ethers pw')).address, wallet.address);
    // a file dropped in by someone else is listed on the next call
    const other = Wallet.createRandom();
    const otherJson = await encryptKeystoreJson({ address: other.address, privateKey: other.privateKey }, 'p', { scrypt: { N: 1 << 12, r: 8, p: 1 } });
    writeFileSync(join(dir, keyFileName(bytes(other.address))), otherJson);
    assert.ok(ks.find(bytes(other.address)));
    // junk is ignored
    writeFileSync(join(dir, 'README'), 'not a key');
    assert.equal(ks.accounts().length, 3);
  });
});

describe('KeyStore: account states (docs/accounts-and-auth.md)', () => {
  const hash = personalMessageHash(new TextEncoder().encode('hello'));

  it('locked → unlock (right passphrase) → unlocked; a wrong passphrase unlocks nothing', async () => {
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    assert.equal(ks.isUnlocked(a), false);
    await assert.rejects(ks.sign(a, hash), { message: KeystoreErrors.locked });
    await assert.rejects(ks.unlock(a, 'nope', 300), { message: DECRYPT_ERROR });
    assert.equal(ks.isUnlocked(a), false);
    await ks.unlock(a, 'pw', 300);
    assert.equal(ks.isUnlocked(a), true);
    const sig = await ks.sign(a, hash);
    assert.equal(hex(recoverAddress(hash, new Uint8Array([...sig.r, ...sig.s]), sig.recovery)), KEY_ADDRESS);
    ks.close();
  });

  it('unlocked → lock → locked; lock of a locked or unknown account is a no-op', async () => {
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    await ks.unlock(a, 'pw', 0);
    ks.lock(a);
    assert.equal(ks.isUnlocked(a), false);
    await assert.rejects(ks.sign(a, hash), { message: KeystoreErrors.locked });
    ks.lock(a);
    ks.lock(new Uint8Array(20));
  });

  it('unlocked → duration elapses → locked', async (t) => {
    // the clock is the test's: the 1 s passes when the test says so
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    await ks.unlock(a, 'pw', 1);
    assert.equal(ks.isUnlocked(a), true);
    t.mock.timers.tick(999);
    assert.equal(ks.isUnlocked(a), true, 'still unlocked just before the second is up');
    t.mock.timers.tick(301);
    assert.equal(ks.isUnlocked(a), false);
    await assert.rejects(ks.sign(a, hash), { message: KeystoreErrors.locked });
  });

  it('re-unlocking restarts a timed unlock; an unlock without expiry stays so', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    await ks.unlock(a, 'pw', 1);
    await ks.unlock(a, 'pw', 3);
    t.mock.timers.tick(1300);
    assert.equal(ks.isUnlocked(a), true, 'the second unlock replaced the 1 s timer');
    t.mock.timers.tick(2000);
    assert.equal(ks.isUnlocked(a), false, 'and its own 3 s ran out');
    await ks.unlock(a, 'pw', 0);
    await ks.unlock(a, 'pw', 1);
    t.mock.timers.tick(1300);
    assert.equal(ks.isUnlocked(a), true, 'no expiry stays no expiry (geth)');
    ks.close();
    assert.equal(ks.isUnlocked(a), false, 'close (node exit) locks everything');
  });

  it('signing with the passphrase leaves the state unchanged', async () => {
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    const sig = await ks.sign(a, hash, 'pw');
    assert.deepEqual(sig, signHash(hash, bytes(KEY_HEX)));
    assert.equal(ks.isUnlocked(a), false);
    await assert.rejects(ks.sign(a, hash, 'bad'), { message: DECRYPT_ERROR });
    await ks.unlock(a, 'pw', 0);
    await ks.sign(a, hash, 'pw');
    assert.equal(ks.isUnlocked(a), true);
    ks.close();
  });

  it('a new KeyStore on the same directory (restart) starts locked', async () => {
    const dir = tempDir();
    const ks = new KeyStore(dir, { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    await ks.unlock(a, 'pw', 0);
    const again = new KeyStore(dir);
    assert.equal(again.isUnlocked(a), false);
    await assert.rejects(again.sign(a, hash), { message: KeystoreErrors.locked });
    ks.close();
  });

  it('unknown accounts and durations out of range', async () => {
    const ks = new KeyStore(tempDir(), { scrypt: FAST });
    const a = await ks.importKey(bytes(KEY_HEX), 'pw');
    await assert.rejects(ks.unlock(new Uint8Array(20), 'pw', 1), { message: KeystoreErrors.noMatch });
    await assert.rejects(ks.sign(new Uint8Array(20), hash), { message: KeystoreErrors.unknownAccount });
    await assert.rejects(ks.unlock(a, 'pw', 9_223_372_037), { message: KeystoreErrors.durationTooLarge });
  });
});

describe('signing helpers', () => {
  it('EIP-191 personal messages verify with ethers', () => {
    const msg = new TextEncoder().encode('Hello, ferry');
    const sig = encodeSignature(signHash(personalMessageHash(msg), bytes(KEY_HEX)));
    assert.equal(verifyMessage(msg, hex(sig)).toLowerCase(), KEY_ADDRESS);
  });

  it('EIP-712 v4 hashes equal ethers TypedDataEncoder (nested structs, arrays, bytes, ints)', () => {
    const types = {
      Person: [
        { name: 'name', type: 'string' },
        { name: 'wallets', type: 'address[]' },
      ],
      Mail: [
        { name: 'from', type: 'Person' },
        { name: 'to', type: 'Person[]' },
        { name: 'contents', type: 'string' },
        { name: 'tag', type: 'bytes4' },
        { name: 'blob', type: 'bytes' },
        { name: 'delta', type: 'int32' },
        { name: 'ok', type: 'bool' },
        { name: 'grid', type: 'uint8[2][]' },
      ],
    };
    const domain = { name: 'Ether Mail', version: '1', chainId: 9000, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' };
    const value = {
      from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826', '0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF'] },
      to: [{ name: 'Bob', wallets: ['0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB'] }],
      contents: 'Hello, Bob!',
      tag: '0x01020304',
      blob: '0xdeadbeef',
      delta: -5,
      ok: true,
      grid: [[1, 2], [3, 4]],
    };
    const payload = TypedDataEncoder.getPayload(domain, types, value);
    const td = parseTypedData(JSON.stringify(payload));
    assert.equal(hex(typedDataHash(td)), TypedDataEncoder.hash(domain, types, value));
    const sig = encodeSignature(signHash(typedDataHash(td), bytes(KEY_HEX)));
    assert.equal(verifyTypedData(domain, types, value, hex(sig)).toLowerCase(), KEY_ADDRESS);
    // without an EIP712Domain entry the domain type is inferred
    const { EIP712Domain: _, ...noDomain } = payload.types as Record<string, unknown>;
    assert.equal(hex(typedDataHash(parseTypedData({ ...payload, types: noDomain }))), TypedDataEncoder.hash(domain, types, value));
    assert.throws(() => typedDataHash(parseTypedData({ ...payload, message: { ...payload.message, delta: 2 ** 31 } })), /does not fit int32/);
  });

  it('signs legacy (EIP-155), EIP-2930 and EIP-1559 transactions that ethers decodes', async () => {
    const key = bytes(KEY_HEX);
    const sign = async (h: Uint8Array) => signHash(h, key);
    const to = bytes('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
    const common = { chainId: 9000n, nonce: 7n, gasLimit: 21000n, to, value: 5n, data: new Uint8Array() };
    const cases = [
      { ...common, type: 0 as const, gasPrice: 3n },
      { ...common, type: 1 as const, gasPrice: 3n, accessList: [{ address: to, storageKeys: [new Uint8Array(32)] }] },
      { ...common, type: 2 as const, maxFeePerGas: 10n, maxPriorityFeePerGas: 2n },
      { ...common, type: 2 as const, to: undefined, data: bytes('0x6000'), maxFeePerGas: 10n, maxPriorityFeePerGas: 2n },
    ];
    for (const f of cases) {
      const { raw, hash } = await signTransaction(f, sign);
      const tx = Transaction.from(hex(raw));
      assert.equal(tx.type, f.type);
      assert.equal(tx.from!.toLowerCase(), KEY_ADDRESS);
      assert.equal(tx.chainId, 9000n);
      assert.equal(tx.nonce, 7);
      assert.equal(tx.hash, hex(hash));
      assert.equal(tx.to, f.to === undefined ? null : '0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    }
    assert.equal(hex(privateKeyToAddress(key)), KEY_ADDRESS);
  });
});
