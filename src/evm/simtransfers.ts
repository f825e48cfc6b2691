/**
 * eth_simulateV1's `traceTransfers` (go-ethereum internal/ethapi/logtracer.go): every ETH transfer a
 * call makes — the call's own value, a CALL or CREATE with value, a SELFDESTRUCT with a balance — is
 * shown as an ERC-20 `Transfer(from, to, value)` log of 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE, in
 * execution order among the contract's own logs; a frame that fails drops its logs as geth's does.
 *
 * ethereumjs reports frames by its `beforeMessage`/`afterMessage` events and LOG and SELFDESTRUCT by its
 * `step` event (watched only while a call of a traceTransfers request runs). A LOG is kept as a
 * placeholder filled afterwards with the receipt's log of the same position, which carries its data.
 */
import type { EVM } from '@ethereumjs/evm';
import { Address, bigIntToBytes, hexToBytes, setLengthLeft } from '@ethereumjs/util';

/** keccak256("Transfer(address,address,uint256)") */
const TRANSFER_TOPIC = hexToBytes('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
/** the address the transfer logs are attributed to (as geth's logtracer) */
export const TRANSFER_LOG_ADDRESS = hexToBytes('0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee');

/** a log in a call's order: a transfer made here, or the next of the receipt's logs */
export type TracedLog = ({ kind: 'transfer'; address: Uint8Array; topics: Uint8Array[]; data: Uint8Array } | { kind: 'log' }) & { index: number };

interface Frame {
  logs: TracedLog[];
  /** a creation's transfer, whose recipient is known when the frame ends */
  pendingCreate?: { topics: Uint8Array[] };
}

const word = (addr: Uint8Array): Uint8Array => setLengthLeft(addr, 32);

function transfer(index: number, from: Uint8Array, to: Uint8Array, value: bigint): TracedLog & { kind: 'transfer' } {
  return { kind: 'transfer', index, address: TRANSFER_LOG_ADDRESS, topics: [TRANSFER_TOPIC, word(from), word(to)], data: setLengthLeft(bigIntToBytes(value), 32) };
}

/** The transfer tracer of one call: attach before the run, `logs()` after it, then detach. */
export class TransferTracer {
  private frames: Frame[] = [];
  private result: TracedLog[] = [];

  /** `counter`: the block's log numbering (geth's tracer counts every log it captures in the block) */
  constructor(
    private readonly evm: EVM,
    private readonly counter: { next: number },
  ) {}

  private readonly before = (msg: {
    caller: Address;
    to?: Address;
    value: bigint;
    delegatecall: boolean;
    isCompiled?: boolean;
    depth: number;
    salt?: Uint8Array;
  }): void => {
    const frame: Frame = { logs: [] };
    this.frames.push(frame);
    // DELEGATECALL and CALLCODE move no value to another account (logtracer.go onEnter)
    if (msg.delegatecall || msg.value <= 0n) return;
    if (msg.to === undefined) {
      const t = transfer(this.counter.next++, msg.caller.bytes, new Uint8Array(20), msg.value);
      frame.logs.push(t);
      frame.pendingCreate = t;
      return;
    }
    frame.logs.push(transfer(this.counter.next++, msg.caller.bytes, msg.to.bytes, msg.value));
  };

  private readonly after = (res: { execResult: { exceptionError?: unknown }; createdAddress?: Address }): void => {
    const frame = this.frames.pop();
    if (frame === undefined) return;
    if (frame.pendingCreate && res.createdAddress) frame.pendingCreate.topics[2] = word(res.createdAddress.bytes);
    if (res.execResult.exceptionError) return;
    const parent = this.frames[this.frames.length - 1];
    if (parent) parent.logs.push(...frame.logs);
    else this.result = frame.logs;
  };

  private readonly step = (s: { opcode: { name: string }; stack: bigint[]; address: Address; account: { balance: bigint } }): void => {
    const frame = this.frames[this.frames.length - 1];
    if (frame === undefined) return;
    const name = s.opcode.name;
    if (name.startsWith('LOG')) frame.logs.push({ kind: 'log', index: this.counter.next++ });
    else if (name === 'SELFDESTRUCT' && s.account.balance > 0n) {
      const beneficiary = setLengthLeft(bigIntToBytes(s.stack[s.stack.length - 1]!), 20);
      frame.logs.push(transfer(this.counter.next++, s.address.bytes, beneficiary.subarray(beneficiary.length - 20), s.account.balance));
    }
  };

  attach(): void {
    const events = this.evm.events!;
    events.on('beforeMessage', this.before as never);
    events.on('afterMessage', this.after as never);
    events.on('step', this.step as never);
  }

  detach(): void {
    const events = this.evm.events!;
    events.off('beforeMessage', this.before as never);
    events.off('afterMessage', this.after as never);
    events.off('step', this.step as never);
  }

  /** the call's logs in order; placeholders stand for the receipt's logs (a failed call has none) */
  logs(failed: boolean): TracedLog[] {
    return failed ? [] : this.result;
  }
}

