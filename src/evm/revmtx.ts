/**
 * A block's contract txs on revm (evm/revm.ts; native/revm-call/src/transact.rs): revm validates and
 * executes the tx against the block's journal (evm/flatstate.ts, read synchronously), returns its
 * result and state diff without writing anything, and the diff is applied to the journal here with
 * the same writes ethereumjs' runTx makes — a created account's storage cleared, its code, every
 * touched account's new fields, every slot an SSTORE wrote (even to its old value, in the order
 * first written), then the deletions (EIP-6780 selfdestructs, EIP-161 touched empty accounts) — so
 * the state root, the flat change set and the receipts are runTx's. docs/benchmarks.md "Block txs on
 * revm" has what it saves.
 *
 * Anything revm and ethereumjs might not answer alike goes to runTx (undefined here, nothing changed):
 * a tx runTx would refuse (its exclusion text), types 3 and 4, senders or callees with an EIP-7702
 * delegation, precompiles from 0x0a on, BLOCKHASH, console.log calls while the VM prints them, a
 * failed creation tx and a failed direct precompile call (their error texts), a halt whose text is
 * not mapped. test/unit/revm-block.test.ts compares both engines over random blocks.
 */
import type { Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, KECCAK256_RLP, bigIntToUnpaddedBytes, equalsBytes, generateAddress } from '@ethereumjs/util';
import { bytesToBigInt } from '../lib/bytes.js';
import { Bloom } from '@ethereumjs/vm';
import type { Common } from '@ethereumjs/common';
import { CONSOLE_ADDRESS_HEX } from './consolelog.js';
import type { FlatStateManager } from './flatstate.js';
import { accountAnswer, haltError, loadRevm, revmSpec, stateWord, type RevmState, type RevmTxInput } from './revm.js';
import { vmErrorText } from './vmerrors.js';

const ZERO32 = Buffer.alloc(32);
const EMPTY = new Uint8Array(0);
const ACCOUNT_ROW = 20 + 1 + 32 + 8 + 32 + 4;
const SLOT_ROW = 20 + 32 + 32;
const CREATED = 1;
const DELETED = 2;
/** the highest precompile revm runs here (transact.rs untrusted_precompile) */
const LAST_TRUSTED_PRECOMPILE = 0x09;

/** What a tx run here gives the block (the fields of evm/blockexec.ts ExecutedTx it fills). */
export interface RevmTxResult {
  status: 0 | 1;
  gasUsed: bigint;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
  bloom: Bloom;
  createdAddress: Uint8Array | undefined;
  vmError: string | undefined;
  returnValue: Uint8Array;
  touched: Uint8Array[] | undefined;
}

/** The addon's answer (layout in native/revm-call/src/transact.rs), its byte fields views of it. */
interface TxAnswer {
  status: 'success' | 'revert' | 'halt' | 'invalid' | 'unsupported';
  reason: string;
  gasUsed: bigint;
  output: Buffer;
  bloom: Buffer;
  logs: { address: Buffer; topics: Buffer[]; data: Buffer }[];
  touched: Buffer;
  accounts: Buffer;
  slots: Buffer;
}

const STATUSES = ['success', 'revert', 'halt', 'invalid', 'unsupported'] as const;

function readAnswer(b: Buffer): TxAnswer {
  let i = 0;
  const take = (n: number): Buffer => {
    if (i + n > b.length) throw new RangeError('revm addon: answer cut short');
    const v = b.subarray(i, i + n);
    i += n;
    return v;
  };
  const lengthy = (): Buffer => take(take(4).readUInt32BE(0));
  const status = STATUSES[take(1)[0]!];
  if (status === undefined) throw new RangeError('revm addon: unknown status');
  const gasUsed = take(8).readBigUInt64BE(0);
  const reason = take(take(2).readUInt16BE(0)).toString('utf8');
  const output = lengthy();
  const bloom = take(256);
  const logs: TxAnswer['logs'] = [];
  for (let n = take(4).readUInt32BE(0); n > 0; n--) {
    const address = take(20);
    const topics: Buffer[] = [];
    for (let t = take(1)[0]!; t > 0; t--) topics.push(take(32));
    logs.push({ address, topics, data: lengthy() });
  }
  return { status, reason, gasUsed, output, bloom, logs, touched: lengthy(), accounts: lengthy(), slots: lengthy() };
}

