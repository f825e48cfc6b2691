/**
 * Native (Cosmos SDK) transaction wrapping of an EVM transaction, as cosmos/evm does:
 * TxRaw{ body: TxBody{ messages: [Any(/cosmos.evm.vm.v1.MsgEthereumTx{from, raw})],
 *        extension_options: [Any(/cosmos.evm.vm.v1.ExtensionOptionsEthereumTx)] },
 *        auth_info: AuthInfo{ fee{ amount: [feeCap*gas EVM_DENOM], gas_limit } }, signatures: [] }.
 * The native hash is SHA-256 of the TxRaw bytes.
 */
import { txRejected, type DomainError } from '../lib/errors.js';
import { createHash } from 'node:crypto';
import { ProtoDecodeError, ProtoWriter, readFields, type ProtoField } from '../lib/protobuf.js';

export const MSG_ETHEREUM_TX_URL = '/cosmos.evm.vm.v1.MsgEthereumTx';
export const EXT_OPTION_ETHEREUM_TX_URL = '/cosmos.evm.vm.v1.ExtensionOptionsEthereumTx';
/** 1 aferry = 1 wei */
export const EVM_DENOM = 'aferry';

const any = (url: string, value: Uint8Array): Uint8Array => new ProtoWriter().string(1, url).bytes(2, value).finish();

export function wrapEthereumTx(raw: Uint8Array, from: Uint8Array, gasLimit: bigint, feeCap: bigint): Uint8Array {
  const msg = new ProtoWriter().bytes(5, from).bytes(6, raw).finish();
  const body = new ProtoWriter()
    .lengthDelimited(1, any(MSG_ETHEREUM_TX_URL, msg))
    .lengthDelimited(1023, any(EXT_OPTION_ETHEREUM_TX_URL, new Uint8Array()))
    .finish();
  const fee = feeCap * gasLimit;
  const coin = new ProtoWriter().string(1, EVM_DENOM).string(2, fee.toString()).finish();
  const feeMsg = new ProtoWriter();
  if (fee > 0n) feeMsg.lengthDelimited(1, coin);
  feeMsg.uint(2, gasLimit);
  const authInfo = new ProtoWriter().lengthDelimited(2, feeMsg.finish()).finish();
  return new ProtoWriter().bytes(1, body).bytes(2, authInfo).finish();
}

export function nativeHash(txBytes: Uint8Array): Uint8Array {
  return createHash('sha256').update(txBytes).digest();
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
