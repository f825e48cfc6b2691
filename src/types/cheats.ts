/**
 * A state cheat of the dev namespaces (anvil_setBalance, anvil_setCode, anvil_setStorageAt,
 * anvil_setNonce, anvil_loadState; docs/dev-mode.md): one field of one account, set outside any
 * transaction. Pending cheats are seen by `latest` reads at once and written into the next block's
 * state (chain/cheats.ts).
 */
export type Cheat =
  | { kind: 'balance'; address: Uint8Array; value: bigint }
  | { kind: 'nonce'; address: Uint8Array; value: bigint }
  /** empty code: the account has no code */
  | { kind: 'code'; address: Uint8Array; code: Uint8Array }
  /** slot and value: 32 bytes each (a zero value clears the slot) */
  | { kind: 'slot'; address: Uint8Array; slot: Uint8Array; value: Uint8Array };

/** One account of the latest state (anvil_dumpState): storage as [slot, value], 32 bytes each, non-zero values only. */
export interface StateAccount {
  address: Uint8Array;
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  storage: [Uint8Array, Uint8Array][];
}