type Addon = NonNullable<ReturnType<typeof loadRevm>['addon']>;

/** an access list in the addon's layout: per entry address ‖ key count (4) ‖ keys */
function packAccessList(tx: TypedTransaction): Uint8Array {
  const list = (tx as { accessList?: [Uint8Array, Uint8Array[]][] }).accessList;
  if (list === undefined || list.length === 0) return EMPTY;
  const out = Buffer.alloc(list.reduce((n, [, keys]) => n + 24 + keys.length * 32, 0));
  let i = 0;
  for (const [address, keys] of list) {
    out.set(address, i);
    out.writeUInt32BE(keys.length, i + 20);
    i += 24;
    for (const k of keys) {
      out.set(k, i);
      i += 32;
    }
  }
  return out;
}

const u64 = (b: Uint8Array, at: number): bigint => Buffer.from(b.buffer, b.byteOffset, b.byteLength).readBigUInt64BE(at);

/** The revm executor of one runner's blocks (a FlatStateManager's journal), when the addon is built. */
export class RevmBlockTxs {
  private readonly state: RevmState;

  private constructor(
    private readonly addon: Addon,
    private readonly sm: FlatStateManager,
  ) {
    this.state = {
      account: (address) => {
        const f = sm.accountFieldsSync(address);
        return f === undefined ? null : accountAnswer(f[0], f[1], f[3]);
      },
      code: (hash) => {
        const c = sm.codeByHashSync(hash);
        return Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      },
      storage: (address, slot) => stateWord(sm.storageSync(address, slot)),
      // BLOCKHASH leaves the tx to runTx (transact.rs); revm may still read before it is told
      blockHash: () => ZERO32,
    };
  }

  /** the executor over `sm`, or undefined when the addon is not built */
  static create(sm: FlatStateManager): RevmBlockTxs | undefined {
    const { addon } = loadRevm();
    return addon?.transact === undefined ? undefined : new RevmBlockTxs(addon, sm);
  }

