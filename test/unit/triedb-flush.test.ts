/**
 * A commit stores exactly the trie nodes its state root needs: every node reachable from every
 * committed root (account trie and storage tries) is in the store, and nothing else is — the MPT's
 * intermediate node versions, which no root refers to, are not written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RLP } from '@ethereumjs/rlp';
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devGenesis } from '../../src/config/genesis.js';
import type { Logger } from '../../src/lib/log.js';
import { Store } from '../../src/store/store.js';
import { devKeys } from '../helpers/accounts.js';

// runtime code: SSTORE(CALLDATALOAD(0), CALLDATALOAD(32)); STOP
const STORER = Uint8Array.from(Buffer.from('602035600035550' + '0', 'hex'));
const STORER_ADDR = '0x' + '5e'.repeat(20);
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const word = (n: bigint) => n.toString(16).padStart(64, '0');
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

type Ref = Uint8Array | Ref[];

/** Every stored node reachable from `root` (hex keys); fails on a node the store lacks. */
function walk(store: Store, root: Uint8Array, into: Set<string>): void {
  const stack: [Uint8Array, boolean][] = [[root, true]];
  const refs = (r: Ref, accounts: boolean) => {
    if (r instanceof Uint8Array) {
      if (r.length === 32) stack.push([r, accounts]);
    } else node(r, accounts);
  };
  const node = (n: Ref[], accounts: boolean) => {
    if (n.length === 17) n.slice(0, 16).forEach((c) => refs(c, accounts));
    else if ((n[0] as Uint8Array)[0]! >> 4 < 2) refs(n[1]!, accounts);
    else if (accounts) stack.push([(RLP.decode(n[1] as Uint8Array) as Uint8Array[])[2]!, false]);
  };
  while (stack.length > 0) {
    const [h, accounts] = stack.pop()!;
    if (into.has(hex(h)) || hex(h) === '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421') continue; // the empty trie
    const enc = store.trieGet(Buffer.from(h));
    assert.ok(enc, `node ${hex(h)} reachable from root ${hex(root)} is missing`);
    into.add(hex(h));
    node(RLP.decode(new Uint8Array(enc)) as Ref[], accounts);
  }
}

test('the trie table holds exactly the nodes reachable from the committed state roots', async () => {
  const g = devGenesis({ chainId: 'ferry_9000-1', validatorPubKey: new Uint8Array(32), genesisTime: '2026-01-01T00:00:00Z' });
  for (let i = 0; i < 64; i++) g.evm.alloc.set('0x' + (0x1000 + i).toString(16).padStart(40, '0'), { balance: BigInt(i + 1), nonce: 0n });
  g.evm.alloc.set(STORER_ADDR, { balance: 0n, nonce: 0n, code: STORER, storage: new Map([['0x' + word(1n), bytes(word(7n))]]) });
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ferry-trieflush-')), 'db'));
  const app = await EvmApp.create(store, g, { minGasPrice: 0n, mempool: { size: 1_000, maxTxBytes: 131_072, priceBumpPercent: 10, accountQueue: 64 } }, silent, { onPoolChange() {} });
  const roots = [await app.initChain()];
  const wallets = devKeys().slice(0, 4).map((k) => new Wallet(k));
  const nonces = wallets.map(() => 0);
  for (let height = 1n; height <= 6n; height++) {
    const txs: Uint8Array[] = [];
    for (let i = 0; i < 12; i++) {
      const s = i % wallets.length;
      const req = i % 2 === 0
        ? { to: '0x' + (0x2000 + Number(height) * 100 + i).toString(16).padStart(40, '0'), value: 1n, gasLimit: 21_000 }
        : { to: STORER_ADDR, data: '0x' + word(BigInt(i)) + word(height * 1000n + BigInt(i)), gasLimit: 100_000 };
      const raw = bytes(await wallets[s]!.signTransaction({ ...req, chainId: 9000, nonce: nonces[s]!++, type: 2, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }));
      txs.push(wrapEthereumTx(raw, bytes(wallets[s]!.address), BigInt(req.gasLimit), 10n ** 10n));
    }
    const res = await app.finalizeBlock({ height, timeMs: Date.parse('2026-01-01T00:00:00Z') + Number(height) * 1000, hash: bytes(word(height)), proposerAddress: new Uint8Array(20), txs });
    assert.ok(res.txResults.every((r) => r.code === 0), `block ${height}: every tx succeeds`);
    store.transaction(() => app.commit());
    await app.afterCommit();
    roots.push(store.evmBlock(height)!.header.stateRoot);
  }
  const reachable = new Set<string>();
  for (const root of roots) walk(store, root, reachable);
  const nodes = store.db.prepare<[], { k: Buffer }>('SELECT k FROM trie').all().map((r) => r.k).filter((k) => k.length === 32);
  const unreachable = nodes.filter((k) => !reachable.has(hex(k)));
  assert.equal(unreachable.length, 0, `${unreachable.length} of ${nodes.length} stored nodes belong to no committed root`);
  assert.equal(nodes.length, reachable.size);
});
