/**
 * Domain types of the EVM chain. Numbers are bigint, bytes are Uint8Array — never hex strings;
 * hex appears only at the RPC boundary (evmrpc/format.ts, cometrpc/).
 */

export type Bytes = Uint8Array;
/** 20 bytes */
export type Address = Uint8Array;
/** 32 bytes */
export type Hash = Uint8Array;

export interface AccessListItem {
  address: Address;
  storageKeys: Hash[];
}

/** One signed EIP-7702 authorization tuple of a set-code (type 4) transaction. */
export interface AuthorizationItem {
  chainId: bigint;
  /** the code the authority delegates to (the zero address revokes a delegation) */
  address: Address;
  nonce: bigint;
  yParity: bigint;
  r: bigint;
  s: bigint;
  /** the signer, recovered at decoding; undefined when the signature does not recover (the VM skips the tuple) */
  authority: Address | undefined;
}

/** 0 legacy, 1 EIP-2930, 2 EIP-1559, 4 EIP-7702 set code */
export type TxType = 0 | 1 | 2 | 4;

/** A signed EVM transaction, decoded, with its recovered sender. */
export interface EvmTx {
  /** keccak256 of the signed envelope */
  hash: Hash;
  type: TxType;
  /** undefined for a pre-EIP-155 legacy tx */
  chainId: bigint | undefined;
  nonce: bigint;
  gasLimit: bigint;
  /** legacy and type 1 */
  gasPrice: bigint | undefined;
  /** types 2 and 4 */
  maxFeePerGas: bigint | undefined;
  maxPriorityFeePerGas: bigint | undefined;
  to: Address | undefined;
  value: bigint;
  input: Bytes;
  accessList: AccessListItem[];
  /** type 4 only */
  authorizationList?: AuthorizationItem[];
  v: bigint;
  r: bigint;
  s: bigint;
  from: Address;
  /** the signed envelope bytes (what eth_sendRawTransaction got) */
  raw: Bytes;
}

export interface EvmLog {
  address: Address;
  topics: Hash[];
  data: Bytes;
  blockNumber: bigint;
  blockHash: Hash;
  transactionHash: Hash;
  transactionIndex: number;
  /** block-wide index */
  logIndex: number;
}

export interface EvmReceipt {
  transactionHash: Hash;
  transactionIndex: number;
  blockHash: Hash;
  blockNumber: bigint;
  from: Address;
  to: Address | undefined;
  type: TxType;
  /** 1 success, 0 failure */
  status: 0 | 1;
  cumulativeGasUsed: bigint;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  contractAddress: Address | undefined;
  logs: EvmLog[];
  logsBloom: Bytes;
  /** the VM error when status is 0 ("execution reverted", "out of gas", ...) */
  vmError: string | undefined;
  /** revert return data when status is 0 */
  revertData: Bytes | undefined;
}

export interface EvmHeader {
  number: bigint;
  /** == CometBFT header hash of the same height (genesis: keccak of the genesis header RLP) */
  hash: Hash;
  parentHash: Hash;
  stateRoot: Hash;
  transactionsRoot: Hash;
  receiptsRoot: Hash;
  logsBloom: Bytes;
  miner: Address;
  gasLimit: bigint;
  gasUsed: bigint;
  /** seconds */
  timestamp: bigint;
  extraData: Bytes;
  baseFeePerGas: bigint;
  mixHash: Hash;
  /** bytes of the block's encoding */
  size: bigint;
}

export interface EvmBlock {
  header: EvmHeader;
  transactions: EvmTx[];
}

/** Where a committed tx lives. */
export interface TxLocation {
  blockNumber: bigint;
  blockHash: Hash;
  index: number;
}

/** eth_call / eth_estimateGas input, decoded. */
export interface CallRequest {
  from?: Address;
  to?: Address;
  gas?: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  data?: Bytes;
  nonce?: bigint;
  accessList?: AccessListItem[];
  /** EIP-7702 authorizations: the call runs as a set-code tx (authority as recovered, tuples applied first) */
  authorizationList?: AuthorizationItem[];
  type?: number;
}

/** Who asks for a long-running job (a call, a trace): for fair scheduling and cancelling. */
export interface CallOrigin {
  /** a key per client connection: queues take turns between clients */
  readonly client?: string;
  /** aborted when the client has gone away: the job stops */
  readonly signal?: AbortSignal;
  /**
   * The same as `signal` without an AbortController per request (HTTP, docs/benchmarks.md "eth_call per
   * thread"): `cb` runs once if the client goes away (at once if it has); the returned function drops it.
   */
  readonly onGone?: (cb: () => void) => () => void;
  /** epoch ms by which the transport needs the answer (HTTP: before http-timeout cuts the connection) */
  readonly answerBy?: number;
}

/** eth_createAccessList's answer, decoded. */
export interface AccessListResult {
  accessList: AccessListItem[];
  gasUsed: bigint;
  /** geth's VM error text when the call failed with the final list */
  vmError: string | undefined;
}
