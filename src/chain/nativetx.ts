/**
 * Native (Cosmos SDK) transaction wrapping of an EVM transaction, as cosmos/evm does:
 * TxRaw{ body: TxBody{ messages: [Any(/cosmos.evm.vm.v1.MsgEthereumTx{from, raw})],
 *        extension_options: [Any(/cosmos.evm.vm.v1.ExtensionOptionsEthereumTx)] },
 *        auth_info: AuthInfo{ fee{ amount: [feeCap*gas EVM_DENOM], gas_limit } }, signatures: [] }.
 * The native hash is SHA-256 of the TxRaw bytes.
 */
import { txRejected, type DomainError } from '../lib/errors.js';
import * as nodeCrypto from 'node:crypto';
import { ProtoDecodeError, ProtoWriter, lenFieldLength, readFields, uvarintLength, writeBytesField, writeLenHead, writeUvarint, type ProtoField } from '../lib/protobuf.js';

export const MSG_ETHEREUM_TX_URL = '/cosmos.evm.vm.v1.MsgEthereumTx';
export const EXT_OPTION_ETHEREUM_TX_URL = '/cosmos.evm.vm.v1.ExtensionOptionsEthereumTx';
/** 1 aferry = 1 wei */
export const EVM_DENOM = 'aferry';

const any = (url: string, value: Uint8Array): Uint8Array => new ProtoWriter().string(1, url).bytes(2, value).finish();

export function wrapEthereumTx(raw: Uint8Array, from: Uint8Array, gasLimit: bigint, feeCap: bigint): Uint8Array {
  // written into one buffer (every length computed first), with the bytes ProtoWriter gives for the message above
  // (zero and empty fields omitted): one array instead of a writer, chunks and a copy per nested message
  // per tx, which CheckTx wraps for each eth_sendRawTransaction (docs/benchmarks.md "Ingest: admission
  // and the V8 platform threads"; test/unit/nativetx.test.ts holds it to ProtoWriter's encoding)
  if (gasLimit > MAX_UINT64) throw new RangeError(`field 2: unsigned value out of range: ${gasLimit}`);
  const fee = feeCap * gasLimit;
  // the fee's decimal digits are ASCII: written into `out` one char code each, not through a TextEncoder and
  // a second array (docs/benchmarks.md "Small per-tx items on the chain thread")
  const amount = fee > 0n ? fee.toString() : '';
  const msgLen = lenFieldLength(from.length) + lenFieldLength(raw.length);
  const anyLen = MSG_URL_FIELD.length + lenFieldLength(msgLen);
  const bodyLen = 1 + uvarintLength(anyLen) + anyLen + EXT_OPTION_FIELD.length;
  const coinLen = fee > 0n ? DENOM_FIELD.length + lenFieldLength(amount.length) : 0;
  const feeLen = (fee > 0n ? 1 + uvarintLength(coinLen) + coinLen : 0) + (gasLimit > 0n ? 1 + uvarintLength(gasLimit) : 0);
  const authLen = 1 + uvarintLength(feeLen) + feeLen;
  const out = new Uint8Array(1 + uvarintLength(bodyLen) + bodyLen + 1 + uvarintLength(authLen) + authLen);
  let at = writeLenHead(out, 0, 1, bodyLen);
  at = writeLenHead(out, at, 1, anyLen);
  out.set(MSG_URL_FIELD, at);
  at += MSG_URL_FIELD.length;
  if (msgLen > 0) at = writeLenHead(out, at, 2, msgLen);
  at = writeBytesField(out, at, 5, from);
  at = writeBytesField(out, at, 6, raw);
  out.set(EXT_OPTION_FIELD, at);
  at += EXT_OPTION_FIELD.length;
  at = writeLenHead(out, at, 2, authLen);
  at = writeLenHead(out, at, 2, feeLen);
  if (fee > 0n) {
    at = writeLenHead(out, at, 1, coinLen);
    out.set(DENOM_FIELD, at);
    at += DENOM_FIELD.length;
    at = writeLenHead(out, at, 2, amount.length);
    for (let i = 0; i < amount.length; i++) out[at + i] = amount.charCodeAt(i);
    at += amount.length;
  }
  if (gasLimit > 0n) {
    out[at++] = (2 << 3) | 0; // field 2, varint
    at = writeUvarint(out, at, gasLimit);
  }
  return out;
}

