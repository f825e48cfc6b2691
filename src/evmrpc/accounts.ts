/**
 * Surface A's `eth` methods that use node-held keys: eth_accounts, eth_sign, eth_sendTransaction,
 * eth_signTransaction, eth_signTypedData_v4 (and eth_signTypedData, the same v4 hashing, as Evmos
 * registers it). They are public like the rest of `eth`: signing needs an account unlocked with
 * personal_unlockAccount (a private method), as in geth.
 *
 * eth_sendTransaction fills what the transaction object leaves out, then signs and submits through
 * the same path as eth_sendRawTransaction (EvmBackend.sendRawTransaction → CheckTx):
 * - a missing `gas` is estimated as geth's setDefaults does (go-ethereum internal/ethapi/transaction_args.go):
 *   eth_estimateGas of the tx's own fields on the latest block, capped by the gas cap; an estimate that
 *   reverts answers eth_estimateGas's error (code 3, `execution reverted`, the revert data) and sends
 *   nothing. `gasLimit` is accepted as an alias of `gas` (docs/compatibility.md);
 * - fees: `gasPrice` makes a legacy tx (type 1 with an `accessList`), otherwise EIP-1559 with
 *   maxPriorityFeePerGas = the node's suggestion and maxFeePerGas = 2 × next base fee + tip (geth);
 * - `nonce` defaults to the account's pending nonce; giving an own pending nonce replaces that
 *   transaction (with the pool's price bump). Sends from one account are serialized so concurrent
 *   calls get consecutive nonces;
 * - no `to` creates a contract (then `data`/`input` is required, as geth).
 * eth_signTransaction fills the same way and returns the raw signed transaction without sending it.
 *
 * Impersonation (dev namespaces, docs/dev-mode.md): eth_sendTransaction from an address the node has
 * no key for, while anvil_impersonateAccount (or autoImpersonateAccount) has it impersonated, sends
 * the filled transaction with the impersonation placeholder signature (evm/tx.ts) instead of a real
 * one; CheckTx admits it only for an address impersonated on the chain thread too.
 */
import { argumentError, parseQuantity } from '../lib/hex.js';
import { DomainError, invalidRequest, notFound } from '../lib/errors.js';
import { address, data } from '../jsonrpc/codecs.js';
import { method, type MethodSpec, type MethodTable, type ParamCodec } from '../jsonrpc/types.js';
import {
  KeystoreErrors,
  encodeSignature,
  parseTypedData,
  personalMessageHash,
  signHash,
  signTransaction,
  typedDataHash,
  type KeyStore,
  type TxFields,
  type TypedData,
} from '../keystore/index.js';
import type { Address, CallOrigin } from '../types/chain.js';
import { EMPTY_AUTH_LIST_TEXT, impersonationSignature } from '../evm/tx.js';
import type { EvmBackend } from './backend.js';
import { LATEST, callArgs, type CallArgs } from './codecs.js';
import { hexData, hexKey } from './format.js';
import { callDefaults, stateBlockNumber, withDeadline } from './methods.js';
import { GethText } from '../lib/gethtexts.js';

/** geth's fee cap headroom: maxFeePerGas = BASE_FEE_MULTIPLIER × next base fee + tip */
export const BASE_FEE_MULTIPLIER = 2n;
const MAX_UINT64 = (1n << 64n) - 1n;

/** eth_sendTransaction's object: geth's TransactionArgs plus `gasLimit` as an alias of `gas`. */
export const sendArgs: ParamCodec<CallArgs> = {
  name: 'transaction object',
  decode(v, i) {
    const args = callArgs.decode(v, i);
    const raw = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).gasLimit : undefined;
    if (raw === undefined || raw === null) return args;
    let gasLimit: bigint;
    try {
      gasLimit = parseQuantity(raw, i);
    } catch (e) {
      if (!(e instanceof DomainError && e.is('invalidArgument') && e.detail !== undefined)) throw e;
      throw argumentError(i, `gasLimit: ${e.detail.reason}`);
    }
    if (gasLimit > MAX_UINT64) throw argumentError(i, 'gasLimit: hex number > 64 bits');
    if (args.gas !== undefined && args.gas !== gasLimit) throw argumentError(i, 'both "gas" and "gasLimit" are set and not equal');
    return { ...args, gas: gasLimit };
  },
};

/** Typed data as an object or its JSON string (ethers and viem send the string). */
export const typedData: ParamCodec<TypedData> = {
  name: 'typed data',
  decode(v, i) {
    try {
      return parseTypedData(v);
    } catch (e) {
      if (e instanceof DomainError && e.is('invalidArgument')) throw argumentError(i, e.message);
      throw e;
    }
  },
};

/** Serializes async work per key (one account's nonce assignment and submission). */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/** What the gas estimate of a send without `gas` runs under (json-rpc options, as eth_estimateGas). */
export interface SendEstimateLimits {
  /** eth_call gas cap (0 = none) */
  gasCap: bigint;
  /** answer deadline of a simulation, ms (0 = none) */
  evmTimeoutMs: number;
}

