/**
 * `anvil_dealERC20` (also `hardhat_dealERC20`, `anvil_setERC20Balance`) and `anvil_setERC20Allowance`
 * (docs/dev-mode.md "Methods"), as Anvil finds the slot (foundry crates/anvil/src/eth/api.rs
 * find_erc20_storage_slot): the storage slots of the token that `balanceOf(owner)` /
 * `allowance(owner, spender)` reads (eth_createAccessList of that call on the latest state), each
 * tried in turn with the wanted value overridden into it; the first one that makes the call answer
 * that value is set, as anvil_setStorageAt sets a slot (a state cheat, applied by the next block).
 * No such slot: refused with Anvil's message, nothing changed.
 */
import { address } from '../jsonrpc/codecs.js';
import { method, type MethodTable } from '../jsonrpc/types.js';
import { DomainError, invalidArgument } from '../lib/errors.js';
import type { Address, CallOrigin } from '../types/chain.js';
import type { DevChannel } from '../types/dev.js';
import type { EvmBackend } from './backend.js';
import { PRIVATE, wei } from './devmethods.js';
import type { AccessListRunner } from './extra.js';

/** The part of Surface A's modules (evmrpc/api.ts) these methods use. */
export interface DevTokenModules {
  reader: Pick<EvmBackend, 'latestNumber' | 'blockByNumber' | 'call'>;
  runs: AccessListRunner;
  chain: DevChannel;
}

/** balanceOf(address), allowance(address,address) */
const BALANCE_OF = '70a08231';
const ALLOWANCE = 'dd62ed3e';

const word = (n: bigint): Uint8Array => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
const padded = (a: Address): string => Buffer.from(a).toString('hex').padStart(64, '0');
const calldata = (selector: string, ...args: Address[]): Uint8Array => Uint8Array.from(Buffer.from(selector + args.map(padded).join(''), 'hex'));
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

export function createDevTokenMethods({ reader, runs, chain }: DevTokenModules): MethodTable {
  /** The slot of `token` whose value `data`'s call answers, or undefined. */
  const findSlot = async (token: Address, data: Uint8Array, want: bigint, origin: CallOrigin | undefined): Promise<Uint8Array | undefined> => {
    const n = reader.latestNumber();
    const gas = reader.blockByNumber(n)?.header.gasLimit ?? 0n;
    const { accessList } = await runs.createAccessList({ to: token, data, gas }, n, undefined, origin);
    const value = word(want);
    for (const item of accessList) {
      if (!sameBytes(item.address, token)) continue;
      for (const slot of item.storageKeys) {
        let out: Uint8Array;
        try {
          out = await reader.call({ to: token, data, gas }, n, [{ address: token, stateDiff: [{ slot, value }] }], origin);
        } catch (e) {
          // overriding this slot made the call fail: not the one
          if (e instanceof DomainError) continue;
          throw e;
        }
        if (out.length >= 32 && sameBytes(out.subarray(0, 32), value)) return slot;
      }
    }
    return undefined;
  };

  const setSlot = async (token: Address, slot: Uint8Array, value: bigint) => {
    await chain.dev({ op: 'setCheats', cheats: [{ kind: 'slot', address: token, slot, value: word(value) }] });
    return null;
  };

  const deal = method([address, address, wei], async ([owner, token, amount], ctx) => {
    const slot = await findSlot(token, calldata(BALANCE_OF, owner), amount, ctx);
    if (slot === undefined) throw invalidArgument('Unable to set ERC20 balance, no slot found');
    return setSlot(token, slot, amount);
  }, PRIVATE);

  return {
    anvil_dealERC20: deal,
    hardhat_dealERC20: deal,
    anvil_setERC20Balance: deal,
    anvil_setERC20Allowance: method([address, address, address, wei], async ([owner, spender, token, amount], ctx) => {
      const slot = await findSlot(token, calldata(ALLOWANCE, owner, spender), amount, ctx);
      if (slot === undefined) throw invalidArgument('Unable to set ERC20 allowance, no slot found');
      return setSlot(token, slot, amount);
    }, PRIVATE),
  };
}