const MAX_UINT64 = (1n << 64n) - 1n;
/** the fixed parts of the wrapping: MsgEthereumTx's Any type URL field, the extension option (an Any with its URL only, as field 1023), the fee denom field */
const MSG_URL_FIELD = new ProtoWriter().string(1, MSG_ETHEREUM_TX_URL).finish();
const EXT_OPTION_FIELD = new ProtoWriter().lengthDelimited(1023, any(EXT_OPTION_ETHEREUM_TX_URL, new Uint8Array())).finish();
const DENOM_FIELD = new ProtoWriter().string(1, EVM_DENOM).finish();

/**
 * SHA-256 in one call (Node's crypto.hash, from 20.12) where the runtime has it: no Hash object per tx, for
 * every block tx's hash (docs/benchmarks.md "Small per-tx items on the chain thread"); createHash before it
 */
const sha256: (b: Uint8Array) => Uint8Array =
  typeof nodeCrypto.hash === 'function' ? (b) => nodeCrypto.hash('sha256', b, 'buffer') : (b) => nodeCrypto.createHash('sha256').update(b).digest();

export function nativeHash(txBytes: Uint8Array): Uint8Array {
  return sha256(txBytes);
}

/** bytes that are not a native Ethereum tx */
const notNative = (message: string): DomainError<'txRejected'> => txRejected('decode', message);

const only = (fields: ProtoField[], n: number): ProtoField[] => fields.filter((f) => f.field === n);

function decodeAny(b: Uint8Array): { url: string; value: Uint8Array } {
  const f = readFields(b);
  const url = only(f, 1)[0]?.bytes;
  return { url: url ? Buffer.from(url).toString('utf8') : '', value: only(f, 2)[0]?.bytes ?? new Uint8Array() };
}

/** Unwraps native tx bytes to the EVM envelope; throws txRejected (reason `decode`) saying what is wrong. */
export function unwrapEthereumTx(txBytes: Uint8Array): { raw: Uint8Array; from: Uint8Array } {
  try {
    const top = readFields(txBytes);
    if (only(top, 3).length > 0) throw notNative('for eth tx Signatures should be empty');
    const bodyBytes = only(top, 1)[0]?.bytes;
    if (!bodyBytes) throw notNative('tx parse error: missing body');
    const body = readFields(bodyBytes);
    const msgs = only(body, 1);
    if (msgs.length !== 1) throw notNative(`for eth tx the number of messages should be 1, got ${msgs.length}`);
    const exts = only(body, 1023);
    if (exts.length !== 1 || decodeAny(exts[0]!.bytes!).url !== EXT_OPTION_ETHEREUM_TX_URL) {
      throw notNative('for eth tx length of ExtensionOptions should be 1');
    }
    const msg = decodeAny(msgs[0]!.bytes!);
    if (msg.url !== MSG_ETHEREUM_TX_URL) throw notNative(`unrecognized message type ${msg.url || '(empty)'}: only ${MSG_ETHEREUM_TX_URL} is accepted`);
    const mf = readFields(msg.value);
    const raw = only(mf, 6)[0]?.bytes;
    if (!raw || raw.length === 0) throw notNative('MsgEthereumTx has no raw transaction');
    return { raw: new Uint8Array(raw), from: new Uint8Array(only(mf, 5)[0]?.bytes ?? []) };
  } catch (e) {
    if (e instanceof ProtoDecodeError) throw notNative(`tx parse error: ${e.message}`);
    throw e;
  }
}