/** Signing and sending with node-held keys; shared by the eth_* and personal_* tables. */
export class AccountSigner {
  private readonly sendLock = new KeyedLock();
  /** always-unlocked keys held in memory (the dev accounts of `ferry dev`), by hex address */
  private readonly memoryKeys: Map<string, { address: Address; privateKey: Uint8Array }>;
  /** anvil_impersonateAccount's addresses (hex keys), mirrored from the chain thread's by the dev controls */
  private readonly impersonated = new Set<string>();
  private autoImpersonate = false;

  constructor(
    private readonly backend: EvmBackend,
    readonly keystore: KeyStore,
    memoryKeys: readonly { address: Address; privateKey: Uint8Array }[],
    private readonly limits: SendEstimateLimits,
  ) {
    this.memoryKeys = new Map(memoryKeys.map((k) => [hexKey(k.address), k]));
  }

  /** anvil_impersonateAccount (on) / stopImpersonatingAccount (off) on this side of the node. */
  setImpersonated(address: Address, on: boolean): void {
    if (on) this.impersonated.add(hexKey(address));
    else this.impersonated.delete(hexKey(address));
  }

  /** anvil_autoImpersonateAccount */
  setAutoImpersonate(on: boolean): void {
    this.autoImpersonate = on;
  }

  /** Whether a send from `from` goes out impersonated: no usable key, and the address impersonated. */
  private impersonates(from: Address, passphrase: string | undefined): boolean {
    if (passphrase !== undefined || this.memoryKeys.has(hexKey(from)) || this.keystore.isUnlocked(from)) return false;
    return this.autoImpersonate || this.impersonated.has(hexKey(from));
  }

  /** Addresses of the in-memory keys, then of the key store, as eth_accounts lists them. */
  accounts(): string[] {
    const out = [...this.memoryKeys.values()].map((k) => hexData(k.address));
    for (const a of this.keystore.accounts()) if (!this.memoryKeys.has(hexKey(a.address))) out.push(hexData(a.address));
    return out;
  }

  /** Signs with an in-memory key (no passphrase needed), else with the key store. */
  private sign(from: Address, digest: Uint8Array, passphrase?: string) {
    const key = passphrase === undefined ? this.memoryKeys.get(hexKey(from))?.privateKey : undefined;
    return key !== undefined ? signHash(digest, key) : this.keystore.sign(from, digest, passphrase);
  }

  /** 65-byte EIP-191 signature (eth_sign, personal_sign). */
  async signMessage(from: Address, message: Uint8Array, passphrase?: string): Promise<string> {
    return hexData(encodeSignature(await this.sign(from, personalMessageHash(message), passphrase)));
  }

  async signTypedData(from: Address, td: TypedData): Promise<string> {
    return hexData(encodeSignature(await this.sign(from, typedDataHash(td))));
  }

  /** The sender, required. */
  private fromOf(args: CallArgs): Address {
    if (args.from === undefined) throw invalidRequest('missing "from": the sending account is required');
    return args.from;
  }

  /**
   * geth's setDefaults for a missing gas: eth_estimateGas of the tx's fields (its nonce aside, its fees
   * filled) on the latest block, capped by the gas cap, within evm-timeout; its error (a revert: code 3
   * with the data) is the send's.
   */
  private estimateGas(args: CallArgs, origin: CallOrigin | undefined): Promise<bigint> {
    const { nonce: _nonce, ...call } = args;
    const req = callDefaults(call, this.backend.chainId, this.limits.gasCap, false);
    const n = stateBlockNumber(this.backend, LATEST);
    return withDeadline(this.backend.estimateGas(req, n, undefined, origin), this.limits.evmTimeoutMs);
  }

