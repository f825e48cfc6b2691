/**
 * ferry's ABCI Query paths (Surface B's `abci_query`), answered from the archive state:
 *
 *   path            data (bytes)                   value
 *   /evm/balance    address (20)                   balance, 32-byte big-endian
 *   /evm/nonce      address (20)                   nonce, 8-byte big-endian
 *   /evm/code       address (20)                   the contract code (empty for an account)
 *   /evm/storage    address (20) || slot (32)      the slot's value, 32 bytes
 *
 * `height` selects the state after that block (0 = latest); the answer's `height` is that block.
 * With `prove`, `proofOps` holds Ethereum Merkle-Patricia proofs (each op's data is the RLP list of
 * the proof nodes, as eth_getProof returns them): `ferry/mpt-account` (key = the address) proves
 * the account against the block's state root — EVM block H's stateRoot, which is the `app_hash` of
 * CometBFT header H+1 — and for /evm/storage a `ferry/mpt-storage` op (key = the slot) first proves
 * the slot against the account's storage root. Other paths answer code 6 with a log naming the path.
 */
import { RLP } from '@ethereumjs/rlp';
import type { AbciQueryRequest, AbciQueryResponse } from '../types/cometbft.js';
import type { ChainReader } from './reader.js';

export const QUERY_PATHS = ['/evm/balance', '/evm/nonce', '/evm/code', '/evm/storage'] as const;
export const PROOF_OP_ACCOUNT = 'ferry/mpt-account';
export const PROOF_OP_STORAGE = 'ferry/mpt-storage';
export const QUERY_CODESPACE = 'sdk';
/** Cosmos SDK codes: ErrInternal (the query could not be answered), ErrUnknownRequest, ErrInvalidRequest, ErrInvalidHeight */
export const QueryCode = { ok: 0, internal: 1, unknownRequest: 6, invalidRequest: 18, invalidHeight: 26 } as const;

const ADDRESS_BYTES = 20;
const SLOT_BYTES = 32;

export function queryFailure(code: number, log: string, height = 0n): AbciQueryResponse {
  return { code, log, info: '', index: 0n, key: undefined, value: undefined, proofOps: undefined, height, codespace: QUERY_CODESPACE };
}

function bigEndian(n: bigint, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let v = n;
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Answers an abci_query from `reader`'s committed state (pending dev cheats are not in it: docs/dev-mode.md). */
export async function abciQuery(reader: ChainReader, req: AbciQueryRequest): Promise<AbciQueryResponse> {
  const latest = reader.latestNumber();
  if (req.height < 0n) return queryFailure(QueryCode.invalidHeight, 'cannot query with height < 0; please provide a valid height');
  if (req.height > latest) return queryFailure(QueryCode.invalidHeight, 'cannot query with height in the future; please provide a valid height');
  const height = req.height === 0n ? latest : req.height;
  if (!(QUERY_PATHS as readonly string[]).includes(req.path)) {
    return queryFailure(QueryCode.unknownRequest, `unknown query path ${JSON.stringify(req.path)}; ferry answers ${QUERY_PATHS.join(', ')}`, height);
  }
  const wantLength = req.path === '/evm/storage' ? ADDRESS_BYTES + SLOT_BYTES : ADDRESS_BYTES;
  if (req.data.length !== wantLength) {
    const what = req.path === '/evm/storage' ? 'a 20-byte address followed by a 32-byte slot' : 'a 20-byte address';
    return queryFailure(QueryCode.invalidRequest, `invalid request: ${req.path} takes ${what} as data, got ${req.data.length} bytes`, height);
  }
  const address = req.data.subarray(0, ADDRESS_BYTES);
  const slot = req.path === '/evm/storage' ? req.data.subarray(ADDRESS_BYTES) : undefined;
  let value: Uint8Array;
  switch (req.path) {
    case '/evm/balance':
      value = bigEndian(await reader.balance(address, height, true), 32);
      break;
    case '/evm/nonce':
      value = bigEndian(await reader.nonce(address, height, true), 8);
      break;
    case '/evm/code':
      value = await reader.code(address, height, true);
      break;
    default:
      value = await reader.storageAt(address, slot!, height, true);
  }
  let proofOps: AbciQueryResponse['proofOps'];
  if (req.prove) {
    const p = await reader.proof(address, slot ? [slot] : [], height);
    proofOps = [];
    if (slot) proofOps.push({ type: PROOF_OP_STORAGE, key: slot, data: RLP.encode(p.storageProof[0]!.proof) });
    proofOps.push({ type: PROOF_OP_ACCOUNT, key: address, data: RLP.encode(p.accountProof) });
  }
  return { code: QueryCode.ok, log: '', info: '', index: 0n, key: req.data, value, proofOps, height, codespace: '' };
}
