/**
 * Solidity `console.log` (Hardhat's console.sol): calls to the console address are decoded and
 * handed to a sink, for transactions in blocks, eth_call and eth_estimateGas, as Hardhat and Anvil
 * print them. Nothing about the call changes: the address stays an ordinary empty account (not a
 * precompile, so warm/cold gas is as on Hardhat and Anvil), the call succeeds with no output.
 *
 * The selector table is generated from console.sol's signature list: `log` with 1 to 4 params of
 * uint256/string/bool/address (and the older `uint` spelling), plus the typed one-argument forms.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { checksumAddress } from '../lib/address.js';
import { transferAware } from './fasttransfer.js';

/** 0x000000000000000000636F6e736F6c652e6c6f67 ("console.log") */
export const CONSOLE_ADDRESS_HEX = '000000000000000000636f6e736f6c652e6c6f67';

type AbiType = 'uint256' | 'int256' | 'string' | 'bool' | 'address' | 'bytes' | `bytes${number}`;

const BASIC = ['uint256', 'string', 'bool', 'address'] as const;
/** the most arguments of console.sol's `log` overloads */
const MAX_LOG_ARGS = 4;

function selectorOf(signature: string): string {
  return Buffer.from(keccak_256(new TextEncoder().encode(signature)).subarray(0, 4)).toString('hex');
}

function buildTable(): Map<string, AbiType[]> {
  const table = new Map<string, AbiType[]>();
  const add = (name: string, types: AbiType[]) => {
    table.set(selectorOf(`${name}(${types.join(',')})`), types);
    // console.sol before 2.0 spelled uint256/int256 as uint/int, which changes the selector
    if (types.some((t) => t === 'uint256' || t === 'int256')) {
      table.set(selectorOf(`${name}(${types.map((t) => (t === 'uint256' ? 'uint' : t === 'int256' ? 'int' : t)).join(',')})`), types);
    }
  };
  add('log', []);
  let combos: AbiType[][] = [[]];
  for (let n = 1; n <= MAX_LOG_ARGS; n++) {
    combos = combos.flatMap((c) => BASIC.map((t) => [...c, t]));
    for (const c of combos) add('log', c);
  }
  add('log', ['int256']);
  add('logInt', ['int256']);
  add('logUint', ['uint256']);
  add('logString', ['string']);
  add('logBool', ['bool']);
  add('logAddress', ['address']);
  add('logBytes', ['bytes']);
  for (let i = 1; i <= 32; i++) add(`logBytes${i}`, [`bytes${i}`]);
  return table;
}

let table: Map<string, AbiType[]> | undefined;

const WORD = 32;

function word(data: Uint8Array, at: number): Uint8Array {
  if (at + WORD > data.length) throw new Error('short data');
  return data.subarray(at, at + WORD);
}

const toBig = (b: Uint8Array): bigint => BigInt('0x' + (Buffer.from(b).toString('hex') || '0'));

function decodeArg(args: Uint8Array, index: number, type: AbiType): string {
  const head = word(args, index * WORD);
  switch (type) {
    case 'uint256':
      return toBig(head).toString();
    case 'int256': {
      const v = toBig(head);
      return (v >= 1n << 255n ? v - (1n << 256n) : v).toString();
    }
    case 'bool':
      return toBig(head) === 0n ? 'false' : 'true';
    case 'address':
      return checksumAddress(head.subarray(12));
    case 'string':
    case 'bytes': {
      const offset = Number(toBig(head));
      const length = Number(toBig(word(args, offset)));
      if (offset + WORD + length > args.length) throw new Error('short data');
      const body = args.subarray(offset + WORD, offset + WORD + length);
      return type === 'string' ? new TextDecoder().decode(body) : '0x' + Buffer.from(body).toString('hex');
    }
    default: {
      const size = Number(type.slice('bytes'.length));
      return '0x' + Buffer.from(head.subarray(0, size)).toString('hex');
    }
  }
}

/**
 * The printed line of a console.log call's calldata, or undefined when it is not a console.sol call
 * (unknown selector or malformed arguments: ignored, as Hardhat does). Arguments are joined by a
 * space; a first string argument is printed as it is.
 */
export function decodeConsoleLog(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  table ??= buildTable();
  const types = table.get(Buffer.from(data.subarray(0, 4)).toString('hex'));
  if (types === undefined) return undefined;
  try {
    const args = data.subarray(4);
    return types.map((t, i) => decodeArg(args, i, t)).join(' ');
  } catch {
    return undefined;
  }
}

/** The part of an ethereumjs EVM this module uses: its `beforeMessage` event. */
/** what the console listener reads of a message */
interface ConsoleMessage {
  to?: { bytes: Uint8Array };
  data: Uint8Array;
}

export interface MessageEvents {
  events?: { on(event: 'beforeMessage', fn: (m: ConsoleMessage) => void): void };
}

const CONSOLE_BYTES = Buffer.from(CONSOLE_ADDRESS_HEX, 'hex');

/**
 * Sends every console.log of `evm`'s messages to `sink`. The listener compares 20 bytes per message
 * call and does nothing else unless the callee is the console address.
 */
export function attachConsoleLog(evm: MessageEvents, sink: (line: string) => void): void {
  // one parameter: ethereumjs calls it synchronously (a two-parameter listener is awaited)
  // a block's plain transfer skips the EVM (evm/fasttransfer.ts) unless it goes to the console address
  const listener = transferAware((m: ConsoleMessage) => {
    const to = m.to?.bytes;
    if (to !== undefined && CONSOLE_BYTES.equals(to)) {
      const line = decodeConsoleLog(m.data);
      if (line !== undefined) sink(line);
    }
  }, [CONSOLE_ADDRESS_HEX]);
  evm.events?.on('beforeMessage', listener);
}
