/**
 * Signed-transaction decoding: raw envelope -> ethereumjs tx + ferry's EvmTx (sender recovered).
 */
import type { Common } from '@ethereumjs/common';
import { Capability, create1559FeeMarketTxFromBytesArray, createAccessList2930TxFromBytesArray, createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { Address, bigIntToBytes, bigIntToUnpaddedBytes, bytesToBigInt, eoaCode7702AuthorizationHashedMessageToSign, setLengthLeft } from '@ethereumjs/util';
import { txRejected, type DomainError } from '../lib/errors.js';
import type { AuthorizationItem, EvmTx, TxType } from '../types/chain.js';
import { GethText } from '../lib/gethtexts.js';
import { ecrecover, keccak256 } from './common.js';
import { canonicalListView } from './rlpcanonical.js';
import { SECP256K1_HALF_N, SECP256K1_N, typedTxOf } from './typedtx.js';

/** The envelope types ferry decodes; type 4 (EIP-7702 set code) only where the rules in force include EIP-7702 (Prague on). */
export const SUPPORTED_TX_TYPES = new Set([0, 1, 2, 4]);
/** EIP-7702's set-code transaction type */
export const SET_CODE_TX_TYPE = 4;

/** Whether the rules of `common` accept an envelope of this type (geth core/txpool/validation.go: type 4 from Prague). */
export function txTypeActive(type: number, common: Common): boolean {
  if (!SUPPORTED_TX_TYPES.has(type)) return false;
  return type !== SET_CODE_TX_TYPE || common.isActivatedEIP(7702);
}

/** Types whose fees are a fee cap and a tip (EIP-1559 fields): 2 and 4. */
export const isDynamicFeeType = (type: number): boolean => type === 2 || type === SET_CODE_TX_TYPE;

/** geth core/txpool/validation.go: a set-code tx without authorizations */
export const EMPTY_AUTH_LIST_TEXT = 'set code tx must have at least one authorization tuple';

/**
 * The signer of an EIP-7702 authorization (keccak256(0x05 ‖ rlp([chainId, address, nonce])) signed),
 * or undefined when the signature values are invalid or do not recover (go-ethereum
 * core/types/tx_setcode.go SetCodeAuthorization.Authority; the VM then skips the tuple).
 */
export function authorityOf(a: AuthorizationTuple): Uint8Array | undefined {
  if (a.yParity > 1n || a.r === 0n || a.s === 0n || a.r >= SECP256K1_N || a.s > SECP256K1_HALF_N) return undefined;
  try {
    const msg = eoaCode7702AuthorizationHashedMessageToSign([
      bigIntToUnpadded(a.chainId),
      a.address,
      bigIntToUnpadded(a.nonce),
    ]);
    const pub = ecrecover(msg, a.yParity, setLengthLeft(bigIntToBytes(a.r), 32), setLengthLeft(bigIntToBytes(a.s), 32));
    return keccak256(pub).slice(12);
  } catch {
    return undefined;
  }
}

const bigIntToUnpadded = (n: bigint): Uint8Array => (n === 0n ? new Uint8Array(0) : bigIntToBytes(n));

/** An authorization tuple's fields, without its recovered signer. */
export type AuthorizationTuple = Omit<AuthorizationItem, 'authority'>;

/** A tuple as the envelope carries it: [chainId, address, nonce, yParity, r, s], integers without leading zeros. */
export function authorizationTupleBytes(a: AuthorizationTuple): Uint8Array[] {
  return [bigIntToUnpadded(a.chainId), a.address, bigIntToUnpadded(a.nonce), bigIntToUnpadded(a.yParity), bigIntToUnpadded(a.r), bigIntToUnpadded(a.s)];
}

export interface DecodedTx {
  tx: TypedTransaction;
  evm: EvmTx;
}

/** bytes that are not a valid signed transaction */
function rejected(message: string): DomainError<'txRejected'> {
  return txRejected('decode', message);
}

/**
 * Dev-mode impersonation (docs/dev-mode.md): a transaction sent as an address whose key the node
 * does not hold carries this recognisable placeholder signature instead of a real one — s = 1,
 * y-parity 0, r = 2^160 + the sender's address — so the envelope stays a well-formed Ethereum
 * transaction whose bytes alone name the sender (like Anvil's fixed fake signature, plus the
 * sender, so two senders' otherwise equal transactions get different hashes). ECDSA never yields
 * s = 1 for a real key, so no signed transaction is mistaken for one. Every decoder reads it the same
 * way (block execution, replays, traces); only CheckTx and ProcessProposal decide whether such a
 * transaction may enter the pool or a block (while the node serves the dev namespaces).
 */
const IMPERSONATION_R_TAG = 1n << 160n;
const ADDRESS_MASK = IMPERSONATION_R_TAG - 1n;

export interface ImpersonationSignature {
  r: Uint8Array;
  s: Uint8Array;
  recovery: number;
}

/** The placeholder signature of a transaction sent as `sender` (a 20-byte address). */
export function impersonationSignature(sender: Uint8Array): ImpersonationSignature {
  const r = IMPERSONATION_R_TAG | BigInt('0x' + Buffer.from(sender).toString('hex'));
  return { r: setLengthLeft(bigIntToBytes(r), 32), s: setLengthLeft(bigIntToBytes(1n), 32), recovery: 0 };
}

/** The sender named by a placeholder signature, or undefined for any other signature. */
export function impersonatedSender(sig: { v: bigint; r: bigint; s: bigint }, type: number): Uint8Array | undefined {
  if (sig.s !== 1n || sig.r >> 160n !== 1n) return undefined;
  // y-parity 0: typed v = 0; legacy v = 27 or EIP-155's chainId * 2 + 35 (odd)
  const parityZero = type === 0 ? sig.v === 27n || (sig.v >= 35n && sig.v % 2n === 1n) : sig.v === 0n;
  if (!parityZero) return undefined;
  return setLengthLeft(bigIntToBytes(sig.r & ADDRESS_MASK), 20);
}

/** Whether an EVM transaction carries the impersonation placeholder signature. */
export const isImpersonated = (tx: EvmTx): boolean => impersonatedSender(tx, tx.type) !== undefined;

/**
 * The signer of a decoded, signed tx, as ethereumjs's getSenderPublicKey and getSenderAddress find it
 * (@ethereumjs/tx capabilities/legacy.ts: the signing hash, the secp256k1 recovery the Common carries
 * (native: evm/common.ts), the chain id when the tx is EIP-155 protected; the s-value bound is checked when
 * the tx is built) but with the address hashed by the native Keccak-256: ethereumjs hashes the public key
 * in JavaScript (@ethereumjs/util pubToAddress). Throws when the signature does not recover.
 */
function recoverSigner(tx: TypedTransaction): Uint8Array {
  const chainId = tx.supports(Capability.EIP155ReplayProtection) ? tx.common.chainId() : undefined;
  const recover = tx.common.customCrypto.ecrecover ?? ecrecover;
  const pub = recover(tx.getMessageToVerifySignature(), tx.v!, bigIntToUnpaddedBytes(tx.r!), bigIntToUnpaddedBytes(tx.s!), chainId);
  return keccak256(pub).slice(12);
}

/**
 * Decodes a signed envelope. `sender`: the signer as already recovered by another thread from these
 * same bytes (eth_sendRawTransaction and broadcast_tx_* are decoded on the RPC thread, which hands the
 * chain thread the sender so it does not recover it again); without it the sender is recovered here
 * (secp256k1, the dearest step of decoding: `recoverSigner`). `hash`, with `sender`: the tx hash that
 * decoding found (the tx does not serialize itself again to hash). Either way the tx answers
 * getSenderAddress with that sender (the VM asks it once per run) and is frozen (frozen txs cache their hash).
 */
export function decodeTx(raw: Uint8Array, common: Common, sender?: Uint8Array, hash?: Uint8Array): DecodedTx {
  const first = raw[0];
  // geth: a first byte up to 0x7f is a typed envelope (type byte + payload); 0xc0+ is a legacy RLP list
  if (first === undefined || (first <= 0x7f && raw.length <= 1)) throw rejected('typed transaction too short');
  if (first <= 0x7f && !txTypeActive(first, common)) throw rejected(GethText.txTypeNotSupported);
  let tx: TypedTransaction;
  try {
    // frozen below, once its sender is set
    tx = fromFields(raw, common) ?? (createTxFromRLP(raw, { common, freeze: false }) as TypedTransaction);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // geth decodes an empty list and refuses it in the pool; ethereumjs refuses it while decoding
    if (/authorization list is empty/.test(msg)) throw rejected(EMPTY_AUTH_LIST_TEXT);
    // geth: SetCodeTx.To is not optional, so the RLP of a set-code tx without one does not decode
    if (/cannot be used to create contracts/.test(msg)) throw rejected('rlp: input string too short for common.Address, decoding into (types.SetCodeTx).To');
    const capped = EIP7825_REFUSAL.exec(msg);
    if (capped) throw rejected(GethText.gasLimitTooHigh(BigInt(capped[2]!), BigInt(capped[1]!)));
    if (/chain ID|EIP155|chainId/i.test(msg)) throw rejected('invalid chain id for signer');
    if (/signature|Invalid Signature|s-values/i.test(msg)) throw rejected('invalid transaction v, r, s values');
    throw rejected(`rlp: ${msg.split('\n')[0]!.replace(/ \(tx type=.*$/, '')}`);
  }
  if (!tx.isSigned()) throw rejected('invalid transaction v, r, s values');
  const impersonated = impersonatedSender({ v: tx.v!, r: tx.r!, s: tx.s! }, tx.type);
  if (impersonated !== undefined) {
    // the sender is the one the placeholder names; the tx is left unfrozen so the VM sees it
    const address = new Address(impersonated);
    (tx as { getSenderAddress: () => Address }).getSenderAddress = () => address;
    return { tx, evm: toEvmTx(tx, impersonated, raw) };
  }
  let from = sender;
  if (from === undefined) {
    try {
      from = recoverSigner(tx);
    } catch {
      throw rejected('invalid sender');
    }
  }
  const address = new Address(from);
  (tx as { getSenderAddress: () => Address }).getSenderAddress = () => address;
  if (sender !== undefined && hash !== undefined) (tx.cache as { hash?: Uint8Array }).hash = hash;
  Object.freeze(tx);
  return { tx, evm: toEvmTx(tx, from, raw) };
}

/**
 * A canonical type-1 or type-2 envelope built from its fields read as views of `raw`
 * (evm/rlpcanonical.ts): the same fields @ethereumjs/tx's createTxFromRLP decodes (into copies), made
 * into the library's object by evm/typedtx.ts after the constructor's checks, or, when a field fails
 * them, handed to the same constructor, which refuses them; undefined for any other bytes, which
 * createTxFromRLP decodes and refuses as always (docs/benchmarks.md "Ingest: admission and the V8
 * platform threads", "CheckTx on the chain thread").
 */
function fromFields(raw: Uint8Array, common: Common): TypedTransaction | undefined {
  const type = raw[0];
  if (type !== 1 && type !== 2) return undefined;
  const fields = canonicalListView(raw, 1);
  if (fields === undefined) return undefined;
  // the library's object without its constructor where every field passes its checks (evm/typedtx.ts)
  const built = typedTxOf(type, fields, common);
  if (built !== undefined) return built;
  const make = type === 2 ? create1559FeeMarketTxFromBytesArray : createAccessList2930TxFromBytesArray;
  return make(fields as never, { common, freeze: false });
}

/** ethereumjs tx util/internal.ts's refusal of a gas limit over the EIP-7825 cap (Osaka): tx gas, cap */
const EIP7825_REFUSAL = /gas limit (\d+) exceeds the maximum allowed by EIP-7825 \((\d+)\)/;

/**
 * The same transaction under the rules of another fork (a block runs each tx under the rules of its own
 * time: evm/forks.ts); `d` itself when it was decoded under them. Throws txRejected when those rules
 * refuse it (a type they lack, a gas limit over Osaka's cap).
 */
export function underRules(d: DecodedTx, common: Common): DecodedTx {
  if (d.tx.common === common) return d;
  return decodeTx(d.evm.raw, common, d.evm.from, d.evm.hash);
}

function toEvmTx(tx: TypedTransaction, from: Uint8Array, raw: Uint8Array): EvmTx {
  const t = tx as TypedTransaction & {
    gasPrice?: bigint;
    maxFeePerGas?: bigint;
    maxPriorityFeePerGas?: bigint;
    accessList?: [Uint8Array, Uint8Array[]][];
    chainId?: bigint;
    authorizationList?: Uint8Array[][];
  };
  const type = tx.type as TxType;
  const dynamic = isDynamicFeeType(type);
  const legacyProtected = type === 0 && tx.supports(155 as never) && (tx.v ?? 0n) >= 35n;
  return {
    hash: tx.hash(),
    type,
    chainId: type === 0 ? (legacyProtected ? tx.common.chainId() : undefined) : t.chainId,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    gasPrice: dynamic ? undefined : t.gasPrice,
    maxFeePerGas: dynamic ? t.maxFeePerGas : undefined,
    maxPriorityFeePerGas: dynamic ? t.maxPriorityFeePerGas : undefined,
    to: tx.to?.bytes,
    value: tx.value,
    input: tx.data,
    accessList: (t.accessList ?? []).map(([address, keys]) => ({ address, storageKeys: keys })),
    ...(type === SET_CODE_TX_TYPE ? { authorizationList: (t.authorizationList ?? []).map(authorizationItem) } : {}),
    v: tx.v ?? 0n,
    r: tx.r ?? 0n,
    s: tx.s ?? 0n,
    from,
    raw,
  };
}

/** The signers of a set-code tx's authorizations that recover, in list order (none for other types). */
export function authoritiesOfTx(tx: TypedTransaction): Uint8Array[] {
  const list = (tx as { authorizationList?: Uint8Array[][] }).authorizationList ?? [];
  const out: Uint8Array[] = [];
  for (const fields of list) {
    const a = authorizationItem(fields).authority;
    if (a !== undefined) out.push(a);
  }
  return out;
}

/** The delegation target of EIP-7702 designator code (0xef0100 ‖ address), or undefined for any other code. */
export function delegationTarget(code: Uint8Array): Uint8Array | undefined {
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00 ? code.subarray(3) : undefined;
}

/** An authorization tuple as the envelope carries it ([chainId, address, nonce, yParity, r, s]), with its signer. */
function authorizationItem(fields: Uint8Array[]): AuthorizationItem {
  const [chainId, address, nonce, yParity, r, s] = fields as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const item = { chainId: bytesToBigInt(chainId), address, nonce: bytesToBigInt(nonce), yParity: bytesToBigInt(yParity), r: bytesToBigInt(r), s: bytesToBigInt(s) };
  return { ...item, authority: authorityOf(item) };
}

/** Fee the sender pays per gas at a base fee (legacy/2930: gasPrice). */
export function effectiveGasPrice(tx: EvmTx, baseFee: bigint): bigint {
  if (!isDynamicFeeType(tx.type)) return tx.gasPrice!;
  const tip = tx.maxPriorityFeePerGas!;
  const cap = tx.maxFeePerGas!;
  return cap < baseFee + tip ? cap : baseFee + tip;
}

/** Miner tip per gas at a base fee (may be negative if fee cap < base fee). */
export function effectiveTip(tx: EvmTx, baseFee: bigint): bigint {
  return effectiveGasPrice(tx, baseFee) - baseFee;
}

export function feeCap(tx: EvmTx): bigint {
  return isDynamicFeeType(tx.type) ? tx.maxFeePerGas! : tx.gasPrice!;
}

export function tipCap(tx: EvmTx): bigint {
  return isDynamicFeeType(tx.type) ? tx.maxPriorityFeePerGas! : tx.gasPrice!;
}
