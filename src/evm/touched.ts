/**
 * The addresses each transaction of a block touches, collected while the block executes (no trace):
 * what the address index (store/addrindex.ts) keeps for ots_searchTransactionsBefore/After.
 *
 * Erigon indexes the `from` and `to` of every call frame of a transaction (its CallTracer feeding the
 * CallFromIndex/CallToIndex tables, erigon eth/calltracer/calltracer.go), and Otterscan's search
 * answers the transactions whose frames name the address. Here the same set comes from ethereumjs'
 * message events: every message's caller, its `to` and its code address (a DELEGATECALL/CALLCODE
 * runs the code of another account), the address a CREATE/CREATE2 made when it succeeded, and a
 * SELFDESTRUCT's beneficiary (it receives the balance). Calls into precompiles count, as in Anvil's
 * Parity traces (trace_filter by a precompile's address finds them: evm/tracing/flatcall.ts).
 *
 * The listeners are synchronous and only add to a Set, so a plain transfer pays one message's worth
 * (docs/benchmarks.md, "The address index").
 */
import type { EVM, EVMInterface } from '@ethereumjs/evm';
import { bigIntToBytes, bytesToUnprefixedHex, setLengthLeft, type Address } from '@ethereumjs/util';
import { transferAware } from './fasttransfer.js';

const SELFDESTRUCT = 0xff;
const ADDRESS_MASK = (1n << 160n) - 1n;

interface Message {
  caller: Address;
  to?: Address;
  _codeAddress?: Address;
  depth: number;
}
interface MessageResult {
  createdAddress?: Address;
  execResult: { exceptionError?: unknown };
}
type OpEntry = { opHandler: (...a: any[]) => unknown };
interface StackOwner {
  stack: { _store: bigint[]; _len: number };
}

const COLLECTORS = new WeakMap<object, TouchCollector>();

/** Collects the touched addresses of one runTx at a time on one EVM (begin, run, end). */
export class TouchCollector {
  private current: Map<string, Uint8Array> | undefined;

  private constructor(evm: EVM) {
    const events = evm.events!;
    // a block's plain transfer that skips the EVM (evm/fasttransfer.ts) reports its message: transfer()
    events.on('beforeMessage', transferAware((m: Message) => this.onMessage(m)));
    events.on('afterMessage', transferAware((r: MessageResult) => this.onResult(r)));
    const map = (evm as unknown as { _opcodeMap: Record<number, OpEntry> })._opcodeMap;
    const entry = map[SELFDESTRUCT]!;
    const inner = entry.opHandler;
    entry.opHandler = (rs: StackOwner, common: unknown) => {
      if (this.current !== undefined) {
        const st = rs.stack;
        this.add(setLengthLeft(bigIntToBytes(st._store[st._len - 1]! & ADDRESS_MASK), 20));
      }
      return inner(rs, common);
    };
  }

  /** The EVM's collector, installed once (the chain thread's block executor: chain/app.ts). */
  static attach(evm: EVMInterface): TouchCollector {
    let c = COLLECTORS.get(evm);
    if (c === undefined) {
      c = new TouchCollector(evm as EVM);
      COLLECTORS.set(evm, c);
    }
    return c;
  }

  /** the collector attached to `evm`, if any */
  static of(evm: EVMInterface): TouchCollector | undefined {
    return COLLECTORS.get(evm);
  }

  begin(): void {
    this.current = new Map();
  }

  /** the addresses the run since begin() touched, in the order first seen */
  end(): Uint8Array[] {
    const out = this.current === undefined ? [] : [...this.current.values()];
    this.current = undefined;
    return out;
  }

  /** a plain transfer's one message, run without the EVM: its caller and recipient */
  transfer(caller: Uint8Array, to: Uint8Array): void {
    if (this.current === undefined) return;
    this.add(caller);
    this.add(to);
  }

  private add(a: Uint8Array): void {
    const k = bytesToUnprefixedHex(a);
    if (!this.current!.has(k)) this.current!.set(k, a);
  }

  private onMessage(m: Message): void {
    if (this.current === undefined) return;
    this.add(m.caller.bytes);
    if (m.to === undefined) return;
    const code = m._codeAddress ?? m.to;
    this.add(m.to.bytes);
    if (code !== m.to) this.add(code.bytes);
  }

  private onResult(r: MessageResult): void {
    // a create's address is known at its end (ethereumjs sets the message's `to` after beforeMessage)
    if (this.current === undefined) return;
    if (r.createdAddress !== undefined && r.execResult.exceptionError === undefined) this.add(r.createdAddress.bytes);
  }
}
