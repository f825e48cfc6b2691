/**
 * Chain-side helpers for the workloads: the dev accounts (mnemonic "test ... junk"), offline signing
 * with ethers, the bench ERC-20 (compiled with solc), and waiting for receipts.
 */
import { createRequire } from 'node:module';
import { AbiCoder, HDNodeWallet, Interface, Transaction, getCreateAddress, id, keccak256 } from 'ethers';
import type { RpcClient } from './rpc.js';
import { sleep } from './rpc.js';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
/** m/44'/60'/0'/0/i for i < SENDERS; every peer funds at least the first 10 */
export const SENDERS = 8;
export const GWEI = 1_000_000_000n;
const MIN_FEE_CAP = 100n * GWEI;
const TIP = 1n * GWEI;
export const TRANSFER_GAS = 21_000n;
/** an ERC-20 transfer to a fresh holder uses about 52k gas */
export const TOKEN_TRANSFER_GAS = 70_000n;
export const DEPLOY_GAS = 3_000_000n;
/** distinct addresses queried and paid by the workloads */
export const HOLDER_COUNT = 4096;
export const TOKENS_PER_SENDER = 10n ** 24n;
const RECEIPT_POLL_MS = 20;
/** no new block for this long while txs are unmined = the node stalled */
export const STALL_MS = 10_000;
const VERIFY_CONCURRENCY = 16;

const TOKEN_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

contract BenchToken {
    string public constant name = "Bench Token";
    string public constant symbol = "BENCH";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(address[] memory holders, uint256 amount) {
        for (uint256 i = 0; i < holders.length; i++) {
            balanceOf[holders[i]] += amount;
            totalSupply += amount;
            emit Transfer(address(0), holders[i], amount);
        }
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        uint256 have = balanceOf[from];
        require(have >= value, "balance");
        unchecked { balanceOf[from] = have - value; }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
`;

export const TOKEN_ABI = new Interface([
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

let compiled: string | undefined;

/** Creation bytecode of BenchToken (solc 0.8.28, optimizer on, evm cancun), compiled once. */
export function tokenBytecode(): string {
  if (compiled) return compiled;
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: { 'BenchToken.sol': { content: TOKEN_SOURCE } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts?: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const fatal = out.errors?.filter((e) => e.severity === 'error') ?? [];
  if (fatal.length > 0) throw new Error(`solc: ${fatal.map((e) => e.formattedMessage).join('\n')}`);
  const obj = out.contracts?.['BenchToken.sol']?.['BenchToken']?.evm.bytecode.object;
  if (!obj) throw new Error('solc produced no bytecode for BenchToken');
  compiled = '0x' + obj;
  return compiled;
}

let root: HDNodeWallet | undefined;
/** Dev account i of the mnemonic (m/44'/60'/0'/0/i). */
export function devWallet(i: number): HDNodeWallet {
  root ??= HDNodeWallet.fromPhrase(DEV_MNEMONIC, '', "m/44'/60'/0'/0");
  return root.deriveChild(i);
}

/** Deterministic distinct addresses (nobody holds their keys). */
export const HOLDERS: readonly string[] = Array.from({ length: HOLDER_COUNT }, (_, i) =>
  '0x' + keccak256(Buffer.from(`ferry-bench-holder-${i}`)).slice(26),
);

export interface ChainInfo {
  chainId: bigint;
  maxFeePerGas: bigint;
}

export async function chainInfo(c: RpcClient): Promise<ChainInfo> {
  const chainId = BigInt(await c.call<string>('eth_chainId'));
  const gasPrice = BigInt(await c.call<string>('eth_gasPrice'));
  const maxFeePerGas = gasPrice * 4n > MIN_FEE_CAP ? gasPrice * 4n : MIN_FEE_CAP;
  return { chainId, maxFeePerGas };
}

export interface TxFields {
  /** null deploys a contract */
  to: string | null;
  nonce: number;
  gasLimit: bigint;
  value?: bigint;
  data?: string;
}

/** A signed EIP-1559 transaction: raw bytes and hash. */
export function signTx(w: HDNodeWallet, info: ChainInfo, f: TxFields): { raw: string; hash: string } {
  const tx = Transaction.from({
    type: 2,
    chainId: info.chainId,
    nonce: f.nonce,
    to: f.to,
    value: f.value ?? 0n,
    data: f.data ?? '0x',
    gasLimit: f.gasLimit,
    maxFeePerGas: info.maxFeePerGas,
    maxPriorityFeePerGas: TIP,
  });
  tx.signature = w.signingKey.sign(tx.unsignedHash);
  const raw = tx.serialized;
  return { raw, hash: keccak256(raw) };
}

/**
 * The in-process benches' txs (bench/blockcost.ts, bench/checkcost.ts): `count` signed transfers from the
 * SENDERS dev accounts in turn — value transfers to the holders, or ERC-20 transfers of the bench token,
 * which `deploy` (sender 0, nonce 0) creates first.
 */
export function benchTxs(kind: 'transfers' | 'erc20', count: number, info: ChainInfo): { deploy: string | undefined; raws: string[] } {
  const senders = Array.from({ length: SENDERS }, (_, i) => devWallet(i));
  const nonces = senders.map(() => 0);
  let deploy: string | undefined;
  let token: string | undefined;
  if (kind === 'erc20') {
    const args = AbiCoder.defaultAbiCoder().encode(['address[]', 'uint256'], [senders.map((s) => s.address), TOKENS_PER_SENDER]);
    deploy = signTx(senders[0]!, info, { to: null, nonce: nonces[0]!++, gasLimit: DEPLOY_GAS, data: tokenBytecode() + args.slice(2) }).raw;
    token = getCreateAddress({ from: senders[0]!.address, nonce: 0 });
  }
  const raws: string[] = [];
  for (let k = 0; k < count; k++) {
    const s = k % senders.length;
    const holder = HOLDERS[k % HOLDER_COUNT]!;
    const fields = token
      ? { to: token, gasLimit: TOKEN_TRANSFER_GAS, data: TOKEN_ABI.encodeFunctionData('transfer', [holder, 1n]) }
      : { to: holder, value: 1n, gasLimit: TRANSFER_GAS };
    raws.push(signTx(senders[s]!, info, { ...fields, nonce: nonces[s]!++ }).raw);
  }
  return { deploy, raws };
}

export async function pendingNonce(c: RpcClient, address: string): Promise<number> {
  return Number(BigInt(await c.call<string>('eth_getTransactionCount', [address, 'pending'])));
}

export interface Receipt {
  status: string;
  blockNumber: string;
  contractAddress: string | null;
}

/** Polls until the tx has a receipt; throws after timeoutMs. */
export async function waitReceipt(c: RpcClient, hash: string, timeoutMs: number): Promise<Receipt> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await c.call<Receipt | null>('eth_getTransactionReceipt', [hash]);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after ${timeoutMs} ms`);
    await sleep(RECEIPT_POLL_MS);
  }
}