  /**
   * Runs `tx` (from `sender`) in `block` and applies it to the journal as runTx would, or returns
   * undefined having changed nothing. `watched`: what evm/fasttransfer.ts mayTransferFast answered.
   */
  async run(common: Common, watched: Set<string>, tx: TypedTransaction, sender: Uint8Array, block: Block, touched: boolean): Promise<RevmTxResult | undefined> {
    if (tx.type > 2) return undefined;
    for (const w of watched) if (w !== CONSOLE_ADDRESS_HEX) return undefined;
    const sm = this.sm;
    // EIP-3607 and EIP-7702 senders: runTx has the texts and the delegation rules
    const from = sm.accountFieldsSync(sender);
    if (from !== undefined && !equalsBytes(from[3], KECCAK256_NULL)) return undefined;
    const h = block.header;
    const t = tx as TypedTransaction & { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };
    if (tx.nonce > BigInt(Number.MAX_SAFE_INTEGER) || tx.gasLimit > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    const input: RevmTxInput = {
      spec: revmSpec(common.hardfork()),
      chainId: Number(common.chainId()),
      txType: tx.type,
      from: sender,
      to: tx.to?.bytes,
      nonce: Number(tx.nonce),
      value: bigIntToUnpaddedBytes(tx.value),
      data: tx.data,
      gas: Number(tx.gasLimit),
      gasPrice: bigIntToUnpaddedBytes(tx.type === 2 ? t.maxFeePerGas! : t.gasPrice!),
      priorityFee: tx.type === 2 ? bigIntToUnpaddedBytes(t.maxPriorityFeePerGas!) : undefined,
      accessList: packAccessList(tx),
      number: Number(h.number),
      timestamp: Number(h.timestamp),
      coinbase: h.coinbase.bytes,
      baseFee: bigIntToUnpaddedBytes(h.baseFeePerGas ?? 0n),
      gasLimit: Number(h.gasLimit),
      prevrandao: h.mixHash,
      touched,
      console: watched.size > 0,
    };
    const s = this.state;
    let out: TxAnswer;
    try {
      out = readAnswer(this.addon.transact!(input, s.account, s.code, s.storage, s.blockHash));
    } catch {
      // a state read that threw (nothing was written): runTx meets the same read and answers for it
      return undefined;
    }
    if (out.status === 'invalid' || out.status === 'unsupported') return undefined;
    let vmError: string | undefined;
    if (out.status === 'revert') vmError = vmErrorText('revert');
    else if (out.status === 'halt') {
      // a creation's and a precompile's own failures have texts of their own in ethereumjs
      if (tx.to === undefined || isTrustedPrecompile(tx.to.bytes)) return undefined;
      const e = haltError(out.reason);
      if (e === undefined) return undefined;
      vmError = vmErrorText(e);
    }
    await this.apply(out.accounts, out.slots);
    // the addon's bloom of the logs (alloy-primitives logs_bloom: the yellow paper's M3:2048, as ethereumjs' Bloom.add)
    const bloom = new Bloom(new Uint8Array(out.bloom), common);
    const logs = out.logs.map((l) => ({ address: new Uint8Array(l.address), topics: l.topics.map((x) => new Uint8Array(x)), data: new Uint8Array(l.data) }));
    const touchedList: Uint8Array[] | undefined = touched ? [] : undefined;
    if (touchedList) for (let i = 0; i < out.touched.length; i += 20) touchedList.push(new Uint8Array(out.touched.subarray(i, i + 20)));
    return {
      status: out.status === 'success' ? 1 : 0,
      gasUsed: out.gasUsed,
      logs,
      bloom,
      // ethereumjs names the creation's address whatever its outcome (@ethereumjs/evm evm.ts _executeCreate)
      createdAddress: tx.to === undefined ? generateAddress(sender, bigIntToUnpaddedBytes(tx.nonce)) : undefined,
      vmError,
      returnValue: new Uint8Array(out.output),
      touched: touchedList,
    };
  }

  /** the diff's writes, in runTx's order (see the module comment) */
  private async apply(accounts: Buffer, slots: Buffer): Promise<void> {
    const sm = this.sm;
    const deleted: Address[] = [];
    for (let i = 0; i < accounts.length; ) {
      const address = new Address(new Uint8Array(accounts.subarray(i, i + 20)));
      const flags = accounts[i + 20]!;
      const balance = bytesToBigInt(accounts.subarray(i + 21, i + 53));
      const nonce = u64(accounts, i + 53);
      const codeHash = new Uint8Array(accounts.subarray(i + 61, i + 93));
      const codeLen = accounts.readUInt32BE(i + 93);
      const code = accounts.subarray(i + ACCOUNT_ROW, i + ACCOUNT_ROW + codeLen);
      i += ACCOUNT_ROW + codeLen;
      if (flags & CREATED) await sm.clearStorage(address);
      if (codeLen > 0) await sm.putCode(address, new Uint8Array(code));
      const storageRoot = sm.accountFieldsSync(address.bytes)?.[2] ?? KECCAK256_RLP;
      await sm.putAccount(address, new Account(nonce, balance, storageRoot, codeHash));
      if (flags & DELETED) deleted.push(address);
    }
    for (let i = 0; i < slots.length; i += SLOT_ROW) {
      const address = new Address(new Uint8Array(slots.subarray(i, i + 20)));
      await sm.putStorage(address, new Uint8Array(slots.subarray(i + 20, i + 52)), new Uint8Array(slots.subarray(i + 52, i + 84)));
    }
    for (const a of deleted) await sm.deleteAccount(a);
  }
}

function isTrustedPrecompile(a: Uint8Array): boolean {
  for (let i = 0; i < 19; i++) if (a[i] !== 0) return false;
  return a[19]! >= 1 && a[19]! <= LAST_TRUSTED_PRECOMPILE;
}
