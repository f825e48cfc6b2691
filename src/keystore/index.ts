/** The key store's public API: encrypted key files, unlock state, signing helpers. */
export {
  ADDRESS_LENGTH,
  SIGNATURE_LENGTH,
  SIGNATURE_V_OFFSET,
  encodeSignature,
  isValidPrivateKey,
  keccak256,
  personalMessageHash,
  privateKeyToAddress,
  recoverAddress,
  signHash,
  type Signature,
} from './crypto.js';
export { MAX_TYPED_DATA_DEPTH, encodeType, hashStruct, parseTypedData, typedDataHash, type TypedData, type TypedField } from './eip712.js';
export {
  DEFAULT_UNLOCK_SECONDS,
  KEYSTORE_MAX_FILES,
  KeyStore,
  KeystoreErrors,
  MAX_KEY_FILE_BYTES,
  MAX_UNLOCK_SECONDS,
  keyFileName,
  type KeyStoreAccount,
  type KeyStoreOptions,
} from './keystore.js';
export { readPassphrase } from './passphrase.js';
export { signTransaction, unsignedTransaction, type TxFields } from './txsign.js';
export {
  DECRYPT_ERROR,
  KDF_QUEUE_MAX,
  MAX_CONCURRENT_KDF,
  STANDARD_SCRYPT,
  decryptKey,
  encryptKey,
  parseKeyFile,
  type KeyFileJson,
  type ScryptParams,
} from './v3.js';