/**
 * Waits for all the given hashes to have receipts (polls them together). Resolves undefined when
 * all exist, or the reason it gave up: the deadline, or no new block for STALL_MS (a stall).
 */
export async function waitAllReceipts(c: RpcClient, hashes: string[], deadline: number): Promise<string | undefined> {
  let left = [...hashes];
  let lastBlock = -1;
  let lastProgress = Date.now();
  for (;;) {
    const [block, ...got] = await Promise.all([
      c.call<string>('eth_blockNumber'),
      ...left.map((h) => c.call<Receipt | null>('eth_getTransactionReceipt', [h])),
    ]);
    left = left.filter((_, i) => !got[i]);
    if (left.length === 0) return undefined;
    const now = Date.now();
    if (Number(block) !== lastBlock) {
      lastBlock = Number(block);
      lastProgress = now;
    }
    if (now - lastProgress > STALL_MS) return `stalled: no new block for ${STALL_MS / 1000} s while txs were still unmined (block ${lastBlock})`;
    if (now > deadline) return 'time bound reached before every tx was mined';
    await sleep(RECEIPT_POLL_MS);
  }
}

/** Reads every receipt (untimed check); returns how many are missing and how many failed. */
export async function verifyReceipts(c: RpcClient, hashes: string[]): Promise<{ missing: number; failed: number }> {
  let missing = 0;
  let failed = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < hashes.length) {
      const r = await c.call<Receipt | null>('eth_getTransactionReceipt', [hashes[next++]]);
      if (!r) missing++;
      else if (r.status !== '0x1') failed++;
    }
  };
  await Promise.all(Array.from({ length: VERIFY_CONCURRENCY }, worker));
  return { missing, failed };
}

export interface Token {
  address: string;
  deployBlock: number;
}

/** Deploys BenchToken from dev account 0, minting TOKENS_PER_SENDER to each sender. */
export async function deployToken(c: RpcClient, info: ChainInfo, senders: HDNodeWallet[], timeoutMs: number): Promise<Token> {
  const deployer = senders[0]!;
  const args = AbiCoder.defaultAbiCoder().encode(['address[]', 'uint256'], [senders.map((s) => s.address), TOKENS_PER_SENDER]);
  const { raw, hash } = signTx(deployer, info, {
    to: null,
    nonce: await pendingNonce(c, deployer.address),
    gasLimit: DEPLOY_GAS,
    data: tokenBytecode() + args.slice(2),
  });
  await c.call('eth_sendRawTransaction', [raw]);
  const r = await waitReceipt(c, hash, timeoutMs);
  if (r.status !== '0x1' || !r.contractAddress) throw new Error(`token deployment failed (status ${r.status})`);
  return { address: r.contractAddress, deployBlock: Number(BigInt(r.blockNumber)) };
}
