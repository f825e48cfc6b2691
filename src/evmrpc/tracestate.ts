/**
 * OpenEthereum's `stateDiff` (trace_replay*, trace_call) from geth's prestateTracer in diff mode
 * (eth/tracers/native/prestate.go: `pre` holds every changed account as it was, `post` only the
 * fields that changed; an account created by the tx is only in `post`, one removed only in `pre`).
 * Each field becomes `"="` (unchanged), `{"+": new}` (born), `{"-": old}` (died) or
 * `{"*": {"from", "to"}}` (changed), the shape Erigon and OpenEthereum answer.
 */
import { hexToBytes, toData } from '../lib/hex.js';
import type { AccountOverride } from '../types/query.js';

export type Account = { balance?: string; nonce?: number; code?: string; storage?: Record<string, string> };

const ZERO_WORD = '0x' + '0'.repeat(64);
const hexNonce = (n: number | undefined): string => '0x' + (n ?? 0).toString(16);

function whole(a: Account, sign: '+' | '-'): Record<string, unknown> {
  const storage: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a.storage ?? {})) storage[k] = { [sign]: v };
  return {
    balance: { [sign]: a.balance ?? '0x0' },
    code: { [sign]: a.code ?? '0x' },
    nonce: { [sign]: hexNonce(a.nonce) },
    storage,
  };
}

const field = (from: string, to: string | undefined): unknown => (to === undefined || to === from ? '=' : { '*': { from, to } });

export function stateDiffOf(d: { pre: Record<string, Account>; post: Record<string, Account> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const addrs = [...new Set([...Object.keys(d.pre), ...Object.keys(d.post)])].sort();
  for (const addr of addrs) {
    const pre = d.pre[addr];
    const post = d.post[addr];
    if (pre === undefined) {
      out[addr] = whole(post!, '+');
      continue;
    }
    if (post === undefined) {
      out[addr] = whole(pre, '-');
      continue;
    }
    const storage: Record<string, unknown> = {};
    const slots = new Set([...Object.keys(pre.storage ?? {}), ...Object.keys(post.storage ?? {})]);
    for (const k of [...slots].sort()) {
      const from = pre.storage?.[k] ?? ZERO_WORD;
      const to = post.storage?.[k] ?? ZERO_WORD;
      if (from !== to) storage[k] = { '*': { from, to } };
    }
    out[addr] = {
      balance: field(pre.balance ?? '0x0', post.balance),
      code: field(pre.code ?? '0x', post.code),
      nonce: field(hexNonce(pre.nonce), post.nonce === undefined ? undefined : hexNonce(post.nonce)),
      storage,
    };
  }
  return out;
}

/**
 * trace_callMany: the state a call left, as geth state overrides for the next call of the bundle
 * (Erigon turbo/jsonrpc/trace_adhoc.go runs the calls one after another on one state; here each call
 * runs on the block's state with the earlier calls' changes laid over it). `acc` is updated in place.
 * From the diff: an account only in `pre` was removed (empty now); `post` holds the changed fields; a
 * slot in `pre` but not in `post` of a changed account was zeroed.
 */
export function carryOverrides(acc: Map<string, AccountOverride>, d: { pre: Record<string, Account>; post: Record<string, Account> }): void {
  for (const addr of new Set([...Object.keys(d.pre), ...Object.keys(d.post)])) {
    const pre = d.pre[addr];
    const post = d.post[addr];
    const address = hexToBytes(addr);
    if (post === undefined) {
      acc.set(addr, { address, balance: 0n, nonce: 0n, code: new Uint8Array(), state: [] });
      continue;
    }
    const o = acc.get(addr) ?? { address };
    if (post.balance !== undefined) o.balance = BigInt(post.balance);
    if (post.nonce !== undefined) o.nonce = BigInt(post.nonce);
    if (post.code !== undefined) o.code = hexToBytes(post.code);
    const slots = new Map<string, string>();
    for (const k of Object.keys(pre?.storage ?? {})) slots.set(k, ZERO_WORD);
    for (const [k, v] of Object.entries(post.storage ?? {})) slots.set(k, v);
    if (slots.size > 0) {
      // geth refuses `state` and `stateDiff` together: a removed account's slots go on its `state`
      const list = o.state ?? o.stateDiff ?? [];
      const bySlot = new Map(list.map((s) => [toData(s.slot), s]));
      for (const [k, v] of slots) bySlot.set(k, { slot: hexToBytes(k), value: hexToBytes(v) });
      const merged = [...bySlot.values()];
      if (o.state !== undefined) o.state = merged;
      else o.stateDiff = merged;
    }
    acc.set(addr, o);
  }
}
