/**
 * ed25519 keys (node:crypto), commit signing, and CometBFT's key files:
 * `priv_validator_key.json` (privval.FilePVKey), `node_key.json` (p2p.NodeKey) and
 * `priv_validator_state.json` (privval.FilePVLastSignState), in libs/json's format.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { PUBKEY_TYPE_ED25519 } from '../../config/genesis.js';
import { corrupt, type DomainError } from '../../lib/errors.js';
import { Lru } from '../../lib/lru.js';
import { voteSignBytes } from './encoding.js';
import { bytesEqual, sha256 } from './merkle.js';
import { ZERO_TIME } from './time.js';
import type { Timestamp } from './time.js';
import { ADDRESS_SIZE, BlockIDFlag, SignedMsgType, zeroBlockId } from './types.js';
import type { BlockID, CommitSig } from './types.js';

export const ED25519_SEED_SIZE = 32;
export const ED25519_PUBKEY_SIZE = 32;
/** CometBFT's ed25519 private key: seed || public key. */
export const ED25519_PRIVKEY_SIZE = 64;
export const ED25519_SIGNATURE_SIZE = 64;

export const PRIVKEY_ED25519_TYPE = 'tendermint/PrivKeyEd25519';

export const PRIV_VALIDATOR_KEY_FILE = 'priv_validator_key.json';
export const NODE_KEY_FILE = 'node_key.json';
export const PRIV_VALIDATOR_STATE_FILE = 'priv_validator_state.json';

/** A key file that cannot be used: `corrupt`, the message names the file and the field. */
function keyFileError(file: string, field: string, problem: string): DomainError<'corrupt'> {
  return corrupt(`${file}: ${field}: ${problem}`);
}

export interface Ed25519Key {
  /** 64 bytes: seed || pubKey */
  privKey: Uint8Array;
  /** 32 bytes */
  pubKey: Uint8Array;
  /** SHA-256(pubKey)[:20] */
  address: Uint8Array;
}
export type ValidatorKey = Ed25519Key;
export type NodeKey = Ed25519Key;

// PKCS#8 DER prefix of an ed25519 private key; the 32-byte seed follows.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
// SPKI DER prefix of an ed25519 public key; the 32-byte key follows.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** ed25519 keys kept imported (KeyObject) and their addresses, by seed: the validator signs twice per block */
export const SIGNING_KEY_CACHE_SIZE = 16;
/** importing a key costs about half a millisecond: each seed is imported once */
const keyObjects = new Lru<string, { key: KeyObject; address?: Uint8Array }>(SIGNING_KEY_CACHE_SIZE);

function cachedKey(privKey: Uint8Array): { key: KeyObject; address?: Uint8Array } {
  if (privKey.length !== ED25519_PRIVKEY_SIZE && privKey.length !== ED25519_SEED_SIZE) {
    throw new RangeError(`ed25519 private key must be ${ED25519_PRIVKEY_SIZE} (or a ${ED25519_SEED_SIZE}-byte seed) bytes, got ${privKey.length}`);
  }
  const seed = privKey.subarray(0, ED25519_SEED_SIZE);
  const id = Buffer.from(seed.buffer, seed.byteOffset, seed.byteLength).toString('hex');
  let entry = keyObjects.get(id);
  if (entry === undefined) {
    entry = { key: createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' }) };
    keyObjects.set(id, entry);
  }
  return entry;
}

function privateKeyObject(privKey: Uint8Array): KeyObject {
  return cachedKey(privKey).key;
}

function publicKeyObject(pubKey: Uint8Array): KeyObject {
  if (pubKey.length !== ED25519_PUBKEY_SIZE) throw new RangeError(`ed25519 public key must be ${ED25519_PUBKEY_SIZE} bytes, got ${pubKey.length}`);
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, pubKey]), format: 'der', type: 'spki' });
}

/** `crypto.AddressHash(pubKey)`: SHA-256(pubKey)[:20]. */
export function pubKeyAddress(pubKey: Uint8Array): Uint8Array {
  return sha256(pubKey).subarray(0, ADDRESS_SIZE);
}

/** The key for a 32-byte seed (`ed25519.GenPrivKeyFromSecret` hashes first; this does not). */
export function ed25519KeyFromSeed(seed: Uint8Array): Ed25519Key {
  if (seed.length !== ED25519_SEED_SIZE) throw new RangeError(`ed25519 seed must be ${ED25519_SEED_SIZE} bytes, got ${seed.length}`);
  const spki = createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' });
  const pubKey = new Uint8Array(spki.subarray(spki.length - ED25519_PUBKEY_SIZE));
  const privKey = new Uint8Array(ED25519_PRIVKEY_SIZE);
  privKey.set(seed, 0);
  privKey.set(pubKey, ED25519_SEED_SIZE);
  return { privKey, pubKey, address: pubKeyAddress(pubKey) };
}

function generateEd25519Key(): Ed25519Key {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return ed25519KeyFromSeed(new Uint8Array(pkcs8.subarray(pkcs8.length - ED25519_SEED_SIZE)));
}

export function ed25519Sign(privKey: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyObject(privKey)));
}

