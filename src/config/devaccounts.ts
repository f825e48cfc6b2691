/**
 * The dev accounts every dev node funds (Hardhat/Anvil): BIP-39 mnemonic
 * `test test … junk`, BIP-44 path m/44'/60'/0'/0/i. Account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266.
 */
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

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

let root: HDKey | undefined;

/** Dev accounts 0..count-1. */
export function devAccounts(count: number = DEV_ACCOUNT_COUNT): DevAccount[] {
  root ??= HDKey.fromMasterSeed(mnemonicToSeedSync(DEV_MNEMONIC));
  const out: DevAccount[] = [];
  for (let i = 0; i < count; i++) {
    const privateKey = root.derive(`${DEV_DERIVATION_PATH}/${i}`).privateKey;
    if (!privateKey) throw new Error(`dev account ${i}: no private key`);
    out.push({ address: addressOfPrivateKey(privateKey), privateKey });
  }
  return out;
}

/** Ethereum address: last 20 bytes of keccak256 of the uncompressed public key without its 0x04 prefix. */
export function addressOfPrivateKey(privateKey: Uint8Array): Uint8Array {
  const pub = secp256k1.getPublicKey(privateKey, false);
  return keccak_256(pub.subarray(1)).subarray(12);
}

/** EIP-55 mixed-case checksum form of a 20-byte address. */
export function checksumAddress(address: Uint8Array): string {
  const hex = Buffer.from(address).toString('hex');
  const hash = keccak_256(new TextEncoder().encode(hex));
  let out = '0x';
  for (let i = 0; i < hex.length; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  return out;
}
