/**
 * Plain eth_calls on the revm engine (evm/revm.ts; docs/benchmarks.md "revm prototype"), answered from
 * the flat state directly: better-sqlite3 is synchronous, so the addon's state callbacks read
 * store/flatstate.ts at the call's height. Only calls revm answers exactly as ethereumjs does are
 * taken: no state or block overrides, no fee fields, no value, no access list (the Simulator's caller
 * decides the first two); a result revm names differently (a rare halt, a rejected message) is left to
 * ethereumjs, which runs the call again.
 *
 * Each call runs the rules of its block's hardfork (evm/forks.ts ForkSchedule, by the block's time) and stops
 * at its deadline (json-rpc.evm-timeout): the addon's inspector looks at the clock every 1,024 steps and
 * halts every frame once it passed. Fairness: revm's loop cannot give way to the call worker's
 * scheduler (lib/slices.ts) in the middle of a call, so a call holds its worker until it ends or times out.
 */
import type { BlockContext } from '../evm/runner.js';
import type { CallOutcome, SimCall } from '../evm/simulate.js';
import { decodeConsoleLog } from '../evm/consolelog.js';
import { ForkSchedule, type ForkRules } from '../evm/forks.js';
import { haltError, loadRevm, revmSpec, stateWord, type RevmCallInput, type RevmCallOutput, type RevmState } from '../evm/revm.js';
import { EvmTimeoutError } from '../evm/vmerrors.js';
import { rlpDecodeView, type RlpItem } from '../evm/rlpwrite.js';
import type { FlatState } from '../store/flatstate.js';

const ZERO32 = Buffer.alloc(32);
const ZERO20 = new Uint8Array(20);
const EMPTY = new Uint8Array(0);
const NO_ACCOUNT = null;

/**
 * The flat state's account RLP [nonce, balance, storage root, code hash] (store/flatstate.ts) in the
 * addon's layout, balance (32) ‖ nonce (8) ‖ code hash (32), the integers big-endian right-aligned (RLP
 * strips their leading zeros), read as views (evm/rlpwrite.ts rlpDecodeView: no copies, no bigint);
 * undefined for bytes not in that shape.
 */
export function packAccount(rlp: Uint8Array): Buffer | undefined {
  let items: RlpItem;
  try {
    items = rlpDecodeView(rlp);
  } catch {
    return undefined;
  }
  if (!Array.isArray(items) || items.length !== 4) return undefined;
  const [nonce, balance, , codeHash] = items as RlpItem[];
  if (!(nonce instanceof Uint8Array) || !(balance instanceof Uint8Array) || !(codeHash instanceof Uint8Array)) return undefined;
  if (nonce.length > 8 || balance.length > 32 || codeHash.length !== 32) return undefined;
  const out = Buffer.alloc(72);
  out.set(balance, 32 - balance.length);
  out.set(nonce, 40 - nonce.length);
  out.set(codeHash, 40);
  return out;
}

export class RevmCalls {
  private constructor(
    private readonly addon: NonNullable<ReturnType<typeof loadRevm>['addon']>,
    private readonly flat: FlatState,
    private readonly blockHash: (n: bigint) => Uint8Array | undefined,
    private readonly forks: ForkSchedule,
    private readonly chainId: number,
    private readonly onConsoleLog: ((line: string) => void) | undefined,
  ) {}

  /** the engine, or why not (no addon) */
  static create(
    flat: FlatState,
    blockHash: (n: bigint) => Uint8Array | undefined,
    rules: ForkRules,
    chainId: bigint,
    onConsoleLog?: (line: string) => void,
  ): RevmCalls | string {
    const { addon, why } = loadRevm();
    if (addon === undefined) return why;
    return new RevmCalls(addon, flat, blockHash, new ForkSchedule(chainId, rules), Number(chainId), onConsoleLog);
  }

  /** the state of the last height called at (calls at one height in a row share it) */
  private last: { height: number; state: RevmState } | undefined;

  /** the state at `height`, as the addon reads it */
  private state(height: number): RevmState {
    if (this.last?.height === height) return this.last.state;
    const flat = this.flat;
    const state: RevmState = {
      account(address) {
        const rlp = flat.account(address, height);
        if (rlp === undefined) return NO_ACCOUNT;
        const packed = packAccount(rlp);
        if (packed === undefined) throw new RangeError('flat state account is not rlp([nonce, balance, root, codeHash]) with fields in range');
        return packed;
      },
      code(hash) {
        const c = flat.code(hash);
        return c === undefined ? Buffer.alloc(0) : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      },
      storage(address, slot) {
        return stateWord(flat.storage(address, slot, height));
      },
      blockHash: (n) => {
        const h = this.blockHash(BigInt(n));
        return h === undefined ? ZERO32 : stateWord(h);
      },
    };
    this.last = { height, state };
    return state;
  }

  /**
   * The call's outcome at `height` under `ctx`, or undefined: not one revm takes (run it on ethereumjs).
   * Throws EvmTimeoutError when the call was still running at `deadline` (epoch ms; Infinity: never).
   */
  call(height: bigint, ctx: BlockContext, c: SimCall, deadline: number): CallOutcome | undefined {
    if (c.gasPrice !== undefined || c.maxFeePerGas !== undefined || c.maxPriorityFeePerGas !== undefined) return undefined;
    if ((c.value ?? 0n) !== 0n || c.accessList !== undefined || ctx.blobBaseFee !== undefined) return undefined;
    // a call object with an authorizationList runs as a set-code tx (EIP-7702): ethereumjs applies the tuples
    if (c.authorizationList !== undefined) return undefined;
    if (c.gas > BigInt(Number.MAX_SAFE_INTEGER) || ctx.gasLimit > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    const input: RevmCallInput = {
      spec: revmSpec(this.forks.forkAt(ctx.timestamp)),
      chainId: this.chainId,
      // the addon reads byte fields in place (any Uint8Array): no copies
      from: c.from ?? ZERO20,
      to: c.to,
      value: ZERO32,
      data: c.data ?? EMPTY,
      gas: Number(c.gas),
      gasPrice: ZERO32,
      number: Number(ctx.number),
      timestamp: Number(ctx.timestamp),
      coinbase: ctx.coinbase,
      // a call without fee fields sees BASEFEE 0 (go-ethereum core/vm/evm.go NewEVM: NoBaseFee with a zero
      // fee cap and tip zeroes the context's base fee), and revm takes only such calls
      baseFee: ZERO32,
      gasLimit: Number(ctx.gasLimit),
      prevrandao: stateWord(ctx.mixHash),
      deadline,
      console: this.onConsoleLog !== undefined,
    };
    const s = this.state(Number(height));
    const out = this.addon.call(input, s.account, s.code, s.storage, s.blockHash);
    if (out.status === 'timeout') throw new EvmTimeoutError();
    const taken = this.outcome(out);
    // the lines of a call ethereumjs runs again are printed by that run (evm/consolelog.ts attachConsoleLog)
    if (taken !== undefined && this.onConsoleLog !== undefined) {
      for (const data of out.console) {
        const line = decodeConsoleLog(data);
        if (line !== undefined) this.onConsoleLog(line);
      }
    }
    return taken;
  }

  private outcome(out: RevmCallOutput): CallOutcome | undefined {
    switch (out.status) {
      case 'success':
        return { returnValue: out.output };
      case 'revert':
        return { returnValue: out.output, exceptionError: { error: 'revert' } };
      case 'halt': {
        const error = haltError(out.reason);
        return error === undefined ? undefined : { returnValue: new Uint8Array(0), exceptionError: { error } };
      }
      default:
        return undefined;
    }
  }
}
