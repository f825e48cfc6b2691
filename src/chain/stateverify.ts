/**
 * `ferry state verify`: recomputes a height's state root from the flat state layer alone (every
 * account and slot as of that height, into a fresh in-memory Merkle trie) and compares it with the
 * root stored in the block header. A mismatch means the flat layer and the trie disagree.
 */
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { KECCAK256_NULL, createAccountFromRLP } from '@ethereumjs/util';
import { keccak256 } from '../evm/common.js';
import { FlatState } from '../store/flatstate.js';
import type { Store } from '../store/store.js';

export interface VerifyResult {
  height: bigint;
  expected: Uint8Array;
  computed: Uint8Array;
  accounts: number;
  slots: number;
  /** accounts whose stored storageRoot differs from the root of their flat slots, and missing code */
  problems: string[];
}

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');
const newTrie = () => new MerklePatriciaTrie({ useKeyHashing: true, useKeyHashingFunction: keccak256 });

export async function verifyFlatState(
  store: Store,
  height: bigint | undefined,
  progress: (done: number, total: number) => void = () => {},
): Promise<VerifyResult> {
  const h = height ?? store.latestHeight();
  if (h === undefined) throw new Error('the store holds no blocks');
  const block = store.evmBlock(h);
  if (!block) throw new Error(`no block at height ${h} (latest is ${store.latestHeight()})`);
  const flat = new FlatState(store);
  const low = flat.low();
  if (low === undefined || BigInt(low) > h) throw new Error(`the flat state layer has no state at height ${h}`);
  const n = Number(h);
  const addrs = flat.addresses();
  const trie = newTrie();
  const problems: string[] = [];
  let accounts = 0;
  let slots = 0;
  for (let i = 0; i < addrs.length; i++) {
    if (i % 256 === 0) progress(i, addrs.length);
    const addr = addrs[i]!;
    const rlp = flat.account(addr, n);
    if (rlp === undefined) continue;
    accounts++;
    const acct = createAccountFromRLP(rlp);
    const storage = newTrie();
    for (const slot of flat.slotsOf(addr, n)) {
      await storage.put(slot, RLP.encode(flat.storage(addr, slot, n)));
      slots++;
    }
    if (Buffer.compare(storage.root(), acct.storageRoot) !== 0) {
      problems.push(`account ${hex(addr)}: storageRoot ${hex(acct.storageRoot)}, its flat slots give ${hex(storage.root())}`);
      acct.storageRoot = storage.root();
    }
    if (Buffer.compare(acct.codeHash, KECCAK256_NULL) !== 0) {
      const code = flat.code(acct.codeHash);
      if (code === undefined || Buffer.compare(keccak256(code), acct.codeHash) !== 0) problems.push(`account ${hex(addr)}: code ${hex(acct.codeHash)} missing or corrupt`);
    }
    await trie.put(addr, acct.serialize());
  }
  progress(addrs.length, addrs.length);
  return { height: h, expected: block.header.stateRoot, computed: trie.root(), accounts, slots, problems };
}
