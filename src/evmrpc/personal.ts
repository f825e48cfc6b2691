/**
 * The `personal` namespace (private: every method needs an authenticated request, see
 * src/server/auth.ts). Accounts live in the node's key store (src/keystore/); the account
 * state machine of docs/accounts-and-auth.md is implemented there. Results and error texts are geth's:
 *
 * - personal_importRawKey(hexKey, passphrase) → address; the key may carry a 0x prefix.
 * - personal_listAccounts → addresses; personal_listWallets → geth's wallet objects
 *   (`url` keystore://<file>, `status` Locked/Unlocked, `accounts`).
 * - personal_newAccount(passphrase) → address.
 * - personal_unlockAccount(address, passphrase, duration?) → true; duration in seconds as a JSON
 *   number (or a hex quantity), absent/null = 300, 0 = until the node exits.
 * - personal_lockAccount(address) → true.
 * - personal_sendTransaction(tx, passphrase) → hash; the key is decrypted for this call only.
 * - personal_sign(message, address, passphrase?) → EIP-191 signature. Without a passphrase the
 *   account must be unlocked (ethers' JsonRpcSigner.signMessage sends two params).
 * - personal_ecRecover(message, signature) → address (V must be 27 or 28).
 * - personal_initializeWallet, personal_unpair: hardware/smart-card wallets, which ferry does not
 *   drive: an error naming the method.
 */
import { jsonKind, typeMismatch } from '../lib/hex.js';
import { invalidRequest, unsupported } from '../lib/errors.js';
import { address, data, optional, quantity, string } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import {
  DEFAULT_UNLOCK_SECONDS,
  KeystoreErrors,
  MAX_UNLOCK_SECONDS,
  SIGNATURE_LENGTH,
  SIGNATURE_V_OFFSET,
  personalMessageHash,
  recoverAddress,
} from '../keystore/index.js';
import { sendArgs, type AccountSigner } from './accounts.js';
import { hexData } from './format.js';

const PRIVATE_KEY_HEX_DIGITS = 64;
const KEYSTORE_URL_SCHEME = 'keystore://';

/** geth's *uint64 duration: a JSON number; a hex quantity is accepted too. */
const unlockDuration: ParamCodec<number | undefined> = {
  name: 'duration',
  optional: true,
  decode(v, i) {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') {
      const n = quantity.decode(v, i);
      if (n > BigInt(MAX_UNLOCK_SECONDS)) throw invalidRequest(KeystoreErrors.durationTooLarge);
      return Number(n);
    }
    if (typeof v !== 'number') throw typeMismatch(i, jsonKind(v), 'uint64');
    if (!Number.isInteger(v) || v < 0) throw typeMismatch(i, `number ${v}`, 'uint64');
    if (v > MAX_UNLOCK_SECONDS) throw invalidRequest(KeystoreErrors.durationTooLarge);
    return v;
  },
};

/** A raw private key: 64 hex digits, with or without 0x. The value never appears in the error. */
const rawPrivateKey: ParamCodec<Uint8Array> = {
  name: 'private key',
  decode(v, i) {
    const s = string.decode(v, i);
    const digits = s.startsWith('0x') || s.startsWith('0X') ? s.slice(2) : s;
    if (digits.length !== PRIVATE_KEY_HEX_DIGITS || !/^[0-9a-fA-F]*$/.test(digits)) {
      throw invalidRequest('invalid private key: expected 32 bytes as hex');
    }
    return new Uint8Array(Buffer.from(digits, 'hex'));
  },
};

/** every personal method needs the token */
const PRIVATE = { private: true } as const;

function notSupported(method: string): never {
  throw unsupported(`${method} is not supported: ferry keeps keys in its key store only and drives no hardware or smart-card wallets`);
}

export function createPersonalMethods(signer: AccountSigner): MethodTable {
  const ks = signer.keystore;
  const table: Record<string, MethodSpec> = {
    personal_importRawKey: method([rawPrivateKey, string], async ([key, passphrase]) => {
      try {
        return hexData(await ks.importKey(key, passphrase));
      } finally {
        key.fill(0);
      }
    }, PRIVATE),
    personal_listAccounts: method([], () => signer.accounts(), PRIVATE),
    personal_listWallets: method([], () =>
      ks.accounts().map((a) => {
        const url = KEYSTORE_URL_SCHEME + a.path;
        return { url, status: ks.isUnlocked(a.address) ? 'Unlocked' : 'Locked', accounts: [{ address: hexData(a.address), url }] };
      }), PRIVATE,
    ),
    personal_newAccount: method([string], async ([passphrase]) => hexData(await ks.newAccount(passphrase)), PRIVATE),
    personal_unlockAccount: method(
      [address, string, unlockDuration],
      async ([addr, passphrase, seconds]) => {
        await ks.unlock(addr, passphrase, seconds ?? DEFAULT_UNLOCK_SECONDS);
        return true;
      }, PRIVATE,
    ),
    personal_lockAccount: method([address], ([addr]) => {
      ks.lock(addr);
      return true;
    }, PRIVATE),
    personal_sendTransaction: method([sendArgs, string], ([args, passphrase], ctx) =>
      signer.sendTransaction(args, passphrase, ctx), PRIVATE,
    ),
    personal_sign: method(
      [data, address, optional(string)],
      ([message, from, passphrase]) => signer.signMessage(from, message, passphrase), PRIVATE,
    ),
    personal_ecRecover: method([data, data], ([message, sig]) => {
      if (sig.length !== SIGNATURE_LENGTH) throw invalidRequest(`signature must be ${SIGNATURE_LENGTH} bytes long`);
      const v = sig[64]!;
      if (v !== SIGNATURE_V_OFFSET && v !== SIGNATURE_V_OFFSET + 1) throw invalidRequest('invalid Ethereum signature (V is not 27 or 28)');
      try {
        return hexData(recoverAddress(personalMessageHash(message), sig.subarray(0, 64), v - SIGNATURE_V_OFFSET));
      } catch {
        throw invalidRequest('invalid signature: no public key recovers from it');
      }
    }, PRIVATE),
    personal_initializeWallet: method([string], () => notSupported('personal_initializeWallet'), PRIVATE),
    personal_unpair: method([string, optional(string)], () => notSupported('personal_unpair'), PRIVATE),
  };
  return Object.freeze(table);
}
