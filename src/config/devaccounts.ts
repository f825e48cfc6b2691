/**
 * The dev accounts every dev node funds (Hardhat/Anvil): BIP-39 mnemonic
 * `test test … junk`, BIP-44 path m/44'/60'/0'/0/i. Account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266.
 */
import { pbkdf2Sync } from 'node:crypto';
import { createRequire } from 'node:module';
import { HDKey } from '@scure/bip32';
import { keccak_256 } from '@noble/hashes/sha3.js';

interface Secp256k1 {
  publicKeyCreate(key: Uint8Array, compressed?: boolean): Uint8Array;
}

// the `secp256k1` package's native binding: start-up derives the dev accounts, and pure-JS curve
// arithmetic (with its table warm-up) cost a dev node ~100 ms of its cold start. Loaded at the first
// derivation, not with this module: a start on an existing home derives nothing before it listens.
let secp: Secp256k1 | undefined;
const nativeSecp = (): Secp256k1 => (secp ??= createRequire(import.meta.url)('secp256k1') as Secp256k1);

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEV_DERIVATION_PATH = "m/44'/60'/0'/0";
export const DEV_ACCOUNT_COUNT = 10;
/** 10000 ETH in wei */
export const DEV_ACCOUNT_BALANCE = 10_000n * 10n ** 18n;

export interface DevAccount {
  /** 20 bytes */
  address: Uint8Array;
  /** 32 bytes */
  privateKey: Uint8Array;
}

/** the key at DEV_DERIVATION_PATH: each account is one child of it */
let parent: HDKey | undefined;

/** BIP-39 seed of the mnemonic (no passphrase): PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic" — native here. */
function devSeed(): Uint8Array {
  return pbkdf2Sync(DEV_MNEMONIC.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
}

/** Dev accounts 0..count-1. */
export function devAccounts(count: number = DEV_ACCOUNT_COUNT): DevAccount[] {
  parent ??= HDKey.fromMasterSeed(devSeed()).derive(DEV_DERIVATION_PATH);
  const out: DevAccount[] = [];
  for (let i = 0; i < count; i++) {
    const privateKey = parent.deriveChild(i).privateKey;
    if (!privateKey) throw new Error(`dev account ${i}: no private key`);
    out.push({ address: addressOfPrivateKey(privateKey), privateKey });
  }
  return out;
}

/** Ethereum address: last 20 bytes of keccak256 of the uncompressed public key without its 0x04 prefix. */
export function addressOfPrivateKey(privateKey: Uint8Array): Uint8Array {
  const pub = nativeSecp().publicKeyCreate(privateKey, false);
  return keccak_256(pub.subarray(1)).subarray(12);
}

