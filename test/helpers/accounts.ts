/** The dev accounts of a fresh ferry home: m/44'/60'/0'/0/i of the well-known test mnemonic. */
import { HDNodeWallet, type Provider, Wallet } from 'ethers';
import { DEV_MNEMONIC } from './node.js';

export const DEV_ACCOUNT_COUNT = 10;
/** 10000 ETH in wei */
export const DEV_BALANCE = 10_000n * 10n ** 18n;

let keys: string[] | undefined;

/** Private keys (0x-hex) of the dev accounts, derived once per process. */
export function devKeys(): string[] {
  if (!keys) {
    const parent = HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0");
    keys = Array.from({ length: DEV_ACCOUNT_COUNT }, (_, i) => parent.deriveChild(i).privateKey);
  }
  return keys;
}

export function devWallet(i: number, provider?: Provider): Wallet {
  return new Wallet(devKeys()[i]!, provider);
}

export function devAddress(i: number): string {
  return devWallet(i).address;
}
