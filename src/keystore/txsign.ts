/**
 * Signing a fully-specified transaction with a node-held key: types 0 (legacy, EIP-155 protected),
 * 1 (EIP-2930), 2 (EIP-1559) and 4 (EIP-7702 set code, its authorizations signed by their authorities
 * beforehand), serialized with @ethereumjs/tx exactly as eth_sendRawTransaction
 * expects them. The signature comes from a callback (the KeyStore), so the key never leaves it.
 */
import { Hardfork, Mainnet, createCustomCommon, type Common } from '@ethereumjs/common';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { Signature } from './crypto.js';

export interface TxFields {
  type: 0 | 1 | 2 | 4;
  chainId: bigint;
  nonce: bigint;
  gasLimit: bigint;
  /** undefined: contract creation */
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
  /** types 0 and 1 */
  gasPrice?: bigint;
  /** types 2 and 4 */
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  /** types 1, 2 and 4 */
  accessList?: { address: Uint8Array; storageKeys: Uint8Array[] }[];
  /** type 4: signed authorization tuples */
  authorizationList?: { chainId: bigint; address: Uint8Array; nonce: bigint; yParity: bigint; r: bigint; s: bigint }[];
}

/** an RLP integer: big-endian, no leading zero bytes (zero is empty) */
function unpadded(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const hex = n.toString(16);
  return Uint8Array.from(Buffer.from(hex.length % 2 === 1 ? '0' + hex : hex, 'hex'));
}

const commons = new Map<bigint, Common>();
/** chain ids remembered; a node signs for one chain */
const MAX_COMMONS = 4;

function commonFor(chainId: bigint): Common {
  let c = commons.get(chainId);
  if (!c) {
    if (commons.size >= MAX_COMMONS) commons.clear();
    // the envelope formats do not depend on the fork beyond the types it knows: Prague knows all four
    c = createCustomCommon({ chainId: Number(chainId), name: 'ferry' }, Mainnet, { hardfork: Hardfork.Prague });
    commons.set(chainId, c);
  }
  return c;
}

function unsigned(f: TxFields): TypedTransaction {
  const common = commonFor(f.chainId);
  const base = { nonce: f.nonce, gasLimit: f.gasLimit, to: f.to, value: f.value, data: f.data };
  const accessList = (f.accessList ?? []).map((e) => [e.address, e.storageKeys] as [Uint8Array, Uint8Array[]]);
  switch (f.type) {
    case 0:
      return createTx({ ...base, type: 0, gasPrice: f.gasPrice }, { common }) as TypedTransaction;
    case 1:
      return createTx({ ...base, type: 1, chainId: f.chainId, gasPrice: f.gasPrice, accessList }, { common }) as TypedTransaction;
    case 2:
      return createTx(
        { ...base, type: 2, chainId: f.chainId, maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas, accessList },
        { common },
      ) as TypedTransaction;
    case 4: {
      const authorizationList = (f.authorizationList ?? []).map((a): [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array] => [
        unpadded(a.chainId),
        a.address,
        unpadded(a.nonce),
        unpadded(a.yParity),
        unpadded(a.r),
        unpadded(a.s),
      ]);
      const fees = { maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas };
      return createTx({ ...base, type: 4, chainId: f.chainId, ...fees, accessList, authorizationList }, { common }) as TypedTransaction;
    }
  }
}

/**
 * The unsigned envelope (v, r, s empty, as geth's MarshalBinary of an unsigned tx writes zeros) and its
 * keccak hash: eth_fillTransaction's `raw` and `tx.hash` (go-ethereum internal/ethapi/api.go FillTransaction).
 */
export function unsignedTransaction(f: TxFields): { raw: Uint8Array; hash: Uint8Array } {
  const raw = unsigned(f).serialize();
  return { raw, hash: keccak_256(raw) };
}

/** Signs and serializes; resolves to the raw signed envelope and its hash. */
export async function signTransaction(
  f: TxFields,
  sign: (hash: Uint8Array) => Promise<Signature>,
): Promise<{ raw: Uint8Array; hash: Uint8Array }> {
  const tx = unsigned(f);
  const sig = await sign(tx.getHashedMessageToSign());
  const signed =
    f.type === 0
      ? (tx as TypedTransaction & { addSignature(v: bigint, r: Uint8Array, s: Uint8Array, convertV: boolean): TypedTransaction }).addSignature(
          BigInt(sig.recovery),
          sig.r,
          sig.s,
          true,
        )
      : tx.addSignature(BigInt(sig.recovery), sig.r, sig.s);
  return { raw: signed.serialize(), hash: signed.hash() };
}
