/**
 * A canonical type-1 (EIP-2930) or type-2 (EIP-1559) envelope's fields made into @ethereumjs/tx's own
 * AccessList2930Tx / FeeMarket1559Tx object without running the library's constructor, whose integer
 * conversions through hex strings and generic field checks were the largest part of CheckTx's decode on
 * the chain thread (docs/benchmarks.md "CheckTx on the chain thread").
 *
 * The object is the one the constructor makes: the class's prototype, the same own properties assigned
 * in the same order (@ethereumjs/tx 1559/tx.js, 2930/tx.js and util/internal.js sharedConstructor), the
 * same values. Every check the constructor and create*FromBytesArray (1559/constructors.js,
 * 2930/constructors.js) make is made here, more strictly where that is simpler (integers without leading
 * zeros, the chain id too; an access list of byte strings); for any fields they would refuse, or that this
 * code does not take, `typedTxOf` answers undefined and the caller builds the tx through the library,
 * which refuses with its own message. test/unit/typedtx.test.ts holds the two to the same objects.
 */
import type { Common } from '@ethereumjs/common';
import { AccessList2930Tx, FeeMarket1559Tx, paramsTx, type TypedTransaction } from '@ethereumjs/tx';
import { Address } from '@ethereumjs/util';
import type { RlpItem } from './rlpwrite.js';

/** secp256k1 group order, and half of it (geth crypto.ValidateSignatureValues, homestead rule; @ethereumjs/util SECP256K1_ORDER_DIV_2) */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
export const SECP256K1_HALF_N = SECP256K1_N >> 1n;
/** @ethereumjs/util MAX_INTEGER (2^256 - 1), the bound of gasLimit * fee cap */
const MAX_UINT256 = (1n << 256n) - 1n;
/** EIP-2681: a nonce below 2^64 - 1 */
const MAX_NONCE = (1n << 64n) - 2n;

/** type → the signed list's length and where its fields sit */
const LAYOUT = {
  // chainId, nonce, gasPrice, gasLimit, to, value, data, accessList, v, r, s
  1: { items: 11, nonce: 1, gasLimit: 3, to: 4, accessList: 7 },
  // chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList, v, r, s
  2: { items: 12, nonce: 1, gasLimit: 4, to: 5, accessList: 8 },
} as const;

/** A byte string read as an unsigned integer; undefined when it is a list, has a leading zero or is longer than `max` bytes. */
function uint(item: RlpItem | undefined, max: number): bigint | undefined {
  if (!(item instanceof Uint8Array) || item.length > max || item[0] === 0) return undefined;
  if (item.length <= 6) {
    let n = 0;
    for (let i = 0; i < item.length; i++) n = n * 256 + item[i]!;
    return BigInt(n);
  }
  return BigInt('0x' + Buffer.from(item.buffer, item.byteOffset, item.length).toString('hex'));
}

/** An access list whose every entry is [20-byte address, [32-byte slots]] (EIP-2930 verifyAccessList), else undefined. */
function accessListOf(item: RlpItem | undefined): Uint8Array[][] | undefined {
  if (!Array.isArray(item)) return undefined;
  for (const entry of item) {
    if (!Array.isArray(entry) || entry.length !== 2) return undefined;
    const [address, slots] = entry;
    if (!(address instanceof Uint8Array) || address.length !== 20 || !Array.isArray(slots)) return undefined;
    for (const slot of slots) if (!(slot instanceof Uint8Array) || slot.length !== 32) return undefined;
  }
  return item as Uint8Array[][];
}

/**
 * The signed type-1 or type-2 tx of the envelope's fields (read from a canonical envelope: evm/rlpcanonical.ts),
 * as create1559FeeMarketTxFromBytesArray / createAccessList2930TxFromBytesArray would build it with
 * `{ common, freeze: false }`; undefined where they would refuse it or this code does not take it.
 */