export function ed25519Verify(pubKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (pubKey.length !== ED25519_PUBKEY_SIZE || signature.length !== ED25519_SIGNATURE_SIZE) return false;
  return verify(null, message, publicKeyObject(pubKey), signature);
}

// ---- commit signatures -------------------------------------------------------------------------

/** A precommit for `blockId`, signed: the CommitSig with flag Commit (2). */
export function signCommit(
  chainId: string,
  height: bigint,
  round: number,
  blockId: BlockID,
  timestamp: Timestamp,
  privKey: Uint8Array,
): CommitSig {
  const cached = cachedKey(privKey);
  cached.address ??= ed25519KeyFromSeed(privKey.subarray(0, ED25519_SEED_SIZE)).address;
  const bytes = voteSignBytes(chainId, { type: SignedMsgType.precommit, height, round, blockId, timestamp });
  return {
    blockIdFlag: BlockIDFlag.commit,
    validatorAddress: cached.address.slice(),
    timestamp,
    signature: ed25519Sign(privKey, bytes),
  };
}

/** CommitSig for a validator that did not vote: flag Absent, no address, zero time, no signature. */
export function commitSigAbsent(): CommitSig {
  return {
    blockIdFlag: BlockIDFlag.absent,
    validatorAddress: new Uint8Array(0),
    timestamp: { ...ZERO_TIME },
    signature: new Uint8Array(0),
  };
}

/**
 * Whether `sig` (a signature of the commit for `blockId` at height/round) is a valid precommit by
 * `pubKey`: flag Commit signs `blockId`, flag Nil signs the zero BlockID, flag Absent is never valid.
 * The signature's validator address must be that of `pubKey`.
 */
export function verifyCommitSig(
  chainId: string,
  height: bigint,
  round: number,
  blockId: BlockID,
  sig: CommitSig,
  pubKey: Uint8Array,
): boolean {
  if (sig.blockIdFlag !== BlockIDFlag.commit && sig.blockIdFlag !== BlockIDFlag.nil) return false;
  if (pubKey.length !== ED25519_PUBKEY_SIZE || !bytesEqual(sig.validatorAddress, pubKeyAddress(pubKey))) return false;
  const votedFor = sig.blockIdFlag === BlockIDFlag.commit ? blockId : zeroBlockId();
  const bytes = voteSignBytes(chainId, { type: SignedMsgType.precommit, height, round, blockId: votedFor, timestamp: sig.timestamp });
  return ed25519Verify(pubKey, bytes, sig.signature);
}

// ---- key files ---------------------------------------------------------------------------------

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

function b64(b: Uint8Array): string {
  return Buffer.from(b).toString('base64');
}