  /** geth's setDefaults: chain id, type, nonce, gas (estimated when absent), fees. */
  async fill(args: CallArgs, origin?: CallOrigin): Promise<TxFields> {
    const b = this.backend;
    if (args.chainId !== undefined && args.chainId !== b.chainId) {
      throw invalidRequest(`chainId does not match node's (have=${args.chainId}, want=${b.chainId})`);
    }
    const hasLegacyPrice = args.gasPrice !== undefined;
    const hasDynamicFee = args.maxFeePerGas !== undefined || args.maxPriorityFeePerGas !== undefined;
    if (hasLegacyPrice && hasDynamicFee) throw invalidRequest(GethText.mixedFeeFields);
    // go-ethereum internal/ethapi/transaction_args.go setDefaults / ToTransaction
    const auths = args.authorizationList;
    if (hasLegacyPrice && auths !== undefined) throw invalidRequest('both gasPrice and authorizationList specified');
    const input = args.data ?? new Uint8Array();
    if (args.to === undefined && input.length === 0) throw invalidRequest('contract creation without any data provided');
    if (args.to === undefined && auths !== undefined) {
      throw invalidRequest('authorizationList provided for contract creation, but "to" field is missing');
    }
    // the pool would refuse it (core/txpool/validation.go); said before signing
    if (auths !== undefined && auths.length === 0) throw invalidRequest(EMPTY_AUTH_LIST_TEXT);
    let type: 0 | 1 | 2 | 4;
    if (auths !== undefined) {
      if (args.type !== undefined && args.type !== 4) throw invalidRequest('authorizationList needs a type-4 transaction');
      type = 4;
    } else if (args.type !== undefined) {
      if (args.type !== 0 && args.type !== 1 && args.type !== 2) throw invalidRequest(GethText.txTypeNotSupported);
      type = args.type;
      if (type !== 2 && hasDynamicFee) throw invalidRequest('maxFeePerGas and maxPriorityFeePerGas need a type-2 transaction');
      if (type === 2 && hasLegacyPrice) throw invalidRequest('gasPrice cannot be used with a type-2 transaction');
    } else if (hasLegacyPrice) {
      type = args.accessList !== undefined ? 1 : 0;
    } else {
      type = 2;
    }
    const nonce = args.nonce ?? (await b.pendingNonce(this.fromOf(args)));
    const fees: Pick<TxFields, 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'> = {};
    if (type === 2 || type === 4) {
      const tip = args.maxPriorityFeePerGas ?? b.maxPriorityFeePerGas();
      const cap = args.maxFeePerGas ?? BASE_FEE_MULTIPLIER * b.nextBaseFee() + tip;
      if (cap < tip) throw invalidRequest(`maxFeePerGas (${cap}) < maxPriorityFeePerGas (${tip})`);
      fees.maxFeePerGas = cap;
      fees.maxPriorityFeePerGas = tip;
    } else {
      fees.gasPrice = args.gasPrice ?? b.gasPrice();
    }
    // geth's setDefaults fills the fees first and estimates with them
    const gasLimit = args.gas ?? (await this.estimateGas({ ...args, ...fees }, origin));
    const fields: TxFields = {
      type,
      chainId: b.chainId,
      nonce,
      gasLimit,
      to: args.to,
      value: args.value ?? 0n,
      data: input,
      accessList: args.accessList,
      ...(auths !== undefined ? { authorizationList: auths } : {}),
      ...fees,
    };
    return fields;
  }

  /** Fills and signs; resolves to the raw signed transaction. */
  async signTransaction(args: CallArgs, passphrase?: string, origin?: CallOrigin): Promise<Uint8Array> {
    const from = this.fromOf(args);
    this.checkSigner(from, passphrase);
    const fields = await this.fill(args, origin);
    const { raw } = await signTransaction(fields, async (h) => this.sign(from, h, passphrase));
    return raw;
  }

  /** Fills, signs and submits like eth_sendRawTransaction; resolves to the transaction hash. */
  sendTransaction(args: CallArgs, passphrase?: string, origin?: CallOrigin): Promise<string> {
    const from = this.fromOf(args);
    if (!this.impersonates(from, passphrase)) this.checkSigner(from, passphrase);
    return this.sendLock.run(hexKey(from), async () => hexData(await this.backend.sendRawTransaction(await this.signOrImpersonate(args, passphrase, origin))));
  }

  /**
   * Fills and signs with a held key, or gives the placeholder signature when `from` is impersonated
   * (docs/dev-mode.md "Impersonation"); resolves to the raw transaction (eth_sendTransaction, anvil_reorg).
   */
  async signOrImpersonate(args: CallArgs, passphrase?: string, origin?: CallOrigin): Promise<Uint8Array> {
    const from = this.fromOf(args);
    if (!this.impersonates(from, passphrase)) return this.signTransaction(args, passphrase, origin);
    return (await signTransaction(await this.fill(args, origin), async () => impersonationSignature(from))).raw;
  }

  /** Fails fast (before any nonce or fee lookup) when the account cannot sign. */
  private checkSigner(from: Address, passphrase: string | undefined): void {
    if (passphrase === undefined && (this.memoryKeys.has(hexKey(from)) || this.keystore.isUnlocked(from))) return;
    if (!this.keystore.find(from)) throw notFound(KeystoreErrors.unknownAccount);
    if (passphrase === undefined) throw invalidRequest(KeystoreErrors.locked);
  }
}

export function createAccountMethods(signer: AccountSigner): MethodTable {
  const table: Record<string, MethodSpec> = {
    eth_accounts: method([], () => signer.accounts()),
    eth_sign: method([address, data], ([from, message]) => signer.signMessage(from, message)),
    eth_sendTransaction: method([sendArgs], ([args], ctx) => signer.sendTransaction(args, undefined, ctx)),
    eth_signTransaction: method([sendArgs], async ([args], ctx) => hexData(await signer.signTransaction(args, undefined, ctx))),
    eth_signTypedData_v4: method([address, typedData], ([from, td]) => signer.signTypedData(from, td)),
    eth_signTypedData: method([address, typedData], ([from, td]) => signer.signTypedData(from, td)),
  };
  return Object.freeze(table);
}