export function typedTxOf(type: 1 | 2, fields: readonly RlpItem[], common: Common): TypedTransaction | undefined {
  const at = LAYOUT[type];
  if (fields.length !== at.items) return undefined;
  const [chainIdItem] = fields;
  const [vItem, rItem, sItem] = fields.slice(-3);
  const chainId = uint(chainIdItem, 32);
  const nonce = uint(fields[at.nonce], 8);
  const gasLimit = uint(fields[at.gasLimit], 8);
  const toItem = fields[at.to];
  const value = uint(fields[at.to + 1], 32);
  const data = fields[at.to + 2];
  const accessList = accessListOf(fields[at.accessList]);
  const v = uint(vItem, 1);
  const r = uint(rItem, 32);
  const s = uint(sItem, 32);
  // the library's first fee field: type 1 gasPrice, type 2 maxPriorityFeePerGas; then type 2's maxFeePerGas
  const fee0 = uint(fields[2], 32);
  const fee1 = type === 2 ? uint(fields[3], 32) : fee0;
  if (
    chainId === undefined || nonce === undefined || gasLimit === undefined || value === undefined || accessList === undefined ||
    v === undefined || r === undefined || s === undefined || fee0 === undefined || fee1 === undefined ||
    !(toItem instanceof Uint8Array) || (toItem.length !== 0 && toItem.length !== 20) || !(data instanceof Uint8Array)
  ) {
    return undefined;
  }
  // an empty r or s leaves the library's tx unsigned; y-parity is 0 or 1 (EIP-2718 validateYParity)
  if (rItem!.length === 0 || sItem!.length === 0 || v > 1n || nonce > MAX_NONCE) return undefined;
  // util/internal.ts getCommon and sharedConstructor: the tx keeps the Common's copy, with the tx parameters
  const txCommon = common.copy();
  txCommon.updateParams(paramsTx);
  if (chainId !== txCommon.chainId() || !txCommon.isActivatedEIP(type === 2 ? 1559 : 2930)) return undefined;
  // EIP-7825's gas limit cap (lifted under EIP-8037), EIP-3860's init code size
  if (txCommon.isActivatedEIP(7825) && !txCommon.isActivatedEIP(8037) && gasLimit > txCommon.param('maxTransactionGasLimit')) return undefined;
  if (toItem.length === 0 && txCommon.isActivatedEIP(3860)) {
    const maxInitCodeSize = txCommon.param('maxInitCodeSize');
    if (maxInitCodeSize && BigInt(data.length) > maxInitCodeSize) return undefined;
  }
  // type 2: gasLimit * maxFeePerGas, and maxFeePerGas at least the tip; type 1: gasPrice * gasLimit
  if (gasLimit * fee1 > MAX_UINT256 || fee1 < fee0) return undefined;
  if (txCommon.gteHardfork('homestead') && s > SECP256K1_HALF_N) return undefined;

  // the constructor's assignments, in its order
  const tx = Object.create(type === 2 ? FeeMarket1559Tx.prototype : AccessList2930Tx.prototype) as Record<string, unknown>;
  tx.type = type;
  tx.cache = {};
  tx.activeCapabilities = [];
  tx.common = txCommon;
  tx.txOptions = { common, freeze: false };
  // the library copies `to` and `data` out of the fields (@ethereumjs/util toBytes)
  tx.to = toItem.length > 0 ? new Address(toItem.slice()) : undefined;
  tx.nonce = nonce;
  tx.gasLimit = gasLimit;
  tx.value = value;
  tx.data = data.slice();
  tx.v = v;
  tx.r = r;
  tx.s = s;
  tx.chainId = chainId;
  tx.activeCapabilities = type === 2 ? [1559, 2718, 2930] : [2718, 2930];
  tx.accessList = accessList;
  if (type === 2) {
    tx.maxFeePerGas = fee1;
    tx.maxPriorityFeePerGas = fee0;
  } else {
    tx.gasPrice = fee0;
  }
  return tx as unknown as TypedTransaction;
}