function parseJsonObject(file: string, json: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw keyFileError(file, '(file)', `not valid JSON: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw keyFileError(file, '(file)', 'expected a JSON object');
  return v as Record<string, unknown>;
}

function field(file: string, obj: Record<string, unknown>, name: string, path: string): unknown {
  if (!(name in obj)) throw keyFileError(file, path, 'missing');
  return obj[name];
}

/** A `{"type": ..., "value": base64}` key of the expected type and size. */
function readTypedKey(file: string, obj: Record<string, unknown>, name: string, type: string, size: number): Uint8Array {
  const v = field(file, obj, name, name);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw keyFileError(file, name, 'expected an object {"type","value"}');
  const key = v as Record<string, unknown>;
  const t = field(file, key, 'type', `${name}.type`);
  if (t !== type) throw keyFileError(file, `${name}.type`, `expected ${JSON.stringify(type)}, got ${JSON.stringify(t)}`);
  const value = field(file, key, 'value', `${name}.value`);
  if (typeof value !== 'string' || !BASE64.test(value)) throw keyFileError(file, `${name}.value`, 'expected a base64 string');
  const bytes = new Uint8Array(Buffer.from(value, 'base64'));
  if (bytes.length !== size) throw keyFileError(file, `${name}.value`, `expected ${size} bytes, got ${bytes.length}`);
  return bytes;
}

/** The full key from a 64-byte `seed || pub` value, checking that the two halves belong together. */
function keyFromPrivValue(file: string, privKey: Uint8Array): Ed25519Key {
  const key = ed25519KeyFromSeed(privKey.subarray(0, ED25519_SEED_SIZE));
  if (!bytesEqual(key.pubKey, privKey.subarray(ED25519_SEED_SIZE))) {
    throw keyFileError(file, 'priv_key.value', 'the last 32 bytes are not the public key of the first 32');
  }
  return key;
}

export function generateValidatorKey(): ValidatorKey {
  return generateEd25519Key();
}

/** Parses and checks a `priv_validator_key.json`. */
export function readValidatorKey(json: string): ValidatorKey {
  const file = PRIV_VALIDATOR_KEY_FILE;
  const obj = parseJsonObject(file, json);
  const address = field(file, obj, 'address', 'address');
  if (typeof address !== 'string' || !HEX.test(address) || address.length !== ADDRESS_SIZE * 2) {
    throw keyFileError(file, 'address', `expected ${ADDRESS_SIZE} bytes of hex`);
  }
  const pubKey = readTypedKey(file, obj, 'pub_key', PUBKEY_TYPE_ED25519, ED25519_PUBKEY_SIZE);
  const key = keyFromPrivValue(file, readTypedKey(file, obj, 'priv_key', PRIVKEY_ED25519_TYPE, ED25519_PRIVKEY_SIZE));
  if (!bytesEqual(pubKey, key.pubKey)) throw keyFileError(file, 'pub_key.value', 'does not match priv_key');
  if (address.toUpperCase() !== hexUpper(key.address)) {
    throw keyFileError(file, 'address', `does not match pub_key (expected ${hexUpper(key.address)})`);
  }
  return key;
}

/** `priv_validator_key.json` as CometBFT writes it (2-space indent). */
export function validatorKeyJson(key: ValidatorKey): string {
  return JSON.stringify(
    {
      address: hexUpper(key.address),
      pub_key: { type: PUBKEY_TYPE_ED25519, value: b64(key.pubKey) },
      priv_key: { type: PRIVKEY_ED25519_TYPE, value: b64(key.privKey) },
    },
    null,
    2,
  );
}

export function generateNodeKey(): NodeKey {
  return generateEd25519Key();
}

/** Parses and checks a `node_key.json`. */
export function readNodeKey(json: string): NodeKey {
  const file = NODE_KEY_FILE;
  const obj = parseJsonObject(file, json);
  return keyFromPrivValue(file, readTypedKey(file, obj, 'priv_key', PRIVKEY_ED25519_TYPE, ED25519_PRIVKEY_SIZE));
}

/** `node_key.json` as CometBFT writes it. */
export function nodeKeyJson(key: NodeKey): string {
  return JSON.stringify({ priv_key: { type: PRIVKEY_ED25519_TYPE, value: b64(key.privKey) } }, null, 2);
}

/** The p2p node ID: lowercase hex of SHA-256(pubKey)[:20]. */
export function nodeId(key: NodeKey): string {
  return Buffer.from(pubKeyAddress(key.pubKey)).toString('hex');
}

function hexUpper(b: Uint8Array): string {
  return Buffer.from(b).toString('hex').toUpperCase();
}

// ---- priv_validator_state.json -----------------------------------------------------------------

/** Steps of the double-sign guard (privval stepNone/Propose/Prevote/Precommit). */
export const SignStep = { none: 0, propose: 1, prevote: 2, precommit: 3 } as const;

/** The last height/round/step the validator signed (privval.FilePVLastSignState). */
export interface PrivValidatorState {
  height: bigint;
  round: number;
  step: number;
  /** the last signature, when one was made */
  signature?: Uint8Array;
  /** the bytes it signed */
  signBytes?: Uint8Array;
}

/** The state of a validator that has never signed: `{"height":"0","round":0,"step":0}`. */
export function initialPrivValidatorState(): PrivValidatorState {
  return { height: 0n, round: 0, step: SignStep.none };
}

/** `priv_validator_state.json` as CometBFT writes it (signature/signbytes omitted when empty). */
export function privValidatorStateJson(state: PrivValidatorState): string {
  const out: Record<string, unknown> = { height: state.height.toString(), round: state.round, step: state.step };
  if (state.signature && state.signature.length > 0) out['signature'] = b64(state.signature);
  if (state.signBytes && state.signBytes.length > 0) out['signbytes'] = hexUpper(state.signBytes);
  return JSON.stringify(out, null, 2);
}

/** Parses and checks a `priv_validator_state.json`. */
export function readPrivValidatorState(json: string): PrivValidatorState {
  const file = PRIV_VALIDATOR_STATE_FILE;
  const obj = parseJsonObject(file, json);
  const height = field(file, obj, 'height', 'height');
  if (typeof height !== 'string' || !/^(0|[1-9][0-9]*)$/.test(height)) throw keyFileError(file, 'height', 'expected a non-negative integer string');
  const round = field(file, obj, 'round', 'round');
  if (typeof round !== 'number' || !Number.isInteger(round) || round < 0 || round > 0x7fffffff) {
    throw keyFileError(file, 'round', 'expected a non-negative int32 number');
  }
  const step = field(file, obj, 'step', 'step');
  if (typeof step !== 'number' || !Object.values(SignStep).includes(step as 0)) throw keyFileError(file, 'step', 'expected 0, 1, 2 or 3');
  const state: PrivValidatorState = { height: BigInt(height), round, step };
  const signature = obj['signature'];
  if (signature !== undefined && signature !== null) {
    if (typeof signature !== 'string' || !BASE64.test(signature)) throw keyFileError(file, 'signature', 'expected a base64 string');
    state.signature = new Uint8Array(Buffer.from(signature, 'base64'));
  }
  const signBytes = obj['signbytes'];
  if (signBytes !== undefined && signBytes !== null) {
    if (typeof signBytes !== 'string' || !HEX.test(signBytes)) throw keyFileError(file, 'signbytes', 'expected a hex string');
    state.signBytes = new Uint8Array(Buffer.from(signBytes, 'hex'));
  }
  return state;
}
